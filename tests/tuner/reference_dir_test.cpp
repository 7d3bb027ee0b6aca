// The reference directory a WorkerRunner makes for its run: private, named
// with the tuner's pid, removed when the run ends; and one left by a tuner
// killed with SIGKILL is removed by the next run on the machine.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/test_util.hpp"
#include "tuner/worker/worker_runner.hpp"

using namespace kforge;

namespace {

/// The pid of a process that has ended.
pid_t dead_pid() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  return child;
}

std::filesystem::path make_dir(const test::TempDir& tmp, const std::string& name) {
  const auto dir = tmp.path() / name;
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "poisoned-output.ref") << "bytes";
  return dir;
}

}  // namespace

TEST_CASE("reference directory: private to the run, removed after it, and stale ones are removed",
          "[tuner][unit]") {
  test::TempDir tmp;
  test::ScopedEnv tmpdir("TMPDIR", tmp.path().string());
  const auto stale = make_dir(tmp, "kforge-references-" + std::to_string(dead_pid()) + "-a1b2c3");
  const auto live = make_dir(tmp, "kforge-references-" + std::to_string(getppid()) + "-d4e5f6");
  const auto unnamed = make_dir(tmp, "kforge-references-notapid");
  std::string own;
  {
    WorkerRunner runner(RunnerSetup{}, {"/bin/true"}, WorkerTimeouts{});
    own = runner.reference_dir();
    CHECK_FALSE(std::filesystem::exists(stale));
    CHECK(std::filesystem::exists(live));
    CHECK(std::filesystem::exists(unnamed));
    REQUIRE_FALSE(own.empty());
    CHECK(std::filesystem::path(own).parent_path() == tmp.path());
    CHECK_THAT(std::filesystem::path(own).filename().string(),
               Catch::StartsWith("kforge-references-" + std::to_string(getpid()) + "-"));
    CHECK(std::filesystem::is_directory(own));
  }
  CHECK_FALSE(std::filesystem::exists(own));

  // A directory given in the setup is the caller's: used, never removed.
  const auto given = make_dir(tmp, "given");
  RunnerSetup setup;
  setup.reference_dir = given.string();
  { WorkerRunner runner(setup, {"/bin/true"}, WorkerTimeouts{}); CHECK(runner.reference_dir() == given.string()); }
  CHECK(std::filesystem::exists(given / "poisoned-output.ref"));
}

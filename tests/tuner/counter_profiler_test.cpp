// The counter collectors' wiring without a GPU: which collector applies to a
// device, what each records when its profiler is absent, and the ncu path
// end to end with a fake `ncu` on PATH that runs the launcher and writes the
// fixture CSV (tests/data/ncu, written to ncu's documented format).
#include "tuner/profiling/counter_profiler.hpp"

#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "tests/test_util.hpp"
#include "tuner/profiling/child_command.hpp"
#include "tuner/profiling/ncu_collector.hpp"

using namespace kforge;

namespace {

DeviceInfo device(const std::string& backend, const std::string& vendor, DeviceType type) {
  DeviceInfo d;
  d.backend = backend;
  d.vendor = vendor;
  d.device_type = type;
  d.name = vendor + " device";
  return d;
}

void write_script(const std::string& path, const std::string& body) {
  test::write_file(path, "#!/bin/sh\n" + body);
  chmod(path.c_str(), 0755);
}

/// A stand-in for ncu: --version answers as ncu does; otherwise it skips
/// ncu's options, records them, runs the launcher and writes `csv` to the log.
void fake_ncu(const test::TempDir& dir, const std::string& csv_path, int exit_code = 0) {
  write_script(
      dir.file("ncu"),
      "if [ \"$1\" = --version ]; then echo 'NVIDIA (R) Nsight Compute Command Line Profiler'; "
      "echo 'Version 2025.1.1.0 (build 35528883) (public-release)'; exit 0; fi\n"
      "echo \"$@\" > " +
          dir.file("ncu-args") +
          "\n"
          "while [ $# -gt 0 ]; do case \"$1\" in\n"
          "  --csv) shift ;;\n"
          "  --log-file) log=\"$2\"; shift 2 ;;\n"
          "  --page|--print-units|--metrics|--launch-count|--target-processes|--kernel-name) shift 2 ;;\n"
          "  *) break ;; esac; done\n"
          "\"$@\"\n"
          "cp " +
          csv_path +
          " \"$log\"\n"
          "exit " +
          std::to_string(exit_code) + "\n");
}

ProfileSetup nvidia_setup(const test::TempDir& dir, bool collect) {
  ProfileSetup s;
  s.device = device("cuda", "NVIDIA", DeviceType::kGpu);
  s.collect = collect;
  s.work_dir = dir.path().string();
  s.path = dir.path().string();
  // The launcher stands in for `kforge __profile-launch`: it notes its arguments.
  s.launcher = {"/bin/sh", "-c", "echo \"$@\" > " + dir.file("launched"), "launcher"};
  s.timeout_s = 30;
  return s;
}

}  // namespace

TEST_CASE("each device gets the collector that reads its counters", "[counters]") {
  using V = std::vector<std::string>;
  CHECK(collectors_for(device("opencl", "GenuineIntel", DeviceType::kCpu)) == V{"perf"});
  CHECK(collectors_for(device("cuda", "NVIDIA", DeviceType::kGpu)) == V{"ncu"});
  CHECK(collectors_for(device("opencl", "NVIDIA Corporation", DeviceType::kGpu)) == V{"ncu"});
  CHECK(collectors_for(device("hip", "AMD", DeviceType::kGpu)) == V{"rocprofiler"});
  CHECK(collectors_for(device("opencl", "Intel(R) Corporation", DeviceType::kGpu)).empty());
}

TEST_CASE("an absent profiler is recorded with the reason", "[counters]") {
  test::TempDir dir;
  ProfileSetup s = nvidia_setup(dir, true);
  auto c = profile_target(s, {1, "gemm_mma_sync", "BM64", "gemm_mma_sync__BM64"});
  REQUIRE(c.size() == 1);
  CHECK(c[0].collector == "ncu");
  CHECK(c[0].unavailable == "unavailable: ncu not found on PATH");

  s.device = device("hip", "AMD", DeviceType::kGpu);
  c = profile_target(s, {1, "t", "X1", ""});
  CHECK(c[0].unavailable == "unavailable: rocprofv3 not found on PATH");
  write_script(dir.file("rocprofv3"), "exit 0\n");
  c = profile_target(s, {1, "t", "X1", ""});
  CHECK(c[0].unavailable ==
        "unavailable: kforge does not read rocprofiler counters yet (rocprofv3 found at " +
            dir.file("rocprofv3") + ")");

  s.device = device("opencl", "Intel(R) Corporation", DeviceType::kGpu);
  c = profile_target(s, {1, "t", "X1", ""});
  CHECK(c[0].collector == "none");
  CHECK(c[0].unavailable ==
        "unavailable: no counter collector for Intel(R) Corporation gpu devices on opencl");
}

TEST_CASE("a CPU device records why perf read nothing, cheaply without --profile", "[counters][perf]") {
  test::TempDir dir;
  ProfileSetup s;
  s.device = device("opencl", "GenuineIntel", DeviceType::kCpu);
  s.work_dir = dir.path().string();
  s.launcher = {"/bin/false"};
  const auto c = profile_target(s, {1, "gemm_simt_tiled", "BM16", ""});
  REQUIRE(c.size() == 1);
  CHECK(c[0].collector == "perf");
  REQUIRE_FALSE(c[0].available());
  CHECK((c[0].unavailable.find("(perf_event_open: ") != std::string::npos ||
         c[0].unavailable.find("run kforge tune with --profile") != std::string::npos));
}

TEST_CASE("ncu runs the launcher for one configuration and its CSV becomes counters", "[counters][ncu]") {
  test::TempDir dir;
  fake_ncu(dir, KFORGE_SOURCE_DIR "/tests/data/ncu/gemm_bf16_mma_sync_raw.csv");
  ProfileSetup s = nvidia_setup(dir, false);
  auto c = profile_target(s, {5, "gemm_mma_sync", "BK32_BM128", "gemm_mma_sync__BK32_BM128"});
  CHECK(c[0].unavailable ==
        "unavailable: not collected: run kforge tune with --profile to collect ncu counters");

  s.collect = true;
  c = profile_target(s, {5, "gemm_mma_sync", "BK32_BM128", "gemm_mma_sync__BK32_BM128"});
  REQUIRE(c.size() == 1);
  INFO(c[0].unavailable);
  REQUIRE(c[0].available());
  CHECK(c[0].tool == "ncu 2025.1.1.0");
  CHECK(c[0].readings.size() == 23);
  // The launcher got the setup file, the template and the configuration.
  CHECK(test::read_file(dir.file("launched")) ==
        dir.file("profile-setup.json") + " gemm_mma_sync BK32_BM128\n");
  const std::string args = test::read_file(dir.file("ncu-args"));
  CHECK(args.find(
            "--csv --page raw --print-units base --metrics gpu__time_duration.sum,dram__bytes_read.sum,") ==
        0);
  CHECK(args.find("--launch-count 1 --target-processes all --log-file ") != std::string::npos);
  CHECK(args.find("--kernel-name gemm_mma_sync__BK32_BM128 /bin/sh -c") != std::string::npos);
}

TEST_CASE("ncu's failure is recorded with what it said", "[counters][ncu]") {
  test::TempDir dir;
  test::write_file(dir.file("denied.csv"),
                   "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission\n");
  fake_ncu(dir, dir.file("denied.csv"), 1);
  const auto c = profile_target(nvidia_setup(dir, true), {5, "t", "X1", ""});
  CHECK(c[0].unavailable ==
        "unavailable: ncu exited with status 1: ==ERROR== ERR_NVGPUCTRPERM - The user does not have "
        "permission");
}

TEST_CASE("a command past its deadline is killed, with its group", "[counters]") {
  test::TempDir dir;
  auto o = run_command({"/bin/sh", "-c", "sleep 30"}, dir.file("out"), 0.2);
  REQUIRE(o.ok());
  CHECK_FALSE(o->exited);
  CHECK(o->how == "killed after the 0.2 s timeout");
  o = run_command({"/bin/sh", "-c", "echo hi; exit 3"}, dir.file("out"), 10);
  CHECK(o->exit_code == 3);
  CHECK(test::read_file(dir.file("out")) == "hi\n");
  CHECK(find_on_path("sh", "/nonexistent:/bin") == std::optional<std::string>("/bin/sh"));
  CHECK_FALSE(find_on_path("no-such-tool-here", "/bin").has_value());
}

TEST_CASE("the model's counts are a collection of their own", "[counters]") {
  const auto m = model_collection(3e6, 2e9);
  const auto rows = counter_rows(m, 9);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].source == "model");
  CHECK(rows[0].name == "model_bytes");
  CHECK(rows[1].value == 2e9);
}

// Overlay databases in read-only places: a shipped WAL-mode system database
// (mode 0444, in a read-only directory, no -wal or -shm beside it) under a
// user database searched first. Nothing may be written to either database
// or next to the system one, whoever runs the program (root ignores
// permission bits, so the test checks the directory listing itself).
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>

#include "runtime/lookup/lookup_source.hpp"
#include "tests/runtime/lookup_fixtures.hpp"

using namespace kforge;
using namespace kforge::test;

namespace {

std::set<std::string> listing(const std::filesystem::path& dir) {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

bool wal_mode(const std::string& path) {
  const std::string header = read_file(path).substr(0, 20);
  return header.size() == 20 && header[18] == 2 && header[19] == 2;
}

/// Makes `dir` writable again when the test ends, so TempDir can remove it.
struct Writable {
  std::string dir;
  ~Writable() { chmod(dir.c_str(), 0755); }
};

/// Runs `body` in a child process that cannot write `dir`'s contents the
/// way an ordinary user cannot: root drops to nobody first. Returns the
/// child's exit status (0: body returned true).
template <typename F>
int as_unprivileged(F&& body) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(3);
    _exit(body() ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 4;
}

}  // namespace

TEST_CASE("a read-only WAL system database in a read-only directory is searched after the user's, "
          "nothing is written", "[lookup][opencl][overlay]") {
  TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  const std::filesystem::path shipped = dir.path() / "shipped";
  std::filesystem::create_directories(shipped);
  const std::string system = tuned_copy(**device, dir, "shipped/system.db");
  const std::string user = tuned_copy(**device, dir, "user.db");
  // System: winner config S for gemm(33, 17, 9). User: config U for gemm(66, 17, 9).
  point_winners_at(system, "BX8_BY8_FLAW0");
  const Problem moved = gemm(66, 17, 9);
  exec_sql(user, "INSERT INTO problems (key, op, dims_json, dtype, layout) VALUES ('" + moved.key() +
                     "', 'gemm', '{\"K\":9,\"M\":66,\"N\":17,\"batch\":1}', 'f32', 'NN')");
  move_to_problem(user, moved.key());
  point_winners_at(user, "BX16_BY4_FLAW0");
  REQUIRE(wal_mode(system));
  REQUIRE_FALSE(std::filesystem::exists(system + "-wal"));
  REQUIRE_FALSE(std::filesystem::exists(system + "-shm"));
  REQUIRE(chmod(system.c_str(), 0444) == 0);
  REQUIRE(chmod(shipped.c_str(), 0555) == 0);
  Writable restore{shipped.string()};
  const auto before = listing(shipped);
  const std::string system_bytes = read_file(system), user_bytes = read_file(user);
  struct stat st_before {};
  REQUIRE(stat(system.c_str(), &st_before) == 0);

  {
    Warnings w;
    auto lookup = open_lookup(w.options(user, system), **device, catalog_with());
    const Selection from_user = select_ok(*lookup, moved);
    CHECK(from_user.rule == SelectionRule::kExact);
    CHECK(from_user.database == user);
    CHECK(from_user.config == "BX16_BY4_FLAW0");
    CHECK_THAT(from_user.explanation, Catch::Contains("database: user " + user + " (read-only)"));
    CHECK_THAT(from_user.explanation,
               Catch::Contains("database: system " + system + " (read-only, immutable)"));
    CHECK_THAT(from_user.explanation, Catch::Contains("from the user database " + user));
    const Selection from_system = select_ok(*lookup, gemm(33, 17, 9));
    CHECK(from_system.rule == SelectionRule::kExact);
    CHECK(from_system.database == system);
    CHECK(from_system.config == "BX8_BY8_FLAW0");
    CHECK_THAT(from_system.explanation, Catch::Contains("from the system database " + system));
    check_launch(*lookup, **device, from_system);
    CHECK(listing(shipped) == before);  // while open: no -wal, no -shm
    CHECK(w.seen.empty());
  }
  CHECK(listing(shipped) == before);
  CHECK(read_file(system) == system_bytes);
  CHECK(read_file(user) == user_bytes);
  struct stat st_after {};
  REQUIRE(stat(system.c_str(), &st_after) == 0);
  CHECK(st_after.st_mtim.tv_sec == st_before.st_mtim.tv_sec);
  CHECK(st_after.st_mtim.tv_nsec == st_before.st_mtim.tv_nsec);
}

TEST_CASE("a WAL user database in a directory the process cannot write is opened immutable, or "
          "refused with a clear error when its -wal file holds changes", "[lookup][overlay]") {
  TempDir dir;
  // The child runs as nobody when the tests run as root: let it reach the files.
  REQUIRE(chmod(dir.path().c_str(), 0755) == 0);
  const std::filesystem::path locked = dir.path() / "locked";
  std::filesystem::create_directories(locked);
  const std::string path = (locked / "user.db").string();
  {
    auto db = Database::open(path, Database::Mode::kReadWrite);
    REQUIRE(db.ok());
    DeviceRecord d;
    d.key = "k1";
    d.backend = "opencl";
    d.name = "a device";
    d.info_json = "{}";
    REQUIRE((*db)->put_device(d).ok());
  }
  REQUIRE(wal_mode(path));
  REQUIRE_FALSE(std::filesystem::exists(path + "-wal"));
  REQUIRE(chmod(path.c_str(), 0444) == 0);
  REQUIRE(chmod(locked.c_str(), 0555) == 0);
  Writable restore{locked.string()};
  const auto before = listing(locked);

  const int opened = as_unprivileged([&] {
    auto source = open_lookup_source(path, "user");
    if (!source.ok() || !(*source)->db || (*source)->access != "read-only, immutable") return false;
    auto devices = (*source)->db->devices();
    return devices.ok() && devices->size() == 1 && devices->front().key == "k1";
  });
  CHECK(opened == 0);
  CHECK(listing(locked) == before);

  SECTION("with a -wal file but no -shm it is a one-line error naming the file") {
    REQUIRE(chmod(locked.c_str(), 0755) == 0);
    write_file(path + "-wal", std::string(4096, 'x'));
    REQUIRE(chmod(locked.c_str(), 0555) == 0);
    const int refused = as_unprivileged([&] {
      auto source = open_lookup_source(path, "user");
      if (source.ok()) return false;
      const std::string& m = source.error().message;
      return m.find(path + ": WAL database in a directory this process cannot write") == 0 &&
             m.find("wal_checkpoint(TRUNCATE)") != std::string::npos && m.find('\n') == std::string::npos;
    });
    CHECK(refused == 0);
  }
}

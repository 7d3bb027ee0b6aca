// Overlay databases (user before system, both read-only) and the lookup's
// caches: selections per problem (a repeated select allocates nothing),
// compiled kernels shared across problems, many threads at once.
#include <sys/stat.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <thread>

#include "tests/runtime/lookup_fixtures.hpp"

using namespace kforge;
using namespace kforge::test;

// Counts allocations made by the thread that enabled counting. The global
// new/delete below are a matched malloc/free pair; GCC 12 flags the inlined
// free as mismatched anyway.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
// A sanitizer's runtime defines the global new itself (clang's ThreadSanitizer
// strongly, so a second definition does not link): there the count is not taken.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KFORGE_SANITIZED_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define KFORGE_SANITIZED_BUILD 1
#endif
#endif
namespace {
thread_local bool t_counting = false;
thread_local std::size_t t_allocations = 0;
}  // namespace

#ifndef KFORGE_SANITIZED_BUILD
void* operator new(std::size_t n) {
  if (t_counting) ++t_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#endif

TEST_CASE("the user database is searched before the system one, rule by rule", "[lookup][opencl]") {
  TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  // System: tuned for gemm(33, 17, 9), winner config forced to S. User: the
  // same entries moved to gemm(66, 17, 9), winner config U.
  const std::string system = tuned_copy(**device, dir, "system.db");
  const std::string user = tuned_copy(**device, dir, "user.db");
  point_winners_at(system, "BX8_BY8_FLAW0");
  const Problem moved = gemm(66, 17, 9);
  exec_sql(user, "INSERT INTO problems (key, op, dims_json, dtype, layout) VALUES ('" + moved.key() +
                     "', 'gemm', '{\"K\":9,\"M\":66,\"N\":17,\"batch\":1}', 'f32', 'NN')");
  move_to_problem(user, moved.key());
  point_winners_at(user, "BX16_BY4_FLAW0");
  // Both shipped read-only.
  REQUIRE(chmod(system.c_str(), 0444) == 0);
  REQUIRE(chmod(user.c_str(), 0444) == 0);
  const std::string system_bytes = read_file(system), user_bytes = read_file(user);

  Warnings w;
  auto lookup = open_lookup(w.options(user, system), **device, catalog_with());
  // Exact in system beats nearest in user: rules come first.
  const Selection a = select_ok(*lookup, gemm(33, 17, 9));
  CHECK(a.rule == SelectionRule::kExact);
  CHECK(a.config == "BX8_BY8_FLAW0");
  CHECK(a.database == system);
  CHECK_THAT(a.explanation, Catch::Contains("from the system database " + system));
  // Exact in user.
  const Selection b = select_ok(*lookup, moved);
  CHECK(b.rule == SelectionRule::kExact);
  CHECK(b.config == "BX16_BY4_FLAW0");
  CHECK(b.database == user);
  // Nearest goes by distance across both databases.
  const Selection c = select_ok(*lookup, gemm(33, 17, 18));  // distance 1 to system's, 2 to user's
  CHECK(c.rule == SelectionRule::kNearest);
  CHECK(c.database == system);
  CHECK(read_file(system) == system_bytes);
  CHECK(read_file(user) == user_bytes);

  SECTION("ties go to the user database") {
    // Both hold gemm(33, 17, 9) exactly: the user's entry is chosen.
    REQUIRE(chmod(user.c_str(), 0644) == 0);
    move_to_problem(user, gemm(33, 17, 9).key());
    auto again = open_lookup(w.options(user, system), **device, catalog_with());
    const Selection t = select_ok(*again, gemm(33, 17, 9));
    CHECK(t.database == user);
    CHECK(t.config == "BX16_BY4_FLAW0");
  }
  SECTION("a missing user database leaves the system one") {
    auto only = open_lookup(w.options(dir.file("none.db"), system), **device, catalog_with());
    const Selection t = select_ok(*only, gemm(33, 17, 9));
    CHECK(t.database == system);
    CHECK_THAT(t.explanation, Catch::Contains("no user database at"));
  }
}

TEST_CASE("a repeated select is a cached lookup that allocates nothing", "[lookup][opencl]") {
  TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  Warnings w;
  auto lookup = open_lookup(w.options(tuned_copy(**device, dir)), **device, catalog_with());
  const Problem p = gemm(33, 17, 9);
  auto first = lookup->select_ref(p);
  REQUIRE(first.ok());
  const Problem same = gemm(33, 17, 9);  // another object, equal content
  t_allocations = 0;
  t_counting = true;
  const Selection* again = nullptr;
  for (int i = 0; i < 1000; ++i) {
    auto s = lookup->select_ref(same);
    if (s.ok()) again = *s;
  }
  t_counting = false;
#ifndef KFORGE_SANITIZED_BUILD
  CHECK(t_allocations == 0);
#endif
  CHECK(again == *first);
  // Written without batch: another cache entry, the same choice.
  auto no_batch = lookup->select_ref(Problem{"gemm", {{"M", 33}, {"N", 17}, {"K", 9}}, Dtype::kF32, Layout{}, {}, {}});
  REQUIRE(no_batch.ok());
  CHECK(*no_batch != *first);
  CHECK((*no_batch)->config == (*first)->config);
  CHECK((*no_batch)->problem == (*first)->problem);
}

TEST_CASE("compiled kernels are shared across problems, geometry is per problem", "[lookup][opencl]") {
  TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  Warnings w;
  auto lookup = open_lookup(w.options(tuned_copy(**device, dir)), **device, catalog_with());
  const Selection a = select_ok(*lookup, gemm(33, 17, 9));
  const Selection b = select_ok(*lookup, gemm(66, 34, 9));  // nearest: the same configuration
  REQUIRE(a.config == b.config);
  auto pa = lookup->prepare(a);
  auto pb = lookup->prepare(b);
  REQUIRE(pa.ok());
  REQUIRE(pb.ok());
  CHECK((*pa)->kernel == (*pb)->kernel);
  CHECK((*pa)->binary_key == (*pb)->binary_key);
  CHECK((*pa)->geometry.grid != (*pb)->geometry.grid);
  CHECK(lookup->compiled_count() == 1);
  CHECK(*lookup->prepare(a) == *pa);  // prepared once
  check_launch(*lookup, **device, b);
  CHECK(lookup->compiled_count() == 1);
}

TEST_CASE("select and launch are safe from many threads", "[lookup][opencl]") {
  TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  Warnings w;
  auto lookup = open_lookup(w.options(tuned_copy(**device, dir)), **device, catalog_with());
  constexpr int kThreads = 8;
  std::vector<std::vector<const Selection*>> got(kThreads);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 400; ++i) {
        auto s = lookup->select_ref(gemm(33 + (i % 5), 17 + (i % 3), 9));
        if (!s.ok()) {
          ++failures;
          continue;
        }
        if (i < 15) got[t].push_back(*s);
        if (i % 100 == 0 && !lookup->prepare(**s).ok()) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures == 0);
  for (int t = 1; t < kThreads; ++t) CHECK(got[t] == got[0]);  // one cached selection per problem
  CHECK(lookup->compiled_count() == 1);
}

// Writes the fixture tuning databases of tests/tools/tools_fixtures.hpp to
// files, for looking at them or trying commands by hand:
//   make_fixture_db base OUT.db | make_fixture_db new OUT.db
#include <cstdio>
#include <filesystem>
#include <string>

#include "tests/tools/tools_fixtures.hpp"

int main(int argc, char** argv) {
  const std::string which = argc == 3 ? argv[1] : "";
  if (which != "base" && which != "new") {
    std::fprintf(stderr, "usage: make_fixture_db base|new OUT.db (OUT.db must not exist)\n");
    return 2;
  }
  if (std::filesystem::exists(argv[2])) {
    std::fprintf(stderr, "make_fixture_db: %s exists; remove it first\n", argv[2]);
    return 2;
  }
  try {
    kforge::test::build_fixture_db(argv[2], which == "base" ? kforge::test::Fixture::kBase : kforge::test::Fixture::kNew);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_fixture_db: %s\n", e.what());
    return 1;
  }
  std::printf("wrote %s fixture to %s\n", which.c_str(), argv[2]);
  return 0;
}

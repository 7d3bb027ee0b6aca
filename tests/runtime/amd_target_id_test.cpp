// AMDGPU target ids in both spellings a code object carries.
#include "runtime/binaries/amd_target_id.hpp"

#include <catch2/catch.hpp>

using kforge::parse_amd_target_id;

TEST_CASE("amd target id: the code object v4/v5 spelling gives processor and features", "[amd_target]") {
  auto t = parse_amd_target_id("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-");
  CHECK(t.processor == "gfx90a");
  CHECK(t.features == "+sramecc,-xnack");
  CHECK(parse_amd_target_id("amdgcn-amd-amdhsa--gfx942").processor == "gfx942");
}

TEST_CASE("amd target id: the newer spelling with a generic version and an OS field", "[amd_target]") {
  auto t = parse_amd_target_id("amdgpu9.0a-amd-amdhsa-unknown-gfx90a");
  CHECK(t.processor == "gfx90a");
  CHECK(t.features.empty());
  auto f = parse_amd_target_id("amdgpu9.4-amd-amdhsa-unknown-gfx942:xnack-");
  CHECK(f.processor == "gfx942");
  CHECK(f.features == "-xnack");
}

TEST_CASE("amd target id: a bare processor is its own processor", "[amd_target]") {
  CHECK(parse_amd_target_id("gfx950").processor == "gfx950");
  CHECK(parse_amd_target_id("").processor.empty());
}

// `kforge capabilities --target hip:gfx942` compile-checks each template with
// the offline compiler; other targets and sources are left as they were.
#include <catch2/catch.hpp>

#include "report/capabilities.hpp"
#include "runtime/catalog/template_catalog.hpp"
#include "runtime/device/hip/hip_offline_compiler.hpp"

using namespace kforge;

namespace {

const nlohmann::ordered_json& target_named(const nlohmann::ordered_json& model, const std::string& name) {
  for (const auto& t : model["targets"])
    if (t["target"] == name) return t;
  FAIL("no target " << name);
  static const nlohmann::ordered_json none;
  return none;
}

}  // namespace

TEST_CASE("capabilities compile-checks each template on a HIP target only the offline compiler reaches",
          "[hip][offline][capabilities]") {
  if (!offline_hip_toolchain().ok())
    FAIL("the offline HIP compiler is required: " << offline_hip_toolchain().error().message);
  auto catalog = TemplateCatalog::builtin();
  REQUIRE(catalog.ok());
  report::CapabilitiesRequest req;
  req.catalog = &*catalog;
  req.op = "rmsnorm";
  for (const char* t : {"hip:gfx942", "hip:gfx950", "hip:gfx90a"})
    req.extra_targets.push_back(*report::parse_target(t));
  auto model = report::describe_capabilities(req);
  REQUIRE(model.ok());
  for (const char* name : {"hip:gfx942", "hip:gfx950"}) {
    const auto& ops = target_named(*model, name)["operators"];
    REQUIRE(ops.size() == 1);
    REQUIRE(ops[0]["templates"].size() >= 2);
    for (const auto& t : ops[0]["templates"]) {
      INFO(name << " " << t["name"].get<std::string>());
      REQUIRE(t.contains("compile_check"));
      const auto& c = t["compile_check"];
      CHECK(c["compiler"].get<std::string>().rfind("clang 22", 0) == 0);
      CHECK(c["status"] == "ok");
      CHECK(c["config"] == t["default_config"]);
      CHECK(c["wavefront_size"] == 64);
      CHECK(c["vgprs"].get<int>() > 0);
      CHECK(c["spills"] == 0);
      CHECK(c["occupancy"].get<double>() > 0);
      CHECK_FALSE(c["occupancy_limiter"].get<std::string>().empty());
    }
  }
  // hipRTC reaches gfx90a: no compile check there.
  for (const auto& t : target_named(*model, "hip:gfx90a")["operators"][0]["templates"])
    CHECK_FALSE(t.contains("compile_check"));
  const std::string md = report::render_capabilities_markdown(*model);
  CHECK(md.find("Compile-checked with clang 22") != std::string::npos);
  CHECK(
      md.find("| template | problem | status | VGPRs | AGPRs | SGPRs | LDS B | spills | occupancy | why |") !=
      std::string::npos);
}

// Every built-in template that targets OpenCL compiles alone through PoCL:
// its prelude and source, no defines (STYLE.md: a kernel file compiles on its own).
#include <catch2/catch.hpp>

#include <set>

#include "runtime/device/device_registry.hpp"
#include "templates/builtin_templates.hpp"
#include "tests/runtime/template_alone.hpp"

using namespace kforge;

TEST_CASE("every OpenCL template compiles alone with its prelude and no defines", "[opencl][templates]") {
  auto dev = open_device("opencl:0");
  REQUIRE(dev.ok());
  auto builtins = builtin_templates();
  REQUIRE(builtins.ok());
  std::set<std::string> compiled;
  for (const auto& tpl : *builtins) {
    if (!tpl.manifest.supports_target("opencl") || tpl.manifest.is_library()) continue;
    INFO(tpl.manifest.name);
    auto out = (*dev)->compiler().compile(test::alone_source(tpl, "opencl"), tpl.manifest.kernel, "");
    if (!out.ok()) FAIL(out.error().message << "\n" << out.error().context);
    compiled.insert(tpl.manifest.name);
  }
  CHECK(compiled.count("gemm_simt_tiled") == 1);
  CHECK(compiled.size() >= 8);
}

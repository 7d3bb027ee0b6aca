// The Triton interpreter as a device ("interpret:0"): opened by name only,
// it runs a corpus Triton template built through a Lookup with the
// operator's arguments, on host buffers, and its result is the operator's.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <vector>

#include "generator/instance.hpp"
#include "runtime/catalog/template_catalog.hpp"
#include "runtime/device/device_registry.hpp"
#include "runtime/device/host/triton_interpreter.hpp"
#include "runtime/kinds/template_kind.hpp"
#include "runtime/lookup/lookup.hpp"
#include "tests/runtime/triton_lookup_fixture.hpp"

using namespace kforge;

namespace {

const std::filesystem::path& kCorpus = test::kTritonCorpus;

/// Y = X / sqrt(mean(X^2) + eps) * W, row by row, in double.
std::vector<double> rmsnorm_reference(const std::vector<float>& x, const std::vector<float>& w, int rows, int cols,
                                      float eps) {
  std::vector<double> y(x.size());
  for (int r = 0; r < rows; ++r) {
    double sum = 0;
    for (int c = 0; c < cols; ++c) sum += double(x[r * cols + c]) * x[r * cols + c];
    const double inv = 1.0 / std::sqrt(sum / cols + eps);
    for (int c = 0; c < cols; ++c) y[r * cols + c] = x[r * cols + c] * inv * w[c];
  }
  return y;
}

}  // namespace

TEST_CASE("The Triton interpreter is opened by name only, never listed or picked by auto", "[triton]") {
  for (const DeviceInfo& d : list_devices()) CHECK(d.backend != kInterpreterBackend);
  CHECK(is_live_selector("interpret:0"));
  auto second = open_device("interpret:1");
  REQUIRE_FALSE(second.ok());
  CHECK_THAT(second.error().message, Catch::Contains("interpret:0"));
  if (auto any = resolve_device("auto"); any.ok()) CHECK(any->backend != kInterpreterBackend);
}

TEST_CASE("The Triton interpreter device runs a Triton template built by a Lookup", "[triton]") {
  if (const std::string& why = triton_kind().unavailable(TemplateSource{}); !why.empty()) {
    WARN("SKIPPED: " << why);
    return;
  }
  auto device = open_device("interpret:0");
  REQUIRE(device.ok());
  CHECK_FALSE((*device)->times_kernels());
  CHECK((*device)->info().compiler_version.find('.') != std::string::npos);  // Triton's version
  auto lookup = test::rmsnorm_row_lookup(**device);
  Problem p;
  p.op = "rmsnorm";
  p.dims = {{"rows", 9}, {"cols", 100}};
  auto selection = lookup->select(p);
  REQUIRE(selection.ok());

  const int rows = 9, cols = 100;
  const float eps = 1e-6f;
  std::vector<float> x(rows * cols), w(cols), y(rows * cols, -7.0f);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * float(i)) * 3.0f;
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.5f + 0.01f * float(i);
  auto xb = (*device)->allocate(x.size() * 4), wb = (*device)->allocate(w.size() * 4),
       yb = (*device)->allocate(y.size() * 4);
  REQUIRE((xb.ok() && wb.ok() && yb.ok()));
  REQUIRE((*device)->write(**xb, x.data(), x.size() * 4).ok());
  REQUIRE((*device)->write(**wb, w.data(), w.size() * 4).ok());
  REQUIRE((*device)->write(**yb, y.data(), y.size() * 4).ok());
  auto enqueued = lookup->enqueue(*selection, {KernelArg::of(std::int32_t{rows}), KernelArg::of(std::int32_t{cols}),
                                                  KernelArg::of(eps), KernelArg::of(**xb), KernelArg::of(**wb),
                                                  KernelArg::of(**yb)});
  INFO((enqueued.ok() ? std::string() : enqueued.error().message + "\n" + enqueued.error().context));
  REQUIRE(enqueued.ok());
  REQUIRE((*device)->read(**yb, y.data(), y.size() * 4).ok());
  const auto ref = rmsnorm_reference(x, w, rows, cols, eps);
  for (std::size_t i = 0; i < y.size(); ++i) {
    INFO("element " << i);
    REQUIRE(y[i] == Approx(ref[i]).epsilon(1e-5));
  }

  SECTION("a write past a buffer, which a Lookup would have refused, fails the launch naming the argument") {
    auto tpl = TemplateSource::load_dir((kCorpus / "rmsnorm_row").string());
    REQUIRE(tpl.ok());
    auto cfg = Config::parse(test::kRmsnormRowConfig);
    REQUIRE(cfg.ok());
    auto inst = instantiate(*tpl, "", *find_operator("rmsnorm"), *cfg, p, (*device)->info().limits());
    REQUIRE(inst.ok());
    auto compiled = interpreted_kernel(inst->source, tpl->kernel_text);
    REQUIRE(compiled.ok());
    auto kernel = (*device)->load(*compiled);
    REQUIRE(kernel.ok());
    auto small = (*device)->allocate((rows - 1) * cols * 4);
    REQUIRE(small.ok());
    auto refused = (*device)->launch(**kernel, {KernelArg::of(std::int32_t{rows}), KernelArg::of(std::int32_t{cols}),
                                                KernelArg::of(eps), KernelArg::of(**xb), KernelArg::of(**wb),
                                                KernelArg::of(**small)},
                                     inst->geometry);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().code == ErrorCode::kLaunch);
    CHECK_THAT(refused.error().message, Catch::Contains("wrote outside Y"));
  }
}

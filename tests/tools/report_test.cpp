// kforge report: the page is self-contained and holds every chart; headless
// Chromium renders it without console messages and the screenshot is not
// blank. The checks are themselves tested on pages that must fail them.
#include <png.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <set>

#include "db/database.hpp"
#include "tests/tools/cli_util.hpp"
#include "tests/tools/tools_fixtures.hpp"

using namespace kforge;

namespace {

std::string find_chromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"})
    if (std::filesystem::exists(p)) return p;
  return "";
}

struct Rendered {
  int exit_code = -1;
  std::string log;         ///< Chromium's stderr
  std::string screenshot;  ///< PNG path
};

/// Renders `html` headless at `width` x `height` into a PNG; Chromium's own log goes to `log`.
Rendered render(const std::string& chromium, const std::string& html, const test::TempDir& dir, int height,
                int width = 1200) {
  Rendered r;
  r.screenshot = dir.file("shot.png");
  const std::string log = dir.file("chromium.log");
  const std::string cmd = "timeout 300 " + chromium +
                          " --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run"
                          " --user-data-dir=" + dir.file("profile") + " --window-size=" + std::to_string(width) + "," +
                          std::to_string(height) +
                          " --screenshot=" + r.screenshot + " --enable-logging=stderr --v=0 file://" + html +
                          " >/dev/null 2>" + log;
  const int status = std::system(cmd.c_str());
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.log = test::read_file(log);
  return r;
}

/// Console messages (errors, warnings, logs) Chromium reported for the page.
std::vector<std::string> console_messages(const std::string& log) {
  std::vector<std::string> out;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line))
    if (line.find(":CONSOLE") != std::string::npos || line.find("Uncaught") != std::string::npos) out.push_back(line);
  return out;
}

struct PixelStats {
  std::size_t pixels = 0, non_background = 0, colours = 0;
  std::size_t width = 0, right_columns_used = 0;  ///< columns in the right third holding any non-background pixel
};

/// Reads the PNG and counts pixels that differ from white, and distinct colours.
PixelStats pixel_stats(const std::string& path) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  PixelStats s;
  if (!png_image_begin_read_from_file(&image, path.c_str())) return s;
  image.format = PNG_FORMAT_RGB;
  std::vector<png_byte> buf(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, buf.data(), 0, nullptr)) return s;
  std::set<std::uint32_t> colours;
  s.width = image.width;
  std::vector<bool> column_used(image.width, false);
  for (std::size_t i = 0; i + 2 < buf.size(); i += 3) {
    const std::uint32_t c = (std::uint32_t(buf[i]) << 16) | (std::uint32_t(buf[i + 1]) << 8) | buf[i + 2];
    ++s.pixels;
    if (buf[i] < 240 || buf[i + 1] < 240 || buf[i + 2] < 240) {
      ++s.non_background;
      column_used[(i / 3) % image.width] = true;
    }
    colours.insert(c);
  }
  for (std::size_t x = 2 * s.width / 3; x < s.width; ++x) s.right_columns_used += column_used[x];
  s.colours = colours.size();
  return s;
}

}  // namespace

TEST_CASE("report: one self-contained page with every chart per tuned problem", "[report]") {
  test::TempDir dir;
  const std::string db = dir.file("base.db"), html = dir.file("report.html");
  test::build_fixture_db(db, test::Fixture::kBase);
  auto r = test::run_kforge("report --db " + db + " --out " + html);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("5 tuned problems, 84 candidates") != std::string::npos);
  const std::string page = test::read_file(html);
  // Self-contained: no script, no external resource (the SVG namespace is a name, not a fetch).
  CHECK(page.find("<script") == std::string::npos);
  const std::regex external(R"((src|href)\s*=\s*"(https?:|//))");
  CHECK_FALSE(std::regex_search(page, external));
  std::string without_ns = std::regex_replace(page, std::regex("http://www\\.w3\\.org/2000/svg"), "");
  CHECK(without_ns.find("http://") == std::string::npos);
  CHECK(without_ns.find("https://") == std::string::npos);
  // Per problem: landscape, best so far, winner vs default, roofline.
  auto count = [&](const std::string& needle) {
    std::size_t n = 0;
    for (auto p = page.find(needle); p != std::string::npos; p = page.find(needle, p + 1)) ++n;
    return n;
  };
  CHECK(count("<h2 id=") == 5);
  // Four charts per problem, then one per tunable of each evaluated template.
  const std::size_t parameter_views = count("<h3>Time against each parameter: ");
  CHECK(parameter_views >= 5);
  CHECK(count("<svg") == 20 + count("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 540 "));
  CHECK(count("viewBox=\"0 0 540 ") >= 3 * parameter_views);  // BM, BN, TM at least
  // Sizes come from the page, not the SVG: no fixed width attribute.
  CHECK(page.find("<svg xmlns=\"http://www.w3.org/2000/svg\" width=") == std::string::npos);
  // The winner and each evaluated default carry their configuration as text, not only as a hover title.
  CHECK(count(">winner BM") + count(">winner BK") >= 5);
  CHECK(count(">default BM32_BN32_TM2") + count(">default BK8_BM32_BN32_PAD0_TM2_TN2_VW1") >= 5);
  CHECK(count("<h3>Tuning landscape</h3>") == 5);
  CHECK(count("<h3>Best so far</h3>") == 5);
  CHECK(count("<h3>Winner against default</h3>") == 5);
  // Failures are marked with their status (a hover title per failed candidate).
  CHECK(count("\ncompile_error: error: use of undeclared identifier") >= 5);
  CHECK(page.find("wrong_result (1)") != std::string::npos);
  // Ceilings: the H200 and MI300X are in the built-in table, the CPU is not.
  CHECK(page.find("Ceilings: NVIDIA H200 SXM datasheet") != std::string::npos);
  CHECK(page.find("No ceilings known for cpu-haswell-Intel(R) Xeon(R) CPU") != std::string::npos);
  // The winner against the default: every section's default (BM32_BN32_TM2 in the fixture's small manifests, the
  // built-in gemm_simt_tiled's default in its current versions) was evaluated.
  CHECK(count("x faster</text>") >= 5);

  // A ceilings file names the CPU's peaks.
  const std::string ceilings = dir.file("ceilings.json");
  test::write_file(ceilings, R"([{"match": "haswell", "fp32_gflops": 150, "bandwidth_gbs": 40, "source": "my CPU"}])");
  r = test::run_kforge("report --db " + db + " --out " + html + " --ceilings " + ceilings + " --device fixture-pocl");
  REQUIRE(r.exit_code == 0);
  CHECK(test::read_file(html).find("Ceilings: my CPU") != std::string::npos);
  test::write_file(ceilings, R"([{"match": "x", "fp32_gflops": "fast"}])");
  r = test::run_kforge("report --db " + db + " --out " + html + " --ceilings " + ceilings);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("ceilings.json: [0].fp32_gflops: expected a non-negative number, got \"fast\"") != std::string::npos);
}

TEST_CASE("report: the roofline places the winner by its measured traffic and states its bound", "[report][counters]") {
  test::TempDir dir;
  const std::string db = dir.file("base.db"), html = dir.file("report.html");
  test::build_fixture_db(db, test::Fixture::kBase);
  const std::string f16 = "gemm/K=1024,M=1024,N=1024,batch=1/f16/NT";
  test::store_winner_counters(db, "fixture-h200", f16,
                              {{"dram__bytes_read.sum", 12e6},
                               {"dram__bytes_write.sum", 4e6},
                               {"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", 71.4}});
  auto r = test::run_kforge("report --db " + db + " --out " + html + " --device fixture-h200");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string page = test::read_file(html);
  // 2 * 1024^3 flops over 16 MB measured: 134 flop/byte, 1.91x the minimum traffic of 8.39 MB.
  CHECK(page.find("Measured DRAM traffic (ncu): 16.00 MB, 1.91x the minimum, so by measured traffic the winner "
                  "sits at 134 flop/byte (green).") != std::string::npos);
  CHECK(page.find("winner with measured DRAM traffic: 16.00 MB, 134 flop/byte") != std::string::npos);
  CHECK(page.find("<th>bound</th>") != std::string::npos);
  CHECK(page.find("<td>compute-bound: 0.71 tensor pipe busy, 0.28 of memory bandwidth (NVIDIA H200 SXM datasheet)</td>") != std::string::npos);
  // The other H200 problem has no counters: its bound comes from the model and says so.
  CHECK(page.find("No measured DRAM traffic stored") != std::string::npos);
  CHECK(page.find("(from the model, not counters)</td>") != std::string::npos);
}

TEST_CASE("report: ceilings kforge measured come before any datasheet", "[report][ceilings]") {
  test::TempDir dir;
  const std::string db = dir.file("base.db"), html = dir.file("report.html");
  test::build_fixture_db(db, test::Fixture::kBase);
  {
    auto d = Database::open(db, Database::Mode::kReadWrite).value();
    REQUIRE(d->put_measured_ceiling({"fixture-pocl", "copy_bandwidth", 40, "GB/s", "probe", "t", ""}).ok());
    REQUIRE(d->put_measured_ceiling({"fixture-pocl", "fp32_fma", 150, "GFLOP/s", "probe", "t", ""}).ok());
    REQUIRE(d->put_measured_ceiling({"fixture-h200", "copy_bandwidth", 4000, "GB/s", "probe", "t", ""}).ok());
  }
  auto r = test::run_kforge("report --db " + db + " --out " + html);
  REQUIRE(r.exit_code == 0);
  const std::string page = test::read_file(html);
  CHECK(page.find("No ceilings known for cpu-haswell") == std::string::npos);
  CHECK(page.find("Ceilings: measured by kforge ceilings (copy 40.00 GB/s, FP32 FMA 150.0 GFLOP/s).") != std::string::npos);
  // The H200 keeps its datasheet tensor peak beside the measured bandwidth.
  CHECK(page.find("Ceilings: measured by kforge ceilings (copy 4000 GB/s); FP16 tensor: NVIDIA H200 SXM datasheet") !=
        std::string::npos);
  CHECK(page.find("of measured copy bandwidth") != std::string::npos);
}

TEST_CASE("report: headless Chromium renders it, not blank, no console messages", "[report][browser]") {
  const std::string chromium = find_chromium();
  if (chromium.empty()) {
    // CTest marks this test skipped on this line (SKIP_REGULAR_EXPRESSION).
    WARN("SKIPPED: chromium is not installed (tools/deps.sh installs it)");
    return;
  }
  test::TempDir dir;
  const std::string db = dir.file("base.db"), html = dir.file("report.html");
  test::build_fixture_db(db, test::Fixture::kBase);
  REQUIRE(test::run_kforge("report --db " + db + " --out " + html).exit_code == 0);

  const Rendered shot = render(chromium, html, dir, 2400);
  INFO("chromium log:\n" << shot.log);
  REQUIRE(shot.exit_code == 0);
  CHECK(console_messages(shot.log).empty());
  const PixelStats px = pixel_stats(shot.screenshot);
  INFO("pixels " << px.pixels << ", non-background " << px.non_background << ", colours " << px.colours);
  REQUIRE(px.pixels == 1200u * 2400u);
  CHECK(px.non_background > px.pixels / 50);  // charts, tables and text, not an empty page
  CHECK(px.colours > 50);                     // several series colours, anti-aliased text

  // On a wide window the charts fill the width: the right third is drawn on.
  const Rendered wide = render(chromium, html, dir, 1600, 1400);
  REQUIRE(wide.exit_code == 0);
  const PixelStats wide_px = pixel_stats(wide.screenshot);
  INFO("right-third columns used: " << wide_px.right_columns_used << " of " << wide_px.width / 3);
  REQUIRE(wide_px.width == 1400u);
  CHECK(wide_px.right_columns_used > wide_px.width / 3 * 8 / 10);

  // The checks fail where they should: a page with a script error, and an empty page.
  test::TempDir bad_dir;
  const std::string bad = bad_dir.file("bad.html");
  test::write_file(bad, "<!DOCTYPE html><html><head><link rel=\"icon\" href=\"data:,\"></head><body><p>x</p>"
                        "<script>undefinedFunction();</script></body></html>");
  const Rendered broken = render(chromium, bad, bad_dir, 600);
  CHECK(console_messages(broken.log).size() == 1);
  const PixelStats blank = pixel_stats(broken.screenshot);
  CHECK_FALSE(blank.non_background > blank.pixels / 50);
}

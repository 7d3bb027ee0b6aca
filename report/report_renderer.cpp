// The HTML tuning report: a summary table, then per (device, problem) the
// tuning landscape, best-so-far, winner against default, and a roofline.
#include "report/report_renderer.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "generator/config.hpp"
#include "generator/manifest.hpp"
#include "report/counter_summary.hpp"
#include "report/svg_plot.hpp"
#include "report/tuning_facts.hpp"
#include "report/vendor_comparison.hpp"

namespace kforge::report {

namespace {

constexpr const char* kTemplateColors[] = {"#1f77b4", "#2ca02c", "#9467bd", "#17becf", "#8c564b", "#bcbd22"};

std::string status_color(const std::string& status) {
  static const std::map<std::string, std::string> colors = {
      {"compile_error", "#d62728"}, {"wrong_result", "#ff7f0e"}, {"resource_limit", "#e377c2"},
      {"launch_error", "#7f7f7f"},  {"crash", "#111111"},        {"timeout", "#8c564b"},
      {"not_supported", "#aaaaaa"}};
  auto it = colors.find(status);
  return it == colors.end() ? "#d62728" : it->second;
}

std::string ms_text(double ms) { return short_number(ms) + " ms"; }

/// One tuned (device, problem) and what the charts need from it.
struct Section {
  const DeviceRecord* device = nullptr;
  const ProblemRecord* problem = nullptr;
  std::vector<const ResultRecord*> results;  ///< evaluation order
  const ResultRecord* winner = nullptr;      ///< fastest ok result
  std::map<std::string, std::string> template_color;
  /// Per template name: its default configuration (from the stored manifest) and its result, if evaluated.
  struct Default {
    std::string template_name, config;
    const ResultRecord* result = nullptr;
  };
  std::vector<Default> defaults;
  std::vector<CounterRecord> winner_counters;  ///< the winner's stored counters (empty: none)
  std::optional<DeviceCeilings> ceilings;      ///< the device's peaks, where known
};

std::string result_tip(const ResultRecord& r) {
  std::string tip = r.template_name + " " + r.config + "\n" + r.status;
  if (r.status == "ok") {
    tip += ": median " + ms_text(r.median_ms) + " (p20 " + short_number(r.p20_ms) + ", p80 " + short_number(r.p80_ms) +
           ", " + std::to_string(r.count) + " reps)";
  } else if (!r.reason.empty()) {
    tip += ": " + r.reason.substr(0, 200);
  }
  return tip;
}

std::vector<Section> build_sections(const TuningSet& set, const ReportOptions& options) {
  std::vector<Section> out;
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& r : set.results) {
    if (!seen.insert({r.device_key, r.problem_key}).second) continue;
    Section s;
    s.device = set.device(r.device_key);
    s.problem = set.problem(r.problem_key);
    if (!s.device || !s.problem) continue;
    s.results = set.results_of(r.device_key, r.problem_key);
    s.ceilings = find_ceilings(*s.device, options.ceilings, set.measured_ceilings);
    std::stable_sort(s.results.begin(), s.results.end(), [](const ResultRecord* a, const ResultRecord* b) {
      return a->created_at != b->created_at ? a->created_at < b->created_at : a->id < b->id;
    });
    std::size_t color = 0;
    for (const auto* x : s.results) {
      if (x->status == "ok" && (!s.winner || x->median_ms < s.winner->median_ms)) s.winner = x;
      if (!s.template_color.count(x->template_name)) {
        s.template_color[x->template_name] = kTemplateColors[color++ % std::size(kTemplateColors)];
        Section::Default d;
        d.template_name = x->template_name;
        if (const TemplateRecord* t = set.find_template(x->template_name, x->template_hash)) {
          auto m = TemplateManifest::parse(t->manifest_json, "stored manifest of " + t->name);
          if (m.ok()) d.config = m->default_config().canonical_name();
        }
        s.defaults.push_back(std::move(d));
      }
    }
    for (auto& d : s.defaults) {
      for (const auto* x : s.results)
        if (x->template_name == d.template_name && x->config == d.config && !d.config.empty()) d.result = x;
    }
    if (s.winner) s.winner_counters = set.counters_of(s.winner->id);
    out.push_back(std::move(s));
  }
  std::stable_sort(out.begin(), out.end(), [](const Section& a, const Section& b) {
    return std::tie(a.device->name, a.problem->key) < std::tie(b.device->name, b.problem->key);
  });
  return out;
}

std::pair<double, double> time_range(const Section& s) {
  double lo = 0, hi = 0;
  for (const auto* r : s.results) {
    if (r->status != "ok" || !(r->median_ms > 0)) continue;
    const double a = r->p20_ms > 0 ? std::min(r->p20_ms, r->median_ms) : r->median_ms;
    const double b = std::max(r->p80_ms, r->median_ms);
    lo = lo == 0 ? a : std::min(lo, a);
    hi = std::max(hi, b);
  }
  if (lo == 0) return {0.1, 1};
  return {lo / 1.3, hi * 1.6};
}

/// Chart widths in viewBox units: a full-width chart, and one of the
/// per-parameter grid's cells. Charts scale to the page (kStyle's .chart).
constexpr int kWide = 1100;
constexpr int kCell = 540;

/// The slowest ok results, at most three, whose log time lies beyond the
/// upper Tukey fence (p75 + 1.5 IQR of the ok results' log medians).
std::set<const ResultRecord*> slow_outliers(const std::vector<const ResultRecord*>& ok_fastest_first) {
  std::set<const ResultRecord*> out;
  const std::size_t n = ok_fastest_first.size();
  if (n < 8) return out;
  auto log_at = [&](double q) { return std::log(ok_fastest_first[static_cast<std::size_t>(q * (n - 1))]->median_ms); };
  const double fence = log_at(0.75) + 1.5 * (log_at(0.75) - log_at(0.25));
  for (std::size_t i = n; i-- > 0 && out.size() < 3;) {
    if (std::log(ok_fastest_first[i]->median_ms) <= fence) break;
    out.insert(ok_fastest_first[i]);
  }
  return out;
}

std::string landscape_chart(const Section& s) {
  std::vector<const ResultRecord*> ok, failed;
  for (const auto* r : s.results) (r->status == "ok" ? ok : failed).push_back(r);
  std::stable_sort(ok.begin(), ok.end(),
                   [](const ResultRecord* a, const ResultRecord* b) { return a->median_ms < b->median_ms; });
  SvgPlot p(kWide, 340, "Tuning landscape: every candidate's median time, fastest first; failures at the right");
  const auto [lo, hi] = time_range(s);
  const double n = static_cast<double>(ok.size() + failed.size());
  p.set_x(0.5, std::max(1.5, n + 0.5), false, "candidate (ranked by median time; failures after the last)");
  p.set_y(lo, hi, true, "median time (ms, log)");
  const std::set<const ResultRecord*> outliers = slow_outliers(ok);
  double x = 1;
  for (const auto* r : ok) {
    const std::string& c = s.template_color.at(r->template_name);
    if (r->p20_ms > 0 && r->p80_ms > 0) p.segment(x, r->p20_ms, x, r->p80_ms, c, 1.2);
    const bool is_default = std::any_of(s.defaults.begin(), s.defaults.end(),
                                        [&](const Section::Default& d) { return d.result == r; });
    p.circle(x, r->median_ms, r == s.winner ? 6 : 3.5, c, result_tip(*r),
             r == s.winner ? "#000" : (is_default ? "#ff7f0e" : "none"));
    // Printed, not only hovered: the configurations a reader asks about first.
    const std::string anchor = x < n / 2 ? "start" : "end";
    const double dx = anchor == "start" ? 8 : -8;
    if (r == s.winner) {
      p.label_px(p.px(x) + dx, p.py(r->median_ms) - 8, "winner " + r->config, anchor, "#000", 11);
    } else if (is_default) {
      p.label_px(p.px(x) + dx, p.py(r->median_ms) + 16, "default " + r->config, anchor, "#b85c00", 11);
    } else if (outliers.count(r)) {
      p.label_px(p.px(x) + dx, p.py(r->median_ms) + 4, "slow: " + r->config, anchor, "#555", 10);
    }
    x += 1;
  }
  if (!failed.empty()) p.segment(x - 0.5, lo, x - 0.5, hi, "#bbb", 1, "4 3");
  for (const auto* r : failed) {
    p.cross(x, hi / 1.25, 5, status_color(r->status), result_tip(*r));
    x += 1;
  }
  if (s.winner) p.label_px(p.plot_left() + 8, p.plot_top() + 14, "winner: " + ms_text(s.winner->median_ms), "start", "#000");
  if (!failed.empty()) {
    p.label_px(p.plot_right() - 6, p.plot_top() + 14, std::to_string(failed.size()) + " failed", "end", "#d62728");
  }
  return p.svg();
}

std::string best_so_far_chart(const Section& s) {
  SvgPlot p(kWide, 280, "Best median time so far against the number of candidates evaluated");
  const auto [lo, hi] = time_range(s);
  const double n = static_cast<double>(s.results.size());
  p.set_x(0.5, std::max(1.5, n + 0.5), false, "evaluation (in the order candidates were evaluated)");
  p.set_y(lo, hi, true, "median time (ms, log)");
  std::vector<std::pair<double, double>> steps;
  double best = 0, x = 1;
  for (const auto* r : s.results) {
    if (r->status == "ok" && r->median_ms > 0) {
      p.circle(x, r->median_ms, 2.5, s.template_color.at(r->template_name), result_tip(*r));
      if (best == 0 || r->median_ms < best) {
        if (best > 0) steps.push_back({x, best});
        best = r->median_ms;
        steps.push_back({x, best});
      }
    } else if (r->status != "ok") {
      p.cross(x, lo * 1.12, 3, status_color(r->status), result_tip(*r));
    }
    x += 1;
  }
  if (best > 0) steps.push_back({n + 0.5, best});
  p.polyline(steps, "#0b5cad", 2);
  if (s.winner) p.label_px(p.plot_right() - 6, p.py(best) - 8, "best: " + s.winner->config, "end", "#0b5cad");
  return p.svg();
}

std::string default_chart(const Section& s) {
  std::vector<std::string> names = {"winner"};
  for (const auto& d : s.defaults) names.push_back("default of " + d.template_name);
  SvgPlot p(kWide, 260, "The winner's median time against each template's default configuration");
  double top = s.winner ? s.winner->p80_ms : 0;
  for (const auto& d : s.defaults)
    if (d.result && d.result->status == "ok") top = std::max({top, d.result->median_ms, d.result->p80_ms});
  if (!(top > 0)) top = 1;
  p.set_x(-0.5, static_cast<double>(names.size()) - 0.5, false, "");
  p.set_x_categories(names);
  p.set_y(0, top * 1.25, false, "median time (ms)");
  auto draw = [&](double x, const ResultRecord* r, const std::string& color, const std::string& missing) {
    if (!r || r->status != "ok") {
      p.label(x, top * 0.1, r ? r->status : missing, "middle", r ? status_color(r->status) : "#666", 12);
      return;
    }
    p.bar(x, 0.5, 0, r->median_ms, color, result_tip(*r));
    if (r->p20_ms > 0 && r->p80_ms > 0) p.segment(x, r->p20_ms, x, r->p80_ms, "#222", 1.5);
    std::string text = ms_text(r->median_ms);
    if (s.winner && r != s.winner && s.winner->median_ms > 0) text += ", winner " + short_number(r->median_ms / s.winner->median_ms, 3) + "x faster";
    p.label(x, std::max(r->median_ms, r->p80_ms) + top * 0.04, text, "middle", "#222", 11);
  };
  draw(0, s.winner, "#0b5cad", "no ok candidate");
  for (std::size_t i = 0; i < s.defaults.size(); ++i) {
    const auto& d = s.defaults[i];
    draw(static_cast<double>(i + 1), d.result, "#f0a35e",
         d.config.empty() ? "default unknown (manifest not stored)" : d.config + " not evaluated");
  }
  return p.svg();
}

/// The compute ceiling that applies to the problem's dtype.
double compute_peak(const DeviceCeilings& c, const std::string& dtype) {
  if ((dtype == "f16" || dtype == "bf16") && c.fp16_gflops > 0) return c.fp16_gflops;
  return c.fp32_gflops;
}

/// The winner's counters, with the model's rows where none were stored.
std::vector<CounterRecord> winner_evidence(const Section& s) {
  return s.winner ? with_model_rows(s.winner_counters, *s.problem, s.winner->median_ms) : s.winner_counters;
}

/// The winner's bound verdict (docs/profiling.md), or none without a winner.
std::optional<BoundVerdict> winner_verdict(const Section& s) {
  if (!s.winner) return std::nullopt;
  return verdict_for(s.winner->median_ms, winner_evidence(s), s.ceilings, s.problem->dtype);
}

/// Where the winner sits with its measured DRAM traffic in place of the
/// model's minimum: intensity flops / measured bytes, same GFLOP/s.
struct MeasuredPoint {
  double intensity = 0, dram_bytes = 0, traffic_ratio = 0;  ///< measured over model bytes
};
std::optional<MeasuredPoint> measured_point(const Section& s) {
  if (!s.winner) return std::nullopt;
  const BoundEvidence e = evidence_from_counters(winner_evidence(s), s.winner->median_ms);
  if (!e.dram_bytes || !(*e.dram_bytes > 0) || !(e.model_flops > 0)) return std::nullopt;
  MeasuredPoint m;
  m.dram_bytes = *e.dram_bytes;
  m.intensity = e.model_flops / m.dram_bytes;
  m.traffic_ratio = e.model_bytes > 0 ? m.dram_bytes / e.model_bytes : 0;
  return m;
}

/// The note's sentences on measured traffic and the verdict.
std::string evidence_note(const Section& s) {
  std::string note;
  if (const auto m = measured_point(s)) {
    note += " Measured DRAM traffic (ncu): " + short_number(m->dram_bytes / 1e6) + " MB";
    if (m->traffic_ratio > 0) note += ", " + short_number(m->traffic_ratio, 3) + "x the minimum";
    note += ", so by measured traffic the winner sits at " + short_number(m->intensity, 3) + " flop/byte (green).";
  } else {
    note += " No measured DRAM traffic stored (profile with `kforge tune --profile`, docs/profiling.md).";
  }
  if (const auto v = winner_verdict(s); v && v->bound != Bound::kUnknown) note += " Bound: " + v->text + ".";
  return note;
}

/// The summary table's bound column: the verdict, or "-" where nothing is known.
std::string bound_cell(const Section& s) {
  const auto v = winner_verdict(s);
  return v && v->bound != Bound::kUnknown ? html_escape(v->text) : "-";
}

std::string roofline_chart(const Section& s, const std::optional<DeviceCeilings>& ceil, std::string& note) {
  const auto w = s.winner ? throughput_of(*s.problem, s.winner->median_ms) : std::nullopt;
  if (!w) {
    note = s.winner ? "The operator's cost model is unknown to this kforge: no throughput."
                    : "No candidate passed: no throughput.";
    return "";
  }
  SvgPlot p(kWide, 340, "Achieved throughput against the device's ceilings (roofline)");
  double ymax = w->gflops * 4, xmin = w->intensity / 20, xmax = w->intensity * 20;
  if (ceil) {
    ymax = std::max({ymax, ceil->fp32_gflops * 2, ceil->fp16_gflops * 2});
    if (ceil->bandwidth_gbs > 0) {
      for (double peak : {ceil->fp32_gflops, ceil->fp16_gflops}) {
        if (peak > 0) {
          xmin = std::min(xmin, peak / ceil->bandwidth_gbs / 20);
          xmax = std::max(xmax, peak / ceil->bandwidth_gbs * 20);
        }
      }
    }
  }
  const auto measured = measured_point(s);
  if (measured) {
    xmin = std::min(xmin, measured->intensity / 4);
    xmax = std::max(xmax, measured->intensity * 4);
  }
  const double ymin = std::max(1e-3, std::min(w->gflops / 10, w->gflops / 10));
  p.set_x(xmin, xmax, true, "arithmetic intensity (flop per byte of minimum traffic, log)");
  p.set_y(ymin, ymax, true, "GFLOP/s (log)");
  if (ceil) {
    struct Roof {
      double peak;
      const char* name;
      const char* color;
    };
    for (Roof roof : {Roof{ceil->fp32_gflops, "FP32 vector peak", "#444"},
                      Roof{ceil->fp16_gflops, "FP16 tensor peak", "#9467bd"}}) {
      if (roof.peak <= 0) continue;
      std::vector<std::pair<double, double>> line;
      if (ceil->bandwidth_gbs > 0) {
        const double ridge = roof.peak / ceil->bandwidth_gbs;
        line = {{xmin, ceil->bandwidth_gbs * xmin}, {ridge, roof.peak}, {xmax, roof.peak}};
      } else {
        line = {{xmin, roof.peak}, {xmax, roof.peak}};
      }
      p.polyline(line, roof.color, 1.8);
      p.label_px(p.plot_right() - 6, p.py(roof.peak) - 5,
                 std::string(roof.name) + " " + short_number(roof.peak / 1000, 3) + " TFLOP/s", "end", roof.color, 11);
    }
    if (ceil->bandwidth_gbs > 0) {
      const double x = xmin * 2;
      p.label_px(p.px(x) + 6, p.py(ceil->bandwidth_gbs * x) + 14, "memory " + short_number(ceil->bandwidth_gbs, 4) + " GB/s",
                 "start", "#444", 11);
    }
  }
  for (const auto& d : s.defaults) {
    if (!d.result || d.result->status != "ok" || d.result == s.winner) continue;
    if (auto t = throughput_of(*s.problem, d.result->median_ms)) {
      p.circle(t->intensity, t->gflops, 5, "#f0a35e",
               "default " + d.config + ": " + short_number(t->gflops) + " GFLOP/s");
    }
  }
  p.circle(w->intensity, w->gflops, 6, "#0b5cad",
           "winner " + s.winner->config + ": " + short_number(w->gflops) + " GFLOP/s, " + short_number(w->gbps) + " GB/s");
  if (measured) {
    p.circle(measured->intensity, w->gflops, 6, "#2ca02c",
             "winner with measured DRAM traffic: " + short_number(measured->dram_bytes / 1e6) + " MB, " +
                 short_number(measured->intensity, 3) + " flop/byte");
  }
  if (ceil) {
    const double peak = compute_peak(*ceil, s.problem->dtype);
    const double bound = ceil->bandwidth_gbs > 0 ? std::min(peak, ceil->bandwidth_gbs * w->intensity) : peak;
    note = "Winner: " + short_number(w->gflops) + " GFLOP/s (" + short_number(w->gbps) + " GB/s) at " +
           short_number(w->intensity, 3) + " flop/byte; the roofline bound there is " + short_number(bound) +
           " GFLOP/s, so " + short_number(bound > 0 ? 100 * w->gflops / bound : 0, 3) + "% of it. Ceilings: " +
           ceil->source + ".";
  } else {
    note = "Winner: " + short_number(w->gflops) + " GFLOP/s (" + short_number(w->gbps) + " GB/s) at " +
           short_number(w->intensity, 3) + " flop/byte. No ceilings known for " + s.device->name +
           " (pass --ceilings FILE, docs/report.md).";
  }
  note += evidence_note(s);
  return p.svg();
}

/// One chart per tunable of `template_name`: every ok candidate's median
/// against that parameter's value, the winner and the default ringed.
std::string parameter_charts(const Section& s, const std::string& template_name) {
  std::map<std::string, std::set<std::int64_t>> values;  // parameter -> values seen
  std::vector<std::pair<const ResultRecord*, Config>> ok;
  for (const auto* r : s.results) {
    if (r->template_name != template_name || r->status != "ok" || !(r->median_ms > 0)) continue;
    auto c = Config::parse(r->config);
    if (!c.ok()) continue;
    for (const auto& [name, v] : c->values) values[name].insert(v);
    ok.emplace_back(r, std::move(*c));
  }
  if (ok.empty()) return "";
  const auto [lo, hi] = time_range(s);
  const Section::Default* def = nullptr;
  for (const auto& d : s.defaults)
    if (d.template_name == template_name) def = &d;
  std::string out = "<div class=\"params\">\n";
  for (const auto& [name, seen] : values) {
    const std::vector<std::int64_t> axis(seen.begin(), seen.end());
    std::vector<std::string> labels;
    for (auto v : axis) labels.push_back(std::to_string(v));
    SvgPlot p(kCell, 240, "Median time against " + name + " (" + template_name + ")");
    p.set_x(-0.5, static_cast<double>(axis.size()) - 0.5, false, name);
    p.set_x_categories(labels);
    p.set_y(lo, hi, true, "median time (ms, log)");
    for (const auto& [r, c] : ok) {
      const auto at = c.values.find(name);
      if (at == c.values.end()) continue;
      const double x = static_cast<double>(std::find(axis.begin(), axis.end(), at->second) - axis.begin());
      const bool is_default = def && def->result == r;
      p.circle(x, r->median_ms, r == s.winner ? 6 : 3, s.template_color.at(template_name), result_tip(*r),
               r == s.winner ? "#000" : (is_default ? "#ff7f0e" : "none"));
    }
    for (const auto& [r, c] : ok) {
      if (r != s.winner || !c.values.count(name)) continue;
      p.label_px(p.plot_left() + 8, p.plot_top() + 14, "winner " + name + " = " + std::to_string(c.values.at(name)),
                 "start", "#000");
    }
    out += p.svg();
  }
  return out + "</div>\n";
}

std::string legend(const Section& s) {
  std::string out = "<p class=\"legend\">";
  for (const auto& [name, color] : s.template_color)
    out += "<span class=\"sw\" style=\"background:" + color + "\"></span>" + html_escape(name) + " ";
  std::map<std::string, int> failures;
  for (const auto* r : s.results)
    if (r->status != "ok") ++failures[r->status];
  for (const auto& [status, count] : failures) {
    out += "<span class=\"x\" style=\"color:" + status_color(status) + "\">&#x2715;</span>" + html_escape(status) +
           " (" + std::to_string(count) + ") ";
  }
  out += "<span class=\"sw ring\"></span>winner <span class=\"sw ring def\"></span>default; the winner, the "
         "defaults and the slowest outliers are labelled with their configurations, and every mark names its own "
         "on hover.</p>\n";
  return out;
}

const char* kStyle = R"CSS(
body { font-family: sans-serif; margin: 24px; color: #222; background: #fff; max-width: 1800px; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 36px; border-top: 1px solid #ddd; padding-top: 16px; }
h3 { font-size: 14px; margin: 18px 0 4px; color: #333; }
table { border-collapse: collapse; font-size: 12px; } td, th { border: 1px solid #ccc; padding: 3px 6px; text-align: left; }
th { background: #f1f1f5; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.meta { color: #555; font-size: 12px; } .legend { font-size: 12px; color: #333; }
.sw { display: inline-block; width: 10px; height: 10px; border-radius: 5px; margin: 0 4px 0 10px; }
.ring { border: 2px solid #000; width: 8px; height: 8px; } .ring.def { border-color: #ff7f0e; }
.x { margin: 0 3px 0 10px; font-weight: bold; } .note { font-size: 12px; color: #333; }
svg { display: block; margin: 4px 0; }
svg.chart { width: 100%; height: auto; }
.params { display: grid; grid-template-columns: repeat(auto-fill, minmax(420px, 1fr)); gap: 4px 24px; }
)CSS";

}  // namespace

namespace {

/// Per tuned problem with a library result, kforge's best kernel against the
/// best library call (vendor_comparison.hpp); "" where none was tuned.
std::string vendor_table(const TuningSet& set) {
  const auto rows = with_library(compare_vendor(set));
  if (rows.empty()) return "";
  auto side = [](const ComparedEntry& e) {
    return e.template_name.empty()
               ? std::string("-")
               : html_escape(e.template_name + " " + e.config) + " (" + ms_text(e.median_ms) + ")";
  };
  std::ostringstream h;
  h << "<h2 id=\"vendor\">kforge against the vendor library</h2>\n<p class=\"meta\">Ratio: kforge's best "
       "kernel "
       "median over the best library call's; above 1 the library is faster.</p>\n<table>\n<tr><th>device</th>"
       "<th>problem</th><th>kforge best</th><th>library best</th><th>ratio</th><th>faster</th></tr>\n";
  for (const VendorComparison& v : rows) {
    const DeviceRecord* d = set.device(v.device_key);
    h << "<tr><td>" << html_escape(d ? d->name : v.device_key) << "</td><td>" << html_escape(v.problem_key)
      << "</td><td>" << side(v.kernel) << "</td><td>" << side(v.library) << "</td><td class=\"num\">"
      << (v.ratio > 0 ? short_number(v.ratio, 3) : "-") << "</td><td>" << (v.faster.empty() ? "-" : v.faster)
      << "</td></tr>\n";
  }
  h << "</table>\n";
  return h.str();
}

}  // namespace

std::string render_report_html(const TuningSet& set, const ReportOptions& options) {
  const auto sections = build_sections(set, options);
  std::ostringstream h;
  h << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" << html_escape(options.title)
    << "</title>\n<link rel=\"icon\" href=\"data:,\">\n<style>" << kStyle << "</style>\n</head>\n<body>\n";
  h << "<h1>" << html_escape(options.title) << "</h1>\n";
  h << "<p class=\"meta\">From " << html_escape(set.source) << ": " << sections.size() << " tuned problem"
    << (sections.size() == 1 ? "" : "s") << ", " << set.results.size() << " evaluated candidates"
    << (set.filter.all_results ? "" : " (winners only: failures are not in this input)") << ".</p>\n";
  if (sections.empty()) h << "<p>Nothing has been tuned in this input.</p>\n";
  if (!sections.empty()) {
    h << "<table>\n<tr><th>device</th><th>problem</th><th>candidates</th><th>failed</th><th>winner</th>"
         "<th>median</th><th>speedup over default</th><th>GFLOP/s</th><th>bound</th></tr>\n";
    for (std::size_t i = 0; i < sections.size(); ++i) {
      const Section& s = sections[i];
      std::size_t failed = 0;
      for (const auto* r : s.results) failed += r->status != "ok";
      std::string speedup = "-";
      for (const auto& d : s.defaults) {
        if (s.winner && d.result && d.result->status == "ok" && d.template_name == s.winner->template_name)
          speedup = short_number(d.result->median_ms / s.winner->median_ms, 3) + "x";
      }
      const auto tp = s.winner ? throughput_of(*s.problem, s.winner->median_ms) : std::nullopt;
      h << "<tr><td>" << html_escape(s.device->name) << "</td><td><a href=\"#p" << i << "\">"
        << html_escape(s.problem->key) << "</a></td><td class=\"num\">" << s.results.size()
        << "</td><td class=\"num\">" << failed << "</td><td>"
        << (s.winner ? html_escape(s.winner->template_name + " " + s.winner->config) : "none") << "</td><td class=\"num\">"
        << (s.winner ? ms_text(s.winner->median_ms) : "-") << "</td><td class=\"num\">" << speedup
        << "</td><td class=\"num\">" << (tp ? short_number(tp->gflops) : "-") << "</td><td>" << bound_cell(s)
        << "</td></tr>\n";
    }
    h << "</table>\n" << vendor_table(set);
  }
  for (std::size_t i = 0; i < sections.size(); ++i) {
    const Section& s = sections[i];
    h << "<h2 id=\"p" << i << "\">" << html_escape(s.problem->key) << " on " << html_escape(s.device->name) << "</h2>\n";
    h << "<p class=\"meta\">" << html_escape(s.device->backend + ", " + s.device->arch + ", device key " + s.device->key)
      << ". " << s.results.size() << " candidates";
    if (s.winner) {
      h << "; winner " << html_escape(s.winner->template_name + " " + s.winner->config) << " at "
        << ms_text(s.winner->median_ms) << " (p20–p80 " << short_number(s.winner->p20_ms) << "–"
        << short_number(s.winner->p80_ms) << " ms, " << s.winner->count << " repetitions)";
    } else {
      h << "; no candidate passed";
    }
    h << ".</p>\n" << legend(s);
    h << "<h3>Tuning landscape</h3>\n" << landscape_chart(s);
    h << "<h3>Best so far</h3>\n" << best_so_far_chart(s);
    h << "<h3>Winner against default</h3>\n" << default_chart(s);
    for (const auto& [name, color] : s.template_color) {
      const std::string charts = parameter_charts(s, name);
      if (!charts.empty()) h << "<h3>Time against each parameter: " << html_escape(name) << "</h3>\n" << charts;
    }
    h << "<h3>Throughput against ceilings</h3>\n";
    std::string note;
    const std::string roof = roofline_chart(s, s.ceilings, note);
    h << roof << "<p class=\"note\">" << html_escape(note) << "</p>\n";
  }
  h << "</body>\n</html>\n";
  return h.str();
}

}  // namespace kforge::report

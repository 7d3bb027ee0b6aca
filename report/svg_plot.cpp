// Inline-SVG plots: axes, ticks, grid and marks.
#include "report/svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kforge::report {

namespace {

std::string f1(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string tip_element(const std::string& tip) {
  return tip.empty() ? std::string() : "<title>" + html_escape(tip) + "</title>";
}

}  // namespace

std::string html_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

SvgPlot::SvgPlot(int width, int height, std::string title)
    : width_(width), height_(height), title_(std::move(title)) {}

void SvgPlot::set_x(double lo, double hi, bool log, std::string label) {
  if (log && hi <= 0) hi = 1;
  if (log && lo <= 0) lo = hi / 10;
  if (!(hi > lo)) hi = log ? lo * 10 : lo + 1;
  x_ = {lo, hi, log, std::move(label)};
}

void SvgPlot::set_y(double lo, double hi, bool log, std::string label) {
  if (log && hi <= 0) hi = 1;
  if (log && lo <= 0) lo = hi / 10;
  if (!(hi > lo)) hi = log ? lo * 10 : lo + 1;
  y_ = {lo, hi, log, std::move(label)};
}

void SvgPlot::set_x_categories(std::vector<std::string> labels) { categories_ = std::move(labels); }

double SvgPlot::frac(const Axis& a, double v) const {
  double f = a.log ? (std::log10(std::max(v, 1e-300)) - std::log10(a.lo)) / (std::log10(a.hi) - std::log10(a.lo))
                   : (v - a.lo) / (a.hi - a.lo);
  return std::clamp(f, 0.0, 1.0);
}

double SvgPlot::px(double x) const { return left_ + frac(x_, x) * (width_ - left_ - right_); }
double SvgPlot::py(double y) const { return height_ - bottom_ - frac(y_, y) * (height_ - top_ - bottom_); }

std::vector<double> SvgPlot::ticks(const Axis& a) const {
  std::vector<double> t;
  if (a.log) {
    const int e0 = static_cast<int>(std::floor(std::log10(a.lo))), e1 = static_cast<int>(std::ceil(std::log10(a.hi)));
    const bool few_decades = e1 - e0 <= 2;
    for (int e = e0; e <= e1; ++e) {
      for (double m : few_decades ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
        const double v = m * std::pow(10.0, e);
        if (v >= a.lo * (1 - 1e-9) && v <= a.hi * (1 + 1e-9)) t.push_back(v);
      }
    }
    return t;
  }
  const double span = a.hi - a.lo;
  const double raw = span / 5;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= m * mag) {
      step = m * mag;
      break;
    }
  }
  for (double v = std::ceil(a.lo / step) * step; v <= a.hi + step * 1e-9; v += step) t.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
  return t;
}

std::string SvgPlot::tick_text(double v) {
  char buf[32];
  const double a = std::fabs(v);
  if (a != 0 && (a >= 1e5 || a < 1e-3)) {
    std::snprintf(buf, sizeof buf, "%.0e", v);
  } else {
    std::snprintf(buf, sizeof buf, "%g", v);
  }
  return buf;
}

void SvgPlot::circle(double x, double y, double r, const std::string& fill, const std::string& tip,
                     const std::string& stroke) {
  marks_ += "<circle cx=\"" + f1(px(x)) + "\" cy=\"" + f1(py(y)) + "\" r=\"" + f1(r) + "\" fill=\"" + fill +
            "\" stroke=\"" + stroke + "\" stroke-width=\"1.5\">" + tip_element(tip) + "</circle>\n";
}

void SvgPlot::cross(double x, double y, double r, const std::string& color, const std::string& tip) {
  const double cx = px(x), cy = py(y);
  marks_ += "<path d=\"M" + f1(cx - r) + " " + f1(cy - r) + "L" + f1(cx + r) + " " + f1(cy + r) + "M" + f1(cx - r) +
            " " + f1(cy + r) + "L" + f1(cx + r) + " " + f1(cy - r) + "\" stroke=\"" + color +
            "\" stroke-width=\"2\" fill=\"none\">" + tip_element(tip) + "</path>\n";
}

void SvgPlot::segment(double x1, double y1, double x2, double y2, const std::string& color, double w,
                      const std::string& dash) {
  marks_ += "<line x1=\"" + f1(px(x1)) + "\" y1=\"" + f1(py(y1)) + "\" x2=\"" + f1(px(x2)) + "\" y2=\"" +
            f1(py(y2)) + "\" stroke=\"" + color + "\" stroke-width=\"" + f1(w) + "\"" +
            (dash.empty() ? "" : " stroke-dasharray=\"" + dash + "\"") + "/>\n";
}

void SvgPlot::polyline(const std::vector<std::pair<double, double>>& points, const std::string& color, double w) {
  if (points.empty()) return;
  std::string pts;
  for (const auto& [x, y] : points) pts += f1(px(x)) + "," + f1(py(y)) + " ";
  marks_ += "<polyline points=\"" + pts + "\" fill=\"none\" stroke=\"" + color + "\" stroke-width=\"" + f1(w) +
            "\"/>\n";
}

void SvgPlot::bar(double xc, double wd, double y0, double y1, const std::string& fill, const std::string& tip) {
  const double x0 = px(xc - wd / 2), x1 = px(xc + wd / 2);
  const double top = std::min(py(y0), py(y1)), bottom = std::max(py(y0), py(y1));
  marks_ += "<rect x=\"" + f1(x0) + "\" y=\"" + f1(top) + "\" width=\"" + f1(std::max(1.0, x1 - x0)) +
            "\" height=\"" + f1(std::max(1.0, bottom - top)) + "\" fill=\"" + fill + "\">" + tip_element(tip) +
            "</rect>\n";
}

void SvgPlot::label(double x, double y, const std::string& text, const std::string& anchor, const std::string& color,
                    int size) {
  label_px(px(x), py(y), text, anchor, color, size);
}

void SvgPlot::label_px(double x, double y, const std::string& text, const std::string& anchor,
                       const std::string& color, int size) {
  marks_ += "<text x=\"" + f1(x) + "\" y=\"" + f1(y) + "\" text-anchor=\"" + anchor + "\" fill=\"" + color +
            "\" font-size=\"" + std::to_string(size) + "\">" + html_escape(text) + "</text>\n";
}

void SvgPlot::swatch_px(double x, double y, const std::string& color, const std::string& shape) {
  if (shape == "cross") {
    marks_ += "<path d=\"M" + f1(x - 4) + " " + f1(y - 4) + "L" + f1(x + 4) + " " + f1(y + 4) + "M" + f1(x - 4) +
              " " + f1(y + 4) + "L" + f1(x + 4) + " " + f1(y - 4) + "\" stroke=\"" + color +
              "\" stroke-width=\"2\"/>\n";
  } else if (shape == "line") {
    marks_ += "<line x1=\"" + f1(x - 6) + "\" y1=\"" + f1(y) + "\" x2=\"" + f1(x + 6) + "\" y2=\"" + f1(y) +
              "\" stroke=\"" + color + "\" stroke-width=\"2\"/>\n";
  } else {
    marks_ += "<circle cx=\"" + f1(x) + "\" cy=\"" + f1(y) + "\" r=\"4\" fill=\"" + color + "\"/>\n";
  }
}

std::string SvgPlot::svg() const {
  // No fixed size: the chart scales to its container's width, the viewBox
  // keeping its proportions (the page's CSS sets width: 100%).
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 " +
                  std::to_string(width_) + " " + std::to_string(height_) +
                  "\" role=\"img\" font-family=\"sans-serif\"><title>" + html_escape(title_) + "</title>\n";
  const int l = plot_left(), r = plot_right(), t = plot_top(), b = plot_bottom();
  s += "<rect x=\"" + std::to_string(l) + "\" y=\"" + std::to_string(t) + "\" width=\"" + std::to_string(r - l) +
       "\" height=\"" + std::to_string(b - t) + "\" fill=\"#fbfbfd\" stroke=\"#999\"/>\n";
  for (double v : ticks(y_)) {
    const std::string y = f1(py(v));
    s += "<line x1=\"" + std::to_string(l) + "\" y1=\"" + y + "\" x2=\"" + std::to_string(r) + "\" y2=\"" + y +
         "\" stroke=\"#e4e4ea\"/>\n<text x=\"" + std::to_string(l - 6) + "\" y=\"" + y +
         "\" dy=\"4\" text-anchor=\"end\" font-size=\"11\" fill=\"#444\">" + tick_text(v) + "</text>\n";
  }
  if (!categories_.empty()) {
    for (std::size_t i = 0; i < categories_.size(); ++i) {
      s += "<text x=\"" + f1(px(static_cast<double>(i))) + "\" y=\"" + std::to_string(b + 16) +
           "\" text-anchor=\"middle\" font-size=\"11\" fill=\"#444\">" + html_escape(categories_[i]) + "</text>\n";
    }
  } else {
    for (double v : ticks(x_)) {
      const std::string x = f1(px(v));
      s += "<line x1=\"" + x + "\" y1=\"" + std::to_string(t) + "\" x2=\"" + x + "\" y2=\"" + std::to_string(b) +
           "\" stroke=\"#eeeef2\"/>\n<text x=\"" + x + "\" y=\"" + std::to_string(b + 15) +
           "\" text-anchor=\"middle\" font-size=\"11\" fill=\"#444\">" + tick_text(v) + "</text>\n";
    }
  }
  s += "<text x=\"" + std::to_string((l + r) / 2) + "\" y=\"" + std::to_string(height_ - 8) +
       "\" text-anchor=\"middle\" font-size=\"12\" fill=\"#222\">" + html_escape(x_.label) + "</text>\n";
  s += "<text transform=\"translate(14," + std::to_string((t + b) / 2) +
       ") rotate(-90)\" text-anchor=\"middle\" font-size=\"12\" fill=\"#222\">" + html_escape(y_.label) + "</text>\n";
  s += marks_;
  return s + "</svg>\n";
}

}  // namespace kforge::report

// A small inline-SVG chart builder for `kforge report`: one plot area with
// linear or logarithmic axes, ticks and grid, and marks in data coordinates.
// Output is plain SVG text, no script, for embedding in a self-contained page.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kforge::report {

/// Escapes &, <, >, " and ' for HTML and SVG text and attributes.
std::string html_escape(const std::string& s);

class SvgPlot {
 public:
  /// A width x height pixel chart; `title` is its accessible name.
  SvgPlot(int width, int height, std::string title);

  /// Axis ranges in data units; with `log` the range must be positive
  /// (non-positive bounds are replaced by a decade below the upper bound).
  void set_x(double lo, double hi, bool log, std::string label);
  void set_y(double lo, double hi, bool log, std::string label);
  /// Category labels under the x axis instead of numeric ticks (bar charts);
  /// category i is centred at x = i.
  void set_x_categories(std::vector<std::string> labels);

  double px(double x) const;  ///< data x to pixel x (clamped to the plot area)
  double py(double y) const;  ///< data y to pixel y (clamped)
  int plot_left() const { return left_; }
  int plot_right() const { return width_ - right_; }
  int plot_top() const { return top_; }
  int plot_bottom() const { return height_ - bottom_; }

  /// Marks in data coordinates; `tip` becomes a hover tooltip (<title>).
  void circle(double x, double y, double r_px, const std::string& fill, const std::string& tip,
              const std::string& stroke = "none");
  void cross(double x, double y, double r_px, const std::string& color, const std::string& tip);
  void segment(double x1, double y1, double x2, double y2, const std::string& color, double width_px,
               const std::string& dash = "");
  void polyline(const std::vector<std::pair<double, double>>& points, const std::string& color, double width_px);
  void bar(double x_centre, double width_data, double y0, double y1, const std::string& fill, const std::string& tip);
  /// Text at data coordinates (`anchor`: start, middle, end).
  void label(double x, double y, const std::string& text, const std::string& anchor = "start",
             const std::string& color = "#333", int size_px = 11);
  /// Text at pixel coordinates (legends, notes).
  void label_px(double x, double y, const std::string& text, const std::string& anchor = "start",
                const std::string& color = "#333", int size_px = 11);
  void swatch_px(double x, double y, const std::string& color, const std::string& shape = "circle");

  /// The complete <svg> element: frame, grid, ticks, axis labels, then the marks.
  std::string svg() const;

 private:
  struct Axis {
    double lo = 0, hi = 1;
    bool log = false;
    std::string label;
  };
  double frac(const Axis& a, double v) const;
  std::vector<double> ticks(const Axis& a) const;
  static std::string tick_text(double v);

  int width_, height_;
  int left_ = 70, right_ = 24, top_ = 16, bottom_ = 46;
  std::string title_;
  Axis x_, y_;
  std::vector<std::string> categories_;
  std::string marks_;
};

}  // namespace kforge::report

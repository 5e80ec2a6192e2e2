#include "report/svg.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace wstune::svg {

std::string escape(const std::string& t) {
  std::string r;
  r.reserve(t.size());
  for (char c : t) {
    switch (c) {
      case '&':
        r += "&amp;";
        break;
      case '<':
        r += "&lt;";
        break;
      case '>':
        r += "&gt;";
        break;
      case '"':
        r += "&quot;";
        break;
      default:
        r += c;
    }
  }
  return r;
}

namespace {

const char* palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};

std::string header(double w, double h) {
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
      "width=\"{:.0f}\" height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\" font-family=\"sans-serif\" "
      "font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      w, h, w, h);
}

std::string text(double x, double y, const std::string& s, const char* anchor = "middle", int size = 12,
                 const char* extra = "") {
  return fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\" font-size=\"{}\"{}>{}</text>\n", x, y, anchor,
                     size, extra, escape(s));
}

// Green (low) to red (high) through yellow.
std::string colour(double t) {
  t = std::clamp(t, 0.0, 1.0);
  const int r = static_cast<int>(t < 0.5 ? 2 * t * 255 : 255);
  const int g = static_cast<int>(t < 0.5 ? 170 + 2 * t * 60 : 230 * (1 - (t - 0.5) * 2) + 40 * (t - 0.5) * 2);
  return fmt::format("#{:02x}{:02x}40", r, std::clamp(g, 0, 255));
}

std::string fmt_num(double v) {
  if (v == 0) return "0";
  const double a = std::fabs(v);
  if (a >= 1000) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  if (a >= 0.01) return fmt::format("{:.3g}", v);
  return fmt::format("{:.2e}", v);
}

struct Range {
  double lo, hi;
};
Range nice(double lo, double hi) {
  if (!(hi > lo)) {
    lo -= 1;
    hi += 1;
  }
  const double pad = (hi - lo) * 0.05;
  return {lo - pad, hi + pad};
}

}  // namespace

std::string render(const Heatmap& h) {
  const double cell_w = std::max(
      34.0, 7.0 * [&] {
        std::size_t m = 0;
        for (auto& c : h.columns) m = std::max(m, c.size());
        return static_cast<double>(m);
      }());
  const double cell_h = 22, left = 90, top = 50;
  const double w = left + cell_w * static_cast<double>(h.columns.size()) + 30;
  const double ht = top + cell_h * static_cast<double>(h.rows.size()) + 60;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  std::size_t br = 0, bc = 0;
  for (std::size_t r = 0; r < h.values.size(); ++r)
    for (std::size_t c = 0; c < h.values[r].size(); ++c)
      if (h.values[r][c]) {
        if (*h.values[r][c] < lo) {
          lo = *h.values[r][c];
          br = r;
          bc = c;
        }
        hi = std::max(hi, *h.values[r][c]);
      }
  std::string s = header(w, ht);
  s += text(w / 2, 20, h.title, "middle", 14, " font-weight=\"bold\"");
  for (std::size_t r = 0; r < h.rows.size(); ++r) {
    s += text(left - 6, top + cell_h * (static_cast<double>(r) + 0.7), h.rows[r], "end");
    for (std::size_t c = 0; c < h.columns.size(); ++c) {
      const double x = left + cell_w * static_cast<double>(c), y = top + cell_h * static_cast<double>(r);
      const auto v = (r < h.values.size() && c < h.values[r].size()) ? h.values[r][c] : std::nullopt;
      const bool best = v && r == br && c == bc;
      if (v) {
        const double t = hi > lo ? (std::log(*v) - std::log(lo)) / (std::log(hi) - std::log(lo)) : 0;
        s += fmt::format(
            "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\" "
            "stroke=\"{}\" stroke-width=\"{}\"><title>{} x {}: {} {}</title></rect>\n",
            x, y, cell_w, cell_h, colour(t), best ? "black" : "white", best ? 2 : 1, escape(h.columns[c]),
            escape(h.rows[r]), fmt_num(*v), escape(h.unit));
        s += text(x + cell_w / 2, y + cell_h * 0.7, fmt_num(*v), "middle", 9);
      } else {
        s += fmt::format(
            "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#dddddd\" "
            "stroke=\"white\"><title>{} x {}: invalid</title></rect>\n",
            x, y, cell_w, cell_h, escape(h.columns[c]), escape(h.rows[r]));
      }
    }
  }
  for (std::size_t c = 0; c < h.columns.size(); ++c)
    s += text(left + cell_w * (static_cast<double>(c) + 0.5), top - 6, h.columns[c]);
  s += text(left + cell_w * static_cast<double>(h.columns.size()) / 2, ht - 30, h.x_label);
  s += text(20, top + cell_h * static_cast<double>(h.rows.size()) / 2, h.y_label, "middle", 12,
            fmt::format(" transform=\"rotate(-90 20 {:.1f})\"", top + cell_h * static_cast<double>(h.rows.size()) / 2)
                .c_str());
  s += text(left, ht - 10,
            fmt::format("{} per cell; green = fastest, red = slowest, grey = invalid; outlined = best", h.unit),
            "start", 10);
  s += "</svg>\n";
  return s;
}

std::string render(const LinePlot& p) {
  const double w = 640, ht = 400, left = 70, right = 160, top = 40, bottom = 50;
  const double pw = w - left - right, ph = ht - top - bottom;
  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo, ylo = xlo, yhi = -xlo;
  for (const auto& se : p.series)
    for (std::size_t i = 0; i < se.x.size() && i < se.y.size(); ++i) {
      xlo = std::min(xlo, se.x[i]);
      xhi = std::max(xhi, se.x[i]);
      ylo = std::min(ylo, se.y[i]);
      yhi = std::max(yhi, se.y[i]);
    }
  if (!std::isfinite(xlo)) {
    xlo = 0;
    xhi = 1;
    ylo = 0;
    yhi = 1;
  }
  const Range xr = nice(xlo, xhi), yr = nice(std::min(0.0, ylo), yhi);
  auto X = [&](double v) { return left + (v - xr.lo) / (xr.hi - xr.lo) * pw; };
  auto Y = [&](double v) { return top + ph - (v - yr.lo) / (yr.hi - yr.lo) * ph; };
  std::string s = header(w, ht);
  s += text(left + pw / 2, 22, p.title, "middle", 14, " font-weight=\"bold\"");
  s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444\"/>\n", left, top,
                   pw, ph);
  for (int i = 0; i <= 5; ++i) {
    const double xv = xr.lo + (xr.hi - xr.lo) * i / 5, yv = yr.lo + (yr.hi - yr.lo) * i / 5;
    s += text(X(xv), top + ph + 16, fmt_num(xv));
    s += text(left - 6, Y(yv) + 4, fmt_num(yv), "end");
    s += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#eee\"/>\n", left, Y(yv),
                     left + pw, Y(yv));
  }
  s += text(left + pw / 2, ht - 12, p.x_label);
  s += text(16, top + ph / 2, p.y_label, "middle", 12,
            fmt::format(" transform=\"rotate(-90 16 {:.1f})\"", top + ph / 2).c_str());
  if (p.mark_x) {
    s += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#888\" stroke-dasharray=\"4 3\"/>\n",
        X(*p.mark_x), top, top + ph);
  }
  for (std::size_t k = 0; k < p.series.size(); ++k) {
    const auto& se = p.series[k];
    const char* col = palette[k % 8];
    std::string pts;
    for (std::size_t i = 0; i < se.x.size() && i < se.y.size(); ++i)
      pts += fmt::format("{:.1f},{:.1f} ", X(se.x[i]), Y(se.y[i]));
    s += fmt::format(
        "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"><title>{}</title></polyline>\n", col,
        pts, escape(se.name));
    for (std::size_t i = 0; i < se.x.size() && i < se.y.size(); ++i)
      s += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\"><title>{}: {} -> {}</title></circle>\n",
          X(se.x[i]), Y(se.y[i]), col, escape(se.name), fmt_num(se.x[i]), fmt_num(se.y[i]));
    s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"3\" fill=\"{}\"/>\n", left + pw + 12,
                     top + 10 + 18.0 * static_cast<double>(k), col);
    s += text(left + pw + 30, top + 15 + 18.0 * static_cast<double>(k), se.name, "start");
  }
  s += "</svg>\n";
  return s;
}

std::string render(const BarChart& b) {
  const double group_w = std::max(60.0, 26.0 * static_cast<double>(b.series.size()) + 20);
  const double left = 70, top = 40, ph = 260, bottom = 60, right = 170;
  const double pw = group_w * static_cast<double>(b.categories.size());
  const double w = left + pw + right, ht = top + ph + bottom;
  double hi = 0;
  for (const auto& row : b.values)
    for (double v : row) hi = std::max(hi, v);
  if (hi <= 0) hi = 1;
  hi *= 1.08;
  std::string s = header(w, ht);
  s += text(left + pw / 2, 22, b.title, "middle", 14, " font-weight=\"bold\"");
  s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#444\"/>\n", left, top, top + ph);
  s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#444\"/>\n", left, top + ph, left + pw);
  for (int i = 0; i <= 5; ++i) {
    const double v = hi * i / 5, y = top + ph - ph * i / 5;
    s += text(left - 6, y + 4, fmt_num(v), "end");
  }
  s += text(16, top + ph / 2, b.y_label, "middle", 12,
            fmt::format(" transform=\"rotate(-90 16 {:.1f})\"", top + ph / 2).c_str());
  const double bw = (group_w - 20) / static_cast<double>(std::max<std::size_t>(1, b.series.size()));
  for (std::size_t c = 0; c < b.categories.size(); ++c) {
    const double gx = left + group_w * static_cast<double>(c) + 10;
    for (std::size_t k = 0; k < b.series.size(); ++k) {
      const double v = (c < b.values.size() && k < b.values[c].size()) ? b.values[c][k] : 0;
      const double h = ph * v / hi;
      s += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"><title>{} / {}: "
          "{}</title></rect>\n",
          gx + bw * static_cast<double>(k), top + ph - h, bw - 2, h, palette[k % 8], escape(b.categories[c]),
          escape(b.series[k]), fmt_num(v));
    }
    s += text(gx + (group_w - 20) / 2, top + ph + 18, b.categories[c]);
  }
  for (std::size_t k = 0; k < b.series.size(); ++k) {
    s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>\n", left + pw + 12,
                     top + 18.0 * static_cast<double>(k), palette[k % 8]);
    s += text(left + pw + 30, top + 10 + 18.0 * static_cast<double>(k), b.series[k], "start");
  }
  s += "</svg>\n";
  return s;
}

}  // namespace wstune::svg

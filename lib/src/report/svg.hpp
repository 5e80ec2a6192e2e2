#pragma once
/// @file svg.hpp
/// Small self-contained SVG charts (no JavaScript): the x × y heatmap of the
/// paper's Tables 5–6 and the line plots of its Figs. 2–4 and 7.

#include <optional>
#include <string>
#include <vector>

namespace wstune::svg {

/// A heatmap of values (e.g. kernel ms) over rows × columns. Cells without a
/// value (std::nullopt: invalid shape) are drawn grey. Lower is better: the
/// smallest value is darkest green, the largest red; the cell `best` (row,
/// col), if given, is outlined. Each cell carries a <title> with its value.
struct Heatmap {
  std::string title;                                       ///< chart title
  std::string x_label, y_label;                            ///< axis names, e.g. "local x", "local y"
  std::vector<std::string> columns, rows;                  ///< tick labels
  std::vector<std::vector<std::optional<double>>> values;  ///< values[row][col]
  std::string unit = "ms";                                 ///< unit of the values
};

/// Renders a heatmap as a complete SVG document.
std::string render(const Heatmap& h);

/// One line of a line plot.
struct Series {
  std::string name;       ///< legend text
  std::vector<double> x;  ///< x values
  std::vector<double> y;  ///< y values (same length as x)
};

/// A line plot with linear axes; an optional vertical marker at `mark_x`
/// (e.g. the best split ratio).
struct LinePlot {
  std::string title;             ///< chart title
  std::string x_label;           ///< x axis name with unit
  std::string y_label;           ///< y axis name with unit
  std::vector<Series> series;    ///< lines, drawn in order
  std::optional<double> mark_x;  ///< vertical marker
};

/// Renders a line plot as a complete SVG document.
std::string render(const LinePlot& p);

/// A grouped bar chart: one group per category, one bar per series.
struct BarChart {
  std::string title;                        ///< chart title
  std::string y_label;                      ///< y axis name with unit
  std::vector<std::string> categories;      ///< group labels (e.g. kernels)
  std::vector<std::string> series;          ///< bar labels (e.g. methods)
  std::vector<std::vector<double>> values;  ///< values[category][series]
};

/// Renders a grouped bar chart as a complete SVG document.
std::string render(const BarChart& b);

/// Escapes &, <, >, " for SVG/XML text and attributes.
std::string escape(const std::string& text);

}  // namespace wstune::svg

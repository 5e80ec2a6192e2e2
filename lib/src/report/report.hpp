#pragma once
/// @file report.hpp
/// A static HTML report (no JavaScript) drawn from a wstune store: per kernel
/// the stored split runs' makespans by method (like the paper's Fig. 7), the
/// makespan over the first device's share (like Figs. 2–4: the stored sweep
/// points when there are any, else every stored run at its share), and
/// local x × local y heatmaps of the stored trials of 2-D kernels (like
/// Tables 5–6). Charts are separate SVG files referenced with <img>.
/// Format and usage: docs/report.md; `wstune report` renders it.

#include <string>
#include <vector>

namespace wstune {

class Store;

/// One file of a report: a name relative to the report directory and its text.
struct ReportFile {
  std::string name;     ///< e.g. "index.html", "bars_matmul.svg"
  std::string content;  ///< complete document (HTML or SVG)
};

/// A rendered report.
struct Report {
  std::vector<ReportFile> files;  ///< index.html first, then the SVG charts
  bool empty = true;              ///< true when the store had no split run and no trial (the page says so)
  std::size_t split_runs = 0;     ///< split runs drawn
  std::size_t heatmaps = 0;       ///< trial heatmaps drawn
};

/// How to render.
struct ReportOptions {
  std::string title = "wstune report";  ///< page title (escaped)
  std::string source;                   ///< shown on the page, e.g. the database path
};

/// Renders the report of everything in `store`. The method of a split run is
/// its detail's "method" string (as bench_paper writes: "baseline", "paper",
/// "wstune", "sweep"), else its split model; for each (kernel, problem,
/// method) the newest run is drawn. Sweep points (method "sweep") give the
/// share curve. Throws StoreError when the store cannot be read.
Report render_report(const Store& store, const ReportOptions& options = {});

/// Writes every file of `report` into `dir` (created with its parents if
/// missing; existing files of the same names are replaced). Throws Error
/// naming the path when a directory or file cannot be written.
void write_report(const Report& report, const std::string& dir);

}  // namespace wstune

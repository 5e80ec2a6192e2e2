// wstune report: a static HTML page with SVG charts drawn from the store.
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "command.hpp"
#include "report/report.hpp"
#include "wstune/error.hpp"
#include "wstune/store.hpp"

namespace po = boost::program_options;

namespace wstune::cli {
namespace {

int report_main(int argc, char** argv) {
  po::options_description desc("wstune report options");
  std::string db, out, title;
  desc.add_options()("db", po::value(&db), db_option_help)(
      "out,o", po::value(&out), "output directory (created): index.html and the *.svg charts")(
      "title", po::value(&title)->default_value("wstune report"), "page title");
  po::variables_map vm;
  if (!parse_options(argc, argv,
                     "usage: wstune report [--db FILE] --out DIR [--title TEXT]\n\n"
                     "Renders DIR/index.html (no JavaScript) with SVG charts from the database: per kernel the "
                     "split runs' makespans by method, the makespan over the split share, and x × y heatmaps of "
                     "the tuning trials of 2-D kernels. See docs/report.md.",
                     desc, vm, nullptr, {"db"}))
    return 0;
  if (out.empty()) throw UsageError("--out DIR is required: the directory to write index.html and the charts into");
  db = database_path(db);
  if (db != ":memory:" && !std::filesystem::exists(db)) {
    throw StoreError(
        fmt::format("database {} does not exist; give --db FILE of an existing store (fill one with "
                    "scripts/bench-paper.sh or wstune split)",
                    db));
  }
  Store store(db, StoreOptions{true, 5000});
  const Report rep = render_report(store, ReportOptions{title, db});
  write_report(rep, out);
  std::cout << fmt::format("wrote {}/index.html and {} charts ({} split runs, {} heatmaps){}\n", out,
                           rep.files.size() - 1, rep.split_runs, rep.heatmaps,
                           rep.empty ? "; the database holds nothing to draw yet" : "");
  return 0;
}

}  // namespace

WSTUNE_COMMAND("report", "render a static HTML report with SVG charts from the database", report_main);

}  // namespace wstune::cli

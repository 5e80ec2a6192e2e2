// wstune export: every stored result as one JSON file (format: docs/store.md).
#include <cstdio>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "command.hpp"
#include "wstune/error.hpp"
#include "wstune/store.hpp"
#include "wstune/t4.hpp"

namespace po = boost::program_options;

namespace wstune::cli {
namespace {

int export_main(int argc, char** argv) {
  po::options_description desc("wstune export options");
  std::string db, file, format;
  std::vector<std::int64_t> sessions;
  desc.add_options()
      ("db", po::value(&db), db_option_help)
      ("format", po::value(&format)->default_value("wstune"),
       "wstune (everything, for 'wstune import') or t4 (every trial in the T4 results schema)")
      ("session", po::value(&sessions)->multitoken(), "t4: only these session ids (default: all)")
      ("file", po::value(&file)->required(), "output file (JSON), - for standard output");
  po::positional_options_description pos;
  pos.add("file", 1);
  po::variables_map vm;
  if (!parse_options(argc, argv,
                     "usage: wstune export FILE.json [--db FILE] [--format wstune|t4 [--session ID...]]\n\n"
                     "Writes devices, sessions with every trial, best configurations, split runs and calibrations as "
                     "one JSON document (docs/store.md); 'wstune import' merges it elsewhere. With --format t4, every "
                     "trial as a T4 results document (TuningSchema T4 1.0.0) for Kernel Tuner and other tools.",
                     desc, vm, &pos)) return 0;
  if (format != "wstune" && format != "t4")
    throw UsageError(fmt::format("--format {}: use wstune or t4", format));
  if (format == "wstune" && !sessions.empty()) throw UsageError("--session selects sessions for --format t4 only");
  Store store(database_path(db), {.read_only = true, .busy_timeout_ms = 5000});
  const nlohmann::json doc = format == "t4" ? t4_results(store, sessions) : store.export_json();
  if (file == "-") {
    std::cout << doc.dump(1) << "\n";
    return 0;
  }
  const std::string tmp = file + ".tmp";  // written whole, then renamed: no half-written export
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) throw UsageError(fmt::format("cannot write {}: check the directory exists and is writable", tmp));
    out << doc.dump(1) << "\n";
    if (!out.flush()) throw Error(fmt::format("writing {} failed (disk full?)", tmp));
  }
  if (std::rename(tmp.c_str(), file.c_str()) != 0) throw Error(fmt::format("cannot rename {} to {}", tmp, file));
  if (format == "t4") {
    std::cerr << fmt::format("exported {} trials of {} sessions (T4) to {}\n", doc["results"].size(),
                             doc["metadata"]["wstune"].size(), file);
    return 0;
  }
  std::cerr << fmt::format("exported {} devices, {} sessions, {} best configurations to {}\n",
                           doc["devices"].size(), doc["sessions"].size(), doc["best_configs"].size(), file);
  return 0;
}

WSTUNE_COMMAND("export", "write every stored result to a JSON file", export_main);

}  // namespace
}  // namespace wstune::cli

// wstune export: every stored result as one JSON file (format: docs/store.md).
#include <cstdio>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "command.hpp"
#include "format/json_input.hpp"
#include "format/t4.hpp"
#include "wstune/error.hpp"
#include "wstune/store.hpp"

namespace po = boost::program_options;

namespace wstune::cli {
namespace {

// The values of `wstune export`'s options.
struct ExportArgs {
  std::string db, file, format;
  std::vector<std::int64_t> sessions;
};

// Parses `wstune export`'s command line (FILE.json given positionally) into
// `a`, --format and --session checked; false when --help printed the usage instead.
bool parse_export_args(int argc, char** argv, ExportArgs& a) {
  po::options_description desc("wstune export options");
  desc.add_options()("db", po::value(&a.db), db_option_help)(
      "format", po::value(&a.format)->default_value("wstune"),
      "wstune (everything, for 'wstune import') or t4 (every trial in the T4 results schema)")(
      // One id per --session: a multitoken option would also take the output file after it.
      "session", po::value(&a.sessions)->composing(), "t4: only this session id; repeat for more (default: all)")(
      "file", po::value(&a.file)->required(), "output file (JSON), - for standard output");
  po::positional_options_description pos;
  pos.add("file", 1);
  po::variables_map vm;
  if (!parse_options(argc, argv,
                     "usage: wstune export FILE.json [--db FILE] [--format wstune|t4 [--session ID]...]\n\n"
                     "Writes devices, sessions with every trial, best configurations, split runs and calibrations as "
                     "one JSON document (docs/store.md); 'wstune import' merges it elsewhere. With --format t4, every "
                     "trial as a T4 results document (TuningSchema T4 1.0.0) for Kernel Tuner and other tools.",
                     desc, vm, &pos))
    return false;
  if (a.format != "wstune" && a.format != "t4")
    throw UsageError(fmt::format("--format {}: use wstune or t4", a.format));
  if (a.format == "wstune" && !a.sessions.empty()) throw UsageError("--session selects sessions for --format t4 only");
  return true;
}

// Writes `text` and a newline to `file` whole, then renamed into place: no half-written export.
void write_whole(const std::string& file, const std::string& text) {
  const std::string tmp = file + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) throw UsageError(fmt::format("cannot write {}: check the directory exists and is writable", tmp));
    out << text << "\n";
    if (!out.flush()) throw Error(fmt::format("writing {} failed (disk full?)", tmp));
  }
  if (std::rename(tmp.c_str(), file.c_str()) != 0) throw Error(fmt::format("cannot rename {} to {}", tmp, file));
}

// The line on stderr that counts what the export to `file` holds.
void report_export(const nlohmann::json& doc, const std::string& format, const std::string& file) {
  if (format == "t4") {
    std::cerr << fmt::format("exported {} trials of {} sessions (T4) to {}\n", doc["results"].size(),
                             doc["metadata"]["wstune"].size(), file);
    return;
  }
  std::cerr << fmt::format("exported {} devices, {} sessions, {} best configurations to {}\n", doc["devices"].size(),
                           doc["sessions"].size(), doc["best_configs"].size(), file);
}

int export_main(int argc, char** argv) {
  ExportArgs a;
  if (!parse_export_args(argc, argv, a)) return 0;
  Store store(database_path(a.db), {.read_only = true, .busy_timeout_ms = 5000});
  const nlohmann::json doc = a.format == "t4" ? t4_results(store, a.sessions) : store.export_json();
  // Records one field per line, nested values compact: the file grows
  // linearly with the nesting of free-form values (dump(1) grows with its square).
  const std::string text = dump_outline(doc, 4);
  if (a.file == "-") {
    std::cout << text << "\n";
    return 0;
  }
  write_whole(a.file, text);
  report_export(doc, a.format, a.file);
  return 0;
}

WSTUNE_COMMAND("export", "write every stored result to a JSON file", export_main);

}  // namespace
}  // namespace wstune::cli

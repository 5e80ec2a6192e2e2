// wstune import: merge an export file without duplicating anything.
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "command.hpp"
#include "format/json_input.hpp"
#include "wstune/error.hpp"
#include "wstune/store.hpp"

namespace po = boost::program_options;

namespace wstune::cli {
namespace {

int import_main(int argc, char** argv) {
  po::options_description desc("wstune import options");
  std::string db, file;
  desc.add_options()("db", po::value(&db), db_option_help)("file", po::value(&file)->required(),
                                                           "a file written by 'wstune export'");
  po::positional_options_description pos;
  pos.add("file", 1);
  po::variables_map vm;
  if (!parse_options(argc, argv,
                     "usage: wstune import FILE.json [--db FILE]\n\nMerges an export (docs/store.md) in one "
                     "transaction: rows already present are skipped, nothing is overwritten, and a malformed file "
                     "changes nothing.",
                     desc, vm, &pos))
    return 0;
  std::ifstream in(file, std::ios::binary);
  if (!in) throw UsageError(fmt::format("cannot read {}: check the path", file));
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) throw UsageError(fmt::format("cannot read {}: check the path", file));
  // Nesting beyond kMaxJsonDepth is refused before the document is built.
  const nlohmann::json doc = parse_json_input(text.str(), file);
  Store store(database_path(db));
  ImportStats st;
  try {
    st = store.import_json(doc);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}; nothing was imported", file, e.what()));
  }
  std::cout << fmt::format(
      "imported {} devices, {} sessions, {} trials, {} best configurations, {} split runs, "
      "{} calibrations; {} already present\n",
      st.devices, st.sessions, st.trials, st.best_configs, st.split_runs, st.calibrations, st.skipped);
  return 0;
}

WSTUNE_COMMAND("import", "merge a JSON export into the database", import_main);

}  // namespace
}  // namespace wstune::cli

// wstune db: database maintenance (check, path).
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "command.hpp"
#include "wstune/error.hpp"
#include "wstune/store.hpp"

namespace po = boost::program_options;

namespace wstune::cli {
namespace {

// True unless `path` exists and this process may not write it or its
// directory (access(2): permissions, a read-only file system).
bool may_write(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return true;
  const auto dir = std::filesystem::absolute(path, ec).parent_path();
  return access(path.c_str(), W_OK) == 0 && access(dir.c_str(), W_OK) == 0;
}

int db_main(int argc, char** argv) {
  po::options_description desc("wstune db options");
  std::string db, action;
  desc.add_options()("db", po::value(&db), db_option_help)("action", po::value(&action)->required(),
                                                           "check (integrity and schema version) or path");
  po::positional_options_description pos;
  pos.add("action", 1);
  po::variables_map vm;
  if (!parse_options(argc, argv,
                     "usage: wstune db check|path [--db FILE]\n\ncheck: opens the database (creating or migrating "
                     "it; read-only when it cannot be written), runs PRAGMA integrity_check and foreign_key_check "
                     "and reports the schema version and row counts; exit 1 when something is wrong.\npath: prints "
                     "the database path in use.",
                     desc, vm, &pos))
    return 0;
  const std::string path = database_path(db);
  if (action == "path") {
    std::cout << path << "\n";
    return 0;
  }
  if (action != "check")
    throw UsageError(fmt::format("unknown action '{}': use 'wstune db check' or 'wstune db path'", action));
  // Writable when it can be (check creates or migrates the database), else
  // read-only: a read-only file or directory can still be checked.
  Store store(path, {.read_only = !may_write(path), .busy_timeout_ms = 5000});
  const CheckReport r = store.check();
  std::cout << fmt::format("database:       {}\nschema version: {} (this wstune writes {})\njournal mode:   {}\n", path,
                           r.schema_version, kSchemaVersion, r.journal_mode)
            << fmt::format(
                   "rows:           {} devices, {} kernels, {} problems, {} sessions, {} trials, "
                   "{} best configurations, {} split runs, {} calibrations\n",
                   r.devices, r.kernels, r.problems_count, r.sessions, r.trials, r.best_configs, r.split_runs,
                   r.calibrations);
  for (const auto& p : r.problems) std::cout << "problem:        " << p << "\n";
  std::cout << "integrity:      " << (r.ok ? "ok" : "FAILED") << "\n";
  return r.ok ? 0 : 1;
}

WSTUNE_COMMAND("db", "check the database (integrity, schema version) or print its path", db_main);

}  // namespace
}  // namespace wstune::cli

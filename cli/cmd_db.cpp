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

// True unless this process may not write `path` or its directory
// (access(2): permissions, a read-only file system).
bool may_write(const std::string& path) {
  std::error_code ec;
  const auto dir = std::filesystem::absolute(path, ec).parent_path();
  return access(path.c_str(), W_OK) == 0 && access(dir.c_str(), W_OK) == 0;
}

// Refuses a database that does not exist (UsageError, exit 2): a check
// reports what is there and creates nothing, not even the directory.
void require_existing(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) return;
  const auto dir = std::filesystem::path(path).parent_path();
  const std::string no_dir = !dir.empty() && !std::filesystem::is_directory(dir, ec)
                                 ? fmt::format(", nor does its directory {}", dir.string())
                                 : "";
  throw UsageError(
      fmt::format("database {} does not exist{}; check the path (--db FILE or WSTUNE_DB; 'wstune db path' prints "
                  "the one in use), or create one with 'wstune tune', 'wstune import' or wstuned",
                  path, no_dir));
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
                     "usage: wstune db check|path [--db FILE]\n\ncheck: opens an existing database (migrating "
                     "it; read-only when it cannot be written), runs PRAGMA integrity_check and foreign_key_check "
                     "and reports the schema version and row counts; exit 1 when something is wrong, 2 when it does "
                     "not exist (nothing is created).\npath: prints the database path in use.",
                     desc, vm, &pos))
    return 0;
  const std::string path = database_path(db);
  if (action == "path") {
    std::cout << path << "\n";
    return 0;
  }
  if (action != "check")
    throw UsageError(fmt::format("unknown action '{}': use 'wstune db check' or 'wstune db path'", action));
  require_existing(path);
  // Writable when it can be (check migrates an old database), else
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

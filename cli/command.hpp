#pragma once
// The wstune CLI's subcommand registry. Each cli/cmd_*.cpp registers one
// subcommand with a static WSTUNE_COMMAND; main() dispatches on argv[1].
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "kernel/kernel.hpp"

namespace wstune::cli {

/// One subcommand: `wstune NAME ...`. `run` gets argv from the subcommand on
/// (argv[0] == NAME) and returns the exit status (0 ok, 1 runtime error,
/// 2 usage); it may throw UsageError (exit 2) or other exceptions (exit 1).
struct Command {
  std::string name;
  std::string summary;
  std::function<int(int argc, char** argv)> run;
};

/// All registered subcommands, sorted by name.
std::vector<Command>& commands();

/// Registers a subcommand at static-initialisation time.
struct Register {
  Register(std::string name, std::string summary, std::function<int(int, char**)> run);
};

/// Parses a subcommand's options with Boost.Program_options, handling
/// --help (prints usage, returns false so the caller exits 0). Options may
/// also come from WSTUNE_<NAME> environment variables (upper case, '-' -> '_')
/// for the names listed in `env_options`. Unknown options or bad values throw
/// UsageError naming the option.
bool parse_options(int argc, char** argv, const std::string& usage,
                   const boost::program_options::options_description& desc, boost::program_options::variables_map& vm,
                   const boost::program_options::positional_options_description* positional = nullptr,
                   const std::vector<std::string>& env_options = {});

/// Help text of every command's --db option.
inline constexpr const char* db_option_help =
    "database file (default: $WSTUNE_DB, else $XDG_DATA_HOME/wstune/wstune.db)";

/// The database a command uses: `db` when given, else default_db_path().
std::string database_path(const std::string& db);

/// Adds --kernel NAME and --kernel-file FILE (one of them is required,
/// checked by kernel_option()) to `desc`, bound to `name` and `file`.
void add_kernel_options(boost::program_options::options_description& desc, std::string& name, std::string& file);

/// The kernel a command works on: wstune's own (--kernel NAME) or one
/// described by a T1 tuning file (--kernel-file FILE, read and validated).
/// Throws UsageError when neither or both are given, or the file is bad.
std::shared_ptr<const KernelSpec> kernel_option(const std::string& name, const std::string& file);

/// The problem a command runs: `size` parsed by the kernel when the --size
/// option was given, else the paper's Table 3 size. Throws UsageError.
Problem problem_option(const KernelSpec& spec, const boost::program_options::variables_map& vm,
                       const std::string& size);

/// Tuning parameter values from --config "NAME=V,..." for `spec` (each
/// value parsed by its parameter's type and one of its Values); parameters
/// not named keep the reference configuration's value. The result must
/// satisfy the kernel's constraints for `p`. Throws UsageError naming the
/// part and the fix.
nlohmann::json config_option(const KernelSpec& spec, const Problem& p, const std::string& text);

/// True when stderr is a terminal (progress lines are only drawn then).
bool stderr_is_tty();

/// `text` split at every `sep`, empty parts kept ("a,,b" → a, "", b).
std::vector<std::string> split_list(const std::string& text, char sep);

}  // namespace wstune::cli

#define WSTUNE_CLI_CONCAT2(a, b) a##b
#define WSTUNE_CLI_CONCAT(a, b) WSTUNE_CLI_CONCAT2(a, b)
/// Registers `fn` as `wstune name`.
#define WSTUNE_COMMAND(name, summary, fn)                                         \
  static const ::wstune::cli::Register WSTUNE_CLI_CONCAT(wstune_cmd_, __LINE__) { \
    name, summary, fn                                                             \
  }

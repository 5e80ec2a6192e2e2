#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

#include "command.hpp"

#include "session/tune_request.hpp"
#include "table.hpp"
#include "tuning_file/tuning_file.hpp"
#include "wstune/error.hpp"
#include "wstune/store.hpp"

namespace wstune::cli {

std::vector<Command>& commands() {
  static std::vector<Command> all;
  return all;
}

Register::Register(std::string name, std::string summary, std::function<int(int, char**)> run) {
  auto& all = commands();
  all.push_back(Command{std::move(name), std::move(summary), std::move(run)});
  std::sort(all.begin(), all.end(), [](const Command& a, const Command& b) { return a.name < b.name; });
}

std::string database_path(const std::string& db) {
  return db.empty() ? default_db_path() : db;
}

void add_kernel_options(boost::program_options::options_description& desc, std::string& name, std::string& file) {
  namespace po = boost::program_options;
  desc.add_options()("kernel,k", po::value(&name), "wstune's kernel: matmul, bilinear, sort or trapezoid")(
      "kernel-file", po::value(&file), "a T1 tuning file describing your own OpenCL kernel (docs/tuning-files.md)");
}

std::shared_ptr<const KernelSpec> kernel_option(const std::string& name, const std::string& file) {
  if (name.empty() == file.empty()) {
    throw UsageError(name.empty() ? "give the kernel: --kernel NAME (matmul, bilinear, sort, trapezoid) or "
                                    "--kernel-file FILE (a T1 tuning file)"
                                  : "give --kernel or --kernel-file, not both");
  }
  if (!file.empty()) return load_tuning_file(file);
  return std::shared_ptr<const KernelSpec>(&kernel_spec(name), [](const KernelSpec*) {});
}

Problem problem_option(const KernelSpec& spec, const boost::program_options::variables_map& vm,
                       const std::string& size) {
  return resolve_problem(spec, vm.count("size") ? size : std::string());
}

namespace {
nlohmann::json parameter_value(const TuningParameter& tp, const std::string& v, const std::string& whole) {
  nlohmann::json value;
  try {
    if (tp.type == "int" || tp.type == "uint")
      value = std::stoll(v);
    else if (tp.type == "float")
      value = std::stod(v);
    else if (tp.type == "bool")
      value = v == "true" || v == "True" || v == "1";
    else
      value = v;
  } catch (const std::exception&) {
    throw UsageError(fmt::format("--config '{}': {}={} is not a {} value", whole, tp.name, v, tp.type));
  }
  if (tp.type == "bool" && !(v == "true" || v == "false" || v == "True" || v == "False" || v == "1" || v == "0"))
    throw UsageError(fmt::format("--config '{}': {}={} is not true or false", whole, tp.name, v));
  if (std::find(tp.values.begin(), tp.values.end(), value) == tp.values.end()) {
    std::string values;
    for (const auto& x : tp.values) values += (values.empty() ? "" : ", ") + x.dump();
    throw UsageError(fmt::format("--config '{}': {} is not one of {}'s values: {}", whole, v, tp.name, values));
  }
  return value;
}
}  // namespace

nlohmann::json config_option(const KernelSpec& spec, const Problem& p, const std::string& text) {
  nlohmann::json params = spec.reference_params();
  const auto& tps = spec.tuning_parameters();
  if (tps.empty() && !text.empty())
    throw UsageError(fmt::format("--config '{}': {} has no tuning parameters", text, spec.name()));
  std::size_t pos = 0;
  while (!text.empty() && pos <= text.size()) {
    const auto comma = text.find(',', pos);
    const std::string part = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? text.size() + 1 : comma + 1;
    const auto eq = part.find('=');
    const std::string name = part.substr(0, eq);
    const auto tp = std::find_if(tps.begin(), tps.end(), [&](const TuningParameter& t) { return t.name == name; });
    if (eq == std::string::npos || tp == tps.end()) {
      std::string names;
      for (const auto& t : tps) names += (names.empty() ? "" : ", ") + t.name;
      throw UsageError(
          fmt::format("--config '{}': '{}' is not NAME=VALUE of a tuning parameter ({})", text, part, names));
    }
    params[name] = parameter_value(*tp, part.substr(eq + 1), text);
  }
  if (!spec.satisfies_constraints(with_params(p, params)))
    throw UsageError(fmt::format("--config '{}': {} violates the kernel's Conditions; pick values that satisfy them",
                                 text, params.dump()));
  return params;
}

bool stderr_is_tty() {
  return isatty(STDERR_FILENO) != 0;
}

std::vector<std::string> split_list(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (true) {
    const auto end = text.find(sep, pos);
    out.push_back(text.substr(pos, end == std::string::npos ? std::string::npos : end - pos));
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return out;
}

bool parse_options(int argc, char** argv, const std::string& usage,
                   const boost::program_options::options_description& desc, boost::program_options::variables_map& vm,
                   const boost::program_options::positional_options_description* positional,
                   const std::vector<std::string>& env_options) {
  namespace po = boost::program_options;
  // No wstune option takes a negative number, and Boost converts "-1" for an
  // unsigned option to 4294967295: refuse negative numbers up front.
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto eq = a.find('=');
    const bool inline_negative = a.rfind("--", 0) == 0 && eq != std::string::npos && a.compare(eq + 1, 1, "-") == 0 &&
                                 eq + 2 < a.size() && std::isdigit(static_cast<unsigned char>(a[eq + 2]));
    const bool separate_negative =
        a.size() > 1 && a[0] == '-' && std::isdigit(static_cast<unsigned char>(a[1])) && i > 1 && argv[i - 1][0] == '-';
    if (inline_negative || separate_negative) {
      const std::string opt = inline_negative ? a.substr(0, eq) : std::string(argv[i - 1]);
      throw UsageError(
          fmt::format("{} {}: negative values are not allowed; give a number >= 0 (see 'wstune {} --help')", opt,
                      inline_negative ? a.substr(eq + 1) : a, argv[0]));
    }
  }
  po::options_description all(desc);
  all.add_options()("help,h", "print this help and exit");
  try {
    auto parser = po::command_line_parser(argc, argv).options(all);
    if (positional) parser.positional(*positional);
    po::store(parser.run(), vm);
    if (!env_options.empty()) {
      po::store(po::parse_environment(all,
                                      [&](const std::string& var) -> std::string {
                                        if (var.rfind("WSTUNE_", 0) != 0) return {};
                                        std::string opt = var.substr(7);
                                        std::transform(opt.begin(), opt.end(), opt.begin(), [](unsigned char c) {
                                          return c == '_' ? '-' : static_cast<char>(std::tolower(c));
                                        });
                                        return std::find(env_options.begin(), env_options.end(), opt) !=
                                                       env_options.end()
                                                   ? opt
                                                   : std::string{};
                                      }),
                vm);
    }
    if (vm.count("help")) {
      std::cout << usage << "\n\n" << all << "\n";
      return false;
    }
    po::notify(vm);
    // An empty --db (or WSTUNE_DB="" passed through --db "$VAR") would fall
    // back to the default database without a word: refuse it.
    if (vm.count("db") && vm["db"].value().type() == typeid(std::string) && vm["db"].as<std::string>().empty()) {
      throw UsageError(
          "--db '': give a database file (e.g. --db results.db), or leave --db out for the default "
          "('wstune db path')");
    }
  } catch (const po::error& e) {
    // main() puts "wstune COMMAND: " before the message.
    throw UsageError(fmt::format("{}; see 'wstune {} --help'", e.what(), argv[0]));
  }
  return true;
}

static bool numeric(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isdigit(c) || c == '.' || c == '-' || c == 'e' || c == '+' || c == 'x' || c == '%';
  }) && std::isdigit(static_cast<unsigned char>(s.front()));
}

void Table::print(std::ostream& os) const {
  std::size_t cols = header_.size();
  for (const auto& r : rows_) cols = std::max(cols, r.size());
  std::vector<std::size_t> w(cols, 0);
  auto widen = [&](const std::vector<std::string>& r) {
    for (std::size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], r[i].size());
  };
  widen(header_);
  for (const auto& r : rows_) widen(r);
  auto line = [&](const std::vector<std::string>& r) {
    std::string out;
    for (std::size_t i = 0; i < cols; ++i) {
      const std::string cell = i < r.size() ? r[i] : "";
      const std::string pad(w[i] - cell.size(), ' ');
      out += (numeric(cell) && &r != &header_) ? pad + cell : cell + pad;
      if (i + 1 < cols) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    os << out << '\n';
  };
  line(header_);
  std::size_t total = 0;
  for (auto x : w) total += x;
  os << std::string(total + 2 * (cols ? cols - 1 : 0), '-') << '\n';
  for (const auto& r : rows_) line(r);
}

}  // namespace wstune::cli

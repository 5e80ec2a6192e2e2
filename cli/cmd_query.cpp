// wstune query: stored best configurations, or what the look-up chain answers.
#include <iostream>

#include <fmt/format.h>

#include "command.hpp"
#include "format/json.hpp"
#include "kernel/kernel.hpp"
#include "session/best_configuration.hpp"
#include "session/tune_session.hpp"
#include "table.hpp"
#include "wstune/error.hpp"
#include "wstune/lookup.hpp"
#include "wstune/store.hpp"

namespace po = boost::program_options;

namespace wstune::cli {
namespace {

std::string opt_num(const std::optional<double>& v, const char* spec = "{:.3f}") {
  return v ? fmt::format(fmt::runtime(spec), *v) : std::string("-");
}

nlohmann::json opt_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

void print(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
           const nlohmann::json& j, const std::string& format) {
  if (format == "json") {
    std::cout << j.dump(2) << "\n";
  } else if (format == "csv") {
    auto line = [](const std::vector<std::string>& r) {
      for (std::size_t i = 0; i < r.size(); ++i) std::cout << (i ? "," : "") << csv_cell(r[i]);
      std::cout << "\n";
    };
    line(header);
    for (const auto& r : rows) line(r);
  } else {
    Table t(header);
    for (const auto& r : rows) t.add(r);
    t.print(std::cout);
  }
}

// A device for the look-up: a stored one (fingerprint or name substring),
// else a live OpenCL device by selector.
DeviceInfo resolve_device(const Store& store, const std::string& sel) {
  std::string lower = sel;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const DeviceInfo& d : store.devices()) {
    std::string name = d.name;
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (d.fingerprint() == sel || (!sel.empty() && name.find(lower) != std::string::npos)) return d;
  }
  return select_device(enumerate_devices(), sel).info;
}

// The kernel identity --kernel (and --source-hash, --build-options) names:
// one of wstune's own kernels, else the one stored identity of that name
// matching the options given. Throws UsageError when several match.
KernelKey query_key(const Store& store, const std::string& name, const std::string* hash, const std::string* opts) {
  std::vector<KernelKey> keys;
  for (const KernelKey& k : store.kernels(name))
    if ((!hash || k.source_hash == *hash) && (!opts || k.build_options == *opts)) keys.push_back(k);
  if (keys.empty()) {
    for (const std::string& n : kernel_names())
      if (kernel_spec(n).entry_point() == name || n == name) return kernel_key(kernel_spec(n));
    return {name, hash ? *hash : "", opts ? *opts : ""};
  }
  if (keys.size() > 1) {
    std::string list;
    for (const KernelKey& k : keys)
      list += fmt::format("\n  --source-hash '{}' --build-options '{}'", k.source_hash, k.build_options);
    throw UsageError(
        fmt::format("--kernel {}: {} stored kernels have this name; pick one with:{}", name, keys.size(), list));
  }
  return keys.front();
}

// --kernel-file: the configuration the parameter look-up chain gives a described kernel, and its level.
int query_file(const Store& store, const std::string& file, const po::variables_map& vm, const std::string& size,
               const std::string& device, const std::string& format) {
  const auto spec = kernel_option("", file);
  const Problem p = problem_option(*spec, vm, size);
  const DeviceInfo dev = resolve_device(store, device.empty() ? "default" : device);
  const StoredConfiguration best = best_configuration(&store, *spec, p, dev);
  const bool stored = best.level != LookupLevel::defaults && best.level != LookupLevel::reference;
  const BestConfig& b = best.row;
  nlohmann::json j{{"device", dev.name},
                   {"fingerprint", dev.fingerprint()},
                   {"kernel", std::string(spec->entry_point())},
                   {"size", p.text},
                   {"level", std::string(to_string(best.level))},
                   {"params", best.config.params},
                   {"local", to_json(best.config.local)},
                   {"global", to_json(spec->global_size(with_params(p, best.config.params)))},
                   {"build_options", best.build_options}};
  std::vector<std::string> row{dev.name,
                               std::string(spec->entry_point()),
                               p.text,
                               std::string(to_string(best.level)),
                               to_string(best.config),
                               "-",
                               "-",
                               "-",
                               best.build_options};
  if (stored) {
    j["from"] = {{"fingerprint", b.device_fingerprint},
                 {"size", b.problem.size_text},
                 {"distance", best.distance},
                 {"global", b.global ? to_json(*b.global) : nlohmann::json()},
                 {"median_ms", b.median_ms},
                 {"baseline_ms", opt_json(b.null_ms)},
                 {"ratio_to_baseline", opt_json(b.ratio_to_null())},
                 {"recorded_at", b.recorded_at}};
    row[5] = b.problem.size_text;
    row[6] = fmt::format("{:.4f}", b.median_ms);
    row[7] = opt_num(b.ratio_to_null(), "{:.2f}");
  }
  print({"device", "kernel", "size", "level", "configuration", "from size", "median ms", "x baseline", "build options"},
        {row}, j, format);
  return 0;
}

// The values of `wstune query`'s options.
struct QueryArgs {
  std::string db, device, kernel, kernel_file, size, format, source_hash, build_options;
};

// `wstune query`'s options, bound to `a`.
void add_query_options(po::options_description& desc, QueryArgs& a) {
  desc.add_options()("kernel-file", po::value(&a.kernel_file),
                     "a T1 tuning file: the configuration (parameters, local size, build "
                     "options) of its kernel for --size and --device, and the look-up level that gave it")(
      "db", po::value(&a.db), db_option_help)("device,d", po::value(&a.device),
                                              "device: fingerprint or name substring of a stored device, or a selector "
                                              "(P:D, cpu, gpu) of a live one")(
      "kernel,k", po::value(&a.kernel), "kernel function name (CL_KERNEL_FUNCTION_NAME)")(
      "source-hash", po::value(&a.source_hash),
      "with --size: the kernel's program hash as stored (wstune query "
      "--format json shows it), when several kernels share the name")(
      "build-options", po::value(&a.build_options), "with --size: the kernel's build options as stored")(
      "size,s", po::value(&a.size),
      "global size X, XxY or XxYxZ: show what the look-up chain returns and from which "
      "level")("format,f", po::value(&a.format)->default_value("table"), "table, json or csv")(
      "history", "every stored best, not only the current one per (device, kernel, problem)");
}

constexpr const char* kQueryUsage =
    "usage: wstune query [--device D] [--kernel K | --kernel-file FILE] [--size S]\n"
    "                    [--format table|json|csv] [--db FILE]"
    "\n\nLists the stored best configurations; with --size, the local size the look-up chain "
    "(exact, nearest, architecture, vendor-type, rule, null) returns for --device and --kernel. "
    "With --kernel-file, the configuration of that file's kernel for a size (default: the file's "
    "ProblemSize) and the build options to compile it with, from the parameter look-up chain (exact, "
    "nearest, architecture, vendor-type, default, reference).";

// The look-up chain's answer for global size `g`, with the stored best it came from, as one row or JSON.
void print_lookup(const DeviceInfo& dev, const std::string& kernel, const Extent& g, const LookupResult& r,
                  const std::string& format) {
  nlohmann::json j{{"device", dev.name},        {"fingerprint", dev.fingerprint()},
                   {"kernel", kernel},          {"global", to_json(g)},
                   {"local", to_json(r.local)}, {"level", std::string(to_string(r.level))},
                   {"distance", r.distance}};
  std::vector<std::string> row{dev.name, kernel, to_string(g), to_string(r.local), std::string(to_string(r.level)),
                               "-",      "-",    "-"};
  if (r.from) {
    j["from"] = {{"fingerprint", r.from->device_fingerprint},
                 {"global", to_json(r.from->problem.global)},
                 {"median_ms", r.from->median_ms},
                 {"recorded_at", r.from->recorded_at}};
    row[5] = to_string(r.from->problem.global);
    row[6] = r.from->device_fingerprint;
    row[7] = fmt::format("{:.3f}", r.from->median_ms);
  }
  print({"device", "kernel", "global", "local", "level", "from global", "from device", "median ms"}, {row}, j, format);
}

// --size: what the look-up chain returns for --device and --kernel at that global size.
int query_lookup(Store& store, const QueryArgs& a, const po::variables_map& vm) {
  if (a.kernel.empty()) throw UsageError("--size needs --kernel K (the kernel's function name)");
  LocalSize g = parse_local_size(a.size, "--size");
  if (!g) throw UsageError("--size null: give the global size X or XxY (work-items)");
  const DeviceInfo dev = resolve_device(store, a.device.empty() ? "default" : a.device);
  Lookup lookup(store);
  const KernelKey key = query_key(store, a.kernel, vm.count("source-hash") ? &a.source_hash : nullptr,
                                  vm.count("build-options") ? &a.build_options : nullptr);
  print_lookup(dev, a.kernel, *g, lookup.find(dev, key, *g), a.format);
  return 0;
}

// One stored best as JSON, on device `name`.
nlohmann::json best_json(const BestConfig& b, const std::string& name) {
  return {{"device", name},
          {"fingerprint", b.device_fingerprint},
          {"kernel", b.kernel.name},
          {"global", to_json(b.problem.global)},
          {"size", b.problem.size_text},
          {"params", b.params},
          {"local", to_json(b.local)},
          {"median_ms", b.median_ms},
          {"null_ms", opt_json(b.null_ms)},
          {"rule_ms", opt_json(b.rule_ms)},
          {"ratio_to_null", opt_json(b.ratio_to_null())},
          {"ratio_to_rule", opt_json(b.ratio_to_rule())},
          {"recorded_at", b.recorded_at}};
}

// One stored best as a table or CSV row, on device `name`.
std::vector<std::string> best_row(const BestConfig& b, const std::string& name) {
  return {name,
          b.kernel.name,
          to_string(b.problem.global),
          b.problem.size_text,
          b.params.empty() ? to_string(b.local) : to_string(Configuration{b.params, b.local}),
          fmt::format("{:.4f}", b.median_ms),
          opt_num(b.ratio_to_null(), "{:.2f}"),
          opt_num(b.ratio_to_rule(), "{:.2f}"),
          b.recorded_at};
}

// The stored best configurations matching --device and --kernel (every one with --history).
int query_bests(const Store& store, const QueryArgs& a, bool history) {
  BestFilter f;
  f.device = a.device;
  f.kernel = a.kernel;
  f.history = history;
  const auto bests = store.best_configs(f);
  std::map<std::string, std::string> names;
  for (const DeviceInfo& d : store.devices()) names[d.fingerprint()] = d.name;
  nlohmann::json j = nlohmann::json::array();
  std::vector<std::vector<std::string>> rows;
  for (const BestConfig& b : bests) {
    j.push_back(best_json(b, names[b.device_fingerprint]));
    rows.push_back(best_row(b, names[b.device_fingerprint]));
  }
  print({"device", "kernel", "global", "size", "configuration", "median ms", "x NULL", "x rule", "recorded"}, rows, j,
        a.format);
  if (bests.empty() && a.format == "table") std::cerr << "no stored best configuration matches\n";
  return 0;
}

int query_main(int argc, char** argv) {
  po::options_description desc("wstune query options");
  QueryArgs a;
  add_query_options(desc, a);
  po::variables_map vm;
  if (!parse_options(argc, argv, kQueryUsage, desc, vm)) return 0;
  if (a.format != "table" && a.format != "json" && a.format != "csv") {
    throw UsageError(fmt::format("--format {}: use table, json or csv", a.format));
  }
  // Only reads: read-only, so a read-only file or directory can be queried.
  Store store(database_path(a.db), {.read_only = true, .busy_timeout_ms = 5000});
  if (!a.kernel_file.empty()) return query_file(store, a.kernel_file, vm, a.size, a.device, a.format);
  if (vm.count("size")) return query_lookup(store, a, vm);
  return query_bests(store, a, vm.count("history") > 0);
}

WSTUNE_COMMAND("query", "show stored best configurations, or what the look-up chain returns", query_main);

}  // namespace
}  // namespace wstune::cli

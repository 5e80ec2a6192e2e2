// Simulation mode: recorded tables (store sessions, export files, T4 files),
// the search space a table defines, Kernel Tuner's cache format, and the
// evaluator that replays a table. See docs/tuning.md.
#include "session/simulation.hpp"
#include "store/trial_rows.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "kernel/kernel.hpp"
#include "space/rules.hpp"
#include "wstune/error.hpp"
#include "wstune/tuner.hpp"

namespace wstune {

using json = nlohmann::json;

std::optional<std::size_t> RecordedTable::best() const {
  std::optional<std::size_t> b;
  for (std::size_t i = 0; i < trials.size(); ++i)
    if (trials[i].ok() && trials[i].kernel.size() && (!b || trials[i].median_ms() < trials[*b].median_ms())) b = i;
  return b;
}

namespace {

// Numbers before everything else, ascending; other values keep their order.
void sort_values(std::vector<json>& vs) {
  if (std::all_of(vs.begin(), vs.end(), [](const json& v) { return v.is_number(); }))
    std::stable_sort(vs.begin(), vs.end(),
                     [](const json& a, const json& b) { return a.get<double>() < b.get<double>(); });
}

std::string type_of(const std::vector<json>& vs) {
  if (std::all_of(vs.begin(), vs.end(), [](const json& v) { return v.is_number_integer(); })) return "int";
  if (std::all_of(vs.begin(), vs.end(), [](const json& v) { return v.is_number(); })) return "float";
  if (std::all_of(vs.begin(), vs.end(), [](const json& v) { return v.is_boolean(); })) return "bool";
  return "string";
}

// The parameters of `trials` with the values recorded for each.
std::vector<TuningParameter> recorded_parameters(const std::vector<Trial>& trials) {
  std::map<std::string, std::vector<json>> values;
  for (const auto& t : trials)
    for (const auto& [name, v] : t.params.items()) {
      auto& vs = values[name];
      if (std::find(vs.begin(), vs.end(), v) == vs.end()) vs.push_back(v);
    }
  std::vector<TuningParameter> out;
  for (auto& [name, vs] : values) {
    sort_values(vs);
    out.push_back(TuningParameter{name, type_of(vs), std::move(vs)});
  }
  return out;
}

// Fills what a device model tells about the target.
void set_device(TuneTarget& t, const DeviceInfo& d) {
  t.device = d;
  t.device_name = d.name;
  t.device_fingerprint = d.fingerprint();
  t.pe_per_cu = d.pe_per_cu;
  t.limits.max_work_group_size = d.max_work_group_size;
  t.limits.max_work_item_sizes = d.max_work_item_sizes;
}

}  // namespace

RecordedTable table_from_store(const Store& store, std::int64_t session_id) {
  const auto s = store.session(session_id);
  if (!s) throw UsageError(fmt::format("{}: no session {}; list them with 'wstune query'", store.path(), session_id));
  RecordedTable t;
  t.source = fmt::format("{} session {}", store.path(), s->uuid);
  t.target.kernel = s->kernel.name;
  t.target.size = s->problem.size_text;
  t.target.global = s->problem.global;
  t.target.problem = s->problem.global;
  try {
    t.target.priority = kernel_spec(s->kernel.name).priority();
  } catch (const UsageError&) {
    // not one of wstune's own kernels: no priority
  }
  if (const auto d = store.device(s->device_fingerprint)) set_device(t.target, *d);
  for (const auto& r : store.trials(session_id)) {
    Trial tr = from_record(r);
    tr.from_store = false;
    t.trials.push_back(std::move(tr));
  }
  if (t.trials.empty()) throw UsageError(fmt::format("{}: the session has no trial to replay", t.source));
  t.parameters = recorded_parameters(t.trials);
  return t;
}

RecordedTable table_from_export(const json& doc, const std::string& source, std::string_view session) {
  Store mem(":memory:");
  try {
    mem.import_json(doc);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}", source, e.what()));
  }
  const auto sessions = mem.sessions();
  std::optional<std::int64_t> id;
  for (const auto& s : sessions)
    if (s.uuid == session || (session.empty() && sessions.size() == 1)) id = s.id;
  if (!id) {
    std::string list;
    for (const auto& s : sessions)
      list += fmt::format("\n  {} {} {} ({} trials, {})", s.uuid, s.kernel.name, s.problem.size_text,
                          mem.trial_count(s.id), s.spec.strategy);
    if (sessions.empty()) throw UsageError(fmt::format("{}: the export holds no session", source));
    throw UsageError(fmt::format(
        "{}: {}; pick one by uuid (--session UUID):{}", source,
        session.empty() ? "the export holds several sessions" : fmt::format("no session {}", session), list));
  }
  RecordedTable t = table_from_store(mem, *id);
  t.source = fmt::format("{} session {}", source, t.source.substr(t.source.rfind(' ') + 1));
  return t;
}

namespace {

// A T4 document's reader: every error names the file and the JSON path.
class T4Reader {
 public:
  T4Reader(const json& doc, std::string source) : doc_(doc), source_(std::move(source)) {}

  RecordedTable read() {
    if (!doc_.is_object() || !doc_.contains("results") || !doc_.at("results").is_array())
      fail("document", "has no array 'results' (T4 results schema 1.0.0)");
    scale_ = time_scale();
    RecordedTable t;
    t.source = source_;
    t.target.kernel = "t4";
    const json& rs = doc_.at("results");
    std::set<std::string> keys;
    for (std::size_t i = 0; i < rs.size(); ++i) {
      Trial tr = result(rs[i], fmt::format("results[{}]", i));
      if (!keys.insert(tr.configuration().key()).second)
        fail(fmt::format("results[{}].configuration", i), "repeats an earlier result's configuration");
      if (!t.trials.empty() && !same_names(t.trials.front().params, tr.params))
        fail(fmt::format("results[{}].configuration", i), "has other parameter names than results[0]");
      t.trials.push_back(std::move(tr));
    }
    if (t.trials.empty()) fail("results", "is empty: nothing to replay");
    t.parameters = recorded_parameters(t.trials);
    return t;
  }

 private:
  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw UsageError(fmt::format("{}: {} {}", source_, where, what));
  }

  double time_scale() const {
    const json* unit = nullptr;
    if (doc_.contains("metadata") && doc_.at("metadata").is_object() && doc_.at("metadata").contains("timeunit"))
      unit = &doc_.at("metadata").at("timeunit");
    if (!unit) return 1.0;
    const std::string u = unit->is_string() ? unit->get<std::string>() : "";
    if (u == "milliseconds" || u == "ms") return 1.0;
    if (u == "seconds" || u == "s") return 1e3;
    if (u == "microseconds" || u == "us") return 1e-3;
    fail("metadata.timeunit", "is not one of milliseconds, seconds, microseconds");
  }

  static bool same_names(const json& a, const json& b) {
    if (a.size() != b.size()) return false;
    for (const auto& [k, v] : a.items())
      if (!b.contains(k)) return false;
    return true;
  }

  Trial result(const json& r, const std::string& where) const {
    if (!r.is_object()) fail(where, "is not an object");
    for (const char* key : {"configuration", "times", "invalidity"})
      if (!r.contains(key)) fail(where, fmt::format("has no field '{}'", key));
    Trial t;
    t.params = configuration(r.at("configuration"), where + ".configuration");
    // wstune's own T4 export (t4.hpp) writes the local size as "local_size": "32x8" or "null".
    if (const auto ls = t.params.find("local_size"); ls != t.params.end() && ls->is_string()) {
      t.local = parse_local_size(ls->get<std::string>(), where + ".configuration.local_size");
      t.params.erase(ls);
    }
    const json& inv = r.at("invalidity");
    try {
      t.status = parse_trial_status(inv.is_string() ? inv.get<std::string>() : std::string("?"));
    } catch (const UsageError&) {
      fail(where + ".invalidity", "is not one of correct, compile, runtime, constraints, correctness, timeout");
    }
    if (!r.at("times").is_object()) fail(where + ".times", "is not an object");
    t.kernel.ms = runtimes(r.at("times"), where + ".times");
    if (t.ok() && t.kernel.ms.empty()) t.kernel.ms = measured_time(r, where);
    if (t.ok() && t.kernel.ms.empty()) fail(where, "is correct but has no times.runtimes and no 'time' measurement");
    if (!t.ok()) t.error = fmt::format("recorded as {}", to_string(t.status));
    return t;
  }

  json configuration(const json& c, const std::string& where) const {
    if (!c.is_object() || c.empty()) fail(where, "is not a non-empty object");
    for (const auto& [name, v] : c.items())
      if (!(v.is_number() || v.is_boolean() || v.is_string()))
        fail(where + "." + name, "is not a number, bool or string");
    return c;
  }

  std::vector<double> runtimes(const json& times, const std::string& where) const {
    std::vector<double> ms;
    if (!times.contains("runtimes")) return ms;
    const json& rt = times.at("runtimes");
    if (!rt.is_array()) fail(where + ".runtimes", "is not an array");
    for (std::size_t k = 0; k < rt.size(); ++k) {
      if (!rt[k].is_number() || rt[k].get<double>() < 0)
        fail(fmt::format("{}.runtimes[{}]", where, k), "is not a number ≥ 0");
      ms.push_back(rt[k].get<double>() * scale_);
    }
    return ms;
  }

  std::vector<double> measured_time(const json& r, const std::string& where) const {
    if (!r.contains("measurements")) return {};
    const json& ms = r.at("measurements");
    if (!ms.is_array()) fail(where + ".measurements", "is not an array");
    for (std::size_t k = 0; k < ms.size(); ++k) {
      const json& m = ms[k];
      if (m.is_object() && m.value("name", "") == "time") {
        if (!m.contains("value") || !m.at("value").is_number())
          fail(fmt::format("{}.measurements[{}].value", where, k), "is not a number");
        return {m.at("value").get<double>() * scale_};
      }
    }
    return {};
  }

  const json& doc_;
  std::string source_;
  double scale_ = 1.0;
};

}  // namespace

RecordedTable table_from_t4(const json& doc, const std::string& source) {
  return T4Reader(doc, source).read();
}

RecordedTable load_table(const std::string& path, std::string_view session) {
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("{}: cannot read the table file; check the path", path));
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::parse_error& e) {
    throw UsageError(
        fmt::format("{}: not JSON ({}); a table is a 'wstune export' file or a T4 results file "
                    "(gunzip a compressed one first)",
                    path, e.what()));
  }
  if (doc.is_object() && doc.contains("format")) return table_from_export(doc, path, session);
  if (doc.is_object() && doc.contains("results")) return table_from_t4(doc, path);
  throw UsageError(
      fmt::format("{}: neither a 'wstune export' file (\"format\": \"wstune-store-export\") nor a T4 "
                  "results file (\"results\": [...])",
                  path));
}

SearchSpace table_space(const RecordedTable& table) {
  if (table.trials.empty()) throw UsageError(fmt::format("{}: the table has no trial", table.source));
  const Configuration baseline = table.trials.front().configuration();
  if (table.parameters.empty()) {
    std::vector<Extent> shapes;
    for (std::size_t i = 1; i < table.trials.size(); ++i)
      if (table.trials[i].local) shapes.push_back(*table.trials[i].local);
    const TuneTarget& tg = table.target;
    const LocalSize rule = tg.global.count() > 1 && tg.global.dims <= 2 && tg.pe_per_cu
                               ? paper_rule(tg.global, shapes, tg.priority, tg.pe_per_cu)
                               : LocalSize{};
    return SearchSpace(shapes, rule);
  }
  // Local sizes by parameter combination, in recorded order.
  std::unordered_map<std::string, std::vector<LocalSize>> locals;
  for (const auto& t : table.trials) locals[configuration_key(t.params, std::nullopt)].push_back(t.local);
  // The recorded combinations of the parameters' values, in odometer order.
  const auto& ps = table.parameters;
  std::set<std::vector<std::uint32_t>> combinations;
  for (const auto& t : table.trials) {
    std::vector<std::uint32_t> idx;
    for (const auto& p : ps) {
      const auto it = t.params.find(p.name);
      const auto v = it == t.params.end() ? p.values.end() : std::find(p.values.begin(), p.values.end(), *it);
      if (v == p.values.end()) break;
      idx.push_back(static_cast<std::uint32_t>(v - p.values.begin()));
    }
    if (idx.size() == ps.size()) combinations.insert(std::move(idx));
  }
  std::vector<std::uint32_t> sizes;
  for (const auto& p : ps) {
    if (p.values.empty()) throw UsageError(fmt::format("tuning parameter {} has no values", p.name));
    sizes.push_back(static_cast<std::uint32_t>(p.values.size()));
  }
  ParameterSets sets(std::move(sizes));
  for (const auto& idx : combinations) sets.push_back(idx);
  auto recorded = [&](std::span<const std::uint32_t> idx, std::vector<LocalSize>& out) {
    json params = json::object();
    for (std::size_t k = 0; k < ps.size(); ++k) params[ps[k].name] = ps[k].values[idx[k]];
    const auto it = locals.find(configuration_key(params, std::nullopt));
    if (it != locals.end()) out = it->second;
  };
  return SearchSpace(ps, std::move(sets), recorded, baseline, std::nullopt);
}

namespace {

// Python's str() of a parameter value, as Kernel Tuner builds cache keys.
std::string python_str(const json& v) {
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

const char* kernel_tuner_error(TrialStatus s) {
  switch (s) {
    case TrialStatus::compile:
      return "CompilationFailedConfig";
    case TrialStatus::constraints:
      return "InvalidConfig";
    default:
      return "RuntimeFailedConfig";
  }
}

}  // namespace

nlohmann::ordered_json kernel_tuner_cache(const RecordedTable& table) {
  using ojson = nlohmann::ordered_json;
  unsigned local_dims = 0;
  for (const auto& t : table.trials)
    if (t.local) local_dims = std::max({local_dims, t.local->dims, table.target.global.dims});
  static const char* block_names[] = {"block_size_x", "block_size_y", "block_size_z"};
  ojson tune_params = ojson::object();
  ojson keys = ojson::array();
  for (const auto& p : table.parameters) {
    keys.push_back(p.name);
    tune_params[p.name] = p.values;
  }
  std::vector<std::set<std::size_t>> block_values(local_dims);
  for (const auto& t : table.trials)
    for (unsigned d = 0; d < local_dims; ++d) block_values[d].insert(t.local ? (*t.local)[d] : 0);
  for (unsigned d = 0; d < local_dims; ++d) {
    keys.push_back(block_names[d]);
    tune_params[block_names[d]] = block_values[d];
  }
  ojson cache = ojson::object();
  for (const auto& t : table.trials) {
    ojson entry = ojson::object();
    std::vector<std::string> parts;
    for (const auto& p : table.parameters) {
      entry[p.name] = t.params.at(p.name);
      parts.push_back(python_str(t.params.at(p.name)));
    }
    for (unsigned d = 0; d < local_dims; ++d) {
      const std::size_t v = t.local ? (*t.local)[d] : 0;
      entry[block_names[d]] = v;
      parts.push_back(std::to_string(v));
    }
    entry["time"] = t.ok() && t.kernel.size() ? ojson(t.median_ms()) : ojson(kernel_tuner_error(t.status));
    entry["times"] = t.kernel.ms;
    entry["compile_time"] = 0;
    entry["verification_time"] = 0;
    entry["benchmark_time"] = 0;
    cache[fmt::format("{}", fmt::join(parts, ","))] = std::move(entry);
  }
  ojson problem = ojson::array();
  for (unsigned d = 0; d < std::max(1u, table.target.global.dims); ++d) problem.push_back(table.target.global[d]);
  // "cache" last: Kernel Tuner reads a file ending in "}}}" as closed.
  return ojson{{"device_name", table.target.device_name.empty() ? "wstune table" : table.target.device_name},
               {"kernel_name", table.target.kernel},
               {"problem_size", problem},
               {"tune_params_keys", keys},
               {"tune_params", tune_params},
               {"objective", "time"},
               {"cache", cache}};
}

SimulatedEvaluator::SimulatedEvaluator(RecordedTable table) : SimulatedEvaluator(table, table_space(table)) {}

SimulatedEvaluator::SimulatedEvaluator(RecordedTable table, SearchSpace space)
    : table_(std::move(table)), space_(std::move(space)) {
  for (std::size_t i = 0; i < table_.trials.size(); ++i) index_.emplace(table_.trials[i].configuration().key(), i);
}

const TuneTarget& SimulatedEvaluator::target() const {
  return table_.target;
}
const SearchSpace& SimulatedEvaluator::space() const {
  return space_;
}

Trial SimulatedEvaluator::evaluate(const Configuration& config, const TimingOptions&) {
  ++calls_;
  const auto it = index_.find(config.key());
  if (it == index_.end()) {
    Trial t;
    t.params = config.params;
    t.local = config.local;
    t.status = TrialStatus::constraints;
    t.error = fmt::format("not in the recorded table {}", table_.source);
    return t;
  }
  return table_.trials[it->second];
}

}  // namespace wstune

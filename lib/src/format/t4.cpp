// Stored trials as a T4 results document (t4.hpp).
#include "format/t4.hpp"

#include <numeric>

#include <fmt/format.h>

#include "format/json.hpp"
#include "format/trial_json.hpp"
#include "wstune/error.hpp"

namespace wstune {
namespace {

using nlohmann::json;

json session_json(const SessionRecord& s) {
  return json{
      {"session", s.uuid},
      {"device", s.device_fingerprint},
      {"kernel",
       {{"name", s.kernel.name}, {"source_hash", s.kernel.source_hash}, {"build_options", s.kernel.build_options}}},
      {"problem", {{"size", s.problem.size_text}, {"extent", to_json(s.problem.global)}}},
      {"strategy", s.spec.strategy},
      {"objectives", s.spec.objectives},
      {"host", s.host},
      {"started_at", s.started_at}};
}

json result_json(const SessionRecord& s, const TrialRecord& t) {
  json config = t.params.empty() ? json::object() : t.params;
  config["local_size"] = to_string(t.local);
  const double sum = std::accumulate(t.samples_ms.begin(), t.samples_ms.end(), 0.0);
  const double bench = t.run_ms.value_or(sum);
  json times{{"compilation", t.compile_ms.value_or(0)}, {"runtimes", t.samples_ms},
             {"validation", t.verify_ms.value_or(0)},   {"benchmark", bench},
             {"framework", std::max(0.0, bench - sum)}, {"search_algorithm", 0}};
  json measurements = json::array();
  if (const auto m = t.median_ms()) {
    measurements.push_back({{"name", "time"}, {"value", *m}, {"unit", "ms"}});
    if (t.energy) {  // the built-in metrics of metric/metric.hpp, from the stored observation
      const double joules = t.energy->power_w * *m / 1000;
      measurements.push_back({{"name", "energy"}, {"value", joules}, {"unit", "J"}});
      measurements.push_back({{"name", "power"}, {"value", t.energy->power_w}, {"unit", "W"}});
      measurements.push_back({{"name", "edp"}, {"value", joules * *m / 1000}, {"unit", "J*s"}});
    }
  }
  json objectives = json::array();
  for (const std::string& o : s.spec.objectives) objectives.push_back(o.substr(0, o.rfind(':')));
  if (objectives.empty()) objectives.push_back("time");
  return json{{"timestamp", t.created_at},
              {"configuration", std::move(config)},
              {"times", std::move(times)},
              {"invalidity", std::string(to_string(t.status))},
              {"correctness", t.status == TrialStatus::correct ? 1 : 0},
              {"measurements", std::move(measurements)},
              {"objectives", std::move(objectives)},
              {"wstune",
               {{"session", s.uuid},
                {"device", s.device_fingerprint},
                {"kernel", s.kernel.name},
                {"size", s.problem.size_text},
                {"error", t.error},
                {"global", t.global ? to_json(*t.global) : json()},
                {"energy", t.energy ? to_json(*t.energy) : json()}}}};
}

}  // namespace

json t4_results(const Store& store, const std::vector<std::int64_t>& session_ids) {
  std::vector<SessionRecord> sessions;
  if (session_ids.empty()) {
    sessions = store.sessions();
  } else {
    for (const std::int64_t id : session_ids) {
      auto s = store.session(id);
      if (!s) throw UsageError(fmt::format("session {} is not in database {}", id, store.path()));
      sessions.push_back(std::move(*s));
    }
  }
  json meta = json::array();
  json results = json::array();
  for (const SessionRecord& s : sessions) {
    meta.push_back(session_json(s));
    for (const TrialRecord& t : store.trials(s.id)) results.push_back(result_json(s, t));
  }
  return json{{"schema_version", kT4SchemaVersion},
              {"metadata", {{"timeunit", "milliseconds"}, {"wstune", std::move(meta)}}},
              {"results", std::move(results)}};
}

}  // namespace wstune

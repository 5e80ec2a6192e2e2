#include "protocol/jobs.hpp"
#include "observe/observer.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "format/json_input.hpp"
#include "kernel/kernel.hpp"
#include "protocol/kernel_source.hpp"
#include "search/search.hpp"
#include "tuning_file/tuning_file.hpp"

namespace wstune::daemon {

using nlohmann::json;

std::string_view to_string(Mode m) noexcept {
  switch (m) {
    case Mode::run:
      return "run";
    case Mode::tune:
      return "tune";
    case Mode::calibrate:
      return "calibrate";
  }
  return "run";
}

Mode parse_mode(std::string_view text) {
  for (auto m : {Mode::run, Mode::tune, Mode::calibrate})
    if (to_string(m) == text) return m;
  throw UsageError(fmt::format("unknown mode '{}': use run, tune or calibrate", text));
}

SplitModel parse_job_split(std::string_view text) {
  try {
    return parse_split_model(text);
  } catch (const UsageError&) {
    throw UsageError(fmt::format("unknown split model '{}': use even, proportional, pe-ratio or measured", text));
  }
}

json to_json(const Job& j) {
  json out{{"kernel", j.kernel},
           {"size", j.size},
           {"repetitions", j.repetitions},
           {"warmup", j.warmup},
           {"split", std::string(to_string(j.split))},
           {"direction", std::string(to_string(j.direction))},
           {"local", std::string(to_string(j.local))},
           {"seed", j.seed},
           {"max_trials", j.max_trials},
           {"calibrate_budget_ms", j.calibrate_budget_ms},
           {"overlap", j.overlap},
           {"kernel_file", j.kernel_file},
           {"config", j.config},
           {"retune", j.retune},
           {"strategy", j.strategy}};
  if (j.results != "auto") out["results"] = j.results;
  if (j.inputs != "worker") out["inputs"] = j.inputs;           // absent for the default: run keys stay as they were
  if (!j.objectives.empty()) out["objectives"] = j.objectives;  // absent for time: run keys stay as they were
  if (j.energy != "auto") out["energy"] = j.energy;             // absent for auto, likewise
  return out;
}

namespace {

// A kernel file's config: every name a tuning parameter, every value one of its values.
void check_config(const KernelSpec& spec, const json& config, const std::string& where) {
  for (const auto& item : config.items()) {
    const std::string& name = item.key();  // named: clang 14 cannot capture a structured binding
    const json& value = item.value();
    const auto& tps = spec.tuning_parameters();
    auto tp = std::find_if(tps.begin(), tps.end(), [&](const TuningParameter& t) { return t.name == name; });
    if (tp == tps.end())
      throw UsageError(
          fmt::format("{}: config: '{}' is not a tuning parameter of {}", where, bounded(name), spec.name()));
    if (std::find(tp->values.begin(), tp->values.end(), value) == tp->values.end())
      throw UsageError(fmt::format("{}: config: {} is not one of {}'s values", where, describe_json(value), name));
  }
}

void check_job(const Job& job, const std::string& where) {
  const auto spec_ptr = master_kernel(job.kernel, job.kernel_file);
  const KernelSpec& spec = *spec_ptr;
  (void)resolve_tune(spec, tune_request(job));  // its size and strategy
  check_config(spec, job.config, where);
  if (job.repetitions == 0) throw UsageError(fmt::format("{}: repetitions 0: give at least 1", where));
  if (job.overlap == 0) {
    throw UsageError(
        fmt::format("{}: overlap 0: give the chunks per worker block, 1 or more (1: whole blocks)", where));
  }
  if (!(job.calibrate_budget_ms >= 0) || !std::isfinite(job.calibrate_budget_ms)) {
    throw UsageError(
        fmt::format("{}: calibrate_budget_ms must be ≥ 0 (0: no cap), got {}", where, job.calibrate_budget_ms));
  }
}

}  // namespace

namespace {
// The longest string a job key takes (kernel names, sizes, models).
constexpr std::size_t kMaxJobText = 256;
// A non-negative integer that fits T; nlohmann's get<unsigned> would wrap -1.
template <typename T>
T counted(const json& v, const std::string& key) {
  if (!v.is_number_integer() || (v.is_number_integer() && !v.is_number_unsigned() && v.get<std::int64_t>() < 0) ||
      v.get<std::uint64_t>() > std::numeric_limits<T>::max()) {
    throw UsageError(fmt::format("'{}' must be a whole number from 0 to {}, got {}", key, std::numeric_limits<T>::max(),
                                 describe_json(v)));
  }
  return static_cast<T>(v.get<std::uint64_t>());
}
}  // namespace

namespace {
// "sizes": "N=64,M=32" as given, or {"N": 64, "M": 32} as that text.
std::string size_bindings(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (!v.is_object()) throw UsageError("'sizes' must be a string \"N=64,...\" or an object {\"N\": 64, ...}");
  std::string text;
  for (const auto& [name, n] : v.items()) {
    if (!n.is_number_unsigned()) throw UsageError(fmt::format("'sizes': {} must be a whole number", bounded(name)));
    text += fmt::format("{}{}={}", text.empty() ? "" : ",", name, n.get<std::uint64_t>());
  }
  return text;
}
}  // namespace

std::string parse_energy_mode(const std::string& text, std::string_view what) {
  if (!is_energy_mode(text))
    throw UsageError(
        fmt::format("{} '{}': use auto (observe each trial's energy when an objective needs it), "
                    "on (always, where a sensor is) or off",
                    what, bounded(text)));
  return text;
}

namespace {
// Refuses a job key that is not one, and a string value longer than kMaxJobText.
void check_job_key(const std::string& key, const json& value, const std::string& where) {
  static const std::set<std::string> keys{
      "kernel", "size",     "sizes",      "repetitions",         "warmup",  "split",       "direction",
      "local",  "seed",     "max_trials", "calibrate_budget_ms", "overlap", "kernel_file", "config",
      "retune", "strategy", "results",    "objectives",          "energy",  "inputs"};
  if (!keys.count(key)) {
    throw UsageError(
        fmt::format("{}: unknown key '{}': use kernel, size, repetitions, warmup, split, "
                    "direction, local, seed, max_trials, calibrate_budget_ms, overlap, kernel_file, "
                    "sizes, config, retune, strategy, results, objectives, energy or inputs",
                    where, bounded(key)));
  }
  if (value.is_string() && value.get_ref<const std::string&>().size() > kMaxJobText) {
    // Every later message may quote the value: refuse it before it is long.
    throw UsageError(fmt::format("{}: '{}' is a string of {} bytes ({}); give at most {}", where, key,
                                 value.get_ref<const std::string&>().size(), describe_json(value), kMaxJobText));
  }
}

// Sets the field `key` of `job` to `value`; json::exception for a value of
// the wrong type, UsageError for one out of range.
void set_job_field(Job& job, const std::string& key, const json& value) {
  if (key == "kernel")
    job.kernel = value.get<std::string>();
  else if (key == "size")
    job.size = value.is_number() ? value.dump() : value.get<std::string>();
  else if (key == "repetitions")
    job.repetitions = counted<unsigned>(value, key);
  else if (key == "warmup")
    job.warmup = counted<unsigned>(value, key);
  else if (key == "split")
    job.split = parse_job_split(value.get<std::string>());
  else if (key == "direction")
    job.direction = parse_split_direction(value.get<std::string>(), key);
  else if (key == "local")
    job.local = parse_local_policy(value.get<std::string>());
  else if (key == "seed")
    job.seed = counted<std::uint64_t>(value, key);
  else if (key == "max_trials")
    job.max_trials = counted<unsigned>(value, key);
  else if (key == "calibrate_budget_ms")
    job.calibrate_budget_ms = value.get<double>();
  else if (key == "overlap")
    job.overlap = counted<unsigned>(value, key);
  else if (key == "sizes")
    job.size = size_bindings(value);
  else if (key == "kernel_file")
    job.kernel_file = value.get<std::string>();
  else if (key == "retune")
    job.retune = value.get<bool>();
  else if (key == "strategy")
    job.strategy = value.get<std::string>();
  else if (key == "objectives")
    job.objectives = value.get<std::string>();
  else if (key == "energy")
    job.energy = parse_energy_mode(value.get<std::string>(), "energy");
  else if (key == "inputs") {
    job.inputs = value.get<std::string>();
    if (job.inputs != "worker" && job.inputs != "resident" && job.inputs != "master")
      throw UsageError(
          fmt::format("inputs '{}': use worker (generated by each worker from the seed, uploaded every job), "
                      "resident (generated by each worker and kept on its device across the jobs that repeat "
                      "them) or master (sent by the master every job; an input every block needs whole once)",
                      bounded(job.inputs)));
  } else if (key == "results") {
    job.results = value.get<std::string>();
    if (job.results != "auto" && job.results != "message")
      throw UsageError(
          fmt::format("results '{}': use auto (workers on the master's host leave results in its "
                      "memory) or message (every result an MPI message)",
                      bounded(job.results)));
  } else if (key == "config") {
    if (!value.is_object()) throw UsageError("'config' must be an object {\"NAME\": value, ...}");
    job.config = value;
  }
}
}  // namespace

TuneRequest tune_request(const Job& job) {
  TuneRequest r;
  r.size = job.size;
  r.strategy = job.strategy;
  r.seed = job.seed;
  r.max_evals = job.max_trials;
  r.objectives = job.objectives;
  return r;
}

Job job_from_json(const json& j, const Job& defaults, const std::string& where) {
  if (!j.is_object()) throw UsageError(fmt::format("{}: a job must be a JSON object, got {}", where, describe_json(j)));
  Job job = defaults;
  for (const auto& [key, value] : j.items()) {
    check_job_key(key, value, where);
    try {
      set_job_field(job, key, value);
    } catch (const json::exception& e) {
      throw UsageError(
          fmt::format("{}: bad value for '{}': {} ({})", where, key, describe_json(value), bounded(e.what())));
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("{}: {}", where, e.what()));
    }
  }
  return job;
}

std::vector<Job> parse_jobs(const json& doc, const Job& defaults, const std::string& origin) {
  check_json_depth(doc, origin);
  Job base = defaults;
  const json* list = &doc;
  if (doc.is_object()) {
    if (doc.contains("defaults")) {
      base = job_from_json(doc["defaults"], defaults, origin + ": defaults");
    }
    if (!doc.contains("jobs")) throw UsageError(fmt::format("{}: no \"jobs\" array; see docs/daemon.md", origin));
    list = &doc["jobs"];
  }
  if (!list->is_array()) throw UsageError(fmt::format("{}: \"jobs\" must be an array; see docs/daemon.md", origin));
  std::vector<Job> jobs;
  std::size_t n = 0;
  for (const auto& item : *list) {
    const std::string where = fmt::format("{}: job {}", origin, ++n);
    Job job = job_from_json(item, base, where);
    if (!job.kernel_file.empty()) {
      if (item.contains("kernel"))
        throw UsageError(fmt::format("{}: give \"kernel\" or \"kernel_file\", not both", where));
      try {
        job.kernel = std::string(master_kernel("", job.kernel_file)->name());
        check_job(job, where);
      } catch (const UsageError& e) {
        const std::string msg = e.what();
        throw UsageError(msg.rfind(where, 0) == 0 ? msg : fmt::format("{}: {}", where, msg));
      }
      jobs.push_back(std::move(job));
      continue;
    }
    if (job.kernel.empty()) throw UsageError(fmt::format("{}: no \"kernel\" (or \"kernel_file\")", where));
    const std::vector<std::string> names = job.kernel == "all" ? kernel_names() : std::vector{job.kernel};
    for (const auto& name : names) {
      Job one = job;
      one.kernel = name;
      if (job.kernel == "all") one.size.clear();  // per-kernel sizes differ; "all" uses the paper's
      try {
        check_job(one, where);
      } catch (const UsageError& e) {
        const std::string msg = e.what();
        throw UsageError(msg.rfind(where, 0) == 0 ? msg : fmt::format("{}: {}", where, msg));
      }
      jobs.push_back(std::move(one));
    }
  }
  return jobs;
}

std::vector<Job> read_job_file(const std::string& path, const Job& defaults) {
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("--job {}: cannot read the file; check the path", path));
  std::stringstream text;
  text << in.rdbuf();
  // Nesting beyond kMaxJsonDepth is refused before the document is built.
  json doc = parse_json_input(text.str(), "--job " + path);
  // A relative kernel_file names a file beside the job file.
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  auto rebase = [&](json& job) {
    if (job.is_object() && job.contains("kernel_file") && job["kernel_file"].is_string()) {
      const std::filesystem::path f = job["kernel_file"].get<std::string>();
      if (f.is_relative() && !f.empty()) job["kernel_file"] = (dir / f).lexically_normal().string();
    }
  };
  if (doc.is_object() && doc.contains("defaults")) rebase(doc["defaults"]);
  json& list = doc.is_object() && doc.contains("jobs") ? doc["jobs"] : doc;
  if (list.is_array())
    for (auto& job : list) rebase(job);
  return parse_jobs(doc, defaults, path);
}

std::vector<Job> jobs_from_options(const std::vector<std::string>& kernels, const std::string& size,
                                   const Job& defaults) {
  json list = json::array();
  for (const auto& k : kernels) {
    json j{{"kernel", k}};
    if (!size.empty()) {
      if (k == "all") throw UsageError("--size with --kernel all: sizes differ per kernel; use a job file");
      j["size"] = size;
    }
    list.push_back(j);
  }
  return parse_jobs(list, defaults, "options");
}

std::vector<Job> jobs_from_kernel_file(const std::string& path, const std::string& size, const std::string& config,
                                       const Job& defaults) {
  json job{{"kernel_file", path}};
  if (!size.empty()) job["size"] = size;
  if (!config.empty()) job["config"] = parse_json_input(config, "--config");
  return parse_jobs(json::array({job}), defaults, "options");
}

}  // namespace wstune::daemon

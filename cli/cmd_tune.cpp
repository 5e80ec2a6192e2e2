// wstune tune: measured search over one kernel's configurations (tuning
// parameters and local work size / group shape) on one device, never slower
// than the baseline (the driver default NULL, or a tuning file's reference
// configuration).
#include <cmath>
#include <fstream>
#include <iostream>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "command.hpp"
#include "format/json.hpp"
#include "format/trial_json.hpp"
#include "observe/observer.hpp"
#include "program_cache/program_cache.hpp"
#include "report/svg.hpp"
#include "session/autotune.hpp"
#include "table.hpp"
#include "wstune/error.hpp"

namespace po = boost::program_options;

namespace wstune::cli {
namespace {

// Median kernel times over the x × y group shapes of the best's parameters.
svg::Heatmap heatmap(const TuneResult& r) {
  svg::Heatmap h;
  h.title = fmt::format("{} {} on {}: median kernel ms by group shape (baseline {:.4g} ms)", r.target.kernel,
                        r.target.size, r.target.device_name, r.baseline.median_ms());
  h.x_label = "local x";
  h.y_label = "local y";
  std::set<std::size_t> xs, ys;
  for (const auto& t : r.trials) {
    if (!t.local || t.params != r.best.params) continue;
    xs.insert(t.local->x);
    ys.insert(t.local->y);
  }
  for (auto x : xs) h.columns.push_back(std::to_string(x));
  for (auto y : ys) h.rows.push_back(std::to_string(y));
  h.values.assign(ys.size(), std::vector<std::optional<double>>(xs.size()));
  for (const auto& t : r.trials) {
    if (!t.local || !t.ok() || t.params != r.best.params) continue;
    const auto col = static_cast<std::size_t>(std::distance(xs.begin(), xs.find(t.local->x)));
    const auto row = static_cast<std::size_t>(std::distance(ys.begin(), ys.find(t.local->y)));
    if (row < h.rows.size() && col < h.columns.size()) h.values[row][col] = t.median_ms();
  }
  return h;
}

std::string ratio(std::optional<double> v) {
  return v ? fmt::format("{:.3f}", *v) : "-";
}

// The tuner's time per measured trial beyond the kernel runs themselves,
// summed over the trials as they are measured (tune() merges the samples of
// a configuration's later trials into its first), and where it goes: builds
// (compile_ms, inside the run unless built ahead), the run beyond its timed
// kernels (warm-up, restores, launches, read-back), verification, and the
// rest (the worker's messages, the searcher).
struct Overhead {
  double compile_ms = 0, run_ms = 0, verify_ms = 0, other_ms = 0;
  unsigned trials = 0;
  void add(const Trial& t) {
    if (!t.ok()) return;
    double k = 0;
    for (double ms : t.kernel.ms) k += ms;
    compile_ms += t.compile_ms;
    run_ms += t.run_wall_ms - k;
    verify_ms += t.verify_ms;
    other_ms += t.wall_ms - t.run_wall_ms - t.verify_ms;
    ++trials;
  }
  [[nodiscard]] double per(double part) const { return trials ? part / trials : 0; }
  /// wall − kernel runs: the run beyond its kernels, verification and the rest (builds fall in the run or before it).
  [[nodiscard]] double per_trial() const { return per(run_ms + verify_ms + other_ms); }
  /// The parts per trial: (JSON name, text name, ms).
  [[nodiscard]] std::vector<std::tuple<const char*, const char*, double>> parts() const {
    return {{"build", "build", per(compile_ms)},
            {"run_beyond_kernels", "run beyond the kernels", per(run_ms)},
            {"verification", "verification", per(verify_ms)},
            {"other", "other", per(other_ms)}};
  }
};

std::string config_text(const Trial& t) {
  const Configuration c = t.configuration();
  return c.params.empty() ? to_string(c.local) : to_string(c);
}

// The values of `wstune tune`'s options.
struct TuneArgs {
  std::string kernel, kernel_file, heatmap_file, db, objective, objectives, energy = "auto";
  TuneRequest request;  // size, strategy, seed, budget: resolved by resolve_tune()
  unsigned repeat = 5, warmup = 1, max_repeat = 100;
  double min_time_ms = 2.0, median_error = 0.01, max_time_ms = 50.0, trial_timeout_s = 60;
  int build_jobs = -1;    // -1: default_build_jobs() of the device's type
  std::string cache_dir;  // "": ProgramCache::default_dir()
  AutotuneOptions opt;
};

// Usage errors in the option values, found before anything starts.
void validate(const TuneArgs& a) {
  if (a.repeat == 0) throw UsageError("--repeat 0: give at least one repetition, e.g. --repeat 5");
  if (!std::isfinite(a.min_time_ms) || a.min_time_ms > 60'000)
    throw UsageError(
        fmt::format("--min-time {}: give milliseconds between 0 and 60000, e.g. --min-time 2", a.min_time_ms));
  if (!std::isfinite(a.median_error) || a.median_error < 0 || a.median_error >= 1)
    throw UsageError(fmt::format("--median-error {}: give a fraction from 0 (off) to below 1, e.g. --median-error 0.01",
                                 a.median_error));
  if (!std::isfinite(a.max_time_ms) || a.max_time_ms < 0 || a.max_time_ms > 600'000)
    throw UsageError(
        fmt::format("--max-time {}: give milliseconds between 0 and 600000, e.g. --max-time 50", a.max_time_ms));
  if (!std::isfinite(a.request.time_limit_s) || a.request.time_limit_s < 0 || a.request.time_limit_s > 1e7)
    throw UsageError("--time-limit must be a number of seconds from 0 to 1e7, e.g. --time-limit 30");
  if (!std::isfinite(a.trial_timeout_s) || a.trial_timeout_s <= 0 || a.trial_timeout_s > 1e6)
    throw UsageError("--trial-timeout must be > 0 and at most 1e6 seconds, e.g. --trial-timeout 60");
  if (a.build_jobs < -1 || a.build_jobs > 1024)
    throw UsageError(
        fmt::format("--build-jobs {}: give 0 (off) to 1024 builder processes, e.g. --build-jobs 4", a.build_jobs));
  if (!a.request.strategy.empty())
    (void)make_searcher(a.request.strategy);  // a bad name is a usage error before anything starts
  if (!is_energy_mode(a.energy))
    throw UsageError(fmt::format(
        "--energy {}: give auto (observe when an objective needs energy), on (always, where a sensor is) or off",
        a.energy));
  if (!a.objective.empty() && !a.objectives.empty())
    throw UsageError("--objective and --objectives: give one (--objectives A,B decides by A and keeps the front)");
}

// The progress line on a terminal: [n/budget] phase configuration time  best.
std::function<void(const Trial&, TrialPhase)> progress_line(const unsigned& budget, const std::size_t& space) {
  struct State {
    unsigned n = 0;
    double best_ms = 0;
    std::string best = "-";
  };
  auto st = std::make_shared<State>();
  return [st, &budget, &space](const Trial& t, TrialPhase phase) {
    ++st->n;
    if (t.ok() && (st->best_ms == 0 || t.median_ms() < st->best_ms)) {
      st->best_ms = t.median_ms();
      st->best = config_text(t);
    }
    std::cerr << fmt::format("\r\033[K[{}/{}] {} {} {}  best {} {:.4f} ms", st->n, budget ? budget : space + 1,
                             to_string(phase), config_text(t),
                             t.ok() ? fmt::format("{:.4f} ms", t.median_ms()) : std::string(to_string(t.status)),
                             st->best, st->best_ms)
              << std::flush;
  };
}

// One warm-start seed and where it came from.
nlohmann::json seed_json(const WarmSeed& s) {
  return {{"params", s.config.params},
          {"local", to_json(s.config.local)},
          {"from", seed_scope(s)},
          {"fingerprint", s.from.device_fingerprint},
          {"size", s.from.problem.size_text},
          {"distance", s.distance},
          {"median_ms", s.from.median_ms}};
}

// A trial's report with its metrics' values (metric.hpp).
nlohmann::json report_with_metrics(const Trial& t, const MetricSet& metrics) {
  nlohmann::json j = trial_report_json(t);
  j["metrics"] = metrics.values_json(t);
  return j;
}

void print_json(const AutotuneResult& a, const Problem& p, const Overhead& overhead, const MetricSet& metrics,
                const ResolvedSearch& search) {
  const TuneResult& r = a.result;
  const TuneTarget& tg = r.target;
  nlohmann::json j;
  j["kernel_name"] = tg.kernel;
  j["size"] = p.text;
  j["global"] = to_json(tg.global);
  j["device"] = {{"name", tg.device_name},
                 {"id", tg.device_id},
                 {"fingerprint", tg.device_fingerprint},
                 {"pe_per_cu", tg.pe_per_cu},
                 {"max_items", tg.limits.max_items()}};
  j["strategy"] = r.strategy;
  j["space_size"] = r.space_size;          // the search space, the baseline excluded
  j["configurations"] = r.space_size + 1;  // as the text counts them: the baseline (reference) included
  j["max_evals"] = a.max_evals;
  j["evaluations"] = r.evaluations;
  j["tiebreak_trials"] = r.tiebreak_trials;
  j["wall_ms"] = r.wall_ms;
  j["overhead_ms_per_trial"] = overhead.per_trial();
  for (const auto& [key, name, ms] : overhead.parts()) j["overhead_breakdown_ms_per_trial"][key] = ms;
  j["stop_reason"] = r.stop_reason;
  if (a.pool.jobs)  // the build pool's work; waited_ms: the trials' wait for builders (part of their wall_ms)
    j["build_pool"] = {{"jobs", a.pool.jobs},
                       {"started", a.pool.started},
                       {"built", a.pool.built},
                       {"lost", a.pool.lost},
                       {"waited_ms", a.pool.waited_ms}};
  j["warm_start"] = nlohmann::json::array();
  for (const WarmSeed& s : a.seeds) j["warm_start"].push_back(seed_json(s));
  j["objectives"] = nlohmann::json::array();
  for (const Objective& o : search.objectives) j["objectives"].push_back(to_string(o));
  j["objective_note"] = a.objective_note;
  j["energy_sensor"] = tg.energy_sensor;
  j["energy_note"] = tg.energy_note;
  j["best"] = report_with_metrics(r.best, metrics);
  j["baseline"] = report_with_metrics(r.baseline, metrics);
  j["rule"] = r.rule ? report_with_metrics(*r.rule, metrics) : nlohmann::json();
  j["front"] = nlohmann::json::array();
  for (const std::size_t i : a.front) j["front"].push_back(report_with_metrics(r.trials[i], metrics));
  j["ratio_to_null"] = r.ratio_to_baseline() ? nlohmann::json(*r.ratio_to_baseline()) : nlohmann::json();
  j["ratio_to_rule"] = r.ratio_to_rule() ? nlohmann::json(*r.ratio_to_rule()) : nlohmann::json();
  j["trials"] = nlohmann::json::array();
  for (const auto& t : r.trials) j["trials"].push_back(report_with_metrics(t, metrics));
  std::cout << j.dump(2) << "\n";
}

std::string value_text(std::optional<double> v) {
  return v ? fmt::format("{:.4g}", *v) : "-";
}

// The energy line: the sensor and the best's and baseline's energy, or why not measured.
void print_energy(const TuneResult& r, const MetricSet& metrics) {
  const TuneTarget& tg = r.target;
  if (tg.energy_sensor.empty()) {
    std::cout << fmt::format("energy: not measured ({})\n", tg.energy_note);
    return;
  }
  const auto& e = r.best.energy;
  std::cout << fmt::format(
      "energy ({}): best {} J per run at {} W, baseline {} J at {} W; resolution {:g} J, update period {:.3g} ms, "
      "window {} ms (±{}), observer reads {} ms per trial\n",
      tg.energy_sensor, value_text(metrics.value(r.best, "energy")), value_text(metrics.value(r.best, "power")),
      value_text(metrics.value(r.baseline, "energy")), value_text(metrics.value(r.baseline, "power")),
      e ? e->resolution_j : 0, e ? e->update_period_ms : 0, e ? fmt::format("{:.1f}", e->window_ms) : "-",
      e ? fmt::format("{:.1f}%", 100 * e->relative_uncertainty()) : "-", e ? fmt::format("{:.3f}", e->read_ms) : "-");
}

// The Pareto front over the objectives, best first by the first.
void print_front(const AutotuneResult& a, const MetricSet& metrics, const ResolvedSearch& search) {
  if (search.objectives.size() < 2) return;
  std::vector<std::string> head{"front", "configuration"};
  for (const Objective& o : search.objectives) head.push_back(to_string(o));
  Table t(head);
  unsigned n = 0;
  for (const std::size_t i : a.front) {
    const Trial& tr = a.result.trials[i];
    std::vector<std::string> row{std::to_string(++n), config_text(tr)};
    for (const Objective& o : search.objectives) row.push_back(value_text(metrics.value(tr, o.name)));
    t.add(row);
  }
  std::cout << fmt::format("Pareto front over {} ({} configurations):\n", search.objectives.size(), a.front.size());
  if (a.front.empty()) {
    std::cout << "  (no trial has every objective's value)\n";
    return;
  }
  t.print(std::cout);
}

void print_table(const AutotuneResult& a, const Problem& p, const Overhead& overhead, const MetricSet& metrics,
                 const ResolvedSearch& search) {
  const TuneResult& r = a.result;
  const TuneTarget& tg = r.target;
  // Configurations as users count them (Kernel Tuner counts a tuning file's
  // reference configuration among them): the baseline included.
  std::cout << fmt::format("{} {} on {} ({}), global {}, {} configurations (the baseline included), strategy {}\n",
                           tg.kernel, p.text, tg.device_name, tg.device_id, to_string(tg.global), r.space_size + 1,
                           r.strategy);
  Table t({"config", "configuration", "median ms", "min ms", "samples", "best/this", "status"});
  auto row = [&](const char* name, const Trial& tr) {
    const double b = r.best.median_ms();
    t.add({name, config_text(tr), fmt::format("{:.4f}", tr.median_ms()), fmt::format("{:.4f}", tr.kernel.min()),
           fmt::format("{}", tr.kernel.size()),
           tr.ok() && tr.median_ms() > 0 ? fmt::format("{:.3f}", b / tr.median_ms()) : "-",
           std::string(to_string(tr.status))});
  };
  row("best", r.best);
  row(r.baseline.params.empty() ? "NULL" : "baseline", r.baseline);
  if (r.rule) row("rule", *r.rule);
  t.print(std::cout);
  unsigned failed = 0;
  for (const auto& tr : r.trials) failed += !tr.ok();
  std::string breakdown;
  for (const auto& [key, name, ms] : overhead.parts())
    breakdown += fmt::format("{}{} {:.1f}", breakdown.empty() ? "" : ", ", name, ms);
  std::cout << fmt::format(
      "best/baseline {}  best/rule {}  evaluations {} (+{} tie-break)  failed {}  wall {:.2f} s "
      "({:.1f} ms per evaluation; {:.1f} ms per trial beyond the kernel runs: {})  stop: {}\n",
      ratio(r.ratio_to_baseline()), ratio(r.ratio_to_rule()), r.evaluations, r.tiebreak_trials, failed,
      r.wall_ms / 1000, r.wall_ms / std::max(1u, r.evaluations + r.tiebreak_trials), overhead.per_trial(), breakdown,
      r.stop_reason);
  if (!(search.objectives.front() == Objective{}))
    std::cout << fmt::format("objective {}: best {}{}\n", to_string(search.objectives.front()),
                             value_text(metrics.value(r.best, search.objectives.front().name)),
                             a.objective_note.empty() ? "" : " (" + a.objective_note + ")");
  print_energy(r, metrics);
  print_front(a, metrics, search);
}

// `wstune tune`'s options, bound to `a`.
void add_tune_options(po::options_description& desc, TuneArgs& a) {
  add_kernel_options(desc, a.kernel, a.kernel_file);
  desc.add_options()("size,s", po::value(&a.request.size),
                     "problem size (kernel-specific; default: the paper's size or the file's ProblemSize)")(
      "device,d", po::value(&a.opt.device)->default_value("default"), "device: P:D, cpu, gpu or a name substring")(
      "strategy", po::value(&a.request.strategy),
      "auto (by the space: exhaustive up to 16 configurations, guided for local sizes below 1000, portfolio from 1000, "
      "else bayes), "
      "exhaustive, random, guided, rule, genetic, annealing, differential, portfolio or bayes (default: the file's "
      "Search, else auto; "
      "docs/tuning.md)")(
      "max-evals", po::value(&a.request.max_evals)->default_value(0),
      "stop after N measured configurations (0: the file's Budget, else the strategy's default: guided 20% of the "
      "space, at least 8; genetic, annealing, differential, portfolio and bayes 5%, at least 20; others no limit)")(
      "time-limit", po::value(&a.request.time_limit_s)->default_value(0),
      "stop searching after SEC seconds (0: no limit)")("repeat,r", po::value(&a.repeat)->default_value(5),
                                                        "timed repetitions per trial")(
      "warmup", po::value(&a.warmup)->default_value(1), "untimed warm-up runs per trial")(
      "min-time", po::value(&a.min_time_ms)->default_value(2.0),
      "keep repeating a trial until its samples sum to MS milliseconds (short kernels get stable medians; 0: off)")(
      "median-error", po::value(&a.median_error)->default_value(0.01),
      "keep repeating a trial while its median's estimated relative standard error (0.93·IQR/median/√n) "
      "is above this fraction (noisy devices get more samples; 0: off)")(
      "max-time", po::value(&a.max_time_ms)->default_value(50.0),
      "--median-error adds samples only until they sum to MS milliseconds (0: no bound)")(
      "max-repeat", po::value(&a.max_repeat)->default_value(100),
      "at most this many timed repetitions with --min-time or --median-error")(
      "trial-timeout", po::value(&a.trial_timeout_s)->default_value(60),
      "per-trial limit in seconds; the worker is killed past it")(
      "build-jobs", po::value(&a.build_jobs)->default_value(-1),
      "builder processes that compile the next configurations' programs ahead of the timed runs (0: off; default "
      "-1: the host's cores less one on a GPU or accelerator, 0 on a CPU device)")(
      "cache-dir", po::value(&a.cache_dir),
      "the program binary cache's folder (default: $WSTUNE_CACHE_DIR, else $XDG_CACHE_HOME/wstune/programs, else "
      "~/.cache/wstune/programs)")("no-binary-cache", "build every program from source (no program binary cache)")(
      "seed", po::value(&a.request.seed)->default_value(42), "input and search seed")(
      "db", po::value(&a.db), db_option_help)("no-store", "do not store the trials (print only)")(
      "no-resume",
      "start a new session even if an unfinished one for the same device, kernel, size and strategy exists")(
      "cold", "a cold start: no seeds from stored bests of other sizes or devices (warm start is the default)")(
      "objective", po::value(&a.objective),
      "NAME[:min|max]: the metric that decides the best: time (default), energy (J per run), power (W), edp "
      "(J*s) or a tuning file's wstune.Metrics (docs/energy.md)")(
      "objectives", po::value(&a.objectives),
      "A,B,...: the first decides the best, all of them keep the Pareto front (e.g. time,energy)")(
      "energy", po::value(&a.energy)->default_value("auto"),
      "auto: observe each correct trial's energy on the device's sensor (NVML, RAPL) where one is readable when "
      "an objective needs it (energy, power, edp, a metric reading energy); on: always; off: never")(
      "json", "print JSON")("heatmap", po::value(&a.heatmap_file),
                            "write the x × y table of median times as an SVG heatmap");
}

constexpr const char* kTuneUsage =
    "usage: wstune tune (--kernel K | --kernel-file FILE) [--size S] [--device D]\n"
    "                   [--strategy auto|exhaustive|random|guided|rule|genetic|annealing|differential|portfolio|bayes] "
    "[--max-evals N] [--time-limit SEC]\n"
    "                   [--repeat N] [--cold] [--objective NAME[:min|max] | --objectives A,B] [--energy auto|on|off]\n"
    "                   [--json] [--heatmap FILE.svg]\n\n"
    "Searches one kernel's configurations on one device: local work sizes / group shapes (every\n"
    "shape the device allows) and, for a kernel described by a T1 tuning file, its tuning parameters\n"
    "(constraints applied before anything runs). The baseline (NULL, the driver's choice, or the\n"
    "file's reference configuration) is always measured and the answer is never slower than it; the\n"
    "paper's §3.2.3 rule is measured too when the budget has room. The fastest few and the baseline\n"
    "then get two more trials each, and ties more (not bounded by --max-evals or --time-limit). Every\n"
    "configuration's outputs are verified. Trials run in a separate worker process with a timeout;\n"
    "on a GPU, builder processes compile the next configurations ahead (--build-jobs) into a\n"
    "program binary cache, so no configuration is compiled twice (docs/tuning.md).\n"
    "Every trial is committed to the database as it is measured; a killed session resumes without\n"
    "measuring a configuration twice (see docs/store.md, docs/tuning-files.md). A warm start (the\n"
    "default; --cold: none) first proposes the stored bests of the same kernel at other sizes, on\n"
    "devices of the same architecture and on other devices that are valid here.";

// The autotune options completed from the rest, once they passed validate().
void finish_tune_options(TuneArgs& a, const po::variables_map& vm) {
  validate(a);  // first: --trial-timeout nan must not reach the conversion (UBSan: float-cast-overflow)
  a.opt.trial_timeout = std::chrono::milliseconds(static_cast<long long>(a.trial_timeout_s * 1000));
  a.opt.resume = !vm.count("no-resume");
  a.opt.warm_start = !vm.count("cold");
  a.opt.energy = energy_options_of(a.energy);
  a.request.objectives = a.objective.empty() ? a.objectives : a.objective;
  a.opt.build_jobs = a.build_jobs;
  if (vm.count("no-binary-cache"))
    ProgramCache::configure({});
  else if (!a.cache_dir.empty())
    ProgramCache::configure(a.cache_dir);
  a.opt.tune.timing = TimingOptions{a.warmup, a.repeat, a.min_time_ms, a.max_repeat, a.median_error, a.max_time_ms};
}

// The --heatmap file: the median times, by group shape (x × y), of the trials with the best's parameter set, as SVG.
void write_heatmap(const std::string& path, const TuneResult& r) {
  std::ofstream out(path);
  if (!out) throw UsageError(fmt::format("--heatmap {}: cannot write the file; check the directory", path));
  out << svg::render(heatmap(r));
}

// The search, counting the overhead, with the progress line on a terminal and
// the resumed and stored sessions named on stderr.
AutotuneResult run_search(const KernelSpec& spec, const ResolvedTune& request, Store* store, AutotuneOptions opt,
                          Overhead& overhead) {
  unsigned budget = 0;
  std::size_t space = 0;
  auto progress = stderr_is_tty() ? progress_line(budget, space) : nullptr;
  opt.tune.on_trial = [&](const Trial& t, TrialPhase phase) {
    overhead.add(t);
    if (progress) progress(t, phase);
  };
  opt.on_start = [&](const Evaluator& ev, const AutotuneResult& so_far) {
    space = ev.space().size();
    budget = so_far.max_evals;
    if (so_far.session && so_far.session->resumed)
      std::cerr << fmt::format("wstune tune: resuming session {} with {} stored trial(s) in {}\n", so_far.session->id,
                               so_far.resumed_trials, store->path());
  };
  AutotuneResult res = autotune(spec, request, store, opt);
  if (stderr_is_tty()) std::cerr << "\r\033[K" << std::flush;
  for (std::size_t i = 0; i < res.seeds.size(); ++i) {
    const WarmSeed& s = res.seeds[i];
    std::cerr << fmt::format("wstune tune: warm start seed {}/{}: {} from the {} best of size {} on {}\n", i + 1,
                             res.seeds.size(), to_string(s.config), seed_scope(s), s.from.problem.size_text,
                             s.level == LookupLevel::nearest ? "this device" : s.from.device_fingerprint);
  }
  if (res.session) std::cerr << fmt::format("wstune tune: stored session {} in {}\n", res.session->id, store->path());
  if (res.pool.jobs)
    std::cerr << fmt::format(
        "wstune tune: {} builder process(es) built {} configuration(s) ahead ({} lost with a builder "
        "that died or hung); the trials waited {:.0f} ms for them\n",
        res.pool.jobs, res.pool.built, res.pool.lost, res.pool.waited_ms);
  return res;
}

int tune_main(int argc, char** argv) {
  TuneArgs a;
  po::options_description desc("wstune tune options");
  add_tune_options(desc, a);
  po::variables_map vm;
  if (!parse_options(argc, argv, kTuneUsage, desc, vm, nullptr, {"device"})) return 0;
  finish_tune_options(a, vm);
  const auto spec = kernel_option(a.kernel, a.kernel_file);
  const ResolvedTune request = resolve_tune(*spec, a.request);
  const Problem& p = request.problem;
  std::optional<Store> store;
  if (!vm.count("no-store")) store.emplace(database_path(a.db));
  Overhead overhead;
  const AutotuneResult res = run_search(*spec, request, store ? &*store : nullptr, a.opt, overhead);
  if (vm.count("heatmap")) write_heatmap(a.heatmap_file, res.result);
  const MetricSet metrics(*spec, p);
  if (vm.count("json"))
    print_json(res, p, overhead, metrics, request.search);
  else
    print_table(res, p, overhead, metrics, request.search);
  return res.result.best.ok() ? 0 : 1;
}

WSTUNE_COMMAND("tune",
               "search a kernel's configurations (local sizes, tuning parameters), never slower than the baseline",
               tune_main);

}  // namespace
}  // namespace wstune::cli

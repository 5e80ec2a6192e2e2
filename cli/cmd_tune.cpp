// wstune tune: measured search for the local work size / group shape of one
// kernel on one device, never slower than the driver default (NULL).
#include <cmath>
#include <fstream>
#include <iostream>
#include <set>

#include <fmt/format.h>

#include "command.hpp"
#include "table.hpp"
#include "wstune/error.hpp"
#include "wstune/json.hpp"
#include "wstune/search.hpp"
#include "wstune/store.hpp"
#include "wstune/strategies.hpp"
#include "wstune/svg.hpp"
#include "wstune/tune_session.hpp"

namespace po = boost::program_options;

namespace wstune::cli {
namespace {

nlohmann::json trial_json(const Trial& t) {
  return {{"local", to_json(t.local)}, {"status", std::string(to_string(t.status))}, {"error", t.error},
          {"kernel", to_json(t.kernel)}, {"wall_ms", t.wall_ms}, {"verified", t.verified},
          {"from_store", t.from_store}};
}

svg::Heatmap heatmap(const TuneResult& r) {
  svg::Heatmap h;
  h.title = fmt::format("{} {} on {}: median kernel ms by group shape (NULL {:.4g} ms)", r.target.kernel,
                        r.target.size, r.target.device_name, r.baseline.median_ms());
  h.x_label = "local x";
  h.y_label = "local y";
  std::set<std::size_t> xs, ys;
  for (const auto& t : r.trials) {
    if (!t.local) continue;
    xs.insert(t.local->x);
    ys.insert(t.local->y);
  }
  for (auto x : xs) h.columns.push_back(std::to_string(x));
  for (auto y : ys) h.rows.push_back(std::to_string(y));
  h.values.assign(ys.size(), std::vector<std::optional<double>>(xs.size()));
  for (const auto& t : r.trials) {
    if (!t.local || !t.ok()) continue;
    const auto col = static_cast<std::size_t>(std::distance(xs.begin(), xs.find(t.local->x)));
    const auto row = static_cast<std::size_t>(std::distance(ys.begin(), ys.find(t.local->y)));
    if (row < h.rows.size() && col < h.columns.size()) h.values[row][col] = t.median_ms();
  }
  return h;
}

std::string ratio(std::optional<double> v) { return v ? fmt::format("{:.3f}", *v) : "-"; }

int tune_main(int argc, char** argv) {
  po::options_description desc("wstune tune options");
  std::string kernel, size, device, strategy, heatmap_file, db;
  unsigned max_evals = 0, repeat = 5, warmup = 1, max_repeat = 100;
  double min_time_ms = 2.0, median_error = 0.01, max_time_ms = 50.0;
  double time_limit_s = 0, trial_timeout_s = 60;
  std::uint64_t seed = 42;
  desc.add_options()
      ("kernel,k", po::value(&kernel)->required(), "kernel: matmul, bilinear, sort or trapezoid")
      ("size,s", po::value(&size), "problem size (kernel-specific; default: the paper's Table 3 size)")
      ("device,d", po::value(&device)->default_value("default"), "device: P:D, cpu, gpu or a name substring")
      ("strategy", po::value(&strategy)->default_value("auto"),
       "auto (by the space's size: exhaustive up to 16 configurations, guided for local sizes below 1000, "
       "else bayes), exhaustive, random, guided, rule, genetic, annealing or bayes (docs/tuning.md)")
      ("max-evals", po::value(&max_evals)->default_value(0),
       "stop after N measured configurations (0: the strategy's default: guided 20% of the space, at least 8; "
       "genetic, annealing and bayes 5%, at least 20; others no limit)")
      ("time-limit", po::value(&time_limit_s)->default_value(0), "stop searching after SEC seconds (0: no limit)")
      ("repeat,r", po::value(&repeat)->default_value(5), "timed repetitions per trial")
      ("warmup", po::value(&warmup)->default_value(1), "untimed warm-up runs per trial")
      ("min-time", po::value(&min_time_ms)->default_value(2.0),
       "keep repeating a trial until its samples sum to MS milliseconds (short kernels get stable medians; 0: off)")
      ("median-error", po::value(&median_error)->default_value(0.01),
       "keep repeating a trial while its median's estimated relative standard error (0.93·IQR/median/√n) "
       "is above this fraction (noisy devices get more samples; 0: off)")
      ("max-time", po::value(&max_time_ms)->default_value(50.0),
       "--median-error adds samples only until they sum to MS milliseconds (0: no bound)")
      ("max-repeat", po::value(&max_repeat)->default_value(100),
       "at most this many timed repetitions with --min-time or --median-error")
      ("trial-timeout", po::value(&trial_timeout_s)->default_value(60), "per-trial limit in seconds; the worker is killed past it")
      ("seed", po::value(&seed)->default_value(42), "input and search seed")
      ("db", po::value(&db), db_option_help)
      ("no-store", "do not store the trials (print only)")
      ("no-resume", "start a new session even if an unfinished one for the same device, kernel, size and strategy exists")
      ("json", "print JSON")
      ("heatmap", po::value(&heatmap_file), "write the x × y table of median times as an SVG heatmap");
  po::variables_map vm;
  if (!parse_options(argc, argv,
                     "usage: wstune tune --kernel K [--size S] [--device D] [--strategy auto|exhaustive|random|guided|rule|genetic|annealing|bayes]\n"
                     "                   [--max-evals N] [--time-limit SEC] [--repeat N] [--json] [--heatmap FILE.svg]\n\n"
                     "Searches local work sizes / group shapes (every divisor shape the device allows) for one kernel\n"
                     "on one device. NULL (the driver's choice) is always measured and the answer is never slower than\n"
                     "it; the paper's §3.2.3 rule is measured too (by guided after its prior's first guesses, first on\n"
                     "a CPU in 1-D, and only if the budget has room). The fastest few and NULL then get two more trials\n"
                     "each, and ties more (not bounded by --max-evals or --time-limit). Trials run in a separate worker\n"
                     "process with a timeout. Every trial is committed to the database as it is measured; a killed\n"
                     "session resumes without searching a configuration twice (see docs/store.md).",
                     desc, vm, nullptr, {"device"})) return 0;
  if (repeat == 0) throw UsageError("--repeat 0: give at least one repetition, e.g. --repeat 5");
  if (!std::isfinite(min_time_ms) || min_time_ms > 60'000)
    throw UsageError(fmt::format("--min-time {}: give milliseconds between 0 and 60000, e.g. --min-time 2", min_time_ms));
  if (!std::isfinite(median_error) || median_error < 0 || median_error >= 1)
    throw UsageError(fmt::format("--median-error {}: give a fraction from 0 (off) to below 1, e.g. --median-error 0.01",
                                 median_error));
  if (!std::isfinite(max_time_ms) || max_time_ms < 0 || max_time_ms > 600'000)
    throw UsageError(fmt::format("--max-time {}: give milliseconds between 0 and 600000, e.g. --max-time 50", max_time_ms));
  if (!std::isfinite(time_limit_s) || time_limit_s < 0 || time_limit_s > 1e7)
    throw UsageError("--time-limit must be a number of seconds from 0 to 1e7, e.g. --time-limit 30");
  if (!std::isfinite(trial_timeout_s) || trial_timeout_s <= 0 || trial_timeout_s > 1e6)
    throw UsageError("--trial-timeout must be > 0 and at most 1e6 seconds, e.g. --trial-timeout 60");
  const KernelSpec& spec = kernel_spec(kernel);
  const Problem p = problem_option(spec, vm, size);
  auto searcher = make_searcher(strategy, seed);

  EvaluatorConfig cfg;
  cfg.device = device;
  cfg.seed = seed;
  cfg.trial_timeout = std::chrono::milliseconds(static_cast<long long>(trial_timeout_s * 1000));
  IsolatedEvaluator evaluator(spec, p, cfg);
  const TuneTarget& tg = evaluator.target();
  const auto space_size = evaluator.space().size();
  if (max_evals == 0) max_evals = default_evaluations(strategy, evaluator.space());
  std::unique_ptr<StopCondition> stop = never_stop();
  if (max_evals) stop = max_evaluations(max_evals);
  if (time_limit_s > 0) {
    auto tl = time_limit(std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(time_limit_s)));
    stop = max_evals ? either(std::move(stop), std::move(tl)) : std::move(tl);
  }

  // The store is opened after the evaluator has forked its worker (the
  // store never touches OpenCL, so the order only matters for clarity).
  std::optional<Store> store;
  std::optional<StoredTuneSession> session;
  if (!vm.count("no-store")) {
    store.emplace(database_path(db));
    SessionSpec sspec{std::string(searcher->name()), max_evals ? std::optional<std::int64_t>(max_evals) : std::nullopt,
                      time_limit_s > 0 ? std::optional<double>(time_limit_s) : std::nullopt};
    session.emplace(*store, spec, tg, sspec, !vm.count("no-resume"));
    if (session->session().resumed) {
      std::cerr << fmt::format("wstune tune: resuming session {} with {} stored trial(s) in {}\n", session->session().id,
                               session->stored_at_start(), store->path());
    }
  }

  TuneOptions options;
  options.timing = TimingOptions{warmup, repeat, min_time_ms, max_repeat, median_error, max_time_ms};
  const bool progress = stderr_is_tty();
  unsigned n = 0;
  double best_ms = 0;
  std::string best_text = "-";
  options.on_trial = [&](const Trial& t, TrialPhase phase) {
    ++n;
    if (t.ok() && (best_ms == 0 || t.median_ms() < best_ms)) {
      best_ms = t.median_ms();
      best_text = to_string(t.local);
    }
    if (!progress) return;
    std::cerr << fmt::format("\r\033[K[{}/{}] {} {} {}  best {} {:.4f} ms", n, max_evals ? max_evals : space_size + 1,
                             to_string(phase), to_string(t.local),
                             t.ok() ? fmt::format("{:.4f} ms", t.median_ms()) : std::string(to_string(t.status)),
                             best_text, best_ms)
              << std::flush;
  };
  if (session) session->attach(options);
  const TuneResult r = tune(evaluator, *searcher, *stop, options);
  if (progress) std::cerr << "\r\033[K" << std::flush;
  if (session) {
    session->finish(r);
    std::cerr << fmt::format("wstune tune: stored session {} in {}\n", session->session().id, store->path());
  }

  if (vm.count("heatmap")) {
    std::ofstream out(heatmap_file);
    if (!out) throw UsageError(fmt::format("--heatmap {}: cannot write the file; check the directory", heatmap_file));
    out << svg::render(heatmap(r));
  }
  if (vm.count("json")) {
    nlohmann::json j;
    j["kernel_name"] = kernel;
    j["size"] = p.text;
    j["global"] = to_json(tg.global);
    j["device"] = {{"name", tg.device_name}, {"id", tg.device_id}, {"fingerprint", tg.device_fingerprint},
                   {"pe_per_cu", tg.pe_per_cu}, {"max_items", tg.limits.max_items()}};
    j["strategy"] = r.strategy;
    j["space_size"] = r.space_size;
    j["evaluations"] = r.evaluations;
    j["tiebreak_trials"] = r.tiebreak_trials;
    j["wall_ms"] = r.wall_ms;
    j["stop_reason"] = r.stop_reason;
    j["best"] = trial_json(r.best);
    j["baseline"] = trial_json(r.baseline);
    j["rule"] = r.rule ? trial_json(*r.rule) : nlohmann::json();
    j["ratio_to_null"] = r.ratio_to_baseline() ? nlohmann::json(*r.ratio_to_baseline()) : nlohmann::json();
    j["ratio_to_rule"] = r.ratio_to_rule() ? nlohmann::json(*r.ratio_to_rule()) : nlohmann::json();
    j["trials"] = nlohmann::json::array();
    for (const auto& t : r.trials) j["trials"].push_back(trial_json(t));
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << fmt::format("{} {} on {} ({}), global {}, {} shapes, strategy {}\n", kernel, p.text, tg.device_name,
                             tg.device_id, to_string(tg.global), r.space_size, r.strategy);
    Table t({"config", "local", "median ms", "min ms", "samples", "best/this", "status"});
    auto row = [&](const char* name, const Trial& tr) {
      const double b = r.best.median_ms();
      t.add({name, to_string(tr.local), fmt::format("{:.4f}", tr.median_ms()), fmt::format("{:.4f}", tr.kernel.min()),
             fmt::format("{}", tr.kernel.size()), tr.ok() && tr.median_ms() > 0 ? fmt::format("{:.3f}", b / tr.median_ms()) : "-",
             std::string(to_string(tr.status))});
    };
    row("best", r.best);
    row("NULL", r.baseline);
    if (r.rule) row("rule", *r.rule);
    t.print(std::cout);
    if (!r.rule) std::cout << "rule: not measured (no rule shape, or no evaluation left in the budget)\n";
    unsigned failed = 0;
    for (const auto& tr : r.trials) failed += !tr.ok();
    std::cout << fmt::format("best/NULL {}  best/rule {}  evaluations {} (+{} tie-break)  failed {}  wall {:.2f} s "
                             "({:.1f} ms per evaluation)  stop: {}\n",
                             ratio(r.ratio_to_baseline()), ratio(r.ratio_to_rule()), r.evaluations, r.tiebreak_trials,
                             failed, r.wall_ms / 1000, r.wall_ms / std::max(1u, r.evaluations + r.tiebreak_trials),
                             r.stop_reason);
  }
  return r.best.ok() ? 0 : 1;
}

WSTUNE_COMMAND("tune", "search local work sizes / group shapes, never slower than the driver default", tune_main);

}  // namespace
}  // namespace wstune::cli

// bench_tune: for each kernel at each size, an exhaustive search (the
// optimum), a guided search with at most --budget of the exhaustive
// evaluations, NULL and the paper's §3.2.3 rule as ratios to the optimum,
// and the tuner's wall time per evaluation. Writes tune_<tag>.csv and .md.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <tuple>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "search/search.hpp"
#include "wstune/error.hpp"

namespace po = boost::program_options;
using namespace wstune;

namespace {

struct Row {
  std::string kernel, size, global, device;
  std::size_t space = 0;
  unsigned ex_evals = 0, g_evals = 0, g_budget = 0;
  std::string ex_best, rule, g_best;
  double opt_ms = 0, null_ms = 0, rule_ms = 0, g_ms_in_ex = 0, g_ms_own = 0, g_null_ms = 0;
  double ex_wall_s = 0, g_wall_s = 0, ms_per_eval = 0, run_ms_per_eval = 0, overhead_ms_per_eval = 0;
  // Interleaved re-measurement of the optimum, the guided answer, NULL and the rule.
  double v_opt_ms = 0, v_g_ms = 0, v_null_ms = 0, v_rule_ms = 0;
  double v_ci_lo = 0, v_ci_hi = 0;  // 95 % bootstrap interval of guided/opt over the rounds
  std::size_t v_samples = 0;
  unsigned failed = 0;
};

TuneResult run(const KernelSpec& spec, const Problem& p, const EvaluatorConfig& cfg, Searcher& s,
               const StopCondition& stop, const TuneOptions& o) {
  IsolatedEvaluator ev(spec, p, cfg);  // a fresh worker per strategy
  return tune(ev, s, stop, o);
}

std::string fmt_ratio(double a, double b) {
  return b > 0 && a > 0 ? fmt::format("{:.3f}", a / b) : "-";
}

// 95 % percentile-bootstrap interval of median(b) / median(a), resampling
// whole interleaved rounds (a round's two trials ran side by side, so they
// are drawn together). a[i] and b[i] hold round i's samples.
std::pair<double, double> bootstrap_ratio(const std::vector<std::vector<double>>& a,
                                          const std::vector<std::vector<double>>& b) {
  const std::size_t n = std::min(a.size(), b.size());
  if (n == 0) return {0, 0};
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<std::size_t> pick(0, n - 1);
  std::vector<double> ratios;
  for (int rep = 0; rep < 2000; ++rep) {
    Samples sa, sb;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t k = pick(rng);
      sa.ms.insert(sa.ms.end(), a[k].begin(), a[k].end());
      sb.ms.insert(sb.ms.end(), b[k].begin(), b[k].end());
    }
    const double ma = sa.median(), mb = sb.median();
    if (ma > 0 && mb > 0) ratios.push_back(mb / ma);
  }
  if (ratios.empty()) return {0, 0};
  const Samples rs{ratios};
  return {rs.quantile(0.025), rs.quantile(0.975)};
}

// The command line.
struct Options {
  std::string device = "default", out_dir = "docs/results", tag = "pocl";
  std::vector<std::string> cases;
  unsigned repeat = 5, warmup = 1, max_repeat = 100, verify_rounds = 30;
  double budget = 0.2, trial_timeout = 60, min_time = 2.0, median_error = 0.01, max_time = 50.0;
  std::uint64_t seed = 1;
};

// bench_tune's options into `desc`, bound to `o`.
void describe(po::options_description& desc, Options& o) {
  desc.add_options()("help,h", "help")("device,d", po::value(&o.device),
                                       "device selector (P:D, cpu, gpu or a name substring)")(
      "case,c", po::value(&o.cases)->multitoken(),
      "KERNEL=SIZE, repeatable (default: matmul 128 and 96, bilinear 128 and 100, sort 4096 and 3000, "
      "trapezoid 4096 and 3000)")("repeat,r", po::value(&o.repeat), "timed repetitions per trial")(
      "warmup", po::value(&o.warmup), "warm-up runs per trial")("min-time", po::value(&o.min_time),
                                                                "repeat a trial until its samples sum to MS (0: off)")(
      "median-error", po::value(&o.median_error),
      "repeat a trial while its median's estimated relative standard error is above this (0: off)")(
      "max-time", po::value(&o.max_time), "--median-error adds samples only until they sum to MS (0: no bound)")(
      "max-repeat", po::value(&o.max_repeat), "cap on repetitions with --min-time or --median-error")(
      "verify-rounds", po::value(&o.verify_rounds),
      "rounds of interleaved re-measurement of optimum, guided answer, NULL and rule (0: off)")(
      "budget", po::value(&o.budget), "guided evaluations as a fraction of the exhaustive ones")(
      "trial-timeout", po::value(&o.trial_timeout), "per-trial limit in seconds")(
      "seed", po::value(&o.seed), "guided search seed")("tag", po::value(&o.tag), "output name: tune_<tag>.csv / .md")(
      "out-dir,o", po::value(&o.out_dir), "output directory");
}

// The options, the default cases where none is given; nullopt when --help printed them instead.
std::optional<Options> parse_options(int argc, char** argv) {
  Options o;
  po::options_description desc("bench_tune options");
  describe(desc, o);
  po::variables_map vm;
  po::store(po::parse_command_line(argc, argv, desc), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return std::nullopt;
  }
  if (o.cases.empty())
    o.cases = {"matmul=128", "matmul=96", "bilinear=128",   "bilinear=100",
               "sort=4096",  "sort=3000", "trapezoid=4096", "trapezoid=3000"};
  return o;
}

// What every case shares: the options, the workers' set-up and the trials' timing.
struct Bench {
  const Options& o;
  EvaluatorConfig cfg;
  TuneOptions opt;
};

// The shared set-up from the options.
Bench make_bench(const Options& o) {
  Bench b{o, {}, {}};
  b.cfg.device = o.device;
  b.cfg.trial_timeout = std::chrono::milliseconds(static_cast<long long>(o.trial_timeout * 1000));
  b.opt.timing = TimingOptions{o.warmup, o.repeat, o.min_time, o.max_repeat, o.median_error, o.max_time};
  return b;
}

// The exhaustive search's columns of `r`; run_ms: the worker's time over the `measured` trials.
void fill_exhaustive(Row& r, const KernelSpec& spec, const Problem& p, const TuneResult& ex, double run_ms,
                     unsigned measured) {
  r.kernel = std::string(spec.name());
  r.size = p.text;
  r.global = to_string(ex.target.global);
  r.device = ex.target.device_name;
  r.space = ex.space_size;
  r.ex_evals = ex.evaluations;
  r.ex_best = to_string(ex.best.local);
  r.opt_ms = ex.best.median_ms();
  r.null_ms = ex.baseline.median_ms();
  r.rule = ex.rule ? to_string(ex.rule->local) : "-";
  r.rule_ms = ex.rule && ex.rule->ok() ? ex.rule->median_ms() : 0;
  for (const auto& t : ex.trials) r.failed += !t.ok();
  r.ex_wall_s = ex.wall_ms / 1000;
  r.ms_per_eval = ex.wall_ms / std::max(1u, measured);
  r.run_ms_per_eval = run_ms / std::max(1u, measured);
  r.overhead_ms_per_eval = r.ms_per_eval - r.run_ms_per_eval;
}

// The exhaustive search (the optimum) on a fresh worker; its columns into `r`.
TuneResult run_exhaustive(const Bench& b, const KernelSpec& spec, const Problem& p, Row& r) {
  std::cerr << fmt::format("{} {}: exhaustive...\n", spec.name(), p.text);
  auto ex_s = make_exhaustive_searcher();
  double run_ms = 0;  // worker-side time of every measured trial (tie-breaks included)
  unsigned measured = 0;
  TuneOptions ex_opt = b.opt;
  ex_opt.on_trial = [&](const Trial& t, TrialPhase) {
    run_ms += t.run_wall_ms;
    ++measured;
  };
  TuneResult ex = run(spec, p, b.cfg, *ex_s, *never_stop(), ex_opt);
  fill_exhaustive(r, spec, p, ex, run_ms, measured);
  return ex;
}

// The guided search within --budget of the exhaustive evaluations on a fresh
// worker; its columns into `r` (its answer's median as the exhaustive run saw it too).
TuneResult run_guided(const Bench& b, const KernelSpec& spec, const Problem& p, const TuneResult& ex, Row& r) {
  std::map<std::string, double> ex_ms;
  for (const auto& t : ex.trials)
    if (t.ok()) ex_ms[to_string(t.local)] = t.median_ms();
  r.g_budget = std::max(2u, static_cast<unsigned>(b.o.budget * ex.evaluations));
  std::cerr << fmt::format("{} {}: guided, {} evaluations...\n", spec.name(), p.text, r.g_budget);
  auto g_s = make_guided_searcher(b.o.seed);
  TuneResult g = run(spec, p, b.cfg, *g_s, *max_evaluations(r.g_budget), b.opt);
  r.g_evals = g.evaluations;
  r.g_best = to_string(g.best.local);
  r.g_ms_own = g.best.median_ms();
  r.g_null_ms = g.baseline.median_ms();
  r.g_ms_in_ex = ex_ms.count(r.g_best) ? ex_ms[r.g_best] : 0;
  r.g_wall_s = g.wall_ms / 1000;
  return g;
}

// Samples per local size (by name) and round; a failed round has none.
using RoundSamples = std::map<std::string, std::vector<std::vector<double>>>;

// --verify-rounds rounds on one fresh worker, each measuring every candidate in turn.
RoundSamples interleaved_rounds(const Bench& b, const KernelSpec& spec, const Problem& p,
                                const std::vector<LocalSize>& cand) {
  RoundSamples by_round;
  IsolatedEvaluator ev(spec, p, b.cfg);
  for (unsigned round = 0; round < b.o.verify_rounds; ++round)
    for (const auto& l : cand) {
      const Trial t = ev.evaluate(Configuration{nlohmann::json::object(), l}, b.opt.timing);
      by_round[to_string(l)].push_back(t.ok() ? t.kernel.ms : std::vector<double>{});
    }
  return by_round;
}

// Every round's samples together.
Samples merged(const std::vector<std::vector<double>>& rounds) {
  Samples s;
  for (const auto& round : rounds) s.ms.insert(s.ms.end(), round.begin(), round.end());
  return s;
}

// The exhaustive optimum is the minimum of many noisy medians (biased
// low: the winner's curse). Re-measure the candidates side by side, in
// interleaved rounds on one fresh worker, and compare those medians.
void verify(const Bench& b, const KernelSpec& spec, const Problem& p, const TuneResult& ex, const TuneResult& g,
            Row& r) {
  std::vector<LocalSize> cand;
  for (const LocalSize& l : {ex.best.local, g.best.local, LocalSize{}, ex.rule ? ex.rule->local : LocalSize{}})
    if (std::find(cand.begin(), cand.end(), l) == cand.end()) cand.push_back(l);
  RoundSamples by_round = interleaved_rounds(b, spec, p, cand);
  std::tie(r.v_ci_lo, r.v_ci_hi) =
      bootstrap_ratio(by_round[to_string(ex.best.local)], by_round[to_string(g.best.local)]);
  auto med = [&](const LocalSize& l) { return merged(by_round[to_string(l)]).median(); };
  r.v_opt_ms = med(ex.best.local);
  r.v_g_ms = med(g.best.local);
  r.v_null_ms = med(std::nullopt);
  r.v_rule_ms = ex.rule ? med(ex.rule->local) : 0;
  r.v_samples = merged(by_round[to_string(ex.best.local)]).size();
}

// One --case KERNEL=SIZE: exhaustive, guided, then the re-measurement; every
// exhaustive trial into `trial_rows`, for plots and for whoever doubts the table.
Row run_case(const Bench& b, const std::string& c, std::vector<std::string>& trial_rows) {
  const auto eq = c.find('=');
  if (eq == std::string::npos) throw UsageError(fmt::format("--case {}: write KERNEL=SIZE, e.g. matmul=128", c));
  const KernelSpec& spec = kernel_spec(c.substr(0, eq));
  const Problem p = spec.parse_size(c.substr(eq + 1));
  Row r;
  const TuneResult ex = run_exhaustive(b, spec, p, r);
  const TuneResult g = run_guided(b, spec, p, ex, r);
  if (b.o.verify_rounds > 0) verify(b, spec, p, ex, g, r);
  for (const auto& t : ex.trials)
    trial_rows.push_back(fmt::format("{},{},{},{},{},{:.6f},{}\n", spec.name(), p.text, to_string(t.local),
                                     to_string(t.status), t.kernel.size(), t.ok() ? t.median_ms() : 0.0,
                                     t.ok() ? fmt::format("{:.6f}", t.kernel.min()) : ""));
  return r;
}

// Whether the guided answer was at most NULL in its own run.
bool not_slower_than_null(const Row& r) {
  return r.g_ms_own <= r.g_null_ms;
}

// A row's verdict on the 3 % target and the times its table line shows: the
// verified re-measurement's where there is one, else the exhaustive run's.
struct Judged {
  double g_over = 0;  // guided over the optimum
  bool ok3 = false;   // within 3 %
  double opt_ms = 0, null_ms = 0, rule_ms = 0;
};

// The verdict on one row.
Judged judge(const Row& r) {
  const bool verified = r.v_opt_ms > 0 && r.v_g_ms > 0;
  Judged j;
  j.g_over = verified ? r.v_g_ms / r.v_opt_ms : (r.opt_ms > 0 ? r.g_ms_in_ex / r.opt_ms : 0);
  j.ok3 = j.g_over > 0 && j.g_over <= 1.03;
  j.opt_ms = verified ? r.v_opt_ms : r.opt_ms;
  j.null_ms = verified ? r.v_null_ms : r.null_ms;
  j.rule_ms = verified ? r.v_rule_ms : r.rule_ms;
  return j;
}

// tune_<tag>.csv's header.
const char* const kCsvHeader =
    "device,kernel,size,global,space,exhaustive_evals,optimum,optimum_ms,null_ms,null_over_opt,rule,rule_ms,"
    "rule_over_opt,guided_budget,guided_evals,guided_eval_fraction,guided_best,guided_ms_in_exhaustive,"
    "guided_over_opt_in_exhaustive,guided_own_ms,guided_null_ms,guided_not_slower_than_null,"
    "verified_samples,verified_opt_ms,verified_guided_ms,verified_null_ms,verified_rule_ms,verified_guided_over_opt,"
    "verified_guided_over_opt_ci95_lo,verified_guided_over_opt_ci95_hi,"
    "verified_null_over_opt,verified_rule_over_opt,guided_within_3pct,"
    "exhaustive_wall_s,guided_wall_s,wall_ms_per_eval,run_ms_per_eval,tuner_overhead_ms_per_eval,failed_trials\n";

// A row's line of tune_<tag>.csv.
std::string csv_line(const Row& r, const Judged& j) {
  return fmt::format(
      "\"{}\",{},{},{},{},{},{},{:.5f},{:.5f},{},{},{:.5f},{},{},{},{:.3f},{},{:.5f},{},{:.5f},{:.5f},{},"
      "{},{:.5f},{:.5f},{:.5f},{:.5f},{},{:.4f},{:.4f},{},{},{},"
      "{:.2f},{:.2f},{:.2f},{:.2f},{:.2f},{}\n",
      r.device, r.kernel, r.size, r.global, r.space, r.ex_evals, r.ex_best, r.opt_ms, r.null_ms,
      fmt_ratio(r.null_ms, r.opt_ms), r.rule, r.rule_ms, fmt_ratio(r.rule_ms, r.opt_ms), r.g_budget, r.g_evals,
      static_cast<double>(r.g_evals) / r.ex_evals, r.g_best, r.g_ms_in_ex, fmt_ratio(r.g_ms_in_ex, r.opt_ms),
      r.g_ms_own, r.g_null_ms, not_slower_than_null(r) ? 1 : 0, r.v_samples, r.v_opt_ms, r.v_g_ms, r.v_null_ms,
      r.v_rule_ms, fmt_ratio(r.v_g_ms, r.v_opt_ms), r.v_ci_lo, r.v_ci_hi, fmt_ratio(r.v_null_ms, r.v_opt_ms),
      fmt_ratio(r.v_rule_ms, r.v_opt_ms), j.ok3 ? 1 : 0, r.ex_wall_s, r.g_wall_s, r.ms_per_eval, r.run_ms_per_eval,
      r.overhead_ms_per_eval, r.failed);
}

// tune_<tag>.md's opening: the device, the timing and what the columns mean; then the table's header.
std::string md_intro(const Options& o, const std::vector<Row>& rows) {
  return fmt::format("# Local work size search: guided vs exhaustive ({})\n\n", o.tag) +
         fmt::format(
             "Device: {}. Each trial: {} warm-up, then at least {} timed runs, more until they sum to {} ms and the "
             "median's estimated relative standard error "
             "is at most {} or they sum to {} ms (at most {}); "
             "medians of kernel time (OpenCL profiling events). Guided budget: {:.0f} % of the exhaustive evaluations "
             "(NULL included). The exhaustive optimum is the smallest of many noisy medians, so it is biased low; the "
             "optimum, the guided answer, NULL and the rule are therefore re-measured side by side in {} interleaved "
             "rounds on a fresh worker (`verified`), and the 3 % target is judged on those medians; `95 % CI` is the "
             "percentile-bootstrap interval of guided/opt over those rounds (whole rounds resampled). `in-ex` is the "
             "guided answer's median from the exhaustive run over the optimum's; `own/NULL` is the guided answer over "
             "NULL "
             "in its own run (≤ 1 by construction). `overhead` is tuning wall time per measured trial (tie-break "
             "trials "
             "included) minus the worker's time running the configuration (warm-up, repetitions, read-back; on PoCL "
             "that "
             "includes compiling each new local size). Every exhaustive trial is in tune_{}_trials.csv.\n\n",
             rows.empty() ? o.device : rows.front().device, o.warmup, o.repeat, o.min_time, o.median_error, o.max_time,
             o.max_repeat, o.budget * 100, o.verify_rounds, o.tag) +
         "| kernel | size | shapes | optimum | opt ms | NULL/opt | rule | rule/opt | guided evals | guided | "
         "guided/opt | 95 % CI | in-ex | own/NULL | ≤3 % | ms/eval | run ms/eval | overhead ms/eval |\n"
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
}

// A row's line of the Markdown table.
std::string md_line(const Row& r, const Judged& j) {
  return fmt::format(
      "| {} | {} | {} | {} | {:.4f} | {} | {} | {} | {}/{} | {} | {:.3f} | {} | {} | {} | {} | {:.1f} | {:.1f} | "
      "{:.1f} |\n",
      r.kernel, r.size, r.space, r.ex_best, j.opt_ms, fmt_ratio(j.null_ms, j.opt_ms), r.rule,
      fmt_ratio(j.rule_ms, j.opt_ms), r.g_evals, r.ex_evals, r.g_best, j.g_over,
      r.v_ci_hi > 0 ? fmt::format("{:.3f}–{:.3f}", r.v_ci_lo, r.v_ci_hi) : std::string("-"),
      fmt_ratio(r.g_ms_in_ex, r.opt_ms), fmt_ratio(r.g_ms_own, r.g_null_ms), j.ok3 ? "yes" : "no", r.ms_per_eval,
      r.run_ms_per_eval, r.overhead_ms_per_eval);
}

// The noise floor: NULL and the rule were not picked for being fast, so
// re-measured on the verification worker they show, without the winner's
// curse, how far one configuration's median moves between processes.
std::string md_noise_floor(const std::vector<Row>& rows) {
  std::vector<double> moves;
  for (const auto& r : rows)
    for (const auto& [first, again] : {std::pair{r.null_ms, r.v_null_ms}, std::pair{r.rule_ms, r.v_rule_ms}})
      if (first > 0 && again > 0) moves.push_back(std::abs(again / first - 1));
  if (moves.empty()) return "";
  std::sort(moves.begin(), moves.end());
  return fmt::format(
      "\nNoise floor: NULL and the rule re-measured on the verification worker moved from their "
      "exhaustive-run medians by a median {:.1f} % (largest {:.1f} %, {} configurations). Where this is "
      "above 3 %, single runs cannot resolve the 3 % target.\n",
      100 * moves[moves.size() / 2], 100 * moves.back(), moves.size());
}

// Writes tune_<tag>.csv, tune_<tag>_trials.csv and tune_<tag>.md into --out-dir.
void write_outputs(const Options& o, const std::vector<Row>& rows, const std::vector<std::string>& trial_rows) {
  std::filesystem::create_directories(o.out_dir);
  const std::string base = fmt::format("{}/tune_{}", o.out_dir, o.tag);
  std::ofstream csv(base + ".csv");
  csv << kCsvHeader;
  {
    std::ofstream tcsv(base + "_trials.csv");
    tcsv << "kernel,size,local,status,samples,median_ms,min_ms\n";
    for (const auto& t : trial_rows) tcsv << t;
  }
  std::ofstream md(base + ".md");
  md << md_intro(o, rows);
  unsigned within = 0;
  for (const auto& r : rows) {
    const Judged j = judge(r);
    within += j.ok3;
    csv << csv_line(r, j);
    md << md_line(r, j);
  }
  md << fmt::format(
      "\nGuided within 3 % of the exhaustive optimum: {} of {} cases. Never slower than NULL in its own "
      "run: {} of {}. Produced by `scripts/bench-tune.sh` (bench/tune_bench.cpp).\n",
      within, rows.size(), std::count_if(rows.begin(), rows.end(), not_slower_than_null), rows.size());
  md << md_noise_floor(rows);
  std::cerr << fmt::format("wrote {}.csv and {}.md\n", base, base);
}

}  // namespace

int main(int argc, char** argv) try {
  const std::optional<Options> options = parse_options(argc, argv);
  if (!options) return 0;
  const Bench b = make_bench(*options);
  std::vector<Row> rows;
  std::vector<std::string> trial_rows;
  for (const auto& c : options->cases) rows.push_back(run_case(b, c, trial_rows));
  write_outputs(*options, rows, trial_rows);
  return 0;
} catch (const UsageError& e) {
  std::cerr << "bench_tune: " << e.what() << "\n";
  return 2;
} catch (const std::exception& e) {
  std::cerr << "bench_tune: " << e.what() << "\n";
  return 1;
}

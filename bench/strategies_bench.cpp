// bench_strategies: strategies compared in simulation mode. For each
// recorded table (or synthetic landscape) and each strategy, tune() replays
// the table over many seeds; the best median found after each evaluation,
// as a fraction of the table's optimum (optimum / best, 1 = the optimum), is
// summarised (median, quartiles, min, max over the seeds) at checkpoints up
// to a budget. It exports each table as a Kernel Tuner cache file with the
// checkpoints (bench/strategies_kernel_tuner.py replays them through Kernel
// Tuner's strategies) and merges those results into the CSV, the Markdown
// summary and one SVG plot per table. scripts/bench-strategies.sh runs it.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "bench_util.hpp"
#include "report/svg.hpp"
#include "search/search.hpp"
#include "session/simulation.hpp"

namespace po = boost::program_options;
using namespace wstune;
using json = nlohmann::json;

namespace {

constexpr double kTarget = 1.05;  // within 5 % of the optimum: best ≤ 1.05 × optimum

struct Table {
  std::string name;
  RecordedTable table;
  std::size_t configurations = 0;  // the space and the baseline
  double optimum_ms = 0;
  std::vector<unsigned> checkpoints;
  bool reversed = false;  // --reverse-values: also the local sizes' lists in the Kernel Tuner cache
};

// One curve: a fraction-of-optimum summary per checkpoint.
struct Curve {
  std::string strategy;
  std::vector<double> median, q1, q3, min, max;
  std::vector<unsigned> met;  // seeds whose best is the optimum (empty for Kernel Tuner's curves)
  unsigned seeds = 0;
};

std::map<std::string, SyntheticSpec> presets() {
  return {{"synthetic-2k", SyntheticSpec{4, 8, 0.05, 3, 0.02, 11}},
          {"synthetic-10k", SyntheticSpec{5, 7, 0.10, 3, 0.02, 12}},
          {"synthetic-10k-rugged", SyntheticSpec{5, 7, 0.30, 6, 0.05, 13}}};
}

// A preset by name, or NAME-sSEED: the preset's landscape drawn with
// another seed (the same generator and settings; e.g. synthetic-10k-rugged-s14).
SyntheticSpec preset(const std::string& name) {
  const auto known = presets();
  if (const auto it = known.find(name); it != known.end()) return it->second;
  const auto dash = name.rfind("-s");
  if (dash != std::string::npos && dash + 2 < name.size() && name.size() - dash - 2 <= 18 &&
      name.find_first_not_of("0123456789", dash + 2) == std::string::npos)
    if (const auto it = known.find(name.substr(0, dash)); it != known.end()) {
      SyntheticSpec spec = it->second;
      spec.seed = std::stoull(name.substr(dash + 2));
      return spec;
    }
  throw UsageError(
      fmt::format("--synthetic {}: use synthetic-2k, synthetic-10k or synthetic-10k-rugged, or one of them "
                  "with -sSEED for another landscape of its kind (e.g. synthetic-10k-rugged-s14)",
                  name));
}

// 1..10, then about 40 steps growing geometrically to `budget`, and the
// evaluation counts of 1 % and 5 % of the configurations.
std::vector<unsigned> checkpoints(std::size_t configurations, unsigned budget) {
  std::vector<unsigned> c;
  for (unsigned e = 1; e <= std::min(10u, budget); ++e) c.push_back(e);
  for (double e = 10; e < budget; e *= std::pow(budget / 10.0, 1.0 / 40))
    c.push_back(static_cast<unsigned>(std::lround(e)));
  for (double f : {0.01, 0.05})
    if (const auto e = static_cast<unsigned>(std::ceil(f * static_cast<double>(configurations))); e <= budget)
      c.push_back(e);
  c.push_back(budget);
  std::sort(c.begin(), c.end());
  c.erase(std::unique(c.begin(), c.end()), c.end());
  return c;
}

// Every parameter's values listed in reverse order: the same configurations
// and times, an equivalent problem (value indices and the parameters'
// odometer order reversed), which shows how much a strategy depends on the
// order of the values. Applies to the exported Kernel Tuner cache too, where
// the local size's extents are parameters as well (reverse_block_sizes).
void reverse_values(RecordedTable& t) {
  for (auto& p : t.parameters) std::reverse(p.values.begin(), p.values.end());
}

// Kernel Tuner's block_size_x/y/z lists (kernel_tuner_cache writes them
// ascending) in reverse: for Kernel Tuner the local size is parameters, and
// its strategies depend on their order as on any other. wstune encodes a
// local size as log2 extents, which no list order changes.
void reverse_block_sizes(nlohmann::ordered_json& cache) {
  for (const char* name : {"block_size_x", "block_size_y", "block_size_z"})
    if (auto it = cache["tune_params"].find(name); it != cache["tune_params"].end())
      std::reverse(it->begin(), it->end());
}

Table make_table(std::string name, RecordedTable t, double budget_fraction, bool reversed) {
  if (reversed) reverse_values(t);
  Table tb;
  tb.reversed = reversed;
  tb.name = std::move(name);
  tb.table = std::move(t);
  const SimulatedEvaluator probe(tb.table);
  tb.configurations = probe.space().size() + 1;
  const auto best = tb.table.best();
  if (!best) throw UsageError(fmt::format("{}: no correct configuration in the table", tb.table.source));
  tb.optimum_ms = tb.table.trials[*best].median_ms();
  const auto budget =
      static_cast<unsigned>(std::max(20.0, std::ceil(budget_fraction * static_cast<double>(tb.configurations))));
  tb.checkpoints = checkpoints(tb.configurations, std::min<unsigned>(budget, static_cast<unsigned>(tb.configurations)));
  return tb;
}

// The best median after each evaluation of one tune() over the table.
std::vector<double> trajectory(SimulatedEvaluator& ev, const std::string& strategy, std::uint64_t seed,
                               unsigned budget) {
  std::vector<double> best_after;
  double best = std::numeric_limits<double>::infinity();
  TuneOptions o;
  o.tiebreak_rounds = 0;
  o.on_trial = [&](const Trial& t, TrialPhase phase) {
    if (phase == TrialPhase::tiebreak) return;
    if (t.ok() && t.kernel.size()) best = std::min(best, t.median_ms());
    best_after.push_back(best);
  };
  auto searcher = make_searcher(strategy, seed);
  (void)tune(ev, *searcher, *max_evaluations(budget), o);
  while (best_after.size() < budget) best_after.push_back(best);  // the space ran out first
  return best_after;
}

Curve run_strategy(const Table& tb, SimulatedEvaluator& ev, const std::string& strategy, unsigned seeds) {
  const unsigned budget = tb.checkpoints.back();
  std::vector<std::vector<double>> at(tb.checkpoints.size());
  for (unsigned s = 1; s <= seeds; ++s) {
    const auto tr = trajectory(ev, strategy, s, budget);
    for (std::size_t k = 0; k < tb.checkpoints.size(); ++k) at[k].push_back(tb.optimum_ms / tr[tb.checkpoints[k] - 1]);
  }
  Curve c;
  c.strategy = strategy;
  c.seeds = seeds;
  for (auto& v : at) {
    const Samples s{v};
    c.median.push_back(s.median());
    c.q1.push_back(s.quantile(0.25));
    c.q3.push_back(s.quantile(0.75));
    c.min.push_back(s.min());
    c.max.push_back(s.max());
    c.met.push_back(static_cast<unsigned>(std::count(v.begin(), v.end(), 1.0)));
  }
  return c;
}

std::string csv_rows(const Table& tb, const Curve& c) {
  std::string out;
  for (std::size_t k = 0; k < tb.checkpoints.size(); ++k)
    out += fmt::format("{},{},{},{},{:.5f},{:.5f},{:.5f},{:.5f},{:.5f},{:.5f},{}\n", tb.name, tb.configurations,
                       c.strategy, tb.checkpoints[k], tb.checkpoints[k] / static_cast<double>(tb.configurations),
                       c.median[k], c.q1[k], c.q3[k], c.min[k], c.max[k], c.seeds);
  return out;
}

// Kernel Tuner's curves from bench/strategies_kernel_tuner.py (the same CSV columns).
std::map<std::string, std::vector<Curve>> read_kt(const std::string& path, const std::vector<Table>& tables) {
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("--kt-results {}: cannot read the file", path));
  std::map<std::string, std::map<std::string, Curve>> by;
  std::string line;
  std::getline(in, line);  // header
  for (std::size_t row = 2; std::getline(in, line); ++row) {
    const auto f = bench::split_list(line, ',');
    if (f.size() != 11) throw UsageError(fmt::format("{}:{}: expected 11 comma-separated fields", path, row));
    Curve& c = by[f[0]][f[2]];
    c.strategy = f[2];
    c.median.push_back(std::stod(f[5]));
    c.q1.push_back(std::stod(f[6]));
    c.q3.push_back(std::stod(f[7]));
    c.min.push_back(std::stod(f[8]));
    c.max.push_back(std::stod(f[9]));
    c.seeds = static_cast<unsigned>(std::stoul(f[10]));
  }
  std::map<std::string, std::vector<Curve>> out;
  for (const auto& tb : tables)
    for (auto& [name, c] : by[tb.name]) {
      if (c.median.size() != tb.checkpoints.size())
        throw UsageError(fmt::format("{}: {} {} has {} checkpoints, the table {}; rerun the export", path, tb.name,
                                     name, c.median.size(), tb.checkpoints.size()));
      out[tb.name].push_back(c);
    }
  return out;
}

std::size_t checkpoint_of(const Table& tb, double fraction) {
  const auto e = static_cast<unsigned>(std::ceil(fraction * static_cast<double>(tb.configurations)));
  const auto it = std::lower_bound(tb.checkpoints.begin(), tb.checkpoints.end(), e);
  return static_cast<std::size_t>(
      std::min(it - tb.checkpoints.begin(), static_cast<std::ptrdiff_t>(tb.checkpoints.size() - 1)));
}

// "median [q1–q3]"; "–" where the strategy did not run that far (nan).
std::string cell(const Curve& c, std::size_t k) {
  if (std::isnan(c.median[k])) return "–";
  return fmt::format("{:.3f} [{:.3f}–{:.3f}]", c.median[k], c.q1[k], c.q3[k]);
}

std::string markdown_table(const Table& tb, const std::vector<Curve>& curves) {
  const std::size_t k1 = checkpoint_of(tb, 0.01), k5 = checkpoint_of(tb, 0.05);
  std::string s = fmt::format("### {} ({} configurations, optimum {:.4g} ms; {})\n\n", tb.name, tb.configurations,
                              tb.optimum_ms, tb.table.source);
  s += fmt::format(
      "| strategy | at 1 % ({} evals) | at 5 % ({} evals) | at {} evals | median within 5 % at 5 % | optimum met at 5 "
      "% |\n",
      tb.checkpoints[k1], tb.checkpoints[k5], tb.checkpoints.back());
  s += "|---|---|---|---|---|---|\n";
  for (const auto& c : curves)
    s += fmt::format("| {} ({} seeds) | {} | {} | {} | {} | {} |\n", c.strategy, c.seeds, cell(c, k1), cell(c, k5),
                     cell(c, c.median.size() - 1),
                     std::isnan(c.median[k5])        ? "–"
                     : c.median[k5] * kTarget >= 1.0 ? "yes"
                                                     : "no",
                     c.met.empty() ? "–" : fmt::format("{} of {} seeds", c.met[k5], c.seeds));
  return s + "\n";
}

svg::LinePlot plot(const Table& tb, const std::vector<Curve>& ours, const std::vector<Curve>& kt) {
  svg::LinePlot p;
  p.title = fmt::format("{} ({} configurations): best found / optimum, median of seeds", tb.name, tb.configurations);
  p.x_label = "evaluations (% of the configurations)";
  p.y_label = "optimum / best found";
  std::vector<Curve> shown = ours;
  std::vector<Curve> kts = kt;  // Kernel Tuner's best at 5 % first, as many as fit the palette
  const std::size_t k5 = checkpoint_of(tb, 0.05);
  auto at5 = [&](const Curve& c) { return std::isnan(c.median[k5]) ? 0.0 : c.median[k5]; };
  std::sort(kts.begin(), kts.end(), [&](const Curve& a, const Curve& b) { return at5(a) > at5(b); });
  for (const auto& c : kts)
    if (shown.size() < 8) shown.push_back(c);
  for (const auto& c : shown) {
    svg::Series s{c.strategy, {}, {}};
    for (std::size_t k = 0; k < tb.checkpoints.size(); ++k) {
      if (std::isnan(c.median[k])) continue;  // beyond a capped Kernel Tuner run
      s.x.push_back(100.0 * tb.checkpoints[k] / static_cast<double>(tb.configurations));
      s.y.push_back(c.median[k]);
    }
    p.series.push_back(std::move(s));
  }
  p.mark_x = 5.0;
  return p;
}

void export_kt(const std::vector<Table>& tables, const std::string& dir, unsigned seeds) {
  std::filesystem::create_directories(dir);
  json manifest = json::array();
  for (const auto& tb : tables) {
    const std::string file = fmt::format("{}/{}.json", dir, tb.name);
    auto cache = kernel_tuner_cache(tb.table);
    if (tb.reversed) reverse_block_sizes(cache);
    bench::write(file, cache.dump());
    manifest.push_back({{"name", tb.name},
                        {"cache", file},
                        {"configurations", tb.configurations},
                        {"optimum_ms", tb.optimum_ms},
                        {"checkpoints", tb.checkpoints},
                        {"seeds", seeds}});
  }
  bench::write(dir + "/tables.json", manifest.dump(1));
}

std::string file_stem(const std::string& path) {
  std::string stem = std::filesystem::path(path).stem().string();
  return stem;
}

// The command line.
struct Options {
  std::vector<std::string> table_files, synthetic;
  std::string strategies = "auto,random,guided,genetic,annealing,differential,portfolio,bayes", out, kt_dir, kt_results;
  unsigned seeds = 25;
  double budget = 0.2;
  bool reversed = false, export_only = false;
};

// bench_strategies' options into `desc`, bound to `o`.
void describe(po::options_description& desc, Options& o) {
  desc.add_options()("help,h", "this help")(
      "table", po::value(&o.table_files),
      "a recorded table: FILE.json (wstune export or T4) or FILE.json@SESSION_UUID; repeatable")(
      "synthetic", po::value(&o.synthetic),
      "a synthetic landscape: synthetic-2k, synthetic-10k, synthetic-10k-rugged, or NAME-sSEED (that kind of landscape "
      "drawn with another seed); repeatable")("strategies", po::value(&o.strategies)->default_value(o.strategies),
                                              "comma-separated wstune strategies")(
      "seeds", po::value(&o.seeds)->default_value(o.seeds), "seeds per strategy and table")(
      "budget", po::value(&o.budget)->default_value(o.budget),
      "evaluations up to this fraction of the configurations (at least 20)")("out", po::value(&o.out),
                                                                             "write OUT.csv, OUT.md and OUT_TABLE.svg")(
      "export-kt", po::value(&o.kt_dir),
      "write each table as a Kernel Tuner cache file DIR/TABLE.json and DIR/tables.json")(
      "export-only", "with --export-kt: export, run no strategy")(
      "reverse-values", "list every parameter's values in reverse order (an equivalent problem; also in --export-kt)")(
      "kt-results", po::value(&o.kt_results),
      "merge Kernel Tuner's curves (CSV from bench/strategies_kernel_tuner.py)");
}

// The options, --budget checked; nullopt when --help printed them instead.
std::optional<Options> parse_options(int argc, char** argv) {
  Options o;
  po::options_description desc("bench_strategies options");
  describe(desc, o);
  po::variables_map vm;
  po::store(po::parse_command_line(argc, argv, desc), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return std::nullopt;
  }
  if (!(o.budget > 0 && o.budget <= 1)) throw UsageError("--budget: give a fraction in (0, 1], e.g. --budget 0.2");
  o.reversed = vm.count("reverse-values") > 0;
  o.export_only = vm.count("export-only") > 0;
  return o;
}

// The synthetic landscapes, then the recorded tables (FILE.json or FILE.json@SESSION_UUID).
std::vector<Table> load_tables(const Options& o) {
  std::vector<Table> tables;
  for (const auto& name : o.synthetic)
    tables.push_back(make_table(name, synthetic_table(preset(name)), o.budget, o.reversed));
  for (const auto& spec : o.table_files) {
    const auto at = spec.find('@');
    const std::string path = spec.substr(0, at);
    const std::string session = at == std::string::npos ? "" : spec.substr(at + 1);
    tables.push_back(make_table(file_stem(path), load_table(path, session), o.budget, o.reversed));
  }
  if (tables.empty()) throw UsageError("give at least one --table or --synthetic");
  return tables;
}

// The outputs so far: the CSV (header first) and the Markdown summary.
struct Report {
  std::string csv = "table,configurations,strategy,evaluations,space_fraction,median,q1,q3,min,max,seeds\n";
  std::string md;
};

// Every strategy over one table, with Kernel Tuner's curves for it (`kt`),
// into the report, and its plot into OUT_TABLE.svg with --out.
void run_table(const Options& o, const Table& tb, const std::map<std::string, std::vector<Curve>>& kt, Report& rep) {
  SimulatedEvaluator ev(tb.table);
  std::vector<Curve> ours;
  for (const auto& s : bench::split_list(o.strategies, ',')) {
    ours.push_back(run_strategy(tb, ev, s, o.seeds));
    std::cerr << fmt::format("{} {}: done\n", tb.name, s);
  }
  const auto kit = kt.find(tb.name);
  const std::vector<Curve> theirs = kit == kt.end() ? std::vector<Curve>{} : kit->second;
  std::vector<Curve> all = ours;
  all.insert(all.end(), theirs.begin(), theirs.end());
  for (const auto& c : all) rep.csv += csv_rows(tb, c);
  rep.md += markdown_table(tb, all);
  if (!o.out.empty()) bench::write(fmt::format("{}_{}.svg", o.out, tb.name), svg::render(plot(tb, ours, theirs)));
}

int run(int argc, char** argv) {
  const std::optional<Options> options = parse_options(argc, argv);
  if (!options) return 0;
  const Options& o = *options;
  const std::vector<Table> tables = load_tables(o);
  if (!o.kt_dir.empty()) export_kt(tables, o.kt_dir, o.seeds);
  if (o.export_only) return 0;
  const auto kt = o.kt_results.empty() ? std::map<std::string, std::vector<Curve>>{} : read_kt(o.kt_results, tables);
  Report rep;
  for (const auto& tb : tables) run_table(o, tb, kt, rep);
  if (o.out.empty()) {
    std::cout << rep.md;
    return 0;
  }
  bench::write(o.out + ".csv", rep.csv);
  bench::write(o.out + ".md", rep.md);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return bench::guarded_main("bench_strategies", [&] { return run(argc, argv); });
}

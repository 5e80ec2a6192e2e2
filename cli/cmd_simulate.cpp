// wstune simulate: one tune() replayed over a recorded exhaustive table
// (simulation mode, simulation.hpp): which configuration a strategy finds
// within a budget, and how far it is from the table's optimum.
#include <iostream>

#include <fmt/format.h>

#include "command.hpp"
#include "format/json.hpp"
#include "search/search.hpp"
#include "search/strategies.hpp"
#include "session/simulation.hpp"
#include "wstune/error.hpp"

namespace po = boost::program_options;

namespace wstune::cli {
namespace {

// The values of `wstune simulate`'s options.
struct SimulateArgs {
  std::string table_file, session, strategy;
  unsigned max_evals = 0;
  std::uint64_t seed = 42;
};

// Parses `wstune simulate`'s command line (TABLE.json given positionally)
// into `a` and `vm`; false when --help printed the usage instead.
bool parse_simulate_args(int argc, char** argv, SimulateArgs& a, po::variables_map& vm) {
  po::options_description desc("wstune simulate options");
  desc.add_options()("table", po::value(&a.table_file)->required(),
                     "the table: a 'wstune export' file or a T4 results file (JSON)")(
      "session", po::value(&a.session), "the export's session to replay (uuid), when it holds several")(
      "strategy", po::value(&a.strategy)->default_value("auto"), std::string(strategy_names()).c_str())(
      "max-evals", po::value(&a.max_evals)->default_value(0),
      "stop after N evaluations (0: the strategy's default budget, as wstune tune)")(
      "seed", po::value(&a.seed)->default_value(42), "search seed")("json", "print JSON");
  po::positional_options_description pos;
  pos.add("table", 1);
  return parse_options(
      argc, argv,
      "usage: wstune simulate TABLE.json [--session UUID] [--strategy S] [--max-evals N] [--seed N] [--json]\n\n"
      "Replays a recorded exhaustive table (every configuration measured once, e.g. by\n"
      "'wstune tune --strategy exhaustive' and 'wstune export', or a T4 results file) instead of\n"
      "running kernels: tune() searches the table's configurations with the strategy and reports the\n"
      "answer against the table's optimum. No device is used. See docs/tuning.md.",
      desc, vm, &pos);
}

// One tune() over the table with the strategy, within --max-evals (0: the strategy's default budget).
TuneResult simulate(SimulatedEvaluator& ev, const SimulateArgs& a) {
  auto searcher = make_searcher(a.strategy, a.seed);
  const unsigned max_evals = a.max_evals ? a.max_evals : default_evaluations(a.strategy, ev.space());
  const auto stop = max_evals ? max_evaluations(max_evals) : never_stop();
  return tune(ev, *searcher, *stop);
}

// A configuration found and its time, as JSON.
nlohmann::json found_json(const Trial& t) {
  return {{"params", t.params}, {"local", to_json(t.local)}, {"median_ms", t.median_ms()}};
}

// The answer against the table's optimum `best`, as JSON or as text.
void print_result(const SimulatedEvaluator& ev, const TuneResult& r, const Trial& best, double ratio, bool json) {
  if (json) {
    nlohmann::json j{{"table", ev.table().source},   {"strategy", r.strategy},       {"space_size", r.space_size},
                     {"evaluations", r.evaluations}, {"stop_reason", r.stop_reason}, {"best", found_json(r.best)},
                     {"optimum", found_json(best)},  {"best_over_optimum", ratio}};
    std::cout << j.dump(2) << "\n";
    return;
  }
  // The space's configurations, as `wstune tune` and "space_size" count them
  // (the baseline, measured first, is not one of them).
  std::cout << fmt::format("{}: {} configurations, strategy {}, {} evaluations ({})\n", ev.table().source, r.space_size,
                           r.strategy, r.evaluations, r.stop_reason)
            << fmt::format("best     {}  {:.4f} ms\n", to_string(r.best.configuration()), r.best.median_ms())
            << fmt::format("optimum  {}  {:.4f} ms\n", to_string(best.configuration()), best.median_ms())
            << fmt::format("best/optimum {:.3f}\n", ratio);
}

int simulate_main(int argc, char** argv) {
  SimulateArgs a;
  po::variables_map vm;
  if (!parse_simulate_args(argc, argv, a, vm)) return 0;
  SimulatedEvaluator ev(load_table(a.table_file, a.session));
  const TuneResult r = simulate(ev, a);
  const auto opt = ev.table().best();
  if (!opt) throw UsageError(fmt::format("{}: no correct configuration in the table", a.table_file));
  const Trial& best = ev.table().trials[*opt];
  const double ratio = r.best.ok() ? r.best.median_ms() / best.median_ms() : 0;
  print_result(ev, r, best, ratio, vm.count("json") > 0);
  return 0;
}

WSTUNE_COMMAND("simulate", "replay a recorded exhaustive table: what a strategy finds, without a device",
               simulate_main);

}  // namespace
}  // namespace wstune::cli

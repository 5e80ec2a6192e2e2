// wstune simulate: one tune() replayed over a recorded exhaustive table
// (simulation mode, simulation.hpp): which configuration a strategy finds
// within a budget, and how far it is from the table's optimum.
#include <iostream>

#include <fmt/format.h>

#include "command.hpp"
#include "wstune/error.hpp"
#include "wstune/json.hpp"
#include "wstune/search.hpp"
#include "wstune/simulation.hpp"
#include "wstune/strategies.hpp"

namespace po = boost::program_options;

namespace wstune::cli {
namespace {

int simulate_main(int argc, char** argv) {
  po::options_description desc("wstune simulate options");
  std::string table_file, session, strategy;
  unsigned max_evals = 0;
  std::uint64_t seed = 42;
  desc.add_options()
      ("table", po::value(&table_file)->required(), "the table: a 'wstune export' file or a T4 results file (JSON)")
      ("session", po::value(&session), "the export's session to replay (uuid), when it holds several")
      ("strategy", po::value(&strategy)->default_value("auto"), std::string(strategy_names()).c_str())
      ("max-evals", po::value(&max_evals)->default_value(0),
       "stop after N evaluations (0: the strategy's default budget, as wstune tune)")
      ("seed", po::value(&seed)->default_value(42), "search seed")
      ("json", "print JSON");
  po::positional_options_description pos;
  pos.add("table", 1);
  po::variables_map vm;
  if (!parse_options(argc, argv,
                     "usage: wstune simulate TABLE.json [--session UUID] [--strategy S] [--max-evals N] [--seed N] [--json]\n\n"
                     "Replays a recorded exhaustive table (every configuration measured once, e.g. by\n"
                     "'wstune tune --strategy exhaustive' and 'wstune export', or a T4 results file) instead of\n"
                     "running kernels: tune() searches the table's configurations with the strategy and reports the\n"
                     "answer against the table's optimum. No device is used. See docs/tuning.md.",
                     desc, vm, &pos)) return 0;
  SimulatedEvaluator ev(load_table(table_file, session));
  auto searcher = make_searcher(strategy, seed);
  if (!max_evals) max_evals = default_evaluations(strategy, ev.space());
  const auto stop = max_evals ? max_evaluations(max_evals) : never_stop();
  const TuneResult r = tune(ev, *searcher, *stop);
  const auto opt = ev.table().best();
  if (!opt) throw UsageError(fmt::format("{}: no correct configuration in the table", table_file));
  const Trial& best = ev.table().trials[*opt];
  const double ratio = r.best.ok() ? r.best.median_ms() / best.median_ms() : 0;
  if (vm.count("json")) {
    nlohmann::json j{{"table", ev.table().source}, {"strategy", r.strategy}, {"space_size", r.space_size},
                     {"evaluations", r.evaluations}, {"stop_reason", r.stop_reason},
                     {"best", {{"params", r.best.params}, {"local", to_json(r.best.local)}, {"median_ms", r.best.median_ms()}}},
                     {"optimum", {{"params", best.params}, {"local", to_json(best.local)}, {"median_ms", best.median_ms()}}},
                     {"best_over_optimum", ratio}};
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << fmt::format("{}: {} configurations, strategy {}, {} evaluations ({})\n", ev.table().source,
                             r.space_size + 1, r.strategy, r.evaluations, r.stop_reason)
              << fmt::format("best     {}  {:.4f} ms\n", to_string(r.best.configuration()), r.best.median_ms())
              << fmt::format("optimum  {}  {:.4f} ms\n", to_string(best.configuration()), best.median_ms())
              << fmt::format("best/optimum {:.3f}\n", ratio);
  }
  return 0;
}

WSTUNE_COMMAND("simulate", "replay a recorded exhaustive table: what a strategy finds, without a device", simulate_main);

}  // namespace
}  // namespace wstune::cli

// bench_space: search-space construction on one space of
// bench/spaces/spaces.json, as a tuning file's space is built: each T1
// Condition compiled (t1::condition_constraints), the valid combinations
// solved (SpaceSolver::solve) and held as a SearchSpace (one NULL local
// size a combination, as Kernel Tuner's Searchspace holds parameter
// combinations only). Prints one JSON line: the valid configurations, the
// best wall time of --repeat builds and each phase's, the best CPU time, the count alone
// (SpaceSolver::count, nothing held), the process's peak resident memory
// (VmHWM) and its resident memory before the first build, the bytes the
// SearchSpace holds, the solver's work, and an FNV-1a digest of the
// configurations in odometer order that bench/space_kernel_tuner.py prints
// for Kernel Tuner's space. scripts/bench-space.sh runs both side by side.
// Usage: bench_space SPACES.json NAME [--repeat N]
#include <time.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench_util.hpp"
#include "expr/expression.hpp"
#include "space/search_space.hpp"
#include "space/solver.hpp"
#include "tuning_file/conditions.hpp"

using namespace wstune;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The process's CPU time in seconds (what a build costs whatever else runs on the machine).
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// A field of /proc/self/status in KiB (VmRSS, VmHWM).
long status_kib(const std::string& field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  return 0;
}

// FNV-1a 64 over each row's value indices, then a row separator (the
// digest bench/space_kernel_tuner.py computes the same way).
std::uint64_t digest(const ParameterSets& sets) {
  constexpr std::uint64_t prime = 1099511628211ull;
  std::uint64_t h = 1469598103934665603ull;
  for (std::size_t r = 0; r < sets.size(); ++r) {
    for (std::size_t k = 0; k < sets.width(); ++k) h = (h ^ sets.at(r, k)) * prime;
    h = (h ^ 0xffffffffull) * prime;
  }
  return h;
}

struct Space {
  std::vector<TuningParameter> parameters;
  std::vector<expr::Expression> conditions;
};

Space load(const std::string& path, const std::string& name) {
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("cannot read {}", path));
  const json doc = json::parse(in);
  for (const json& s : doc.at("spaces")) {
    if (s.at("name") != name) continue;
    Space out;
    for (const json& p : s.at("parameters"))
      out.parameters.push_back(TuningParameter{p.at(0).get<std::string>(), "int", p.at(1).get<std::vector<json>>()});
    for (const json& c : s.at("conditions")) out.conditions.push_back(expr::Expression::parse(c.get<std::string>()));
    return out;
  }
  throw UsageError(fmt::format("{}: no space named {}", path, name));
}

struct Build {
  double compile_s = 0, solve_s = 0, hold_s = 0, total_s = 0, cpu_s = 0;
  std::size_t valid = 0, bytes = 0;
  SolverStats stats;
  std::uint64_t digest = 0;
};

Build build(const Space& s) {
  Build b;
  const double c0 = cpu_seconds();
  const auto t0 = Clock::now();
  const expr::MapEnv constants;
  std::vector<Constraint> cs = t1::condition_constraints(s.parameters, s.conditions, constants, "bench");
  b.compile_s = seconds_since(t0);
  std::vector<std::uint32_t> sizes;
  for (const auto& p : s.parameters) sizes.push_back(static_cast<std::uint32_t>(p.values.size()));
  const auto t1 = Clock::now();
  SpaceSolver solver(sizes, std::move(cs));
  ParameterSets sets = solver.solve();
  b.solve_s = seconds_since(t1);
  const auto t2 = Clock::now();
  const SearchSpace space(s.parameters, std::move(sets), std::vector<LocalSize>{std::nullopt}, Configuration{},
                          std::nullopt);
  b.hold_s = seconds_since(t2);
  b.total_s = seconds_since(t0);
  b.cpu_s = cpu_seconds() - c0;
  b.stats = solver.stats();
  b.valid = space.size();
  b.bytes = space.memory_bytes();
  b.digest = digest(space.sets());  // not timed
  return b;
}

double count_only(const Space& s, std::uint64_t& n) {
  const auto t0 = Clock::now();
  const expr::MapEnv constants;
  std::vector<std::uint32_t> sizes;
  for (const auto& p : s.parameters) sizes.push_back(static_cast<std::uint32_t>(p.values.size()));
  SpaceSolver solver(sizes, t1::condition_constraints(s.parameters, s.conditions, constants, "bench"));
  n = solver.count();
  return seconds_since(t0);
}

int run(int argc, char** argv) {
  if (argc < 3) throw UsageError("usage: bench_space SPACES.json NAME [--repeat N]");
  const std::string path = argv[1], name = argv[2];
  int repeat = 1;
  for (int i = 3; i + 1 < argc; i += 2)
    if (std::string(argv[i]) == "--repeat") repeat = std::max(1, std::stoi(argv[i + 1]));
  const Space s = load(path, name);
  long double product = 1;
  for (const auto& p : s.parameters) product *= static_cast<long double>(p.values.size());
  const long rss_before = status_kib("VmRSS");
  std::vector<double> totals, cpus;
  Build best;
  for (int r = 0; r < repeat; ++r) {
    const Build b = build(s);
    totals.push_back(b.total_s);
    cpus.push_back(b.cpu_s);
    if (r == 0 || b.total_s < best.total_s) best = b;
  }
  const long peak = status_kib("VmHWM");
  std::uint64_t counted = 0;
  double count_s = 1e300;
  for (int r = 0; r < repeat; ++r) count_s = std::min(count_s, count_only(s, counted));
  const json out{{"tool", "wstune"},
                 {"space", name},
                 {"product", static_cast<double>(product)},
                 {"valid", best.valid},
                 {"seconds", best.total_s},
                 {"all_seconds", totals},
                 {"cpu_seconds", *std::min_element(cpus.begin(), cpus.end())},
                 {"all_cpu_seconds", cpus},
                 {"compile_s", best.compile_s},
                 {"solve_s", best.solve_s},
                 {"hold_s", best.hold_s},
                 {"count", counted},
                 {"count_s", count_s},
                 {"peak_rss_kib", peak},
                 {"rss_before_kib", rss_before},
                 {"space_bytes", best.bytes},
                 {"nodes", best.stats.nodes},
                 {"checks", best.stats.checks},
                 {"evaluations", best.stats.evaluations},
                 {"lookaheads", best.stats.lookaheads},
                 {"pruned", best.stats.pruned},
                 {"digest", fmt::format("{:016x}", best.digest)}};
  std::cout << out.dump() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return bench::guarded_main("bench_space", [&] { return run(argc, argv); });
}

// The Pareto front of measured trials (pareto.hpp).
#include "metric/pareto.hpp"

#include <algorithm>
#include <set>

namespace wstune {

namespace {

bool complete(const std::vector<std::optional<double>>& p) {
  return std::all_of(p.begin(), p.end(), [](const auto& v) { return v.has_value(); });
}

// a dominates b: no worse in every cost, better in one.
bool dominates(const std::vector<std::optional<double>>& a, const std::vector<std::optional<double>>& b) {
  bool better = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (*a[i] > *b[i]) return false;
    better = better || *a[i] < *b[i];
  }
  return better;
}

}  // namespace

std::vector<std::size_t> pareto_front(const std::vector<std::vector<std::optional<double>>>& costs) {
  std::vector<std::size_t> front;
  for (std::size_t i = 0; i < costs.size(); ++i) {
    if (!complete(costs[i])) continue;
    bool dominated = false;
    for (std::size_t j = 0; j < costs.size() && !dominated; ++j)
      dominated = j != i && complete(costs[j]) && dominates(costs[j], costs[i]);
    if (!dominated) front.push_back(i);
  }
  return front;
}

std::vector<std::size_t> pareto_front(const std::vector<Trial>& trials, const std::vector<Objective>& objectives,
                                      const MetricSet& metrics) {
  std::vector<std::vector<std::optional<double>>> costs;
  std::set<std::string> seen;
  for (const Trial& t : trials) {
    std::vector<std::optional<double>> c;
    const bool first = seen.insert(t.configuration().key()).second;
    for (const Objective& o : objectives) c.push_back(first ? objective_score(metrics, o)(t) : std::nullopt);
    costs.push_back(std::move(c));
  }
  auto front = pareto_front(costs);
  std::stable_sort(front.begin(), front.end(),
                   [&](std::size_t a, std::size_t b) { return *costs[a][0] < *costs[b][0]; });
  return front;
}

}  // namespace wstune

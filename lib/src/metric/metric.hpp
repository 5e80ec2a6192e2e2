#pragma once
/// @file metric.hpp
/// Metrics and objectives (internal; docs/energy.md): what a trial scores
/// on besides its time. The built-in metrics are time (the median kernel
/// time, ms), energy (J per kernel run: the observed power × the median
/// time), power (W, the observed average power) and edp (the
/// energy-delay product, energy × time, J·s); a tuning file adds user
/// metrics (wstune.Metrics) as expressions over the tuning parameters,
/// ProblemSize, the size variables and those four. An objective is a metric
/// and a direction ("energy", "GFLOP/s:max"); one decides the best
/// configuration, several keep the Pareto front (pareto.hpp). After Kernel
/// Tuner's metrics and objective (its `metrics`, `objective` and
/// `objective_higher_is_better` options), with energy from the device's own
/// sensor (observe/observer.hpp).

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "evaluate/trial.hpp"
#include "expr/expression.hpp"
#include "kernel/kernel.hpp"

namespace wstune {

/// A metric and whether it is maximised.
struct Objective {
  std::string name = "time";  ///< a built-in or user metric
  bool maximise = false;      ///< true: higher is better (":max")
  friend bool operator==(const Objective&, const Objective&) = default;
};

/// "energy:min", "GFLOP/s:max".
std::string to_string(const Objective& o);

/// The built-in metrics: time, energy, power, edp.
const std::vector<std::string>& builtin_metrics();

/// The metrics of one kernel and problem: the built-ins and the kernel's
/// user metrics (KernelSpec::user_metrics()).
class MetricSet {
 public:
  /// Built-ins only.
  MetricSet() = default;
  /// The built-ins and `spec`'s user metrics over `problem` (each trial's
  /// parameters bound on top). Throws UsageError when a user metric's
  /// expression does not parse.
  MetricSet(const KernelSpec& spec, Problem problem);
  /// Every metric's name: the built-ins, then the user metrics.
  [[nodiscard]] std::vector<std::string> names() const;
  /// Whether `name` is one of names().
  [[nodiscard]] bool knows(std::string_view name) const;
  /// Whether metric `name` needs each trial's energy: the built-ins energy,
  /// power and edp, and a user metric whose expression reads `energy`.
  [[nodiscard]] bool needs_energy(std::string_view name) const;
  /// The value of metric `name` for `t`, or nullopt when the trial has
  /// none: it is not correct, has no samples, or the metric needs energy
  /// and the trial has none, or a user metric fails to evaluate (e.g. a
  /// division by zero) or is not a number. Throws UsageError for an unknown name.
  [[nodiscard]] std::optional<double> value(const Trial& t, std::string_view name) const;
  /// {name: value} of every metric the trial has (metrics without a value
  /// are left out); {} for a trial with none.
  [[nodiscard]] nlohmann::json values_json(const Trial& t) const;

 private:
  const KernelSpec* spec_ = nullptr;
  Problem problem_;
  std::vector<std::pair<std::string, expr::Expression>> user_;
};

/// Parses "NAME", "NAME:min" or "NAME:max" (min when no direction is
/// given) against `metrics`. Throws UsageError naming `what` (e.g.
/// "--objective"), the text and the known metrics.
Objective parse_objective(std::string_view text, const MetricSet& metrics, std::string_view what);

/// Parses a comma-separated list of objectives ("time,energy"); at least
/// one, no name twice. Throws UsageError as parse_objective().
std::vector<Objective> parse_objectives(std::string_view text, const MetricSet& metrics, std::string_view what);

/// Whether `o` is a built-in metric that needs the trial's energy (energy,
/// power, edp).
bool needs_energy(const Objective& o);

/// What tune() minimises for objective `o`: its value (negated when
/// maximised), nullopt where the trial has none.
std::function<std::optional<double>(const Trial&)> objective_score(const MetricSet& metrics, const Objective& o);

}  // namespace wstune

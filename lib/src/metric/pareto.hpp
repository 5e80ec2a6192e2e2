#pragma once
/// @file pareto.hpp
/// The Pareto front of measured trials over several objectives (internal;
/// docs/energy.md): the trials no other trial dominates (at least as good in
/// every objective and better in one). Kernel Tuner keeps the same front
/// for its multi-objective searches.

#include <cstddef>
#include <optional>
#include <vector>

#include "evaluate/trial.hpp"
#include "metric/metric.hpp"

namespace wstune {

/// The indices (ascending) of the non-dominated points among `costs`, each
/// a vector of equal length to be minimised; a point with a missing cost
/// (nullopt) is never on the front. Two equal points are both on it.
std::vector<std::size_t> pareto_front(const std::vector<std::vector<std::optional<double>>>& costs);

/// The front of `trials` over `objectives` (each objective's value,
/// negated when maximised), as indices into `trials`, ordered by the first
/// objective (best first). Trials with the same configuration count once
/// (the first).
std::vector<std::size_t> pareto_front(const std::vector<Trial>& trials, const std::vector<Objective>& objectives,
                                      const MetricSet& metrics);

}  // namespace wstune

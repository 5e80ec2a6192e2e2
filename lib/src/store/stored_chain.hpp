#pragma once
/// @file stored_chain.hpp
/// The stored levels of a look-up chain, written once for both chains that
/// read the store: the local-size chain (Lookup, lookup.hpp) and the
/// parameter-configuration chain (best_configuration(), session/
/// best_configuration.hpp). In order: an exact best of this device, kernel
/// (the whole KernelKey) and problem; the nearest stored problem on this
/// device; the nearest on another device of the same architecture; the
/// nearest on another device of the same vendor and type. A stored best of
/// another problem serves only within LookupOptions::max_distance
/// (problem_distance()) and only when the caller's test accepts it (it
/// fits the new problem, it was a real choice there: beat_baseline()).
/// Internal to libwstune.

#include <functional>
#include <optional>

#include "wstune/lookup.hpp"
#include "wstune/store.hpp"

namespace wstune {

/// What a stored level answered.
struct StoredAnswer {
  LookupLevel level = LookupLevel::exact;  ///< exact, nearest, architecture or vendor_type
  BestConfig from;                         ///< the stored best (its full row)
  double distance = 0;                     ///< problem_distance() to `from` (0 for exact)
};

/// What one chain accepts.
struct StoredChainTests {
  /// The exact level's row serves here (e.g. its local size fits the kernel).
  std::function<bool(const BestConfig&)> exact;
  /// A row of another problem serves here (the distance is checked before).
  std::function<bool(const BestCandidate&)> near;
};

/// True when a stored best beat its baseline (NULL, or a described kernel's
/// reference configuration) by `min_speedup`: baseline median / its median
/// ≥ min_speedup; false when the baseline's time is unknown.
bool beat_baseline(const BestCandidate& stored, double min_speedup);

/// The first stored level that answers for `kernel` over `global` on
/// `device`, or nullopt. The nearest row within `max_distance` that `tests`
/// accept wins a level (the newest on ties). Throws StoreError.
std::optional<StoredAnswer> stored_chain(const Store& store, const DeviceInfo& device, const KernelKey& kernel,
                                         const Extent& global, double max_distance, const StoredChainTests& tests);

}  // namespace wstune

#pragma once
/// @file warm_start.hpp
/// Warm starts of a search (OpenTuner issue 56, Kernel Launcher's wisdom):
/// the stored bests of the same kernel (the whole KernelKey) at other sizes
/// on this device, on devices of the same architecture, of the same vendor
/// and type, and on any other device, mapped onto the new problem (those
/// not valid there are skipped: best_configuration.hpp's configuration_at),
/// become the search's first proposals (make_seeded_searcher). They are
/// measured like any proposal: a seed that is slow here costs one
/// evaluation and changes nothing else.

#include <cstddef>
#include <string>
#include <vector>

#include "kernel/kernel.hpp"
#include "wstune/configuration.hpp"
#include "wstune/lookup.hpp"
#include "wstune/store.hpp"

namespace wstune {

/// One seed and where it came from.
struct WarmSeed {
  Configuration config;  ///< as it runs the new problem
  /// The scope it came from: nearest (this device, another size),
  /// architecture, vendor_type, or null_ for a device of another vendor or type.
  LookupLevel level = LookupLevel::nearest;
  BestConfig from;      ///< the stored best
  double distance = 0;  ///< problem_distance() from the stored size
};

/// "nearest", "architecture", "vendor-type" or "other-device": where `s` came from.
std::string seed_scope(const WarmSeed& s);

/// Up to `max` seeds for `spec` at `p` on `device`: this device's other
/// sizes first, then the same architecture, vendor and type, other devices;
/// nearest size first within each, at most ceil(max / 2) from one scope
/// while others have some; each configuration once; never the stored best
/// of this very device and size (a resumed or repeated search has it
/// already), nor one that was no faster than its baseline (the search
/// measures the baseline anyway). Throws StoreError.
std::vector<WarmSeed> warm_seeds(const Store& store, const KernelSpec& spec, const Problem& p, const DeviceInfo& device,
                                 std::size_t max = 6);

}  // namespace wstune

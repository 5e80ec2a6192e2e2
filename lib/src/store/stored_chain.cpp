// The stored levels of the look-up chains (stored_chain.hpp).
#include "store/stored_chain.hpp"

#include <algorithm>
#include <cmath>

namespace wstune {

double problem_distance(const Extent& a, const Extent& b) {
  double d = 0;
  for (unsigned i = 0; i < std::max(a.dims, b.dims); ++i)
    d += std::abs(std::log2(static_cast<double>(a[i]) / static_cast<double>(b[i])));
  return d;
}

bool beat_baseline(const BestCandidate& stored, double min_speedup) {
  return stored.null_ms && stored.median_ms > 0 && *stored.null_ms / stored.median_ms >= min_speedup;
}

namespace {

// The nearest candidate within `max_distance` that `near` accepts; the newest on ties.
std::optional<StoredAnswer> pick(const Store& store, const std::vector<BestCandidate>& cands, const Extent& global,
                                 double max_distance, const StoredChainTests& tests, LookupLevel level) {
  const BestCandidate* best = nullptr;
  double best_d = 0;
  for (const BestCandidate& c : cands) {
    const double d = problem_distance(c.global, global);
    if (d > max_distance || (best && d >= best_d)) continue;
    if (!tests.near(c)) continue;
    best = &c;
    best_d = d;
  }
  if (!best) return std::nullopt;
  auto row = store.best_by_id(best->id);
  if (!row) return std::nullopt;  // removed meanwhile
  return StoredAnswer{level, std::move(*row), best_d};
}

}  // namespace

std::optional<StoredAnswer> stored_chain(const Store& store, const DeviceInfo& device, const KernelKey& kernel,
                                         const Extent& global, double max_distance, const StoredChainTests& tests) {
  const std::string fp = device.fingerprint();
  if (auto b = store.exact_best(fp, kernel, global); b && tests.exact(*b))
    return StoredAnswer{LookupLevel::exact, std::move(*b), 0};
  if (auto r = pick(store, store.candidates(kernel, global.dims, fp, {}, {}, {}), global, max_distance, tests,
                    LookupLevel::nearest))
    return r;
  if (!device.architecture.empty()) {
    if (auto r = pick(store, store.candidates(kernel, global.dims, {}, device.architecture, {}, {}), global,
                      max_distance, tests, LookupLevel::architecture))
      return r;
  }
  if (!device.vendor.empty() && !device.type.empty()) {
    if (auto r = pick(store, store.candidates(kernel, global.dims, {}, {}, device.vendor, device.type), global,
                      max_distance, tests, LookupLevel::vendor_type))
      return r;
  }
  return std::nullopt;
}

}  // namespace wstune

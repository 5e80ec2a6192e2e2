// Warm starts of a search from stored bests (warm_start.hpp).
#include "session/warm_start.hpp"

#include <algorithm>
#include <array>
#include <set>

#include "session/best_configuration.hpp"
#include "session/tune_session.hpp"

namespace wstune {

std::string seed_scope(const WarmSeed& s) {
  return s.level == LookupLevel::null_ ? "other-device" : std::string(to_string(s.level));
}

namespace {

// The scope of a stored device relative to `device`: 0 this one, 1 same
// architecture, 2 same vendor and type, 3 any other.
int scope_of(const std::optional<DeviceInfo>& stored, const std::string& fp, const DeviceInfo& device) {
  if (!stored) return 3;
  if (stored->fingerprint() == fp) return 0;
  if (!device.architecture.empty() && stored->architecture == device.architecture) return 1;
  if (!device.vendor.empty() && stored->vendor == device.vendor && stored->type == device.type) return 2;
  return 3;
}

constexpr std::array<LookupLevel, 4> kScopeLevel{LookupLevel::nearest, LookupLevel::architecture,
                                                 LookupLevel::vendor_type, LookupLevel::null_};

}  // namespace

std::vector<WarmSeed> warm_seeds(const Store& store, const KernelSpec& spec, const Problem& p, const DeviceInfo& device,
                                 std::size_t max) {
  const KernelKey key = kernel_key(spec);
  const std::string fp = device.fingerprint();
  const Extent here = spec.problem_extent(p);
  BestFilter f;
  f.kernel = key.name;
  std::array<std::vector<WarmSeed>, 4> scopes;
  for (BestConfig& b : store.best_configs(f)) {
    if (!(b.kernel == key) || b.problem.global.dims != here.dims) continue;
    const int scope = scope_of(store.device(b.device_fingerprint), fp, device);
    if (scope == 0 && b.problem.size_text == p.text) continue;
    if (b.ratio_to_null() && *b.ratio_to_null() <= 1) continue;  // no faster than its baseline: nothing to learn
    auto c = configuration_at(spec, p, device, b.params, b.local);
    if (!c) continue;
    const double d = problem_distance(b.problem.global, here);
    scopes[static_cast<std::size_t>(scope)].push_back(
        {std::move(*c), kScopeLevel[static_cast<std::size_t>(scope)], std::move(b), d});
  }
  for (auto& s : scopes)
    std::stable_sort(s.begin(), s.end(), [](const WarmSeed& a, const WarmSeed& b) { return a.distance < b.distance; });
  // First up to ceil(max / 2) from each scope in turn, then the rest in scope order.
  std::vector<WarmSeed> out;
  std::set<std::string> seen;
  std::array<std::size_t, 4> at{};
  const std::size_t share = (max + 1) / 2;
  for (const bool capped : {true, false}) {
    for (std::size_t k = 0; k < scopes.size(); ++k) {
      for (std::size_t taken = 0; out.size() < max && at[k] < scopes[k].size() && (!capped || taken < share);) {
        WarmSeed& s = scopes[k][at[k]++];
        if (seen.insert(to_string(s.config)).second) {
          out.push_back(std::move(s));
          ++taken;
        }
      }
    }
  }
  return out;
}

}  // namespace wstune

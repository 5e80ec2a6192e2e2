// The look-up chain (see lookup.hpp and docs/store.md).
#include "wstune/lookup.hpp"

#include <cstdlib>
#include <limits>
#include <unordered_map>

#include <fmt/format.h>

#include "kernel/kernel.hpp"
#include "space/rules.hpp"
#include "space/search_space.hpp"
#include "store/stored_chain.hpp"

namespace wstune {

std::string_view to_string(LookupLevel l) noexcept {
  switch (l) {
    case LookupLevel::required:
      return "required";
    case LookupLevel::forced:
      return "forced";
    case LookupLevel::exact:
      return "exact";
    case LookupLevel::nearest:
      return "nearest";
    case LookupLevel::architecture:
      return "architecture";
    case LookupLevel::vendor_type:
      return "vendor-type";
    case LookupLevel::rule:
      return "rule";
    case LookupLevel::online:
      return "online";
    case LookupLevel::defaults:
      return "default";
    case LookupLevel::reference:
      return "reference";
    case LookupLevel::null_:
      break;
  }
  return "null";
}

namespace {

SpaceLimits limits_of(const DeviceInfo& d, std::size_t max_items) {
  SpaceLimits l;
  l.max_work_group_size = d.max_work_group_size;
  l.kernel_work_group_size = max_items;
  l.max_work_item_sizes = d.max_work_item_sizes;
  return l;
}

// The priority of one of wstune's kernels by its function name; x otherwise.
Priority priority_of(std::string_view kernel) {
  for (const std::string& name : kernel_names()) {
    const KernelSpec& spec = kernel_spec(name);
    if (spec.entry_point() == kernel || spec.name() == kernel) return spec.priority();
  }
  return Priority::x;
}

}  // namespace

RuleFunction paper_rule_function() {
  return [](const DeviceInfo& device, std::string_view kernel, const Extent& global,
            std::size_t max_items) -> std::optional<LocalSize> {
    const auto space = enumerate_local_sizes(global, limits_of(device, max_items));
    if (space.empty()) return std::nullopt;
    LocalSize l = paper_rule(global, space, priority_of(kernel), device.pe_per_cu);
    if (!l) return std::nullopt;
    return l;
  };
}

bool local_fits(const LocalSize& local, const Extent& global, const DeviceInfo& device, const KernelFit& fit) {
  if (!local) return true;
  if (local->dims != global.dims) return false;
  for (unsigned d = 0; fit.remainder == Remainder::non_uniform && d < global.dims; ++d)
    if ((*local)[d] > global[d]) return false;  // no group larger than the NDRange
  SpaceLimits limits = limits_of(device, fit.max_items);
  limits.any_shape = fit.remainder != Remainder::divide;
  return fits(*local, global, limits);
}

Extent padded_global(const Extent& global, const LocalSize& local) {
  return local ? round_up(global, *local) : global;
}

namespace {
// True when dimension `d` of the stored problem offered a value other than
// the chosen one: it does not divide (padded / non-uniform), or another
// divisor of the stored global size was within the limits.
bool chosen_along(const BestCandidate& c, unsigned d, const SpaceLimits& limits) {
  const std::size_t l = (*c.local)[d], g = c.global[d];
  if (g % l != 0) return true;
  const std::size_t cap =
      std::min(limits.max_items(), d < limits.max_work_item_sizes.size() ? limits.max_work_item_sizes[d]
                                                                         : std::numeric_limits<std::size_t>::max());
  for (std::size_t v : divisors(g)) {
    if (v > cap) break;
    if (v != l) return true;
  }
  return false;
}
}  // namespace

bool reusable(const BestCandidate& stored, const DeviceInfo& device, const KernelFit& fit, double min_speedup) {
  if (!stored.local || !beat_baseline(stored, min_speedup)) return false;
  const SpaceLimits limits = limits_of(device, fit.max_items);
  for (unsigned d = 0; d < stored.global.dims; ++d)
    if (!chosen_along(stored, d, limits)) return false;
  return true;
}

std::map<std::string, LocalSize, std::less<>> parse_forced(std::string_view text, std::string_view origin) {
  std::map<std::string, LocalSize, std::less<>> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t end = std::min(text.find(';', pos), text.size());
    const std::string_view item = text.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      throw UsageError(fmt::format("{}: '{}' is not KERNEL=X[,Y] or KERNEL=null; e.g. {}=\"matmul=16,16;sort=256\"",
                                   origin, item, origin));
    }
    out[std::string(item.substr(0, eq))] = parse_local_size(item.substr(eq + 1), origin);
  }
  return out;
}

struct Lookup::Impl {
  Store* store = nullptr;
  LookupOptions options;
  std::map<std::string, LocalSize, std::less<>> forced;
  std::unordered_map<std::string, LookupResult> cache;
  std::uint64_t generation = 0;
  std::string key;  // reused buffer

  LookupResult resolve(const DeviceInfo& device, const KernelKey& kernel, const Extent& global, const KernelFit& fit) {
    if (auto it = forced.find(kernel.name); it != forced.end()) return {it->second, LookupLevel::forced, {}, 0};
    const StoredChainTests tests{[&](const BestConfig& b) { return local_fits(b.local, global, device, fit); },
                                 [&](const BestCandidate& c) {
                                   return local_fits(c.local, global, device, fit) &&
                                          reusable(c, device, fit, options.min_speedup);
                                 }};
    if (auto r = stored_chain(*store, device, kernel, global, options.max_distance, tests)) {
      LocalSize local = r->from.local;
      return {local, r->level, std::move(r->from), r->distance};
    }
    if (options.rule) {
      if (auto l = options.rule(device, kernel.name, global, fit.max_items);
          l && local_fits(*l, global, device, {fit.max_items, Remainder::divide})) {
        return {*l, LookupLevel::rule, {}, 0};
      }
    }
    return {std::nullopt, LookupLevel::null_, {}, 0};
  }
};

Lookup::Lookup(Store& store, LookupOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->store = &store;
  if (options.forced) {
    impl_->forced = *options.forced;
  } else if (const char* env = std::getenv("WSTUNE_FORCE_LOCAL"); env && *env) {
    impl_->forced = parse_forced(env, "WSTUNE_FORCE_LOCAL");
  }
  impl_->options = std::move(options);
  impl_->generation = store.generation();
}

Lookup::~Lookup() = default;

LookupResult Lookup::find(const DeviceInfo& device, const KernelKey& kernel, const Extent& global,
                          const KernelFit& fit) {
  Impl& m = *impl_;
  if (global.dims < 1 || global.dims > 3 || global.count() == 0) {
    throw UsageError(
        fmt::format("look-up of {}: global size {} is not a valid 1-, 2- or 3-D NDRange; give each "
                    "dimension ≥ 1 work-item",
                    kernel.name, to_string(global)));
  }
  if (!m.options.cache) return m.resolve(device, kernel, global, fit);
  if (m.generation != m.store->generation()) {
    m.cache.clear();
    m.generation = m.store->generation();
  }
  // Key: identity fields of the device (as the fingerprint), kernel, size, fit.
  m.key.clear();
  fmt::format_to(std::back_inserter(m.key), "{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}",
                 device.vendor, device.name, device.driver_version, device.compute_units, kernel.name,
                 kernel.source_hash, kernel.build_options, to_string(global), global.dims, fit.max_items,
                 static_cast<int>(fit.remainder));
  if (auto it = m.cache.find(m.key); it != m.cache.end()) return it->second;
  LookupResult r = m.resolve(device, kernel, global, fit);
  m.cache.emplace(m.key, r);
  return r;
}

void Lookup::clear_cache() {
  impl_->cache.clear();
}
std::size_t Lookup::cache_size() const {
  return impl_->cache.size();
}
Store& Lookup::store() const noexcept {
  return *impl_->store;
}

}  // namespace wstune

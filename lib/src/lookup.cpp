// The look-up chain (see lookup.hpp and docs/store.md).
#include "wstune/lookup.hpp"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <unordered_map>

#include <fmt/format.h>

#include "wstune/kernel.hpp"
#include "wstune/rules.hpp"
#include "wstune/search_space.hpp"

namespace wstune {

std::string_view to_string(LookupLevel l) noexcept {
  switch (l) {
    case LookupLevel::forced: return "forced";
    case LookupLevel::exact: return "exact";
    case LookupLevel::nearest: return "nearest";
    case LookupLevel::architecture: return "architecture";
    case LookupLevel::vendor_type: return "vendor-type";
    case LookupLevel::rule: return "rule";
    case LookupLevel::null_: break;
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

double problem_distance(const Extent& a, const Extent& b) {
  double d = std::abs(std::log2(static_cast<double>(a.x) / static_cast<double>(b.x)));
  if (a.dims > 1 || b.dims > 1) d += std::abs(std::log2(static_cast<double>(a.y) / static_cast<double>(b.y)));
  return d;
}

bool local_fits(const LocalSize& local, const Extent& global, const DeviceInfo& device, std::size_t max_items) {
  if (!local) return true;
  if (local->dims != global.dims) return false;
  return fits(*local, global, limits_of(device, max_items));
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

  // The best valid candidate (smallest distance, newest on ties).
  std::optional<LookupResult> pick(const std::vector<BestCandidate>& cands, const DeviceInfo& device,
                                   const Extent& global, std::size_t max_items, LookupLevel level) const {
    const BestCandidate* best = nullptr;
    double best_d = 0;
    for (const BestCandidate& c : cands) {
      if (!local_fits(c.local, global, device, max_items)) continue;
      const double d = problem_distance(c.global, global);
      if (!best || d < best_d) {
        best = &c;
        best_d = d;
      }
    }
    if (!best) return std::nullopt;
    return LookupResult{best->local, level, store->best_by_id(best->id), best_d};
  }

  LookupResult resolve(const DeviceInfo& device, std::string_view kernel, const Extent& global,
                       std::size_t max_items) {
    if (auto it = forced.find(kernel); it != forced.end()) return {it->second, LookupLevel::forced, {}, 0};
    const std::string fp = device.fingerprint();
    if (auto b = store->exact_best(fp, kernel, global); b && local_fits(b->local, global, device, max_items)) {
      return {b->local, LookupLevel::exact, std::move(b), 0};
    }
    if (auto r = pick(store->candidates(kernel, global.dims, fp, {}, {}, {}), device, global, max_items,
                      LookupLevel::nearest)) return *r;
    if (!device.architecture.empty()) {
      if (auto r = pick(store->candidates(kernel, global.dims, {}, device.architecture, {}, {}), device, global,
                        max_items, LookupLevel::architecture)) return *r;
    }
    if (!device.vendor.empty() && !device.type.empty()) {
      if (auto r = pick(store->candidates(kernel, global.dims, {}, {}, device.vendor, device.type), device, global,
                        max_items, LookupLevel::vendor_type)) return *r;
    }
    if (options.rule) {
      if (auto l = options.rule(device, kernel, global, max_items); l && local_fits(*l, global, device, max_items)) {
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

LookupResult Lookup::find(const DeviceInfo& device, std::string_view kernel, const Extent& global,
                          std::size_t max_items) {
  Impl& m = *impl_;
  if (global.x == 0 || global.y == 0 || global.dims < 1 || global.dims > 2) {
    throw UsageError(fmt::format("look-up of {}: global size {} is not a valid 1-D or 2-D NDRange", kernel,
                                 to_string(global)));
  }
  if (!m.options.cache) return m.resolve(device, kernel, global, max_items);
  if (m.generation != m.store->generation()) {
    m.cache.clear();
    m.generation = m.store->generation();
  }
  // Key: identity fields of the device (as the fingerprint), kernel, size, limit.
  m.key.clear();
  fmt::format_to(std::back_inserter(m.key), "{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", device.vendor,
                 device.name, device.driver_version, device.compute_units, kernel, global.dims, global.x,
                 global.dims == 1 ? 1 : global.y, max_items);
  if (auto it = m.cache.find(m.key); it != m.cache.end()) return it->second;
  LookupResult r = m.resolve(device, kernel, global, max_items);
  m.cache.emplace(m.key, r);
  return r;
}

void Lookup::clear_cache() { impl_->cache.clear(); }
std::size_t Lookup::cache_size() const { return impl_->cache.size(); }
Store& Lookup::store() const noexcept { return *impl_->store; }

}  // namespace wstune

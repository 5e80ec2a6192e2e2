// The look-up chain for tuning-parameter configurations (best_configuration.hpp).
#include "session/best_configuration.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "session/tune_session.hpp"
#include "store/stored_chain.hpp"
#include "tuning_file/tuning_file.hpp"
#include "wstune/error.hpp"

namespace wstune {

namespace {

// True when every parameter of `spec` has a value in `params`, among its Values, and nothing else is named.
bool known_values(const KernelSpec& spec, const nlohmann::json& params) {
  const auto& ps = spec.tuning_parameters();
  if (!params.is_object() || params.size() != ps.size()) return false;
  return std::all_of(ps.begin(), ps.end(), [&](const TuningParameter& t) {
    const auto it = params.find(t.name);
    return it != params.end() && std::find(t.values.begin(), t.values.end(), *it) != t.values.end();
  });
}

StoredConfiguration ready(const KernelSpec& spec, const Problem& p, Configuration c, LookupLevel level) {
  StoredConfiguration s;
  s.build_options = "-cl-std=CL1.2";
  for (const std::string& part : {spec.build_options(with_params(p, c.params)), define_options(c.params)})
    if (!part.empty()) s.build_options += " " + part;
  s.config = std::move(c);
  s.level = level;
  return s;
}

}  // namespace

std::optional<Configuration> configuration_at(const KernelSpec& spec, const Problem& p, const DeviceInfo& device,
                                              const nlohmann::json& params, const LocalSize& local) {
  if (!known_values(spec, params)) return std::nullopt;
  try {
    const Problem q = with_params(p, params);
    if (!spec.satisfies_constraints(q)) return std::nullopt;
    const Extent global = spec.global_size(q);
    LocalSize l = spec.parameter_local(q);
    if (!l) l = local;
    if (!l && !spec.null_local_allowed()) return std::nullopt;
    const KernelFit fit{0, spec.guards_bounds() ? Remainder::pad : Remainder::divide};
    if (!local_fits(l, global, device, fit)) return std::nullopt;
    return Configuration{params, l};
  } catch (const UsageError&) {  // an NDRange or condition that does not evaluate at this size
    return std::nullopt;
  }
}

std::optional<StoredConfiguration> stored_configuration(const Store& store, const KernelSpec& spec, const Problem& p,
                                                        const DeviceInfo& device) {
  const KernelKey key = kernel_key(spec);
  BestFilter f;
  f.device = device.fingerprint();
  f.kernel = key.name;
  for (const BestConfig& b : store.best_configs(f)) {  // newest first
    if (!(b.kernel == key) || b.problem.size_text != p.text) continue;
    StoredConfiguration s = ready(spec, p, Configuration{b.params, b.local}, LookupLevel::exact);
    s.row = b;
    return s;
  }
  return std::nullopt;
}

StoredConfiguration best_configuration(const Store* store, const KernelSpec& spec, const Problem& p,
                                       const DeviceInfo& device, const LookupOptions& options) {
  if (store) {
    if (auto s = stored_configuration(*store, spec, p, device)) return *s;
    const StoredChainTests tests{
        [](const BestConfig&) { return false; },  // the size text decides the exact level (above)
        [&](const BestCandidate& c) {
          if (!beat_baseline(c, options.min_speedup)) return false;
          const auto row = store->best_by_id(c.id);
          return row && configuration_at(spec, p, device, row->params, row->local).has_value();
        }};
    if (auto r = stored_chain(*store, device, kernel_key(spec), spec.problem_extent(p), options.max_distance, tests)) {
      StoredConfiguration s =
          ready(spec, p, *configuration_at(spec, p, device, r->from.params, r->from.local), r->level);
      s.row = std::move(r->from);
      s.distance = r->distance;
      return s;
    }
  }
  const TuningFile* file = tuning_file_of(spec);
  const auto& ps = spec.tuning_parameters();
  const auto valid = [&](const nlohmann::json& params) {
    return configuration_at(spec, p, device, params, std::nullopt).has_value();
  };
  if (file && std::any_of(file->defaults.begin(), file->defaults.end(), [](const auto& d) { return d.has_value(); })) {
    if (auto params = first_valid_params(ps, spec.parameter_constraints(p), file->defaults, valid))
      return ready(spec, p, *configuration_at(spec, p, device, *params, std::nullopt), LookupLevel::defaults);
  }
  if (auto c = configuration_at(spec, p, device, spec.reference_params(), std::nullopt))
    return ready(spec, p, std::move(*c), LookupLevel::reference);
  if (auto params = first_valid_params(ps, spec.parameter_constraints(p), {}, valid))
    return ready(spec, p, *configuration_at(spec, p, device, *params, std::nullopt), LookupLevel::reference);
  throw UsageError(
      fmt::format("{} at size {}: no configuration of its tuning parameters is valid on {} ({}); "
                  "pick another size",
                  spec.name(), p.text, device.name, ps.empty() ? "the kernel's NDRange" : "Conditions"));
}

}  // namespace wstune

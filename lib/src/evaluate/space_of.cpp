// The configurations of a kernel on a target (make_search_space): local
// sizes by the paper's rule, or tuning parameter combinations under the
// kernel's constraints with the local sizes each runs with.
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "evaluate/trial.hpp"
#include "space/rules.hpp"
#include "space/solver.hpp"
#include "wstune/error.hpp"

namespace wstune {

namespace {

// The local sizes a search tries on `target`: within the device's limits,
// not the build's CL_KERNEL_WORK_GROUP_SIZE. NVIDIA's OpenCL answers 256
// for every kernel on the H100, whatever its build, yet launches and runs
// larger groups
// (issue 36: 320 work-items of vector_add); a driver that refuses a group
// gives the trial status constraints (DeviceRunner::run). The paper's rule
// and the app's look-ups stay within the build's value.
std::vector<Extent> launchable_shapes(const TuneTarget& target) {
  SpaceLimits device = target.limits;
  device.kernel_work_group_size = 0;
  return enumerate_local_sizes(target.global, device);
}

}  // namespace

SearchSpace make_search_space(const KernelSpec& spec, const Problem& p, const Block& b, const TuneTarget& target) {
  // The baseline's parameters: the kernel's reference configuration, or the
  // one that replaced it on this device (TuneTarget::reference_params).
  const Problem ref =
      with_params(p, target.reference_params.empty() ? spec.reference_params() : target.reference_params);
  const bool null_ok = spec.null_local_allowed();
  const auto base_shapes = enumerate_local_sizes(target.global, target.limits);
  const LocalSize rule_shape = paper_rule(target.global, base_shapes, target.priority, target.pe_per_cu);
  if (spec.tuning_parameters().empty() && null_ok) return SearchSpace(launchable_shapes(target), rule_shape);
  // With parameters: the combinations the constraints allow (solved, never
  // enumerated), then the local sizes each runs with. Device limits known
  // before a build leave configurations out; the built kernel's limits are
  // checked per trial.
  const auto& params = spec.tuning_parameters();
  std::vector<std::uint32_t> sizes;
  for (const auto& tp : params) {
    if (tp.values.empty()) throw UsageError(fmt::format("tuning parameter {} has no values", tp.name));
    sizes.push_back(static_cast<std::uint32_t>(tp.values.size()));
  }
  // The local sizes of a combination of values (of every parameter; those
  // not in ndrange_parameters() are never read).
  auto compute = [&](std::span<const std::uint32_t> idx, std::vector<LocalSize>& out) {
    nlohmann::json values = nlohmann::json::object();
    for (std::size_t k = 0; k < params.size(); ++k) values[params[k].name] = params[k].values[idx[k]];
    const Problem pp = with_params(p, values);
    const Extent g = spec.block_global(pp, b);
    if (const LocalSize fixed = spec.parameter_local(pp)) {
      if (fits(*fixed, g, target.limits)) out.push_back(fixed);
      return;
    }
    if (null_ok) out.emplace_back(std::nullopt);
    for (const Extent& e : enumerate_local_sizes(g, target.limits)) out.emplace_back(e);
  };
  // Computed once per combination of the parameters the NDRange and the
  // local size read (all of them when the kernel does not say).
  const auto deps = spec.ndrange_parameters();
  std::unordered_map<std::string, std::vector<LocalSize>> memo;
  std::string key;
  auto locals = [&](std::span<const std::uint32_t> idx, std::vector<LocalSize>& out) {
    if (!deps) return compute(idx, out);
    key.clear();
    for (std::uint32_t k : *deps) key.append(reinterpret_cast<const char*>(&idx[k]), sizeof(std::uint32_t));
    auto it = memo.find(key);
    if (it == memo.end()) {
      std::vector<LocalSize> l;
      compute(idx, l);
      it = memo.emplace(key, std::move(l)).first;
    }
    out.assign(it->second.begin(), it->second.end());
  };
  if (!spec.satisfies_constraints(ref)) {
    throw UsageError(
        fmt::format("{}: the reference configuration ({}) violates the constraints; name one that "
                    "satisfies them (the wstune extension's ReferenceConfiguration)",
                    spec.name(), to_string(Configuration{ref.params, std::nullopt})));
  }
  // The baseline: the reference parameters with the driver's choice (or the
  // local size they set; a kernel that cannot run NULL takes the paper's rule).
  LocalSize base_local = spec.parameter_local(ref);
  if (!base_local && !null_ok)
    base_local = rule_shape ? rule_shape : LocalSize(base_shapes.empty() ? Extent{} : base_shapes.front());
  std::optional<Configuration> rule;
  if (!spec.parameter_local(ref) && rule_shape && rule_shape != base_local)
    rule = Configuration{ref.params, rule_shape};
  ParameterSets sets = SpaceSolver(std::move(sizes), spec.parameter_constraints(p)).solve();
  const Configuration baseline{ref.params, base_local};
  if (deps && deps->empty()) {  // one list for every set, computed once
    std::vector<LocalSize> every;
    if (!sets.empty()) compute(sets.row(0), every);
    return SearchSpace(params, std::move(sets), std::move(every), baseline, rule);
  }
  return SearchSpace(params, std::move(sets), locals, baseline, rule);
}

}  // namespace wstune

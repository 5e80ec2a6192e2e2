// The configurations of a kernel on a target (make_search_space): local
// sizes by the paper's rule, or tuning parameter combinations under the
// kernel's constraints with the local sizes each runs with.
#include <fmt/format.h>

#include "evaluate/trial.hpp"
#include "space/rules.hpp"
#include "wstune/error.hpp"

namespace wstune {

SearchSpace make_search_space(const KernelSpec& spec, const Problem& p, const Block& b, const TuneTarget& target) {
  // The baseline's parameters: the kernel's reference configuration, or the
  // one that replaced it on this device (TuneTarget::reference_params).
  const Problem ref =
      with_params(p, target.reference_params.empty() ? spec.reference_params() : target.reference_params);
  const bool null_ok = spec.null_local_allowed();
  const auto base_shapes = enumerate_local_sizes(target.global, target.limits);
  const LocalSize rule_shape = paper_rule(target.global, base_shapes, target.priority, target.pe_per_cu);
  if (spec.tuning_parameters().empty() && null_ok) return SearchSpace(base_shapes, rule_shape);
  // With parameters: the constraints first, then the local sizes each
  // combination runs with. Device limits known before a build leave
  // configurations out; the built kernel's limits are checked per trial.
  auto locals = [&](const nlohmann::json& params) -> std::vector<LocalSize> {
    const Problem pp = with_params(p, params);
    if (!spec.satisfies_constraints(pp)) return {};
    const Extent g = spec.block_global(pp, b);
    if (const LocalSize fixed = spec.parameter_local(pp)) {
      if (!fits(*fixed, g, target.limits)) return {};
      return {fixed};
    }
    std::vector<LocalSize> out;
    if (null_ok) out.emplace_back(std::nullopt);
    for (const Extent& e : enumerate_local_sizes(g, target.limits)) out.emplace_back(e);
    return out;
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
  return SearchSpace(spec.tuning_parameters(), locals, Configuration{ref.params, base_local}, rule);
}

}  // namespace wstune

// What an evaluator measures (TuneTarget): the problem's NDRange, the
// device's and the built kernel's limits, and the device model.
#include <string>

#include "evaluate/trial.hpp"

namespace wstune {

TuneTarget device_tune_target(const DeviceInfo& info, std::size_t kernel_work_group_size,
                              std::uint64_t kernel_local_mem_bytes) {
  TuneTarget t;
  t.limits.max_work_group_size = info.max_work_group_size;
  t.limits.kernel_work_group_size = kernel_work_group_size;
  t.limits.max_work_item_sizes = info.max_work_item_sizes;
  t.limits.local_mem_bytes = info.local_mem_bytes;
  t.limits.kernel_local_mem_bytes = kernel_local_mem_bytes;
  t.pe_per_cu = info.pe_per_cu;
  t.device_name = info.name;
  t.device_id = info.id();
  t.device_fingerprint = info.fingerprint();
  t.device = info;
  return t;
}

TuneTarget make_tune_target(const KernelSpec& spec, const DeviceInfo& info, std::size_t kernel_work_group_size,
                            std::uint64_t kernel_local_mem_bytes, const Problem& p, const Block& b) {
  const Problem ref = with_params(p, spec.reference_params());
  // With tuning parameters every parameter set is a program of its own, with
  // its own CL_KERNEL_WORK_GROUP_SIZE and local memory: one build's limits
  // (the reference's) must not bound the others' local sizes. Each
  // configuration's own build is checked when it runs
  // (DeviceRunner::check_local: above its own limit, status constraints).
  if (!spec.tuning_parameters().empty()) kernel_work_group_size = 0, kernel_local_mem_bytes = 0;
  TuneTarget t = device_tune_target(info, kernel_work_group_size, kernel_local_mem_bytes);
  t.kernel = std::string(spec.name());
  t.size = p.text;
  t.global = spec.block_global(ref, b);
  t.problem = spec.tuning_parameters().empty() ? t.global : spec.problem_extent(ref);
  t.priority = spec.priority();
  t.limits.any_shape = spec.guards_bounds() || info.non_uniform_work_groups;
  return t;
}

void apply_reference(TuneTarget& target, const KernelSpec& spec, const Problem& p, const Block& b,
                     const ReferenceChoice& choice) {
  target.rejected_references.clear();
  for (const auto& [params, why] : choice.rejected) target.rejected_references.push_back(params);
  if (choice.params.empty() || choice.params == spec.reference_params()) {
    target.reference_params = nlohmann::json::object();
    return;
  }
  target.reference_params = choice.params;
  const Problem ref = with_params(p, choice.params);
  target.global = spec.block_global(ref, b);
  target.problem = spec.tuning_parameters().empty() ? target.global : spec.problem_extent(ref);
}

TuneTarget make_tune_target(DeviceRunner& runner, const Problem& p, const Block& b) {
  return make_tune_target(runner.spec(), runner.device().info, runner.kernel_work_group_size(),
                          runner.kernel_local_mem_bytes(), p, b);
}

}  // namespace wstune

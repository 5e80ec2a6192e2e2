#include "split_plan.hpp"

#include <fmt/format.h>

#include "wstune/error.hpp"
#include "wstune/split.hpp"

namespace wstune::daemon {

unsigned split_dim(const KernelSpec& spec, const std::string& direction) {
  if (direction == "x") return 0;
  if (direction == "y") {
    if (spec.dims() < 2) {
      throw UsageError(fmt::format("split direction y on the 1-D kernel {}: use auto or x", spec.name()));
    }
    return 1;
  }
  return spec.dims() == 2 ? 1 : 0;
}

std::vector<double> split_fractions(const std::string& model, const KernelSpec& spec, const Problem& p,
                                    unsigned, const std::vector<SplitWorker>& workers) {
  const std::size_t n = workers.size();
  if (n == 0) return {};
  std::vector<std::uint64_t> pe;
  for (const auto& w : workers) pe.push_back(w.device.total_pe());
  if (model == "even") return std::vector<double>(n, 1.0 / static_cast<double>(n));
  if (model == "proportional") return proportional_fractions(pe);
  if (model == "pe-ratio") return pe_ratio_fractions(pe, spec.compute_amount(p));
  throw UsageError(fmt::format("split model '{}' has no fixed fractions: use even, proportional, pe-ratio or "
                               "measured", model));
}

SplitPlan plan_split(const std::string& model, const std::string& direction, const KernelSpec& spec,
                     const Problem& p, const std::vector<SplitWorker>& workers, unsigned kernel_runs) {
  SplitPlan plan;
  plan.model = model;
  plan.dim = split_dim(spec, direction);
  const std::size_t total = spec.split_units(p, plan.dim);
  std::size_t g = 16 * spec.units_per_work_item();
  if (total % g != 0) g = split_granularity(spec, plan.dim, std::nullopt);
  // Neither divides (an odd-length sort: 2 elements per work-item): blocks of
  // any length still run, since sort pads each block to a power of two and
  // every other kernel has one unit per work-item (issue 17).
  if (total % g != 0) g = 1;
  const std::vector<std::size_t> granularity(workers.size(), g);
  if (model == "measured") {
    Calibration cal;
    cal.kernel = std::string(spec.name());
    cal.size = p.text;
    cal.dim = plan.dim;
    for (const auto& w : workers) {
      if (w.calibration.is_null()) {
        throw UsageError(fmt::format("split model measured: no calibration of {} for {} on worker rank {} ({}); "
                                     "run 'mpiexec ... wstuned calibrate' with the same jobs first",
                                     spec.name(), p.text, w.rank, w.device.name));
      }
      cal.devices.push_back(device_calibration_from_json(w.calibration));
    }
    cal = for_kernel_runs(std::move(cal), kernel_runs);
    for (std::size_t i = 0; i < workers.size(); ++i) cal.devices[i].fixed_ms = workers[i].fixed_ms;
    plan.blocks = measured_blocks(cal, total, plan.dim, granularity, [&](std::size_t, std::size_t units) {
      return units == 0 ? 0.0 : static_cast<double>(spec.block_global(p, Block{plan.dim, 0, units}).count());
    });
    plan.fractions = block_fractions(plan.blocks, total);
    return plan;
  }
  plan.fractions = split_fractions(model, spec, p, plan.dim, workers);
  plan.blocks = align_blocks(plan.fractions, total, plan.dim, granularity);
  return plan;
}

std::optional<double> observed_fixed_ms(const KernelSpec& spec, const Problem& p, const SplitWorker& w, unsigned dim,
                                        const Block& b, unsigned kernel_runs, double answer_ms) {
  if (w.calibration.is_null() || b.size() == 0) return std::nullopt;
  DeviceCalibration d = for_kernel_runs(device_calibration_from_json(w.calibration), kernel_runs);
  observe_job(d, static_cast<double>(spec.block_global(p, Block{dim, 0, b.size()}).count()), answer_ms);
  return d.fixed_ms;
}

}  // namespace wstune::daemon

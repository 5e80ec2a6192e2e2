// The blocks of a split model from the devices' PEs, planning local sizes
// and (measured) calibrations: what `wstune split` and wstuned both plan with.
#include "split/model_blocks.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "kernel/kernel.hpp"
#include "wstune/error.hpp"

namespace wstune {

double slice_work_items(const KernelSpec& spec, const Problem& p, unsigned dim, std::size_t units) {
  if (units == 0) return 0;
  return static_cast<double>(spec.block_global(p, Block{dim, 0, units}).count());
}

std::vector<double> model_fractions(SplitModel model, const KernelSpec& spec, const Problem& p,
                                    const std::vector<std::uint64_t>& total_pe) {
  switch (model) {
    case SplitModel::pe_ratio:
      return pe_ratio_fractions(total_pe, spec.compute_amount(p));
    case SplitModel::proportional:
      return proportional_fractions(total_pe);
    case SplitModel::even:
      if (total_pe.empty()) throw UsageError("split: no devices given; name at least one");
      return std::vector<double>(total_pe.size(), 1.0 / static_cast<double>(total_pe.size()));
    case SplitModel::measured:
      break;
  }
  throw UsageError(fmt::format("split model {} has no fixed fractions: it plans from a calibration", to_string(model)));
}

namespace {

// The blocks of `model` over the first `units` split units (a multiple of
// the kernel's slice multiple).
std::vector<Block> aligned_blocks(SplitModel model, const KernelSpec& spec, const Problem& p, unsigned dim,
                                  std::size_t units, const std::vector<std::uint64_t>& total_pe,
                                  const std::vector<std::size_t>& granularity, const Calibration* cal,
                                  const SliceWorkItems& work_items) {
  if (model != SplitModel::measured)
    return align_blocks(model_fractions(model, spec, p, total_pe), units, dim, granularity);
  if (!cal) throw UsageError("the measured split model needs a calibration; calibrate the devices first");
  const SliceWorkItems work =
      work_items ? work_items : [&](std::size_t, std::size_t u) { return slice_work_items(spec, p, dim, u); };
  return measured_blocks(*cal, units, dim, granularity, work);
}

// `blocks` with the last device that has a block (else the last device)
// extended by `tail` units.
std::vector<Block> with_tail(const std::vector<Block>& blocks, unsigned dim, std::size_t tail) {
  Shares units = block_units(blocks);
  const auto last = std::find_if(units.rbegin(), units.rend(), [](std::size_t u) { return u > 0; });
  *(last == units.rend() ? units.rbegin() : last) += tail;
  return shares_blocks(dim, units);
}

}  // namespace

std::vector<Block> model_blocks(SplitModel model, const KernelSpec& spec, const Problem& p, unsigned dim,
                                const std::vector<std::uint64_t>& total_pe, const std::vector<LocalSize>& locals,
                                const Calibration* cal, const SliceWorkItems& work_items) {
  if (total_pe.size() != locals.size() || total_pe.empty()) {
    throw UsageError(fmt::format("split: {} devices but {} planning local sizes; give one per device", total_pe.size(),
                                 locals.size()));
  }
  const std::size_t total = spec.split_units(p, dim);
  const std::size_t tail = total % std::max<std::size_t>(1, spec.slice_multiple(p, dim));
  const auto granularity = split_granularities(spec, p, dim, locals);
  const auto blocks = aligned_blocks(model, spec, p, dim, total - tail, total_pe, granularity, cal, work_items);
  return tail ? with_tail(blocks, dim, tail) : blocks;
}

}  // namespace wstune

#pragma once
/// @file model_blocks.hpp
/// The blocks of a split model from what the devices are, with no device at
/// hand: the one planner behind `wstune split` (SplitSession, through the
/// runner's model_blocks() in multi_device.hpp) and wstuned's master
/// (plan_split()), so both paths cut one job alike. Pure functions (no
/// OpenCL calls). See docs/split.md, "Models" and "Alignment".

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "split/split.hpp"
#include "wstune/types.hpp"

namespace wstune {

class KernelSpec;
struct Problem;

/// The NDRange size (work-items) of an n-unit slice of `p` along `dim`
/// (KernelSpec::block_global; 0 for 0 units), for measured_blocks().
double slice_work_items(const KernelSpec& spec, const Problem& p, unsigned dim, std::size_t units);

/// The NDRange size (work-items) of an n-unit slice on device i, for the
/// measured model.
using SliceWorkItems = std::function<double(std::size_t device, std::size_t units)>;

/// The fractions of `model` (not measured) for devices with these total PEs
/// (DeviceInfo::total_pe), in their order: pe_ratio_fractions() with the
/// kernel's compute amount for `p`, proportional_fractions(), or 1/n each
/// for even. Throws UsageError for measured (it has no fixed fractions), no
/// devices or a device of 0 PEs (pe-ratio, proportional).
std::vector<double> model_fractions(SplitModel model, const KernelSpec& spec, const Problem& p,
                                    const std::vector<std::uint64_t>& total_pe);

/// The blocks `model` gives a split of `p` along `dim` over devices with
/// total PEs `total_pe` and planning local sizes `locals` (one each, in
/// device order; an empty LocalSize is the driver's choice, which is also
/// the planning local size of a device whose local size is chosen per
/// block afterwards: the paper's rule, a search). Each device's slice is a
/// multiple of its granularity, split_granularities(spec, p, dim, locals).
/// pe-ratio, proportional and even: model_fractions() through
/// align_blocks(); measured: measured_blocks() over `cal` (one device
/// calibration per device, required then) with `work_items` (empty:
/// slice_work_items() of `p`). A range that is no multiple of the kernel's
/// slice multiple (KernelSpec::slice_multiple: an odd-length sort, 2
/// elements per work-item) is planned without its last partial step, which
/// then goes to the last device with a block: that block ends where the
/// whole range ends, as the whole problem does. Blocks are contiguous, in
/// device order, and tile the range. Throws UsageError as
/// model_fractions(), align_blocks() and measured_blocks() do, and when the
/// sizes differ or measured has no calibration.
std::vector<Block> model_blocks(SplitModel model, const KernelSpec& spec, const Problem& p, unsigned dim,
                                const std::vector<std::uint64_t>& total_pe, const std::vector<LocalSize>& locals,
                                const Calibration* cal = nullptr, const SliceWorkItems& work_items = {});

}  // namespace wstune

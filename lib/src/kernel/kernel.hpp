#pragma once
/// @file kernel.hpp
/// Host-side kernel descriptors: everything wstune needs to build, run, split
/// and verify a kernel — its source, tuning parameters, NDRange, buffers,
/// inputs, CPU reference and verification. wstune's four kernels (matmul,
/// bilinear, sort, trapezoid) and kernels described by a T1 tuning file
/// (tuning_file.hpp) implement the same interface, so tuning, running,
/// splitting and storing have one code path.
/// Source: paper Table 3 (kernels and sizes), §3.1.1 (row-block split),
/// §3.1.2 (compute amount), §3.2.3 (x-/y-priority); TuningSchema T1
/// (KernelSpecification).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CL/opencl.hpp>
#include <nlohmann/json.hpp>

#include "kernel/host_buffer.hpp"
#include "space/solver.hpp"
#include "wstune/configuration.hpp"
#include "wstune/types.hpp"

namespace wstune {

namespace expr {
class Env;
}  // namespace expr

/// A user metric of a tuning file (wstune.Metrics, docs/energy.md): a name
/// and an expression over the tuning parameters, the problem's sizes and the
/// measured time (ms) and energy (J).
struct UserMetric {
  std::string name;        ///< e.g. "GFLOP/s"
  std::string expression;  ///< e.g. "2 * ProblemSize[0]**3 / time / 1e6"
};

/// A parsed problem size for one kernel, and the tuning parameter values it
/// runs with. `n` holds the kernel's numbers (matmul {M, N, K}; bilinear
/// {in_w, in_h, out_w, out_h}; sort {n}; trapezoid {intervals}; a described
/// kernel its T1 ProblemSize); `text` is the canonical spelling.
struct Problem {
  std::string kernel;          ///< kernel name
  std::vector<std::size_t> n;  ///< kernel-specific numbers, see above
  std::string text;            ///< canonical size text, e.g. "1000x1000x1000"
  /// The tuning parameter values (a configuration's params) the kernel is
  /// built and launched with; {} for kernels without parameters.
  nlohmann::json params = nlohmann::json::object();
  friend bool operator==(const Problem&, const Problem&) = default;
};

/// `p` with its tuning parameter values set to `params`.
Problem with_params(Problem p, const nlohmann::json& params);

/// The outcome of verifying an output against the CPU reference.
struct Verdict {
  bool ok = false;       ///< within tolerance
  double max_error = 0;  ///< the measured error (kernel-specific metric, see detail)
  double tolerance = 0;  ///< the bound it is compared with
  std::string detail;    ///< what was compared, e.g. "max relative error over 1e6 elements"
};

/// One device buffer a kernel writes, for one block.
struct OutputBuffer {
  ElementType type = kFloat32;   ///< element type
  std::size_t device_count = 0;  ///< elements allocated on the device
  std::size_t read_count = 0;    ///< elements read back after the runs (≤ device_count)
  /// In place: the buffer starts as this block input (an index into
  /// KernelSpec::block_inputs()) instead of being allocated empty, and that
  /// input gets no buffer of its own (T1 AccessType ReadWrite).
  std::optional<std::size_t> from_input;
  /// Re-upload the initial contents before every run, so each run starts from
  /// the same inputs (a kernel such as y = a·x + y); not needed by a kernel
  /// whose repeated runs give the same output (sort's network on sorted data).
  bool restore_each_run = false;
  /// Element where the read-back starts (a slice of a buffer that a kernel
  /// indexes absolutely); 0 for compact block outputs.
  std::size_t read_offset = 0;
};

/// Where a block input sits in its device buffer: the buffer holds
/// `device_count` elements and the input's data starts at element `offset`
/// (a described kernel indexes its buffers absolutely, so a slice's range is
/// placed where it lies in the whole buffer).
struct InputPlacement {
  std::size_t offset = 0;        ///< first element of the data in the device buffer
  std::size_t device_count = 0;  ///< elements of the device buffer (≥ offset + data size)
};

/// Where a block's output lies in the whole output: one contiguous run from
/// `offset` (row == 0), or rows of `row` elements whose starts are `pitch`
/// elements apart (a column block of a row-major image), the block's
/// read_count elements being those rows back to back.
struct OutputPlace {
  std::size_t offset = 0;  ///< element of the whole output where the block's first element goes
  std::size_t row = 0;     ///< elements per row (0: one contiguous run)
  std::size_t pitch = 0;   ///< elements between row starts in the whole output (with row > 0)
};

/// One kernel's host-side descriptor. Implementations are immutable and
/// thread-safe; get wstune's own from kernel_spec(), described kernels from a
/// tuning file (tuning_file.hpp).
class KernelSpec {
 public:
  virtual ~KernelSpec() = default;

  // ---- identity --------------------------------------------------------------
  /// The kernel's name: "matmul", "bilinear", "sort", "trapezoid", or a
  /// described kernel's (its T1 KernelName).
  [[nodiscard]] virtual std::string_view name() const = 0;
  /// One line for people.
  [[nodiscard]] virtual std::string_view description() const = 0;
  /// How a size is written, for help and error messages.
  [[nodiscard]] virtual std::string_view size_syntax() const = 0;
  /// The OpenCL C source (embedded at build time from kernels/NAME.cl for
  /// wstune's own kernels; read from the T1 KernelFile for described ones).
  [[nodiscard]] virtual std::string_view source() const;
  /// The source's file name for messages ("matmul.cl").
  [[nodiscard]] virtual std::string source_name() const;
  /// The __kernel function to run.
  [[nodiscard]] virtual std::string_view entry_point() const = 0;
  /// NDRange dimensions: 1, 2 or 3.
  [[nodiscard]] virtual unsigned dims() const = 0;
  /// The paper's priority (x for matmul, y for bilinear, none for 1-D).
  [[nodiscard]] virtual Priority priority() const = 0;

  // ---- tuning parameters ------------------------------------------------------
  /// The tuning parameters (T1 TuningParameters); none for wstune's own kernels.
  [[nodiscard]] virtual const std::vector<TuningParameter>& tuning_parameters() const;
  /// True when p.params satisfy the kernel's constraints (T1 Conditions);
  /// true without parameters. Throws UsageError when a constraint cannot be
  /// evaluated (naming it).
  [[nodiscard]] virtual bool satisfies_constraints(const Problem& /*p*/) const { return true; }
  /// The constraints for the space solver (space/solver.hpp) with p's
  /// sizes: the same rule as satisfies_constraints(), split by the
  /// parameters each part reads. A described kernel gives one per T1
  /// Condition, compiled; by default one constraint over every parameter
  /// that calls satisfies_constraints() (correct for any kernel, checked only
  /// once all parameters are bound).
  [[nodiscard]] virtual std::vector<Constraint> parameter_constraints(const Problem& p) const;
  /// The tuning parameters (indices into tuning_parameters(), ascending)
  /// that block_global() and parameter_local() read: configurations that
  /// agree on them run the same NDRange and local size, so a search space
  /// computes its local sizes once per combination of these
  /// (make_search_space()). nullopt: unknown, any parameter (the default).
  [[nodiscard]] virtual std::optional<std::vector<std::uint32_t>> ndrange_parameters() const { return std::nullopt; }
  /// Build options for p.params (a described kernel's T1 CompilerOptions),
  /// without the -cl-std option the runner adds and without the parameters'
  /// values (source_defines()); "" for none.
  [[nodiscard]] virtual std::string build_options(const Problem& /*p*/) const { return {}; }
  /// Lines the runner puts before source() when it builds p.params' program:
  /// a described kernel's tuning parameters as `#define NAME VALUE` lines
  /// (define_lines()), so they follow the OpenCL implementation's implicit
  /// header as Kernel Tuner's do and no parameter name (`read_only`) can
  /// break it, as `-D read_only=0` does; "" for none. The kernel's identity
  /// in the store (source hash, options) is of source() alone: these values
  /// belong to each configuration.
  [[nodiscard]] virtual std::string source_defines(const Problem& /*p*/) const { return {}; }
  /// The local size p.params set (T1 LocalSize), or nullopt when the local
  /// size is searched (wstune's kernels, and tuning files that leave it to
  /// the tuner).
  [[nodiscard]] virtual LocalSize parameter_local(const Problem& /*p*/) const { return std::nullopt; }
  /// True when the kernel returns early for work-items beyond its NDRange, so
  /// the runner may round the NDRange up to a multiple of any local size.
  [[nodiscard]] virtual bool guards_bounds() const { return false; }
  /// False when the kernel cannot run with the driver's choice (NULL): a
  /// __local argument sized from the local size needs an explicit one.
  [[nodiscard]] virtual bool null_local_allowed() const { return true; }
  /// The parameter values of the reference configuration (the baseline that
  /// every measured configuration is compared with): {} without parameters.
  [[nodiscard]] virtual nlohmann::json reference_params() const { return nlohmann::json::object(); }

  // ---- sizes ------------------------------------------------------------------
  /// Parses a size; throws UsageError naming the text, the syntax and why
  /// (e.g. a zero or a size too large for 32-bit indexing).
  [[nodiscard]] virtual Problem parse_size(std::string_view text) const = 0;
  /// The paper's Table 3 size (a described kernel: its file's ProblemSize).
  [[nodiscard]] virtual Problem paper_size() const = 0;
  /// How many times the paper repeats the kernel (§3.1.1; 1 if not given).
  [[nodiscard]] virtual unsigned paper_repetitions() const = 0;

  /// Split units along dimension `dim` for the whole problem: output columns
  /// (dim 0) or rows (dim 1) for 2-D kernels, elements (sort) or work-items
  /// (trapezoid) for 1-D ones.
  [[nodiscard]] virtual std::size_t split_units(const Problem& p, unsigned dim) const = 0;
  /// The block that is the whole problem, split along `dim`.
  [[nodiscard]] Block whole(const Problem& p, unsigned dim = 0) const;
  /// The NDRange (global work size, work-items) that runs `block` with
  /// p.params, before any rounding up to the local size.
  [[nodiscard]] virtual Extent block_global(const Problem& p, const Block& b) const = 0;
  /// The NDRange of the whole problem.
  [[nodiscard]] Extent global_size(const Problem& p) const { return block_global(p, whole(p)); }
  /// The problem's extent for the store and the look-up chain (ProblemKey):
  /// the whole NDRange by default; a described kernel's problem size.
  [[nodiscard]] virtual Extent problem_extent(const Problem& p) const { return global_size(p); }
  /// Work-items per split unit along the split dimension (sort: 1/2, as a
  /// ratio num/den); used to keep slices multiples of the local size.
  [[nodiscard]] virtual std::size_t units_per_work_item() const { return 1; }
  /// Split units a slice along `dim` must be a multiple of with p.params,
  /// before the local size (split_granularity()): units_per_work_item() by
  /// default; a described kernel's wstune.Split.Granularity.
  [[nodiscard]] virtual std::size_t slice_multiple(const Problem& /*p*/, unsigned /*dim*/) const {
    return units_per_work_item();
  }

  /// The kernel's user metrics (a tuning file's wstune.Metrics), by name;
  /// none by default.
  [[nodiscard]] virtual std::vector<UserMetric> user_metrics() const { return {}; }
  /// The names a user metric reads besides the measurements, for problem `p`
  /// with its parameter values: the tuning parameters, ProblemSize and the
  /// size variables. Default: p.params only.
  [[nodiscard]] virtual std::unique_ptr<expr::Env> metric_env(const Problem& p) const;

  /// Arithmetic operations (add, sub, mul, div, compare) one work-item does,
  /// counted in the kernel's source loop as documented per kernel (paper §3.1.2).
  [[nodiscard]] virtual double ops_per_work_item(const Problem& p) const = 0;
  /// The paper's compute amount C = work-items × ops per work-item ×
  /// paper_repetitions() (§3.1.2).
  [[nodiscard]] double compute_amount(const Problem& p) const;

  // ---- data ---------------------------------------------------------------------
  /// Seeded input generation (the same seed gives the same bytes everywhere):
  /// the whole problem's input data, one buffer per input.
  [[nodiscard]] virtual std::vector<HostBuffer> generate_inputs(const Problem& p, std::uint64_t seed) const = 0;
  /// False when the kernel has no CPU reference (a described kernel whose file
  /// gives no ReferenceArguments): its outputs are compared with those of the
  /// reference configuration instead.
  [[nodiscard]] virtual bool has_reference() const { return true; }
  /// The CPU reference of the whole outputs, one buffer per output (the
  /// order of empty_outputs()). Throws Error when has_reference() is false.
  [[nodiscard]] virtual std::vector<HostBuffer> reference(const Problem& p,
                                                          const std::vector<HostBuffer>& inputs) const = 0;
  /// Compares the whole outputs with the reference; the method and tolerance
  /// are the kernel's.
  [[nodiscard]] virtual Verdict verify(const Problem& p, const std::vector<HostBuffer>& outputs,
                                       const std::vector<HostBuffer>& ref) const = 0;

  /// The input data a device needs to run `b`, one buffer per device input
  /// buffer, in the order set_args() binds them: views of `inputs`
  /// (HostBuffer::view, no copy), valid while `inputs` lives unchanged; copy
  /// them to keep them longer.
  [[nodiscard]] virtual std::vector<HostBuffer> block_inputs(const Problem& p, const std::vector<HostBuffer>& inputs,
                                                             const Block& b) const = 0;
  /// Where each of block_inputs()'s buffers goes on the device; empty (the
  /// default): each at offset 0 in a buffer of its own size.
  [[nodiscard]] virtual std::vector<InputPlacement> input_placement(const Problem& /*p*/, const Block& /*b*/) const {
    return {};
  }
  /// The device buffers `b` writes, in the order set_args() binds them.
  [[nodiscard]] virtual std::vector<OutputBuffer> outputs(const Problem& p, const Block& b) const = 0;
  /// Enqueues the kernel(s) for `b` with local size `local` over the NDRange
  /// `global` (block_global(), rounded up to a multiple of `local` when the
  /// kernel guards its bounds) and returns their events in order (kernel time
  /// = last END − first START), with any device-side preparation of the
  /// block they need (sort fills its block's pad with +inf first,
  /// clEnqueueFillBuffer, OpenCL 1.2 §5.2.2). The default sets the arguments
  /// with set_args() and enqueues once. Throws ClError.
  virtual std::vector<cl::Event> enqueue(cl::CommandQueue& queue, cl::Kernel& kernel, const Problem& p, const Block& b,
                                         const std::vector<cl::Buffer>& in, const std::vector<cl::Buffer>& out,
                                         const LocalSize& local, const Extent& global) const;
  /// The whole outputs, allocated (one buffer per output, zeroed).
  [[nodiscard]] virtual std::vector<HostBuffer> empty_outputs(const Problem& p) const = 0;
  /// Writes `block_out` (one buffer per output, read_count elements each)
  /// into the whole outputs `full`. For the whole block the outputs are the
  /// whole outputs as they are and finish() leaves them so (verification
  /// compares them without placing them).
  virtual void place_block(const Problem& p, const Block& b, const std::vector<HostBuffer>& block_out,
                           std::vector<HostBuffer>& full) const = 0;
  /// Where output `k` of block `b` lies in the whole output `k` (same
  /// element type), so a read-back can land there directly and place_block()
  /// is not needed for it; nullopt (the default) when place_block() must
  /// place it.
  [[nodiscard]] virtual std::optional<OutputPlace> output_place(const Problem& /*p*/, const Block& /*b*/,
                                                                std::size_t /*k*/) const {
    return std::nullopt;
  }
  /// Whether finish() merges the blocks' outputs on the host (sort merges
  /// its sorted runs): each more block costs a host merge pass, so overlapped
  /// runs (MultiDeviceRunner::set_overlap, wstuned's job key overlap) keep
  /// such a kernel's blocks whole. On the H100, sort 4,194,304 as 2 chunks
  /// took 7.2 ms against 4.3 ms whole, 3.9 ms of it the merge
  /// (docs/results/transfers_h100). Default false.
  [[nodiscard]] virtual bool merges_blocks() const { return false; }
  /// Whether a block smaller than the whole range can run (a tuning file
  /// without wstune.Split cannot: its buffers' ranges are unknown). A kernel
  /// that cannot runs whole: overlapped runs keep its block in one chunk, and
  /// a split that gives a device part of it fails naming what is missing.
  /// Default true.
  [[nodiscard]] virtual bool runs_slices() const { return true; }
  /// Combines placed blocks into the final outputs (sort merges the sorted
  /// runs; trapezoid adds the partial sums; others do nothing).
  virtual void finish(const Problem& p, const std::vector<Block>& blocks, std::vector<HostBuffer>& full) const;

 protected:
  /// Sets the kernel arguments for `b` (used by the default enqueue()).
  virtual void set_args(cl::Kernel& kernel, const Problem& p, const Block& b, const std::vector<cl::Buffer>& in,
                        const std::vector<cl::Buffer>& out, const LocalSize& local) const = 0;
};

/// `e` as a cl::NDRange of `dims` dimensions (0: e.dims), for
/// clEnqueueNDRangeKernel's global or local work size (OpenCL 1.2 §5.8).
cl::NDRange ndrange(const Extent& e, unsigned dims = 0);

/// The descriptor for a kernel name; throws UsageError listing the names.
const KernelSpec& kernel_spec(std::string_view name);
/// All kernel names, in the paper's Table 3 order.
std::vector<std::string> kernel_names();
/// Embedded OpenCL C source by file name ("matmul.cl"); throws Error if absent.
std::string_view embedded_kernel_source(std::string_view file);

}  // namespace wstune

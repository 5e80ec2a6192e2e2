#pragma once
/// @file kernel.hpp
/// Host-side kernel descriptors: everything wstune needs to build, run, split
/// and verify one of its OpenCL kernels (matmul, bilinear, sort, trapezoid).
/// Source: paper Table 3 (kernels and sizes), §3.1.1 (row-block split),
/// §3.1.2 (compute amount), §3.2.3 (x-/y-priority).

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <CL/opencl.hpp>

#include "wstune/types.hpp"

namespace wstune {

/// Host data: wstune's kernels read and write float32 only.
using HostBuffer = std::vector<float>;

/// A parsed problem size for one kernel. `n` holds the kernel's numbers
/// (matmul {M, N, K}; bilinear {in_w, in_h, out_w, out_h}; sort {n};
/// trapezoid {intervals}); `text` is the canonical spelling.
struct Problem {
  std::string kernel;          ///< kernel name
  std::vector<std::size_t> n;  ///< kernel-specific numbers, see above
  std::string text;            ///< canonical size text, e.g. "1000x1000x1000"
  friend bool operator==(const Problem&, const Problem&) = default;
};

/// The outcome of verifying an output against the CPU reference.
struct Verdict {
  bool ok = false;         ///< within tolerance
  double max_error = 0;    ///< the measured error (kernel-specific metric, see detail)
  double tolerance = 0;    ///< the bound it is compared with
  std::string detail;      ///< what was compared, e.g. "max relative error over 1e6 elements"
};

/// One kernel's host-side descriptor. Implementations are stateless and
/// thread-safe; get them from kernel_spec().
class KernelSpec {
 public:
  virtual ~KernelSpec() = default;

  /// "matmul", "bilinear", "sort" or "trapezoid".
  [[nodiscard]] virtual std::string_view name() const = 0;
  /// One line for people.
  [[nodiscard]] virtual std::string_view description() const = 0;
  /// How a size is written, for help and error messages.
  [[nodiscard]] virtual std::string_view size_syntax() const = 0;
  /// The OpenCL C source (embedded at build time from kernels/NAME.cl).
  [[nodiscard]] std::string_view source() const;
  /// The __kernel function to run.
  [[nodiscard]] virtual std::string_view entry_point() const = 0;
  /// NDRange dimensions: 1 or 2.
  [[nodiscard]] virtual unsigned dims() const = 0;
  /// The paper's priority (x for matmul, y for bilinear, none for 1-D).
  [[nodiscard]] virtual Priority priority() const = 0;
  /// Parses a size; throws UsageError naming the text, the syntax and why
  /// (e.g. a zero or a size too large for 32-bit indexing).
  [[nodiscard]] virtual Problem parse_size(std::string_view text) const = 0;
  /// The paper's Table 3 size.
  [[nodiscard]] virtual Problem paper_size() const = 0;
  /// How many times the paper repeats the kernel (§3.1.1; 1 if not given).
  [[nodiscard]] virtual unsigned paper_repetitions() const = 0;

  /// Split units along dimension `dim` for the whole problem: output columns
  /// (dim 0) or rows (dim 1) for 2-D kernels, elements (sort) or work-items
  /// (trapezoid) for 1-D ones.
  [[nodiscard]] virtual std::size_t split_units(const Problem& p, unsigned dim) const = 0;
  /// The block that is the whole problem, split along `dim`.
  [[nodiscard]] Block whole(const Problem& p, unsigned dim = 0) const;
  /// The NDRange (global work size, work-items) that runs `block`.
  [[nodiscard]] virtual Extent block_global(const Problem& p, const Block& b) const = 0;
  /// The NDRange of the whole problem.
  [[nodiscard]] Extent global_size(const Problem& p) const { return block_global(p, whole(p)); }
  /// Work-items per split unit along the split dimension (sort: 1/2, as a
  /// ratio num/den); used to keep slices multiples of the local size.
  [[nodiscard]] virtual std::size_t units_per_work_item() const { return 1; }

  /// Arithmetic operations (add, sub, mul, div, compare) one work-item does,
  /// counted in the kernel's source loop as documented per kernel (paper §3.1.2).
  [[nodiscard]] virtual double ops_per_work_item(const Problem& p) const = 0;
  /// The paper's compute amount C = work-items × ops per work-item ×
  /// paper_repetitions() (§3.1.2).
  [[nodiscard]] double compute_amount(const Problem& p) const;

  /// Seeded input generation (the same seed gives the same bytes everywhere).
  [[nodiscard]] virtual std::vector<HostBuffer> generate_inputs(const Problem& p, std::uint64_t seed) const = 0;
  /// The CPU reference of the whole output.
  [[nodiscard]] virtual HostBuffer reference(const Problem& p, const std::vector<HostBuffer>& inputs) const = 0;
  /// Compares a whole output with the reference; the tolerance is per kernel.
  [[nodiscard]] virtual Verdict verify(const Problem& p, const HostBuffer& output, const HostBuffer& ref) const = 0;

  /// The input data a device needs to run `b` (slices of `inputs`), in
  /// argument order. For in-place kernels the first one is the output buffer's
  /// initial contents.
  [[nodiscard]] virtual std::vector<HostBuffer> block_inputs(const Problem& p, const std::vector<HostBuffer>& inputs, const Block& b) const = 0;
  /// Floats the device buffer for `b`'s output holds.
  [[nodiscard]] virtual std::size_t device_output_size(const Problem& p, const Block& b) const = 0;
  /// Floats of `b`'s result read back (≤ device_output_size).
  [[nodiscard]] virtual std::size_t block_output_size(const Problem& p, const Block& b) const = 0;
  /// True when the kernel works in place on its first input (sort).
  [[nodiscard]] virtual bool in_place() const { return false; }
  /// Enqueues the kernel(s) for `b` with local size `local` and returns
  /// their events in order (kernel time = last END − first START). The
  /// default sets the arguments with set_args() and enqueues once.
  /// Throws ClError.
  virtual std::vector<cl::Event> enqueue(cl::CommandQueue& queue, cl::Kernel& kernel, const Problem& p,
                                         const Block& b, const std::vector<cl::Buffer>& in,
                                         const cl::Buffer& out, const LocalSize& local) const;
  /// Writes `block_out` (block_output_size floats) into the whole output.
  virtual void place_block(const Problem& p, const Block& b, const HostBuffer& block_out, HostBuffer& full) const = 0;
  /// Floats of the whole output.
  [[nodiscard]] virtual std::size_t output_size(const Problem& p) const = 0;
  /// Combines placed blocks into the final output (sort merges the sorted
  /// runs; others do nothing).
  virtual void finish(const Problem& p, const std::vector<Block>& blocks, HostBuffer& full) const;

 protected:
  /// Sets the kernel arguments for `b` (used by the default enqueue()).
  virtual void set_args(cl::Kernel& kernel, const Problem& p, const Block& b,
                        const std::vector<cl::Buffer>& in, const cl::Buffer& out) const = 0;
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

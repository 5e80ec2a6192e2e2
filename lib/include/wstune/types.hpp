#pragma once

#include "wstune/export.h"
/// @file types.hpp
/// Small value types shared by every part of wstune: NDRange extents, local
/// work sizes, work priorities and blocks of an NDRange.
/// Source: paper §2.1–§2.3 (NDRange, work-item, work-group, group shape).

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace wstune {

/// Which axis neighbouring work-items of a 2-D kernel share data along.
/// x-priority: work-items adjacent in x reuse data (matmul); y-priority:
/// adjacent in y (the paper's bilinear). 1-D kernels have none.
/// Source: paper §3.2.3.
enum class Priority { none, x, y };

/// "none", "x" or "y".
WSTUNE_EXPORT std::string_view to_string(Priority p) noexcept;

/// An NDRange extent in work-items: x, y, z (1 beyond `dims`). `dims` is 1,
/// 2 or 3 (OpenCL 1.2 §3.2: an NDRange has up to three dimensions).
struct Extent {
  std::size_t x = 1;  ///< work-items along dimension 0
  std::size_t y = 1;  ///< work-items along dimension 1 (1 when dims < 2)
  std::size_t z = 1;  ///< work-items along dimension 2 (1 when dims < 3)
  unsigned dims = 1;  ///< 1, 2 or 3

  /// 1 work-item, 1-D.
  constexpr Extent() = default;
  /// A 1-D or 2-D extent: (x, y) with `dims` 1 or 2 (y = 1 for 1-D), z = 1.
  constexpr Extent(std::size_t x_, std::size_t y_, unsigned dims_) noexcept : x(x_), y(y_), dims(dims_) {}
  /// An extent of any dimensionality: (x, y, z) with `dims` 1, 2 or 3.
  constexpr Extent(std::size_t x_, std::size_t y_, std::size_t z_, unsigned dims_) noexcept
      : x(x_), y(y_), z(z_), dims(dims_) {}

  /// x·y·z, the number of work-items.
  [[nodiscard]] constexpr std::size_t count() const noexcept { return x * y * z; }
  /// The extent along dimension `d` (0 = x, 1 = y, 2 = z).
  [[nodiscard]] constexpr std::size_t operator[](unsigned d) const noexcept { return d == 0 ? x : d == 1 ? y : z; }
  /// The extent along dimension `d`, writable (d < 3).
  [[nodiscard]] constexpr std::size_t& at(unsigned d) noexcept { return d == 0 ? x : d == 1 ? y : z; }
  friend bool operator==(const Extent&, const Extent&) = default;
  friend auto operator<=>(const Extent&, const Extent&) = default;
};

/// "1024" for 1-D, "1024x768" for 2-D, "64x64x8" for 3-D.
WSTUNE_EXPORT std::string to_string(const Extent& e);

/// A local work size: a group shape, or std::nullopt for the driver's choice
/// (a NULL local_work_size in clEnqueueNDRangeKernel, OpenCL 1.2 §5.8).
using LocalSize = std::optional<Extent>;

/// "null" or the shape, e.g. "32x8".
WSTUNE_EXPORT std::string to_string(const LocalSize& l);

/// Parses "null", "X", "X,Y" / "XxY" or "X,Y,Z" / "XxYxZ" (work-items). Throws UsageError naming
/// `what` when malformed or zero.
WSTUNE_EXPORT LocalSize parse_local_size(std::string_view text, std::string_view what = "--local");

/// A block of a kernel's NDRange: the range [begin, end) along dimension
/// `dim` (0 = x, 1 = y), the whole range along the other dimension. Units are
/// the kernel's split units (rows/columns of the output for 2-D kernels,
/// elements or work-items for 1-D kernels; see KernelSpec::split_units).
/// Used to run a slice of one kernel on one device (paper §3.1.1).
struct Block {
  unsigned dim = 0;       ///< 0 = split along x, 1 = split along y
  std::size_t begin = 0;  ///< first index of the block (inclusive)
  std::size_t end = 0;    ///< one past the last index
  /// end − begin.
  [[nodiscard]] std::size_t size() const noexcept { return end - begin; }
  friend bool operator==(const Block&, const Block&) = default;
};

/// Classification of one trial (one configuration run), after Kernel
/// Tuner's T4 invalidity field: a failing configuration is data, not a crash.
enum class TrialStatus {
  correct,      ///< ran and verified
  compile,      ///< program build failed
  runtime,      ///< enqueue or execution failed (e.g. CL_OUT_OF_RESOURCES)
  constraints,  ///< refused before running (local size not allowed)
  correctness,  ///< ran but the output failed verification
  timeout       ///< exceeded the per-trial time limit
};

/// "correct", "compile", "runtime", "constraints", "correctness", "timeout".
WSTUNE_EXPORT std::string_view to_string(TrialStatus s) noexcept;
/// Inverse of to_string(TrialStatus); throws UsageError on unknown text.
WSTUNE_EXPORT TrialStatus parse_trial_status(std::string_view text);

}  // namespace wstune

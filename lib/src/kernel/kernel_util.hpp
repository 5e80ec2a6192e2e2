#pragma once
// Internal helpers shared by the kernel descriptors in kernels/.
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "kernel/kernel.hpp"

namespace wstune::detail {

/// Splits `text` on any of `seps` and parses each part as a positive integer.
/// Throws UsageError("<kernel> size '<text>' ...: <syntax>") when malformed.
std::vector<std::size_t> parse_numbers(std::string_view text, std::string_view seps, std::string_view kernel,
                                       std::string_view syntax);

/// Throws UsageError unless v ≤ limit (kernels index with 32-bit uints).
void require_at_most(std::size_t v, std::size_t limit, std::string_view kernel, std::string_view text,
                     std::string_view what);

/// Uniform floats in [lo, hi) from a seeded 64-bit Mersenne twister.
HostBuffer random_floats(std::size_t n, std::uint64_t seed, float lo, float hi);

/// The buffers as a vector, moved in: `return {a, b};` would copy each
/// one's bytes (an initializer list's elements are const), a view's
/// (HostBuffer::view) included.
template <class... B>
std::vector<HostBuffer> buffers(B&&... buffers) {
  std::vector<HostBuffer> out;
  out.reserve(sizeof...(buffers));
  (out.push_back(std::forward<B>(buffers)), ...);
  return out;
}

/// Throws UsageError if `b` is empty or beyond `units` along its dimension.
void check_block(const KernelSpec& k, const Problem& p, const Block& b);

/// Copies a compact block (b.size() columns when b.dim == 0, rows when 1) of a
/// row-major width x height output into `full` (resized to width*height).
void place_2d(std::size_t width, std::size_t height, const Block& b, const HostBuffer& bo, HostBuffer& full);

/// Where place_2d() puts a block, as KernelSpec::output_place: a block of
/// whole rows (b.dim == 1) is one run of the row-major output; a block of
/// columns its rows at the output's pitch (`width`).
OutputPlace place_2d_output(std::size_t width, const Block& b);

/// Compares float32 outputs element by element: max |out − ref| against
/// `tolerance` ("<what> over N <unit>"); a size mismatch or NaN fails.
Verdict max_abs_error(const HostBuffer& out, const HostBuffer& ref, double tolerance, std::string_view what,
                      std::string_view unit);

}  // namespace wstune::detail

#pragma once
// Internal: work over [0, n) split into contiguous chunks on the hardware's
// threads (verification and reference computations of large buffers).
#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

namespace wstune::detail {

/// Calls `chunk(lo, hi)` on contiguous chunks covering [0, n), on up to the
/// hardware's threads (one chunk when n < `serial_below`), and returns the
/// chunks' results in order. `chunk` must be safe to call concurrently.
template <class F>
auto parallel_chunks(std::size_t n, F&& chunk, std::size_t serial_below = std::size_t{1} << 18)
    -> std::vector<decltype(chunk(std::size_t{0}, std::size_t{0}))> {
  using R = decltype(chunk(std::size_t{0}, std::size_t{0}));
  const std::size_t threads =
      n < serial_below ? 1 : std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 64);
  const std::size_t step = (n + threads - 1) / std::max<std::size_t>(1, threads);
  std::vector<R> out(threads);
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t)
    pool.emplace_back([&, t] { out[t] = chunk(std::min(n, t * step), std::min(n, (t + 1) * step)); });
  out[0] = chunk(0, std::min(n, step));
  for (auto& th : pool) th.join();
  return out;
}

}  // namespace wstune::detail

// Host descriptor of the matmul kernel (kernels/matmul.cl).
#include <algorithm>
#include <cmath>
#include <thread>

#include <fmt/format.h>

#include "kernel/kernel_util.hpp"
#include "wstune/error.hpp"

namespace wstune {
namespace {

class Matmul final : public KernelSpec {
 public:
  std::string_view name() const override { return "matmul"; }
  std::string_view description() const override {
    return "C = A*B, naive float32 matrix multiply, one work-item per element (2-D, x-priority)";
  }
  std::string_view size_syntax() const override { return "N (square) or MxNxK (C is MxN, inner K)"; }
  std::string_view entry_point() const override { return "matmul"; }
  unsigned dims() const override { return 2; }
  Priority priority() const override { return Priority::x; }
  unsigned paper_repetitions() const override { return 10; }
  Problem paper_size() const override { return parse_size("1024"); }

  Problem parse_size(std::string_view text) const override {
    auto v = detail::parse_numbers(text, "x", name(), size_syntax());
    if (v.size() == 1) v = {v[0], v[0], v[0]};
    if (v.size() != 3) {
      throw UsageError(fmt::format("matmul size '{}' has {} numbers: write {}", text, v.size(), size_syntax()));
    }
    for (auto x : v) detail::require_at_most(x, 65536, name(), text, "a dimension");
    Problem p{std::string(name()), v, {}};
    p.text = (v[0] == v[1] && v[1] == v[2]) ? fmt::format("{}", v[0]) : fmt::format("{}x{}x{}", v[0], v[1], v[2]);
    return p;
  }

  // dim 0: columns of C (N), dim 1: rows of C (M).
  std::size_t split_units(const Problem& p, unsigned dim) const override { return dim == 0 ? p.n[1] : p.n[0]; }

  Extent block_global(const Problem& p, const Block& b) const override {
    detail::check_block(*this, p, b);
    return b.dim == 0 ? Extent{b.size(), p.n[0], 2} : Extent{p.n[1], b.size(), 2};
  }

  // Per k-iteration of the inner loop: the multiply, the add into acc, the
  // address k*N + col (one mul, one add), the loop increment and compare:
  // 6 operations, K iterations (paper §3.1.2 counts add/sub/mul/div/compare).
  double ops_per_work_item(const Problem& p) const override { return 6.0 * static_cast<double>(p.n[2]); }

  std::vector<HostBuffer> generate_inputs(const Problem& p, std::uint64_t seed) const override {
    return detail::buffers(detail::random_floats(p.n[0] * p.n[2], seed, -1.0f, 1.0f),
                           detail::random_floats(p.n[2] * p.n[1], seed + 1, -1.0f, 1.0f));
  }

  std::vector<HostBuffer> reference(const Problem& p, const std::vector<HostBuffer>& in) const override {
    const std::size_t M = p.n[0], N = p.n[1], K = p.n[2];
    HostBuffer out = HostBuffer::floats(M * N);
    const auto A = in.at(0).as<float>();
    const auto B = in.at(1).as<float>();
    const auto C = out.as<float>();
    auto rows = [&](std::size_t r0, std::size_t r1) {
      std::vector<double> acc(N);
      for (std::size_t i = r0; i < r1; ++i) {
        std::fill(acc.begin(), acc.end(), 0.0);
        for (std::size_t k = 0; k < K; ++k) {
          const double a = A[i * K + k];
          const float* b = &B[k * N];
          for (std::size_t j = 0; j < N; ++j) acc[j] += a * b[j];
        }
        for (std::size_t j = 0; j < N; ++j) C[i * N + j] = static_cast<float>(acc[j]);
      }
    };
    const std::size_t threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 64);
    std::vector<std::thread> pool;
    const std::size_t chunk = (M + threads - 1) / threads;
    for (std::size_t r = 0; r < M; r += chunk) pool.emplace_back(rows, r, std::min(M, r + chunk));
    for (auto& t : pool) t.join();
    return detail::buffers(std::move(out));
  }

  // Tolerance: max |C - C_ref| <= K * 2^-20 for inputs uniform in [-1, 1):
  // float accumulation of K products of magnitude <= 1 stays far below it,
  // while any wrong element (wrong row, column or missing term) is off by O(1).
  Verdict verify(const Problem& p, const std::vector<HostBuffer>& out,
                 const std::vector<HostBuffer>& ref) const override {
    return detail::max_abs_error(out.at(0), ref.at(0), static_cast<double>(p.n[2]) * std::ldexp(1.0, -20),
                                 "max |C - C_ref|", "elements");
  }

  std::vector<HostBuffer> block_inputs(const Problem& p, const std::vector<HostBuffer>& in,
                                       const Block& b) const override {
    detail::check_block(*this, p, b);
    // Views (KernelSpec::block_inputs): nothing is copied.
    if (b.dim == 1) {  // rows [begin, end) of A, all of B
      const std::size_t K = p.n[2];
      return detail::buffers(in.at(0).view(b.begin * K, b.size() * K), in.at(1).view());
    }
    return detail::buffers(in.at(0).view(), in.at(1).view());
  }

  std::vector<OutputBuffer> outputs(const Problem& p, const Block& b) const override {
    const std::size_t n = block_global(p, b).count();
    return {OutputBuffer{kFloat32, n, n, std::nullopt, false}};
  }
  std::vector<HostBuffer> empty_outputs(const Problem& p) const override {
    return detail::buffers(HostBuffer::floats(p.n[0] * p.n[1]));
  }

  void place_block(const Problem& p, const Block& b, const std::vector<HostBuffer>& bo,
                   std::vector<HostBuffer>& full) const override {
    detail::place_2d(p.n[1], p.n[0], b, bo.at(0), full.at(0));
  }

  std::optional<OutputPlace> output_place(const Problem& p, const Block& b, std::size_t) const override {
    return detail::place_2d_output(p.n[1], b);
  }

  bool guards_bounds() const override { return true; }

 protected:
  void set_args(cl::Kernel& k, const Problem& p, const Block& b, const std::vector<cl::Buffer>& in,
                const std::vector<cl::Buffer>& out, const LocalSize&) const override {
    const cl_uint x0 = b.dim == 0 ? static_cast<cl_uint>(b.begin) : 0;
    const cl_uint y0 = b.dim == 1 ? static_cast<cl_uint>(b.begin) : 0;
    const Extent g = block_global(p, b);
    WSTUNE_CL_CHECK(k.setArg(0, in.at(0)));
    WSTUNE_CL_CHECK(k.setArg(1, in.at(1)));
    WSTUNE_CL_CHECK(k.setArg(2, out.at(0)));
    WSTUNE_CL_CHECK(k.setArg(3, static_cast<cl_uint>(p.n[1])));
    WSTUNE_CL_CHECK(k.setArg(4, static_cast<cl_uint>(p.n[2])));
    WSTUNE_CL_CHECK(k.setArg(5, x0));
    WSTUNE_CL_CHECK(k.setArg(6, y0));
    WSTUNE_CL_CHECK(k.setArg(7, y0));  // a_row0: A starts at the block's first row
    WSTUNE_CL_CHECK(k.setArg(8, static_cast<cl_uint>(g.x)));
    WSTUNE_CL_CHECK(k.setArg(9, static_cast<cl_uint>(g.y)));
  }
};

}  // namespace

const KernelSpec& matmul_spec() {
  static const Matmul k;
  return k;
}

}  // namespace wstune

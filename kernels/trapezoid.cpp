// Host descriptor of the trapezoidal-rule quadrature (kernels/trapezoid.cl).
#include <cmath>
#include <numbers>
#include <numeric>

#include <fmt/format.h>

#include "kernel_util.hpp"
#include "wstune/error.hpp"

namespace wstune {
namespace {

double f(double x) { return 4.0 / (1.0 + x * x); }

class Trapezoid final : public KernelSpec {
 public:
  static constexpr std::size_t default_steps = 128;

  std::string_view name() const override { return "trapezoid"; }
  std::string_view description() const override {
    return "trapezoidal rule for the integral of 4/(1+x^2) over [0,1] = pi, partial sums per work-item (1-D)";
  }
  std::string_view size_syntax() const override {
    return "N or N:S (N work-items, each integrating S sub-intervals; S defaults to 128)";
  }
  std::string_view entry_point() const override { return "trapezoid"; }
  unsigned dims() const override { return 1; }
  Priority priority() const override { return Priority::none; }
  unsigned paper_repetitions() const override { return 10000; }
  Problem paper_size() const override { return parse_size("262144"); }

  Problem parse_size(std::string_view text) const override {
    auto v = detail::parse_numbers(text, ":", name(), size_syntax());
    if (v.size() == 1) v.push_back(default_steps);
    if (v.size() != 2) {
      throw UsageError(fmt::format("trapezoid size '{}' has {} numbers: write {}", text, v.size(), size_syntax()));
    }
    detail::require_at_most(v[0], 0xffffffffu, name(), text, "N (work-items)");
    detail::require_at_most(v[1], 0xffffffffu / v[0], name(), text, "S for this N (N*S sub-intervals must fit 32 bits)");
    return Problem{std::string(name()), v,
                   v[1] == default_steps ? fmt::format("{}", v[0]) : fmt::format("{}:{}", v[0], v[1])};
  }

  std::size_t split_units(const Problem& p, unsigned) const override { return p.n[0]; }

  Extent block_global(const Problem& p, const Block& b) const override {
    detail::check_block(*this, p, b);
    return Extent{b.size(), 1, 1};
  }

  // Per sub-interval: the point a + s*h (mul, add), 1 + x*x (mul, add), the
  // division, the add into sum, the loop increment and compare: 8, times S.
  double ops_per_work_item(const Problem& p) const override { return 8.0 * static_cast<double>(p.n[1]); }

  std::vector<HostBuffer> generate_inputs(const Problem&, std::uint64_t) const override { return {}; }

  std::vector<HostBuffer> reference(const Problem& p, const std::vector<HostBuffer>&) const override {
    const std::size_t N = p.n[0], S = p.n[1];
    const double h = 1.0 / (static_cast<double>(N) * static_cast<double>(S));
    HostBuffer result = HostBuffer::floats(N);
    const auto out = result.as<float>();
    for (std::size_t g = 0; g < N; ++g) {
      const double a = static_cast<double>(g * S) * h;
      double sum = 0.5 * (f(a) + f(a + static_cast<double>(S) * h));
      for (std::size_t s = 1; s < S; ++s) sum += f(a + static_cast<double>(s) * h);
      out[g] = static_cast<float>(sum * h);
    }
    return {std::move(result)};
  }

  // Tolerance: each partial within a relative 1e-4 of the double-precision
  // reference (S float additions lose at most S * 2^-24), and the sum of the
  // partials (added in double) within a relative 1e-5 of pi. max_error is the
  // larger of the two errors, each divided by its bound (ok when <= 1).
  Verdict verify(const Problem&, const std::vector<HostBuffer>& outs,
                 const std::vector<HostBuffer>& refs) const override {
    const auto out = outs.at(0).as<float>();
    const auto ref = refs.at(0).as<float>();
    Verdict v;
    v.tolerance = 1.0;
    if (out.size() != ref.size()) {
      v.max_error = INFINITY;
      v.detail = fmt::format("output has {} partials, expected {}", out.size(), ref.size());
      return v;
    }
    double worst = 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
      const double e = std::fabs(out[i] - static_cast<double>(ref[i])) / std::fabs(static_cast<double>(ref[i]));
      if (!(e <= worst)) worst = std::isnan(e) ? INFINITY : e;
    }
    const double total = std::accumulate(out.begin(), out.end(), 0.0);
    const double rel_pi = std::fabs(total - std::numbers::pi) / std::numbers::pi;
    v.max_error = std::max(worst / 1e-4, rel_pi / 1e-5);
    v.ok = v.max_error <= v.tolerance;
    v.detail = fmt::format("integral {:.9f} vs pi (rel. error {:.2e}, bound 1e-5); worst partial rel. "
                           "error {:.2e} (bound 1e-4)", total, rel_pi, worst);
    return v;
  }

  std::vector<HostBuffer> block_inputs(const Problem& p, const std::vector<HostBuffer>&, const Block& b) const override {
    detail::check_block(*this, p, b);
    return {};
  }
  std::vector<OutputBuffer> outputs(const Problem&, const Block& b) const override {
    return {OutputBuffer{kFloat32, b.size(), b.size(), std::nullopt, false}};
  }
  std::vector<HostBuffer> empty_outputs(const Problem& p) const override { return {HostBuffer::floats(p.n[0])}; }

  void place_block(const Problem&, const Block& b, const std::vector<HostBuffer>& bo,
                   std::vector<HostBuffer>& full) const override {
    full.at(0).write(b.begin, bo.at(0), 0, b.size());
  }

  bool guards_bounds() const override { return true; }

 protected:
  void set_args(cl::Kernel& k, const Problem& p, const Block& b, const std::vector<cl::Buffer>&,
                const std::vector<cl::Buffer>& out, const LocalSize&) const override {
    WSTUNE_CL_CHECK(k.setArg(0, out.at(0)));
    WSTUNE_CL_CHECK(k.setArg(1, static_cast<cl_uint>(p.n[0])));
    WSTUNE_CL_CHECK(k.setArg(2, static_cast<cl_uint>(p.n[1])));
    WSTUNE_CL_CHECK(k.setArg(3, static_cast<cl_uint>(b.begin)));
    WSTUNE_CL_CHECK(k.setArg(4, static_cast<cl_uint>(b.size())));
  }
};

}  // namespace

const KernelSpec& trapezoid_spec() {
  static const Trapezoid k;
  return k;
}

}  // namespace wstune

// Host descriptor of the trapezoidal-rule quadrature (kernels/trapezoid.cl).
#include <algorithm>
#include <cmath>
#include <numbers>

#include <fmt/format.h>

#include "kernel/kernel_util.hpp"
#include "wstune/error.hpp"

namespace wstune {
namespace {

double f(double x) {
  return 4.0 / (1.0 + x * x);
}

class Trapezoid final : public KernelSpec {
 public:
  static constexpr std::size_t default_steps = 128;

  std::string_view name() const override { return "trapezoid"; }
  /// Work-items per value the device's reduction returns (TRAP_CHUNK in
  /// kernels/trapezoid.cl).
  static constexpr std::size_t chunk = 256;

  std::string_view description() const override {
    return "trapezoidal rule for the integral of 4/(1+x^2) over [0,1] = pi, partial sums per work-item "
           "reduced on the device per 256 work-items (1-D)";
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
    detail::require_at_most(v[1], 0xffffffffu / v[0], name(), text,
                            "S for this N (N*S sub-intervals must fit 32 bits)");
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
    std::vector<HostBuffer> result = empty_outputs(p);
    const auto out = result[0].as<double>();
    for (std::size_t g = 0; g < N; ++g) {
      const double a = static_cast<double>(g * S) * h;
      double sum = 0.5 * (f(a) + f(a + static_cast<double>(S) * h));
      for (std::size_t s = 1; s < S; ++s) sum += f(a + static_cast<double>(s) * h);
      out[g / chunk] += sum * h;
    }
    return result;
  }

  // The outputs hold one sum per chunk of `chunk` work-items (the device's
  // float values, or the double sums place_block() gathers from blocks).
  // Tolerance: each chunk sum within a relative 1e-4 of the double-precision
  // reference (S float additions per work-item lose at most S * 2^-24, the
  // tree over a chunk 8 * 2^-24 more), and the sum of the chunks (added in
  // double) within a relative 1e-5 of the reference's sum:
  // the trapezoid rule's own value for N*S sub-intervals, which differs from
  // pi by its discretisation error (1.3e-5 relative at 8:8, issue 17). The
  // report also gives the distance to pi. max_error is the larger of the two
  // errors, each divided by its bound (ok when <= 1).
  Verdict verify(const Problem&, const std::vector<HostBuffer>& outs,
                 const std::vector<HostBuffer>& refs) const override {
    const HostBuffer& out = outs.at(0);
    const HostBuffer& ref = refs.at(0);
    Verdict v;
    v.tolerance = 1.0;
    if (components(out) != components(ref)) {
      v.max_error = INFINITY;
      v.detail = fmt::format("output has {} chunk sums, expected {}", components(out), components(ref));
      return v;
    }
    double worst = 0, total = 0, rule = 0;
    for (std::size_t i = 0; i < components(out); ++i) {
      const double o = component(out, i), r = component(ref, i);
      const double e = std::fabs(o - r) / std::fabs(r);
      if (!(e <= worst)) worst = std::isnan(e) ? INFINITY : e;
      total += o;
      rule += r;
    }
    const double rel_rule = std::fabs(total - rule) / std::fabs(rule);
    const double rel_pi = std::fabs(total - std::numbers::pi) / std::numbers::pi;
    v.max_error = std::max(worst / 1e-4, rel_rule / 1e-5);
    v.ok = v.max_error <= v.tolerance;
    v.detail = fmt::format(
        "integral {:.9f} vs the rule's {:.9f} (rel. error {:.2e}, bound 1e-5; {:.2e} from pi); "
        "worst chunk sum rel. error {:.2e} (bound 1e-4)",
        total, rule, rel_rule, rel_pi, worst);
    return v;
  }

  std::vector<HostBuffer> block_inputs(const Problem& p, const std::vector<HostBuffer>&,
                                       const Block& b) const override {
    detail::check_block(*this, p, b);
    return {};
  }
  // Output 0: the chunk sums the block touches (read back); output 1: the
  // per-work-item partials, which stay on the device.
  std::vector<OutputBuffer> outputs(const Problem&, const Block& b) const override {
    const std::size_t chunks = chunks_touched(b);
    return {OutputBuffer{kFloat32, chunks, chunks, std::nullopt, false},
            OutputBuffer{kFloat32, b.size(), 0, std::nullopt, false}};
  }
  // One double per chunk of the whole problem, and the (empty) partials.
  std::vector<HostBuffer> empty_outputs(const Problem& p) const override {
    return detail::buffers(HostBuffer({ScalarType::f64, 1}, (p.n[0] + chunk - 1) / chunk), HostBuffer::floats(0));
  }

  // A chunk split between blocks gets each block's part added.
  void place_block(const Problem&, const Block& b, const std::vector<HostBuffer>& bo,
                   std::vector<HostBuffer>& full) const override {
    const auto out = full.at(0).as<double>();
    const std::size_t first = b.begin / chunk;
    const auto sums = bo.at(0).as<float>();  // the device's sums (outputs(): float)
    for (std::size_t j = 0; j < sums.size(); ++j) out[first + j] += sums[j];
  }

  // Runs the partials with the caller's local size, then trapezoid_reduce
  // with a fixed power-of-two group (≤ chunk and the kernel's
  // CL_KERNEL_WORK_GROUP_SIZE) over the chunks the block touches.
  std::vector<cl::Event> enqueue(cl::CommandQueue& queue, cl::Kernel& kernel, const Problem& p, const Block& b,
                                 const std::vector<cl::Buffer>& in, const std::vector<cl::Buffer>& out,
                                 const LocalSize& local, const Extent& global) const override {
    // The reduce kernel is made before the partials are queued: host work
    // between the two would count in the run's first-to-last event span.
    cl_int err = CL_SUCCESS;
    cl::Kernel reduce(kernel.getInfo<CL_KERNEL_PROGRAM>(), "trapezoid_reduce", &err);
    check(err, "clCreateKernel(trapezoid_reduce)");
    std::size_t max_group = 0;
    WSTUNE_CL_CHECK(reduce.getWorkGroupInfo(queue.getInfo<CL_QUEUE_DEVICE>(), CL_KERNEL_WORK_GROUP_SIZE, &max_group));
    std::size_t group = 1;
    while (group * 2 <= std::min(max_group, chunk)) group *= 2;
    std::vector<cl::Event> events = KernelSpec::enqueue(queue, kernel, p, b, in, out, local, global);
    WSTUNE_CL_CHECK(reduce.setArg(0, out.at(1)));
    WSTUNE_CL_CHECK(reduce.setArg(1, out.at(0)));
    WSTUNE_CL_CHECK(reduce.setArg(2, static_cast<cl_uint>(b.begin)));
    WSTUNE_CL_CHECK(reduce.setArg(3, static_cast<cl_uint>(b.size())));
    cl::Event ev;
    WSTUNE_CL_CHECK(queue.enqueueNDRangeKernel(reduce, cl::NullRange, cl::NDRange(chunks_touched(b) * group),
                                               cl::NDRange(group), nullptr, &ev));
    events.push_back(ev);
    return events;
  }

  bool guards_bounds() const override { return true; }

 protected:
  void set_args(cl::Kernel& k, const Problem& p, const Block& b, const std::vector<cl::Buffer>&,
                const std::vector<cl::Buffer>& out, const LocalSize&) const override {
    WSTUNE_CL_CHECK(k.setArg(0, out.at(1)));
    WSTUNE_CL_CHECK(k.setArg(1, static_cast<cl_uint>(p.n[0])));
    WSTUNE_CL_CHECK(k.setArg(2, static_cast<cl_uint>(p.n[1])));
    WSTUNE_CL_CHECK(k.setArg(3, static_cast<cl_uint>(b.begin)));
    WSTUNE_CL_CHECK(k.setArg(4, static_cast<cl_uint>(b.size())));
  }

 private:
  // Chunks holding at least one of the block's work-items.
  static std::size_t chunks_touched(const Block& b) {
    return b.size() ? (b.end + chunk - 1) / chunk - b.begin / chunk : 0;
  }
};

}  // namespace

const KernelSpec& trapezoid_spec() {
  static const Trapezoid k;
  return k;
}

}  // namespace wstune

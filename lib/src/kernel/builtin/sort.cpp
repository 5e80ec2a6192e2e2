// Host descriptor of the bitonic float sort (kernels/sort.cl).
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <memory>
#include <span>

#include <fmt/format.h>

#include "core/parallel.hpp"
#include "kernel/kernel_util.hpp"
#include "wstune/error.hpp"

namespace wstune {
namespace {

/// The padded length of a block of m elements: a power of two, at least 2.
std::size_t padded(std::size_t m) {
  return std::max<std::size_t>(2, std::bit_ceil(m));
}

// Fills elements [m, padded(m)) of `keys` with +inf, the sentinel that
// sorts last (clEnqueueFillBuffer, OpenCL 1.2 §5.2.2); its event, or none
// when m is already a power of two (at least 2). Throws ClError.
std::vector<cl::Event> pad(cl::CommandQueue& queue, const cl::Buffer& keys, std::size_t m) {
  const std::size_t P = padded(m);
  if (P == m) return {};
  cl::Event ev;
  WSTUNE_CL_CHECK(queue.enqueueFillBuffer(keys, std::numeric_limits<float>::infinity(), m * sizeof(float),
                                          (P - m) * sizeof(float), nullptr, &ev));
  return {ev};
}

/// How many of the first k elements of the stable merge of sorted a and b
/// come from a (ties: a first): the merge path's crossing of diagonal k,
/// found by binary search.
std::size_t merge_split(std::span<const float> a, std::span<const float> b, std::size_t k) {
  std::size_t lo = k > b.size() ? k - b.size() : 0, hi = std::min(k, a.size());
  while (lo < hi) {
    const std::size_t i = lo + (hi - lo) / 2;
    if (a[i] <= b[k - i - 1])
      lo = i + 1;  // a[i] comes before b[k-i-1]: more of a
    else
      hi = i;
  }
  return lo;
}

/// Merges the sorted runs v[0, m) and v[m, n) in place, on the hardware's
/// threads: each thread merges the outputs [lo, hi) it owns (merge_split
/// says where they start in each run) into a buffer, which is copied back.
void parallel_merge(std::span<float> v, std::size_t m) {
  const std::span<const float> a = v.first(m), b = v.subspan(m);
  const std::unique_ptr<float[]> out(new float[v.size()]);  // left uninitialised: the threads touch their pages
  detail::parallel_chunks(v.size(), [&](std::size_t lo, std::size_t hi) {
    const std::size_t a0 = merge_split(a, b, lo), a1 = merge_split(a, b, hi);
    std::merge(a.begin() + static_cast<std::ptrdiff_t>(a0), a.begin() + static_cast<std::ptrdiff_t>(a1),
               b.begin() + static_cast<std::ptrdiff_t>(lo - a0), b.begin() + static_cast<std::ptrdiff_t>(hi - a1),
               out.get() + lo);
    return 0;
  });
  detail::parallel_chunks(v.size(), [&](std::size_t lo, std::size_t hi) {
    std::copy(out.get() + lo, out.get() + hi, v.begin() + static_cast<std::ptrdiff_t>(lo));
    return 0;
  });
}

class Sort final : public KernelSpec {
 public:
  std::string_view name() const override { return "sort"; }
  std::string_view description() const override {
    return "float32 sort by bitonic network, lengths padded with +inf to a power of two (1-D)";
  }
  std::string_view size_syntax() const override { return "N (elements; any N >= 2, padded to a power of two)"; }
  std::string_view entry_point() const override { return "bitonic_step"; }
  unsigned dims() const override { return 1; }
  Priority priority() const override { return Priority::none; }
  unsigned paper_repetitions() const override { return 1; }
  Problem paper_size() const override { return parse_size("262144"); }

  Problem parse_size(std::string_view text) const override {
    auto v = detail::parse_numbers(text, "", name(), size_syntax());
    if (v[0] < 2) throw UsageError(fmt::format("sort size '{}' is too small: sort at least 2 elements", text));
    detail::require_at_most(v[0], std::size_t{1} << 31, name(), text, "the length");
    return Problem{std::string(name()), v, fmt::format("{}", v[0])};
  }

  std::size_t split_units(const Problem& p, unsigned) const override { return p.n[0]; }
  std::size_t units_per_work_item() const override { return 2; }

  // P/2 work-items for a block of m elements padded to P (a block of one
  // element is padded to 2).
  Extent block_global(const Problem& p, const Block& b) const override {
    detail::check_block(*this, p, b);
    return Extent{padded(b.size()) / 2, 1, 1};
  }

  // Per launch each work-item does: the partner index (1 add), three
  // compares (x > y, == ascending, (l & k) == 0) and the two index bit
  // operations counted as 2: 6 operations, over L(L+1)/2 launches, L = log2 P.
  double ops_per_work_item(const Problem& p) const override {
    const double L = std::log2(static_cast<double>(padded(p.n[0])));
    return 6.0 * L * (L + 1) / 2;
  }

  std::vector<HostBuffer> generate_inputs(const Problem& p, std::uint64_t seed) const override {
    return detail::buffers(detail::random_floats(p.n[0], seed, -1e6f, 1e6f));
  }

  std::vector<HostBuffer> reference(const Problem&, const std::vector<HostBuffer>& in) const override {
    HostBuffer r = in.at(0);
    const auto v = r.as<float>();
    std::sort(v.begin(), v.end());
    return detail::buffers(std::move(r));
  }

  // Tolerance: none. Sorting moves values without arithmetic, so the output
  // must equal std::sort's bit for bit; max_error counts mismatches.
  Verdict verify(const Problem&, const std::vector<HostBuffer>& outs,
                 const std::vector<HostBuffer>& refs) const override {
    const HostBuffer& out = outs.at(0);
    const HostBuffer& ref = refs.at(0);
    Verdict v;
    v.tolerance = 0;
    v.detail = fmt::format("elements differing from std::sort over {}", ref.size());
    if (out.size() != ref.size()) {
      v.max_error = INFINITY;
      v.detail = fmt::format("output has {} elements, expected {}", out.size(), ref.size());
      return v;
    }
    const auto o = out.as<float>();
    const auto r = ref.as<float>();
    std::size_t bad = 0;
    for (std::size_t i = 0; i < o.size(); ++i) bad += o[i] != r[i];
    v.max_error = static_cast<double>(bad);
    v.ok = bad == 0;
    return v;
  }

  // A view of the block's keys (no copy): the device pads them (enqueue()).
  std::vector<HostBuffer> block_inputs(const Problem& p, const std::vector<HostBuffer>& in,
                                       const Block& b) const override {
    detail::check_block(*this, p, b);
    return detail::buffers(in.at(0).view(b.begin, b.size()));
  }

  // In place: the block's keys are uploaded into the first b.size()
  // elements of a buffer of the padded length, and the rest is padded on
  // the device. Repeated runs sort already sorted data, which the network
  // (data-oblivious) does in the same time and to the same result, so
  // nothing is restored between runs.
  std::vector<OutputBuffer> outputs(const Problem&, const Block& b) const override {
    return {OutputBuffer{kFloat32, padded(b.size()), b.size(), 0, false}};
  }
  std::vector<HostBuffer> empty_outputs(const Problem& p) const override {
    return detail::buffers(HostBuffer::floats(p.n[0]));
  }

  // The pad of the uploaded keys, then the network's launches: the kernel
  // time spans both (the fill is the block's own device work, as its upload
  // was when the host padded it).
  std::vector<cl::Event> enqueue(cl::CommandQueue& queue, cl::Kernel& kernel, const Problem&, const Block& b,
                                 const std::vector<cl::Buffer>&, const std::vector<cl::Buffer>& out,
                                 const LocalSize& local, const Extent&) const override {
    const std::size_t P = padded(b.size());
    const cl::NDRange global(P / 2);
    const cl::NDRange loc = local ? cl::NDRange(local->x) : cl::NullRange;
    std::vector<cl::Event> events = pad(queue, out.at(0), b.size());
    WSTUNE_CL_CHECK(kernel.setArg(0, out.at(0)));
    for (std::size_t k = 2; k <= P; k <<= 1) {
      for (std::size_t j = k >> 1; j > 0; j >>= 1) {
        WSTUNE_CL_CHECK(kernel.setArg(1, static_cast<cl_uint>(j)));
        WSTUNE_CL_CHECK(kernel.setArg(2, static_cast<cl_uint>(k)));
        cl::Event ev;
        WSTUNE_CL_CHECK(queue.enqueueNDRangeKernel(kernel, cl::NullRange, global, loc, nullptr, &ev));
        events.push_back(ev);
      }
    }
    return events;
  }

  void place_block(const Problem&, const Block& b, const std::vector<HostBuffer>& bo,
                   std::vector<HostBuffer>& full) const override {
    full.at(0).write(b.begin, bo.at(0), 0, b.size());
  }

  // A block's sorted run goes straight to its place; finish() merges.
  std::optional<OutputPlace> output_place(const Problem&, const Block& b, std::size_t) const override {
    return OutputPlace{b.begin, 0, 0};
  }

  // Each block comes back sorted; merge the runs pairwise in index order
  // (in parallel: parallel_merge).
  bool merges_blocks() const override { return true; }
  void finish(const Problem&, const std::vector<Block>& blocks, std::vector<HostBuffer>& full) const override {
    std::vector<Block> bs = blocks;
    std::sort(bs.begin(), bs.end(), [](const Block& a, const Block& c) { return a.begin < c.begin; });
    const auto v = full.at(0).as<float>();
    for (std::size_t i = 1; i < bs.size(); ++i)
      parallel_merge(v.subspan(bs[0].begin, bs[i].end - bs[0].begin), bs[i].begin - bs[0].begin);
  }

 protected:
  void set_args(cl::Kernel&, const Problem&, const Block&, const std::vector<cl::Buffer>&,
                const std::vector<cl::Buffer>&, const LocalSize&) const override {}
};

}  // namespace

const KernelSpec& sort_spec() {
  static const Sort k;
  return k;
}

}  // namespace wstune

// Host descriptor of the bilinear image-scaling kernel (kernels/bilinear.cl).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "kernel/kernel_util.hpp"
#include "wstune/error.hpp"

namespace wstune {
namespace {

class Bilinear final : public KernelSpec {
 public:
  std::string_view name() const override { return "bilinear"; }
  std::string_view description() const override {
    return "bilinear interpolation scaling a float image to any size, one work-item per output pixel (2-D, y-priority)";
  }
  std::string_view size_syntax() const override {
    return "N (a N/2 x N/2 image scaled 2x to N x N) or WxH:OWxOH (input W x H to output OW x OH)";
  }
  std::string_view entry_point() const override { return "bilinear"; }
  unsigned dims() const override { return 2; }
  Priority priority() const override { return Priority::y; }
  unsigned paper_repetitions() const override { return 10000; }
  Problem paper_size() const override { return parse_size("1024"); }

  Problem parse_size(std::string_view text) const override {
    std::vector<std::size_t> v;
    if (text.find(':') == std::string_view::npos) {
      auto one = detail::parse_numbers(text, "", name(), size_syntax());
      const std::size_t in = std::max<std::size_t>(1, (one[0] + 1) / 2);
      v = {in, in, one[0], one[0]};
    } else {
      v = detail::parse_numbers(text, "x:", name(), size_syntax());
      if (v.size() != 4) {
        throw UsageError(fmt::format("bilinear size '{}' has {} numbers: write {}", text, v.size(), size_syntax()));
      }
    }
    for (auto x : v) detail::require_at_most(x, 65536, name(), text, "a side");
    return Problem{std::string(name()), v, fmt::format("{}x{}:{}x{}", v[0], v[1], v[2], v[3])};
  }

  // dim 0: output columns, dim 1: output rows.
  std::size_t split_units(const Problem& p, unsigned dim) const override { return dim == 0 ? p.n[2] : p.n[3]; }

  Extent block_global(const Problem& p, const Block& b) const override {
    detail::check_block(*this, p, b);
    return b.dim == 0 ? Extent{b.size(), p.n[3], 2} : Extent{p.n[2], b.size(), 2};
  }

  // Per work-item, counted in bilinear.cl: 2 divisions (scales), 6 for the
  // two source coordinates (add, mul, sub each), 4 compares (clamps), 4 for
  // ix1/iy1 (add, min), 2 subtractions (fx, fy), 6 for the slice-relative
  // rows (sub, clamp), 8 for the four addresses (mul, add) and 9 for the
  // three lerps (sub, mul, add): 41.
  double ops_per_work_item(const Problem&) const override { return 41.0; }

  std::vector<HostBuffer> generate_inputs(const Problem& p, std::uint64_t seed) const override {
    return detail::buffers(detail::random_floats(p.n[0] * p.n[1], seed, 0.0f, 1.0f));
  }

  static double source_coord(std::size_t o, std::size_t in, std::size_t out) {
    const double s = (static_cast<double>(o) + 0.5) * (static_cast<double>(in) / static_cast<double>(out)) - 0.5;
    return std::clamp(s, 0.0, static_cast<double>(in - 1));
  }

  std::vector<HostBuffer> reference(const Problem& p, const std::vector<HostBuffer>& in) const override {
    const std::size_t iw = p.n[0], ih = p.n[1], ow = p.n[2], oh = p.n[3];
    const auto img = in.at(0).as<float>();
    HostBuffer result = HostBuffer::floats(ow * oh);
    const auto out = result.as<float>();
    for (std::size_t y = 0; y < oh; ++y) {
      const double sy = source_coord(y, ih, oh);
      const std::size_t iy = static_cast<std::size_t>(sy), iy1 = std::min(iy + 1, ih - 1);
      const double fy = sy - static_cast<double>(iy);
      for (std::size_t x = 0; x < ow; ++x) {
        const double sx = source_coord(x, iw, ow);
        const std::size_t ix = static_cast<std::size_t>(sx), ix1 = std::min(ix + 1, iw - 1);
        const double fx = sx - static_cast<double>(ix);
        const double top = img[iy * iw + ix] + (img[iy * iw + ix1] - img[iy * iw + ix]) * fx;
        const double bot = img[iy1 * iw + ix] + (img[iy1 * iw + ix1] - img[iy1 * iw + ix]) * fx;
        out[y * ow + x] = static_cast<float>(top + (bot - top) * fy);
      }
    }
    return detail::buffers(std::move(result));
  }

  // Tolerance: max |out - ref| <= 1e-4 for pixels in [0, 1). Interpolation is
  // continuous, so float rounding of the source coordinates moves a result by
  // about 1e-6; a wrong pixel or neighbour is off by about 0.1 or more.
  Verdict verify(const Problem&, const std::vector<HostBuffer>& out,
                 const std::vector<HostBuffer>& ref) const override {
    return detail::max_abs_error(out.at(0), ref.at(0), 1e-4, "max |out - ref|", "pixels");
  }

  /// Input rows [r0, r1) a y-block reads, with a one-row margin each side
  /// for float rounding of the source coordinate.
  std::pair<std::size_t, std::size_t> input_rows(const Problem& p, const Block& b) const {
    if (b.dim == 0) return {0, p.n[1]};
    const std::size_t ih = p.n[1], oh = p.n[3];
    const auto lo = static_cast<std::size_t>(source_coord(b.begin, ih, oh));
    const auto hi = static_cast<std::size_t>(source_coord(b.end - 1, ih, oh));
    return {lo > 0 ? lo - 1 : 0, std::min(ih, hi + 3)};
  }

  std::vector<HostBuffer> block_inputs(const Problem& p, const std::vector<HostBuffer>& in,
                                       const Block& b) const override {
    detail::check_block(*this, p, b);
    const auto [r0, r1] = input_rows(p, b);
    const std::size_t w = p.n[0];
    return detail::buffers(in.at(0).view(r0 * w, (r1 - r0) * w));  // a view (KernelSpec::block_inputs)
  }

  std::vector<OutputBuffer> outputs(const Problem& p, const Block& b) const override {
    const std::size_t n = block_global(p, b).count();
    return {OutputBuffer{kFloat32, n, n, std::nullopt, false}};
  }
  std::vector<HostBuffer> empty_outputs(const Problem& p) const override {
    return detail::buffers(HostBuffer::floats(p.n[2] * p.n[3]));
  }

  void place_block(const Problem& p, const Block& b, const std::vector<HostBuffer>& bo,
                   std::vector<HostBuffer>& full) const override {
    detail::place_2d(p.n[2], p.n[3], b, bo.at(0), full.at(0));
  }

  std::optional<OutputPlace> output_place(const Problem& p, const Block& b, std::size_t) const override {
    return detail::place_2d_output(p.n[2], b);
  }

  bool guards_bounds() const override { return true; }

 protected:
  void set_args(cl::Kernel& k, const Problem& p, const Block& b, const std::vector<cl::Buffer>& in,
                const std::vector<cl::Buffer>& out, const LocalSize&) const override {
    const auto [r0, r1] = input_rows(p, b);
    const Extent g = block_global(p, b);
    WSTUNE_CL_CHECK(k.setArg(0, in.at(0)));
    WSTUNE_CL_CHECK(k.setArg(1, out.at(0)));
    for (cl_uint i = 0; i < 4; ++i) WSTUNE_CL_CHECK(k.setArg(2 + i, static_cast<cl_uint>(p.n[i])));
    WSTUNE_CL_CHECK(k.setArg(6, static_cast<cl_uint>(b.dim == 0 ? b.begin : 0)));
    WSTUNE_CL_CHECK(k.setArg(7, static_cast<cl_uint>(b.dim == 1 ? b.begin : 0)));
    WSTUNE_CL_CHECK(k.setArg(8, static_cast<cl_uint>(r0)));
    WSTUNE_CL_CHECK(k.setArg(9, static_cast<cl_uint>(r1 - r0)));
    WSTUNE_CL_CHECK(k.setArg(10, static_cast<cl_uint>(g.x)));
    WSTUNE_CL_CHECK(k.setArg(11, static_cast<cl_uint>(g.y)));
  }
};

}  // namespace

const KernelSpec& bilinear_spec() {
  static const Bilinear k;
  return k;
}

}  // namespace wstune

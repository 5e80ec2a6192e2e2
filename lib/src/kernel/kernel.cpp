#include "kernel/kernel.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "core/parallel.hpp"
#include "expr/expression.hpp"
#include "kernel/kernel_util.hpp"
#include "wstune/error.hpp"

namespace wstune {

// Defined in the generated kernel_sources.cpp.
namespace detail {
struct EmbeddedSource {
  const char* file;
  const char* text;
};
extern const EmbeddedSource embedded_sources[];
extern const std::size_t embedded_source_count;
}  // namespace detail

std::string_view embedded_kernel_source(std::string_view file) {
  for (std::size_t i = 0; i < detail::embedded_source_count; ++i) {
    if (file == detail::embedded_sources[i].file) return detail::embedded_sources[i].text;
  }
  throw Error(fmt::format("no embedded OpenCL source '{}' (rebuild wstune)", file));
}

std::string_view KernelSpec::source() const {
  return embedded_kernel_source(source_name());
}

std::unique_ptr<expr::Env> KernelSpec::metric_env(const Problem& p) const {
  auto env = std::make_unique<expr::MapEnv>();
  for (const auto& [name, v] : p.params.items()) {
    if (v.is_number_integer()) {
      env->set(name, expr::Value(v.get<std::int64_t>()));
    } else if (v.is_number()) {
      env->set(name, expr::Value(v.get<double>()));
    } else if (v.is_boolean()) {
      env->set(name, expr::Value(v.get<bool>()));
    } else if (v.is_string()) {
      env->set(name, expr::Value(v.get<std::string>()));
    }
  }
  return env;
}

std::string KernelSpec::source_name() const {
  return fmt::format("{}.cl", name());
}

const std::vector<TuningParameter>& KernelSpec::tuning_parameters() const {
  static const std::vector<TuningParameter> none;
  return none;
}

std::vector<Constraint> KernelSpec::parameter_constraints(const Problem& p) const {
  const auto& ps = tuning_parameters();
  if (ps.empty()) return {};
  Constraint all;
  for (std::size_t k = 0; k < ps.size(); ++k) all.params.push_back(static_cast<std::uint32_t>(k));
  all.holds = [this, p, &ps](std::span<const std::uint32_t> idx) {
    nlohmann::json params = nlohmann::json::object();
    for (std::size_t k = 0; k < ps.size(); ++k) params[ps[k].name] = ps[k].values[idx[k]];
    return satisfies_constraints(with_params(p, params));
  };
  return {std::move(all)};
}

Problem with_params(Problem p, const nlohmann::json& params) {
  p.params = params;
  return p;
}

cl::NDRange ndrange(const Extent& e, unsigned dims) {
  if (dims == 0) dims = e.dims;
  return dims == 1 ? cl::NDRange(e.x) : dims == 2 ? cl::NDRange(e.x, e.y) : cl::NDRange(e.x, e.y, e.z);
}

Block KernelSpec::whole(const Problem& p, unsigned dim) const {
  if (dim >= dims()) dim = 0;
  return Block{dim, 0, split_units(p, dim)};
}

double KernelSpec::compute_amount(const Problem& p) const {
  return static_cast<double>(global_size(p).count()) * ops_per_work_item(p) * paper_repetitions();
}

std::vector<cl::Event> KernelSpec::enqueue(cl::CommandQueue& queue, cl::Kernel& kernel, const Problem& p,
                                           const Block& b, const std::vector<cl::Buffer>& in,
                                           const std::vector<cl::Buffer>& out, const LocalSize& local,
                                           const Extent& global) const {
  set_args(kernel, p, b, in, out, local);
  const cl::NDRange loc = local ? ndrange(*local, global.dims) : cl::NullRange;
  cl::Event ev;
  WSTUNE_CL_CHECK(queue.enqueueNDRangeKernel(kernel, cl::NullRange, ndrange(global), loc, nullptr, &ev));
  return {ev};
}

void KernelSpec::finish(const Problem&, const std::vector<Block>&, std::vector<HostBuffer>&) const {}

// ---- helpers -----------------------------------------------------------------

namespace detail {

std::vector<std::size_t> parse_numbers(std::string_view text, std::string_view seps, std::string_view kernel,
                                       std::string_view syntax) {
  std::vector<std::size_t> out;
  std::size_t pos = 0;
  while (true) {
    auto end = text.find_first_of(seps, pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view part = text.substr(pos, end - pos);
    std::size_t v = 0;
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size() || v == 0) {
      throw UsageError(fmt::format("{} size '{}' is malformed: write {} with positive integers", kernel, text, syntax));
    }
    out.push_back(v);
    if (end == text.size()) break;
    pos = end + 1;
  }
  return out;
}

void require_at_most(std::size_t v, std::size_t limit, std::string_view kernel, std::string_view text,
                     std::string_view what) {
  if (v > limit) {
    throw UsageError(
        fmt::format("{} size '{}' is too large: {} is {} but at most {} is supported "
                    "(the kernel indexes with 32-bit integers); use a smaller size",
                    kernel, text, what, v, limit));
  }
}

HostBuffer random_floats(std::size_t n, std::uint64_t seed, float lo, float hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  HostBuffer v = HostBuffer::floats(n);
  for (auto& x : v.as<float>()) x = dist(rng);
  return v;
}

void check_block(const KernelSpec& k, const Problem& p, const Block& b) {
  if (b.dim >= k.dims() || b.begin >= b.end || b.end > k.split_units(p, b.dim)) {
    throw UsageError(
        fmt::format("{}: block [{}, {}) along dimension {} is empty or outside the "
                    "problem ({} units)",
                    k.name(), b.begin, b.end, b.dim, b.dim < k.dims() ? k.split_units(p, b.dim) : 0));
  }
}

void place_2d(std::size_t width, std::size_t height, const Block& b, const HostBuffer& bo, HostBuffer& full) {
  full.resize(width * height);
  if (b.dim == 1) {
    full.write(b.begin * width, bo);
    return;
  }
  const std::size_t bw = b.size();
  for (std::size_t r = 0; r < height; ++r) full.write(r * width + b.begin, bo, r * bw, bw);
}

OutputPlace place_2d_output(std::size_t width, const Block& b) {
  if (b.dim == 1) return OutputPlace{b.begin * width, 0, 0};
  return OutputPlace{b.begin, b.size(), width};
}

Verdict max_abs_error(const HostBuffer& out, const HostBuffer& ref, double tolerance, std::string_view what,
                      std::string_view unit) {
  Verdict v;
  v.tolerance = tolerance;
  v.detail = fmt::format("{} over {} {}", what, ref.size(), unit);
  if (out.size() != ref.size() || !(out.type() == ref.type())) {
    v.max_error = INFINITY;
    v.detail = fmt::format("output has {} {} of {}, expected {} of {}", out.size(), unit, out.type().name(), ref.size(),
                           ref.type().name());
    return v;
  }
  const auto o = out.as<float>();
  const auto r = ref.as<float>();
  double m = 0;
  for (const double part : parallel_chunks(o.size(), [&](std::size_t lo, std::size_t hi) {
         double cm = 0;
         for (std::size_t i = lo; i < hi; ++i) {
           const double e = std::fabs(static_cast<double>(o[i]) - r[i]);
           if (!(e <= cm)) cm = std::isnan(e) ? INFINITY : e;
         }
         return cm;
       }))
    m = std::max(m, part);
  v.max_error = m;
  v.ok = m <= v.tolerance;
  return v;
}

}  // namespace detail
}  // namespace wstune

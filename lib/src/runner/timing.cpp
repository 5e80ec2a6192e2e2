#include "wstune/timing.hpp"

#include <algorithm>
#include <stdexcept>

#include "wstune/error.hpp"

namespace wstune {

double Samples::median() const {
  if (ms.empty()) return 0;
  std::vector<double> v = ms;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double gbps(std::size_t bytes, const Samples& s) {
  const double median = s.median();
  return median > 0 ? static_cast<double>(bytes) / median / 1e6 : 0;
}

double Samples::min() const {
  return ms.empty() ? 0 : *std::min_element(ms.begin(), ms.end());
}
double Samples::max() const {
  return ms.empty() ? 0 : *std::max_element(ms.begin(), ms.end());
}

namespace {
// Type-7 quantile of sorted, non-empty `v` (q = 0.5 is the median).
double quantile_sorted(const std::vector<double>& v, double q) {
  const double h = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(h);
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (h - static_cast<double>(lo)) * (v[hi] - v[lo]);
}
std::vector<double> sorted(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v;
}
}  // namespace

double Samples::quantile(double q) const {
  if (!(q >= 0 && q <= 1)) throw std::invalid_argument("Samples::quantile: q must be in [0, 1]");
  return ms.empty() ? 0 : quantile_sorted(sorted(ms), q);
}

double Samples::relative_iqr() const {
  if (ms.empty()) return 0;
  const auto v = sorted(ms);  // one sort for all three quantiles
  const double m = quantile_sorted(v, 0.5);
  return m > 0 ? (quantile_sorted(v, 0.75) - quantile_sorted(v, 0.25)) / m : 0;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double event_span_ms(const cl::Event& first, const cl::Event& last) {
  cl_ulong start = 0, end = 0;
  WSTUNE_CL_CHECK(first.getProfilingInfo(CL_PROFILING_COMMAND_START, &start));
  WSTUNE_CL_CHECK(last.getProfilingInfo(CL_PROFILING_COMMAND_END, &end));
  return end >= start ? static_cast<double>(end - start) * 1e-6 : 0.0;
}

}  // namespace wstune

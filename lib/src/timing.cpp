#include "wstune/timing.hpp"

#include <algorithm>

#include "wstune/error.hpp"

namespace wstune {

double Samples::median() const {
  if (ms.empty()) return 0;
  std::vector<double> v = ms;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double Samples::min() const { return ms.empty() ? 0 : *std::min_element(ms.begin(), ms.end()); }
double Samples::max() const { return ms.empty() ? 0 : *std::max_element(ms.begin(), ms.end()); }

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

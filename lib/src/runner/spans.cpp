#include "runner/spans.hpp"

#include <chrono>
#include <stdexcept>

#include "wstune/error.hpp"

namespace wstune::detail {

double host_now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void EventClock::anchor(const cl::Event& e) {
  cl_ulong queued = 0;
  WSTUNE_CL_CHECK(e.getProfilingInfo(CL_PROFILING_COMMAND_QUEUED, &queued));
  if (!anchored_ || queued < queued_ns_) queued_ns_ = queued;
  anchored_ = true;
}

RunSpan EventClock::span(std::string what, int chunk, const cl::Event& first, const cl::Event& last) const {
  if (!anchored_) throw std::logic_error("EventClock::span before anchor()");
  cl_ulong start = 0, end = 0;
  WSTUNE_CL_CHECK(first.getProfilingInfo(CL_PROFILING_COMMAND_START, &start));
  WSTUNE_CL_CHECK(last.getProfilingInfo(CL_PROFILING_COMMAND_END, &end));
  const auto at = [&](cl_ulong ns) {
    return host_ms_ + (static_cast<double>(ns) - static_cast<double>(queued_ns_)) * 1e-6;
  };
  return RunSpan{std::move(what), chunk, at(start), at(std::max(start, end))};
}

}  // namespace wstune::detail

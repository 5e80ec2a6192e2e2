#pragma once
// RunResult::spans: profiling events placed on the host's monotonic clock.
// Internal to libwstune (runner.cpp, overlap.cpp).
#include <string>

#include <CL/opencl.hpp>
#include "runner/runner.hpp"

namespace wstune::detail {

// The host's monotonic clock (std::chrono::steady_clock), ms since its epoch.
double host_now_ms();

// Places a queue's profiling events on the host's clock: start() is read on
// the host just before the call's first command is enqueued, anchor() is
// given the call's events (the earliest CL_PROFILING_COMMAND_QUEUED, the
// first command's, is taken as that host time), span() then converts. One
// device's queues share its timer (OpenCL 1.2 §5.12), so one clock serves
// both queues of an overlapped run. The error is the host's time to
// enqueue the first command (microseconds).
class EventClock {
 public:
  void start() {
    host_ms_ = host_now_ms();
    anchored_ = false;
  }
  // Takes `e`'s queued time as the anchor when it is the earliest seen.
  void anchor(const cl::Event& e);
  [[nodiscard]] bool anchored() const noexcept { return anchored_; }
  // The span from `first`'s start to `last`'s end, on the host's clock
  // (anchored first: throws std::logic_error otherwise).
  [[nodiscard]] RunSpan span(std::string what, int chunk, const cl::Event& first, const cl::Event& last) const;

 private:
  double host_ms_ = 0;
  cl_ulong queued_ns_ = 0;
  bool anchored_ = false;
};

}  // namespace wstune::detail

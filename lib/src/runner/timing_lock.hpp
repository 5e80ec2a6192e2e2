// Exclusive timing across processes that share one device (internal to
// lib/src/runner). See DeviceRunner::run and docs/tuning.md, "Several
// processes on one device".
#pragma once

#include <string>

namespace wstune::detail {

/// The environment variable naming the lock file ("" or unset: no lock).
inline constexpr const char* kTimingLockVariable = "WSTUNE_TIMING_LOCK";

/// Holds an exclusive advisory lock (flock(2), LOCK_EX) on the file named by
/// WSTUNE_TIMING_LOCK for its lifetime, creating the file (mode 0666 less
/// the umask) when missing; with the variable unset or empty it holds
/// nothing. Blocks until the lock is free. Every process that runs timed
/// kernels with the variable set to the same path therefore times them one
/// at a time, while builds, transfers and verification stay concurrent.
/// Throws Error naming the path and the variable when the file cannot be
/// opened or locked.
class TimingLock {
 public:
  TimingLock();
  ~TimingLock();
  TimingLock(const TimingLock&) = delete;
  TimingLock& operator=(const TimingLock&) = delete;
  /// Whether a lock is held (the variable was set).
  [[nodiscard]] bool held() const noexcept { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace wstune::detail

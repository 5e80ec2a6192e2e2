// Exclusive timing across processes that share one device: timing_lock.hpp.
#include "runner/timing_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "wstune/error.hpp"

namespace wstune::detail {

TimingLock::TimingLock() {
  const char* path = std::getenv(kTimingLockVariable);
  if (!path || !*path) return;
  fd_ = ::open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd_ < 0)
    throw Error(fmt::format("{}={}: cannot open the timing lock ({}); name a writable file or unset the variable",
                            kTimingLockVariable, path, std::strerror(errno)));
  int rc;
  do rc = ::flock(fd_, LOCK_EX);
  while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    throw Error(fmt::format("{}={}: cannot lock the timing lock ({}); name a file on a local file system",
                            kTimingLockVariable, path, std::strerror(err)));
  }
}

TimingLock::~TimingLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

}  // namespace wstune::detail

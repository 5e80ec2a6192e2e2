// Host memory shared with another process (shared_memory.hpp).
#include "shared_memory.hpp"

#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "protocol.hpp"

namespace wstune::daemon {

SharedMemory::~SharedMemory() {
  // Buffers must be gone by now; whatever is left is closed, never touched.
  for (auto& [data, m] : live_) {
    ::munmap(const_cast<void*>(data), m.bytes);
    ::close(m.fd);
  }
}

void* SharedMemory::do_allocate(std::size_t bytes, std::size_t alignment) {
  if (bytes < min_bytes_ || alignment > static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)))
    return std::pmr::new_delete_resource()->allocate(bytes, alignment);
  const int fd = ::memfd_create("wstune-result", MFD_CLOEXEC);
  if (fd < 0) return std::pmr::new_delete_resource()->allocate(bytes, alignment);
  void* p = MAP_FAILED;
  if (::ftruncate(fd, static_cast<off_t>(bytes)) == 0)
    p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    ::close(fd);
    return std::pmr::new_delete_resource()->allocate(bytes, alignment);
  }
  std::lock_guard lock(mutex_);
  live_[p] = Mapping{fd, bytes};
  ++made_;
  return p;
}

void SharedMemory::do_deallocate(void* p, std::size_t bytes, std::size_t alignment) {
  {
    std::lock_guard lock(mutex_);
    const auto it = live_.find(p);
    if (it != live_.end()) {
      ::munmap(p, it->second.bytes);
      ::close(it->second.fd);
      live_.erase(it);
      return;
    }
  }
  std::pmr::new_delete_resource()->deallocate(p, bytes, alignment);
}

int SharedMemory::fd_of(const void* data, std::size_t bytes) const {
  std::lock_guard lock(mutex_);
  const auto it = live_.find(data);
  return it != live_.end() && it->second.bytes >= bytes ? it->second.fd : -1;
}

std::size_t SharedMemory::shared_allocations() const {
  std::lock_guard lock(mutex_);
  return made_;
}

HostBuffer map_shared(int fd, ElementType type, std::size_t count) {
  const std::size_t bytes = type.bytes() * count;
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    throw ProtocolError(fmt::format("a shared buffer's memory file cannot be read: {}", std::strerror(errno)));
  if (st.st_size < 0 || static_cast<std::size_t>(st.st_size) < bytes)
    throw ProtocolError(fmt::format("a shared buffer of {} bytes came in a memory file of {} bytes", bytes,
                                    static_cast<long long>(st.st_size)));
  if (bytes == 0) return HostBuffer(type, 0);
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (p == MAP_FAILED)
    throw ProtocolError(fmt::format("mapping a shared buffer of {} bytes failed: {}", bytes, std::strerror(errno)));
  return HostBuffer::adopt(type, count, static_cast<std::byte*>(p),
                           [](std::byte* data, std::size_t n) { ::munmap(data, n); });
}

namespace {
// One byte and room for one descriptor, as sendmsg(2) and recvmsg(2) take them.
struct MarkedByte {
  explicit MarkedByte(char b) : byte(b) {
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
  }
  MarkedByte(const MarkedByte&) = delete;
  MarkedByte& operator=(const MarkedByte&) = delete;
  char byte;
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
};
}  // namespace

void send_marked(int socket, char mark, int fd) {
  MarkedByte m(mark);
  if (fd >= 0) {
    cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  } else {
    m.msg.msg_control = nullptr;
    m.msg.msg_controllen = 0;
  }
  for (;;) {
    const ssize_t w = ::sendmsg(socket, &m.msg, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w != 1) throw ProtocolError(fmt::format("the peer process is gone (sendmsg: {})", std::strerror(errno)));
    return;
  }
}

std::pair<char, int> recv_marked(int socket) {
  MarkedByte m(0);
  ssize_t r = 0;
  do {
    r = ::recvmsg(socket, &m.msg, MSG_CMSG_CLOEXEC);
  } while (r < 0 && errno == EINTR);
  int fd = -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&m.msg); r > 0 && c; c = CMSG_NXTHDR(&m.msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
      std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
  if (r == 0) throw ProtocolError("the peer process is gone (its end of the socket closed)");
  if (r < 0) throw ProtocolError(fmt::format("the peer process is gone (recvmsg: {})", std::strerror(errno)));
  if (m.msg.msg_flags & MSG_CTRUNC) {
    if (fd >= 0) ::close(fd);
    throw ProtocolError("a descriptor from the peer process was cut off (MSG_CTRUNC)");
  }
  return {m.byte, fd};
}

}  // namespace wstune::daemon

// Host memory shared with another process (shared_memory.hpp).
#include "transport/shared_memory.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "protocol/protocol.hpp"

namespace wstune::daemon {

SharedMemory::~SharedMemory() {
  // Buffers must be gone by now; whatever is left is closed, never touched.
  for (auto& [id, f] : files_) {
    ::munmap(f.data, f.bytes);
    ::close(f.fd);
  }
}

// The smallest free file that holds `bytes`, marked used; nullptr when none.
void* SharedMemory::reuse(std::size_t bytes) {
  File* best = nullptr;
  for (auto& [id, f] : files_)
    if (f.free() && f.bytes >= bytes && (!best || f.bytes < best->bytes)) best = &f;
  if (!best) return nullptr;
  best->used = true;
  ++reuses_;
  return best->data;
}

SharedMemory::Files::iterator SharedMemory::find(const void* data) {
  return std::find_if(files_.begin(), files_.end(), [&](const auto& f) { return f.second.data == data; });
}

std::pair<int, void*> make_memory_file(const char* name, std::size_t bytes) {
  const int fd = ::memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return {-1, nullptr};
  void* p = MAP_FAILED;
  if (::ftruncate(fd, static_cast<off_t>(bytes)) == 0 && ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) == 0)
    p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p != MAP_FAILED) return {fd, p};
  ::close(fd);
  return {-1, nullptr};
}

void* SharedMemory::do_allocate(std::size_t bytes, std::size_t alignment) {
  if (bytes >= min_bytes_ && alignment <= static_cast<std::size_t>(::sysconf(_SC_PAGESIZE))) {
    std::lock_guard lock(mutex_);
    if (void* p = reuse(bytes)) return p;
    if (const auto [fd, p] = make_memory_file("wstune-result", bytes); fd >= 0) {
      try {
        files_.emplace(next_id_, File{fd, p, bytes, true, 0});
      } catch (...) {
        ::munmap(p, bytes);
        ::close(fd);
        throw;
      }
      ++next_id_;
      return p;
    }
  }
  return std::pmr::new_delete_resource()->allocate(bytes, alignment);
}

void SharedMemory::do_deallocate(void* p, std::size_t bytes, std::size_t alignment) {
  {
    std::lock_guard lock(mutex_);
    if (const auto it = find(p); it != files_.end()) {
      it->second.used = false;
      trim();
      return;
    }
  }
  std::pmr::new_delete_resource()->deallocate(p, bytes, alignment);
}

// Closes the smallest free files beyond keep_free_.
void SharedMemory::trim() {
  for (;;) {
    std::size_t free = 0;
    auto smallest = files_.end();
    for (auto it = files_.begin(); it != files_.end(); ++it) {
      if (!it->second.free()) continue;
      ++free;
      if (smallest == files_.end() || it->second.bytes < smallest->second.bytes) smallest = it;
    }
    if (free <= keep_free_) return;
    ::munmap(smallest->second.data, smallest->second.bytes);
    ::close(smallest->second.fd);
    forgotten_.push_back(smallest->first);
    files_.erase(smallest);
  }
}

SharedMemory::Lent SharedMemory::lend(const void* data, std::size_t bytes) {
  std::lock_guard lock(mutex_);
  const auto it = find(data);
  if (it == files_.end() || it->second.bytes < bytes) return {};
  ++it->second.lent;
  return Lent{it->second.fd, it->first, it->second.bytes};
}

void SharedMemory::returned(std::uint64_t id) {
  std::lock_guard lock(mutex_);
  const auto it = files_.find(id);
  if (it == files_.end() || it->second.lent == 0) return;
  --it->second.lent;
  trim();
}

std::vector<std::uint64_t> SharedMemory::take_forgotten() {
  std::lock_guard lock(mutex_);
  return std::exchange(forgotten_, {});
}

std::size_t SharedMemory::files_made() const {
  std::lock_guard lock(mutex_);
  return static_cast<std::size_t>(next_id_ - 1);
}

std::size_t SharedMemory::reuses() const {
  std::lock_guard lock(mutex_);
  return reuses_;
}

// ---- PeerMemory ---------------------------------------------------------------

FileMapping::~FileMapping() {
  if (data) ::munmap(data, bytes);
}

struct PeerMemory::State {
  std::mutex mutex;
  std::map<std::uint64_t, std::shared_ptr<FileMapping>> maps;
  std::vector<std::uint64_t> returned;
  std::size_t made = 0;
};

std::shared_ptr<FileMapping> map_memory_file(int fd, std::size_t bytes) {
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    throw ProtocolError(fmt::format("a shared buffer's memory file cannot be read: {}", std::strerror(errno)));
  const auto size = static_cast<std::size_t>(std::max<off_t>(st.st_size, 0));
  if (size < bytes || size == 0)
    throw ProtocolError(fmt::format("a shared buffer of {} bytes came in a memory file of {} bytes", bytes, size));
  const int seals = ::fcntl(fd, F_GET_SEALS);
  if (seals < 0 || !(seals & F_SEAL_SHRINK))
    throw ProtocolError("a shared buffer came in a memory file not sealed against shrinking (F_SEAL_SHRINK)");
  auto m = std::make_shared<FileMapping>(nullptr, size);  // allocated first: a mapping is never left behind
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (p == MAP_FAILED)
    throw ProtocolError(fmt::format("mapping a shared buffer of {} bytes failed: {}", size, std::strerror(errno)));
  m->data = p;
  // A process forked later (the next isolated child) does not inherit it.
  ::madvise(p, size, MADV_DONTFORK);
  return m;
}

PeerMemory::PeerMemory() : state_(std::make_shared<State>()) {}

HostBuffer PeerMemory::adopt(std::uint64_t id, int fd, ElementType type, std::size_t count) {
  const std::size_t bytes = type.bytes() * count;
  std::shared_ptr<FileMapping> m;
  {
    std::lock_guard lock(state_->mutex);
    const auto it = state_->maps.find(id);
    if (it != state_->maps.end() && it->second->bytes >= bytes) m = it->second;
  }
  if (!m) {
    m = map_memory_file(fd, bytes);
    std::lock_guard lock(state_->mutex);
    state_->maps[id] = m;
    ++state_->made;
  }
  std::weak_ptr<State> owner = state_;
  return HostBuffer::adopt(type, count, static_cast<std::byte*>(m->data), [m, owner, id](std::byte*, std::size_t) {
    if (const auto s = owner.lock()) {
      std::lock_guard lock(s->mutex);
      s->returned.push_back(id);
    }
  });
}

std::vector<std::uint64_t> PeerMemory::take_returned() {
  std::lock_guard lock(state_->mutex);
  return std::exchange(state_->returned, {});
}

void PeerMemory::forget(const std::vector<std::uint64_t>& ids) {
  std::lock_guard lock(state_->mutex);
  for (const std::uint64_t id : ids) state_->maps.erase(id);
}

std::size_t PeerMemory::mapped() const {
  std::lock_guard lock(state_->mutex);
  return state_->maps.size();
}

std::size_t PeerMemory::mappings_made() const {
  std::lock_guard lock(state_->mutex);
  return state_->made;
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

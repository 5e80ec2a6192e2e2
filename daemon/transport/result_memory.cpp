// Block results left in the master's memory by workers on its host (result_memory.hpp).
#include "transport/result_memory.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "protocol/protocol.hpp"

namespace wstune::daemon {

using nlohmann::json;

namespace {
// The header: this magic, then the nonce (u64, host byte order).
constexpr char kMagic[16] = "wstune-results1";

std::size_t page_size() {
  return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

std::size_t round_up(std::size_t n, std::size_t to) {
  return (n + to - 1) / to * to;
}

std::uint64_t header_nonce(const std::byte* map) {
  if (std::memcmp(map, kMagic, sizeof kMagic) != 0) return 0;
  std::uint64_t nonce = 0;
  std::memcpy(&nonce, map + sizeof kMagic, sizeof nonce);
  return nonce;
}
}  // namespace

json to_json(const ResultSlot& s) {
  return json{{"path", s.path}, {"bytes", s.bytes}, {"nonce", s.nonce}};
}

ResultSlot result_slot_from_json(const json& j) {
  return ResultSlot{j.at("path").get<std::string>(), j.at("bytes").get<std::uint64_t>(),
                    j.at("nonce").get<std::uint64_t>()};
}

json to_json(const SharedOutput& s) {
  return json{{"index", s.index}, {"offset", s.offset}, {"type", s.type.name()}, {"count", s.count}};
}

SharedOutput shared_output_from_json(const json& j) {
  SharedOutput s{j.at("index").get<std::size_t>(), j.at("offset").get<std::uint64_t>(), kFloat32,
                 j.at("count").get<std::uint64_t>()};
  try {
    s.type = parse_element_type(j.at("type").get<std::string>());
  } catch (const std::invalid_argument& e) {
    throw ProtocolError(fmt::format("a shared output's type: {}", e.what()));
  }
  return s;
}

// ---- ResultMemory (the master) ------------------------------------------------

ResultMemory::ResultMemory() : random_(std::random_device{}()) {}

ResultMemory::~ResultMemory() {
  for (auto& [rank, f] : files_) ::close(f.fd);  // the mappings go with files_
}

std::optional<ResultSlot> ResultMemory::slot(int rank, std::size_t bytes) {
  std::lock_guard lock(mutex_);
  auto it = files_.find(rank);
  if (it == files_.end() || it->second.bytes < bytes) {
    if (it != files_.end()) {
      ::close(it->second.fd);
      files_.erase(it);  // unmaps it
    }
    const std::size_t data = round_up(std::max<std::size_t>(bytes, 1), page_size());
    const auto [fd, p] = make_memory_file("wstune-slot", kResultHeaderBytes + data);
    if (fd < 0) return std::nullopt;
    File f{fd, std::make_shared<FileMapping>(p, kResultHeaderBytes + data), data,
           random_() | 1};  // never 0: "no header"
    std::memcpy(f.base(), kMagic, sizeof kMagic);
    std::memcpy(f.base() + sizeof kMagic, &f.nonce, sizeof f.nonce);
    it = files_.emplace(rank, std::move(f)).first;
  }
  return ResultSlot{fmt::format("/proc/{}/fd/{}", ::getpid(), it->second.fd), it->second.bytes, it->second.nonce};
}

HostBuffer ResultMemory::view(int rank, const SharedOutput& out) const {
  std::lock_guard lock(mutex_);
  const auto it = files_.find(rank);
  if (it == files_.end())
    throw ProtocolError(fmt::format("rank {} left an output in shared memory but was given no slot", rank));
  const File& f = it->second;
  if (out.offset > f.bytes || out.count > (f.bytes - out.offset) / out.type.bytes())
    throw ProtocolError(
        fmt::format("rank {}'s output {} ({} elements of {} at offset {}) lies outside its slot of {} "
                    "bytes",
                    rank, out.index, out.count, out.type.name(), out.offset, f.bytes));
  if (out.offset % out.type.scalar_bytes() != 0)
    throw ProtocolError(fmt::format("rank {}'s output {} at offset {} is misaligned for {}", rank, out.index,
                                    out.offset, out.type.name()));
  return HostBuffer::adopt(out.type, out.count, f.base() + kResultHeaderBytes + out.offset,
                           [](std::byte*, std::size_t) {});
}

// ---- ResultTarget (the worker) ------------------------------------------------

ResultTarget::ResultTarget(std::pmr::memory_resource* upstream)
    : upstream_(upstream ? upstream : std::pmr::get_default_resource()) {}

ResultTarget::~ResultTarget() {
  unmap();
}

void ResultTarget::unmap() noexcept {
  map_.reset();
  path_.clear();
  nonce_ = 0;
  active_ = false;
}

void ResultTarget::clear() noexcept {
  active_ = false;
  used_ = 0;
}

std::string ResultTarget::begin(const ResultSlot& slot) {
  clear();
  if (slot.bytes > std::numeric_limits<std::size_t>::max() - kResultHeaderBytes)
    return fmt::format("the master's result slot {} names {} bytes, more than can be mapped", slot.path, slot.bytes);
  const std::size_t want = kResultHeaderBytes + slot.bytes;
  if (map_ && (path_ != slot.path || nonce_ != slot.nonce || map_->bytes < want || header_nonce(base()) != slot.nonce))
    unmap();
  if (!map_) {
    const int fd = ::open(slot.path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) return fmt::format("cannot open the master's result file {}: {}", slot.path, std::strerror(errno));
    try {
      map_ = map_memory_file(fd, want);
    } catch (const ProtocolError& e) {
      ::close(fd);
      return fmt::format("the master's result file {}: {}", slot.path, e.what());
    }
    ::close(fd);
    if (header_nonce(base()) != slot.nonce) {
      unmap();
      return fmt::format("{} is not the master's result file (its nonce differs: another host's process?)", slot.path);
    }
    path_ = slot.path;
    nonce_ = slot.nonce;
    ++mappings_;
  }
  active_ = true;
  return {};
}

std::optional<std::uint64_t> ResultTarget::offset_of(const std::byte* data, std::size_t bytes) const noexcept {
  if (!map_ || data < base() + kResultHeaderBytes || data > base() + map_->bytes) return std::nullopt;
  const auto offset = static_cast<std::size_t>(data - (base() + kResultHeaderBytes));
  if (bytes > map_->bytes - kResultHeaderBytes - offset) return std::nullopt;
  return offset;
}

void* ResultTarget::do_allocate(std::size_t bytes, std::size_t alignment) {
  if (active_) {
    const std::size_t data = map_->bytes - kResultHeaderBytes;
    // Page-aligned, as each output of the isolated process's SharedMemory is
    // (a file of its own): a driver may stage a read into unaligned pageable
    // memory more slowly.
    const std::size_t at = round_up(used_, std::max(alignment, page_size()));
    if (at <= data && bytes <= data - at) {
      used_ = at + bytes;
      return base() + kResultHeaderBytes + at;
    }
  }
  return upstream_->allocate(bytes, alignment);
}

void ResultTarget::do_deallocate(void* p, std::size_t bytes, std::size_t alignment) {
  // Placed in the slot: nothing to free (begin() starts over).
  if (offset_of(static_cast<const std::byte*>(p), bytes)) return;
  upstream_->deallocate(p, bytes, alignment);
}

}  // namespace wstune::daemon

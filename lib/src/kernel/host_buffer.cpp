// Element types and typed host buffers (host_buffer.hpp).
#include "kernel/host_buffer.hpp"

#include <array>
#include <bit>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace wstune {
namespace {

struct ScalarInfo {
  ScalarType type;
  const char* name;
  std::size_t bytes;
};
constexpr std::array<ScalarInfo, 12> kScalars{{{ScalarType::boolean, "bool", 1},
                                               {ScalarType::i8, "int8", 1},
                                               {ScalarType::u8, "uint8", 1},
                                               {ScalarType::i16, "int16", 2},
                                               {ScalarType::u16, "uint16", 2},
                                               {ScalarType::i32, "int32", 4},
                                               {ScalarType::u32, "uint32", 4},
                                               {ScalarType::i64, "int64", 8},
                                               {ScalarType::u64, "uint64", 8},
                                               {ScalarType::f16, "half", 2},
                                               {ScalarType::f32, "float", 4},
                                               {ScalarType::f64, "double", 8}}};

const ScalarInfo& info(ScalarType t) {
  return kScalars[static_cast<std::size_t>(t)];
}

// IEEE 754 binary16 <-> binary32/64.
double half_to_double(std::uint16_t h) {
  const int sign = (h >> 15) ? -1 : 1;
  const int exp = (h >> 10) & 0x1f;
  const int man = h & 0x3ff;
  if (exp == 0) return sign * std::ldexp(man, -24);
  if (exp == 31) return man ? NAN : sign * INFINITY;
  return sign * std::ldexp(man + 1024, exp - 25);
}

std::uint16_t double_to_half(double v) {
  const auto f = static_cast<float>(v);
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (x >> 16) & 0x8000;
  const std::uint32_t abs = x & 0x7fffffff;
  if (abs >= 0x7f800000) return static_cast<std::uint16_t>(sign | 0x7c00 | (abs > 0x7f800000 ? 0x200 : 0));
  if (abs >= 0x477ff000) return static_cast<std::uint16_t>(sign | 0x7c00);  // rounds to infinity
  if (abs < 0x38800000) {  // subnormal half (or zero): round the value to a multiple of 2^-24
    const float scaled = std::bit_cast<float>(abs) * 16777216.0f;  // exact in float
    return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(std::nearbyint(scaled)));
  }
  // Normal: drop 13 mantissa bits, rounding to nearest even.
  const std::uint32_t rebiased = abs - 0x38000000;
  const std::uint32_t lsb = (rebiased >> 13) & 1;
  return static_cast<std::uint16_t>(sign | ((rebiased + 0xfff + lsb) >> 13));
}

template <class T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T>
void store(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof v);
}
// v truncated toward zero and clamped to T's range (NaN gives 0): a
// conversion that is never undefined behaviour.
template <class T>
T saturate(double v) {
  if (std::isnan(v)) return T{0};
  v = std::trunc(v);
  if (v <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

}  // namespace

std::size_t ElementType::scalar_bytes() const noexcept {
  return info(scalar).bytes;
}
std::size_t ElementType::bytes() const noexcept {
  return scalar_bytes() * width;
}
bool ElementType::is_float() const noexcept {
  return scalar == ScalarType::f16 || scalar == ScalarType::f32 || scalar == ScalarType::f64;
}
std::string ElementType::name() const {
  return width == 1 ? std::string(info(scalar).name) : fmt::format("{}{}", info(scalar).name, width);
}

ElementType parse_element_type(std::string_view name) {
  for (const auto& s : kScalars) {
    const std::string_view base = s.name;
    if (name.substr(0, base.size()) != base) continue;
    const std::string_view rest = name.substr(base.size());
    if (rest.empty()) return {s.type, 1};
    if (s.type == ScalarType::boolean ||
        !(s.type == ScalarType::f16 || s.type == ScalarType::f32 || s.type == ScalarType::f64))
      continue;  // T1 names vectors of half, float and double only
    for (unsigned w : {2u, 4u, 8u, 16u})
      if (rest == std::to_string(w)) return {s.type, w};
  }
  throw std::invalid_argument(fmt::format(
      "unknown argument type '{}': use bool, int8, uint8, int16, uint16, int32, uint32, int64, uint64, half, "
      "float or double, or half/float/double with 2, 4, 8 or 16 components (e.g. float4)",
      name));
}

namespace {
// The memory of one HostBuffer::adopt(): its first allocation that fits is
// the adopted memory, anything else (a resize that grows) the heap's. It
// deletes itself when the last of its allocations is returned. Only one
// buffer ever holds it: a copy gets the default heap, and a move leaves the
// source on the default heap (host_buffer.hpp).
class AdoptedMemory final : public std::pmr::memory_resource {
 public:
  AdoptedMemory(std::byte* data, std::size_t bytes, HostBuffer::Release release)
      : data_(data), bytes_(bytes), release_(std::move(release)) {}

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    void* p = nullptr;
    if (!handed_ && bytes <= bytes_) {
      handed_ = true;
      p = data_;
    } else {
      p = std::pmr::new_delete_resource()->allocate(bytes, alignment);
    }
    ++live_;
    return p;
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override {
    if (p == data_) {
      data_ = nullptr;  // released once, even if the heap hands out the address again
      if (release_) release_(static_cast<std::byte*>(p), bytes_);
    } else {
      std::pmr::new_delete_resource()->deallocate(p, bytes, alignment);
    }
    if (--live_ == 0) delete this;
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }
  std::byte* data_;
  std::size_t bytes_;
  HostBuffer::Release release_;
  bool handed_ = false;
  std::size_t live_ = 0;
};
}  // namespace

HostBuffer HostBuffer::uninitialized(ElementType type, std::size_t count, std::pmr::memory_resource* memory) {
  return HostBuffer(type, Bytes(type.bytes() * count, memory ? memory : std::pmr::get_default_resource()));
}

HostBuffer HostBuffer::adopt(ElementType type, std::size_t count, std::byte* data, Release release) {
  const std::size_t bytes = type.bytes() * count;
  if (bytes == 0) {
    if (release) release(data, 0);
    return HostBuffer(type, 0);
  }
  auto* memory = new AdoptedMemory(data, bytes, std::move(release));
  return HostBuffer(type, Bytes(bytes, memory));  // allocates `data` itself: no copy, no zeroing
}

HostBuffer HostBuffer::of(const std::vector<float>& values) {
  HostBuffer b = floats(values.size());
  if (!values.empty()) std::memcpy(b.data(), values.data(), b.bytes());
  return b;
}

HostBuffer HostBuffer::view(std::size_t first, std::size_t count) const {
  if (first > size() || count > size() - first)
    throw std::out_of_range(fmt::format("view [{}, {}) of a {}-element buffer", first, first + count, size()));
  // adopt() takes a writable pointer; the view's documentation says writes reach this buffer.
  auto* at = const_cast<std::byte*>(data()) + first * type_.bytes();  // NOLINT(cppcoreguidelines-pro-type-const-cast)
  return adopt(type_, count, at, nullptr);
}

HostBuffer HostBuffer::slice(std::size_t first, std::size_t count) const {
  if (first > size() || count > size() - first)
    throw std::out_of_range(fmt::format("slice [{}, {}) of a {}-element buffer", first, first + count, size()));
  HostBuffer out = uninitialized(type_, count);
  if (count) std::memcpy(out.data(), data() + first * type_.bytes(), out.bytes());
  return out;
}

void HostBuffer::write(std::size_t first, const HostBuffer& src, std::size_t src_first, std::size_t count) {
  if (!(src.type_ == type_))
    throw std::invalid_argument(fmt::format("write of {} into a {} buffer", src.type_.name(), type_.name()));
  if (src_first > src.size() || count > src.size() - src_first || first > size() || count > size() - first)
    throw std::out_of_range(
        fmt::format("write of elements [{}, {}) of a {}-element buffer at {} into a "
                    "{}-element buffer",
                    src_first, src_first + count, src.size(), first, size()));
  if (count) std::memcpy(data() + first * type_.bytes(), src.data() + src_first * type_.bytes(), count * type_.bytes());
}

void HostBuffer::check_size(std::size_t t) const {
  if (t != type_.bytes())
    throw std::invalid_argument(
        fmt::format("a {} buffer viewed as a type of {} bytes (elements have {})", type_.name(), t, type_.bytes()));
}

double component(const HostBuffer& b, std::size_t k) {
  const std::byte* p = b.data() + k * b.type().scalar_bytes();
  switch (b.type().scalar) {
    case ScalarType::boolean:
      return load<std::uint8_t>(p) != 0;
    case ScalarType::i8:
      return load<std::int8_t>(p);
    case ScalarType::u8:
      return load<std::uint8_t>(p);
    case ScalarType::i16:
      return load<std::int16_t>(p);
    case ScalarType::u16:
      return load<std::uint16_t>(p);
    case ScalarType::i32:
      return load<std::int32_t>(p);
    case ScalarType::u32:
      return load<std::uint32_t>(p);
    case ScalarType::i64:
      return static_cast<double>(load<std::int64_t>(p));
    case ScalarType::u64:
      return static_cast<double>(load<std::uint64_t>(p));
    case ScalarType::f16:
      return half_to_double(load<std::uint16_t>(p));
    case ScalarType::f32:
      return load<float>(p);
    case ScalarType::f64:
      return load<double>(p);
  }
  return 0;
}

void set_component(HostBuffer& b, std::size_t k, double v) {
  std::byte* p = b.data() + k * b.type().scalar_bytes();
  switch (b.type().scalar) {
    case ScalarType::boolean:
      store<std::uint8_t>(p, v != 0);
      return;
    case ScalarType::i8:
      store(p, saturate<std::int8_t>(v));
      return;
    case ScalarType::u8:
      store(p, saturate<std::uint8_t>(v));
      return;
    case ScalarType::i16:
      store(p, saturate<std::int16_t>(v));
      return;
    case ScalarType::u16:
      store(p, saturate<std::uint16_t>(v));
      return;
    case ScalarType::i32:
      store(p, saturate<std::int32_t>(v));
      return;
    case ScalarType::u32:
      store(p, saturate<std::uint32_t>(v));
      return;
    case ScalarType::i64:
      store(p, saturate<std::int64_t>(v));
      return;
    case ScalarType::u64:
      store(p, saturate<std::uint64_t>(v));
      return;
    case ScalarType::f16:
      store(p, double_to_half(v));
      return;
    case ScalarType::f32:
      store(p, static_cast<float>(v));
      return;
    case ScalarType::f64:
      store(p, v);
      return;
  }
}

}  // namespace wstune

#pragma once
/// @file host_buffer.hpp
/// Host data of kernel arguments: element types (the OpenCL C scalar and
/// vector types a T1 tuning file names) and a typed buffer of raw bytes.
/// Sources: OpenCL 1.2 §6.1.1–§6.1.2 (built-in scalar and vector data types),
/// TuningSchema T1 `KernelSpecification.Arguments[].Type`.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <memory_resource>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace wstune {

/// An OpenCL C scalar type (OpenCL 1.2 §6.1.1). `boolean` is one byte on the
/// host (T1 "bool"; OpenCL C has no bool kernel arguments, so such an argument
/// must be declared uchar or char in the kernel).
enum class ScalarType : std::uint8_t { boolean, i8, u8, i16, u16, i32, u32, i64, u64, f16, f32, f64 };

/// An element type: a scalar, or an OpenCL vector of 2, 4, 8 or 16 of one
/// (OpenCL 1.2 §6.1.2; 3-component vectors take the space of 4).
struct ElementType {
  ScalarType scalar = ScalarType::f32;  ///< the component type
  unsigned width = 1;                   ///< components: 1, 2, 4, 8 or 16

  /// Bytes of one element (half = 2, float4 = 16, double16 = 128).
  [[nodiscard]] std::size_t bytes() const noexcept;
  /// Bytes of one component.
  [[nodiscard]] std::size_t scalar_bytes() const noexcept;
  /// True for half, float and double components.
  [[nodiscard]] bool is_float() const noexcept;
  /// The T1 name: "bool", "int8" … "uint64", "half", "float", "double",
  /// with the width appended for vectors ("float4").
  [[nodiscard]] std::string name() const;
  friend bool operator==(const ElementType&, const ElementType&) = default;
};

/// Parses a T1 type name ("int32", "float4", "half", …); throws
/// std::invalid_argument naming the text and the accepted names otherwise
/// (T1's "custom" is not an OpenCL type wstune can fill or compare).
ElementType parse_element_type(std::string_view name);

/// float32, the element type of wstune's four built-in kernels.
inline constexpr ElementType kFloat32{ScalarType::f32, 1};

namespace detail {
/// The allocator of HostBuffer's bytes: a std::pmr::polymorphic_allocator
/// whose construct() without a value leaves the byte as it is
/// (default-initialisation), so a buffer can take its size without writing
/// it (HostBuffer::uninitialized, HostBuffer::adopt). HostBuffer zeroes
/// explicitly wherever it promises zeros. A copy of a container gets the
/// default heap, as with polymorphic_allocator.
template <class T>
class ByteAllocator : public std::pmr::polymorphic_allocator<T> {
 public:
  using std::pmr::polymorphic_allocator<T>::polymorphic_allocator;
  /// The default resource (std::pmr::get_default_resource()).
  ByteAllocator() noexcept = default;
  /// The same resource as `other`.
  template <class U>
  ByteAllocator(const ByteAllocator<U>& other) noexcept  // NOLINT: implicit like polymorphic_allocator's
      : std::pmr::polymorphic_allocator<T>(other.resource()) {}
  /// Default-initialises `*p` (no zeroing for bytes).
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  /// Constructs `*p` from `args` as polymorphic_allocator does.
  template <class U, class A0, class... A>
  void construct(U* p, A0&& a0, A&&... args) {
    std::pmr::polymorphic_allocator<T>::construct(p, std::forward<A0>(a0), std::forward<A>(args)...);
  }
  /// A copied container gets the default heap.
  [[nodiscard]] ByteAllocator select_on_container_copy_construction() const noexcept { return ByteAllocator(); }
};
}  // namespace detail

/// `count` elements of one ElementType as raw host bytes (zeroed on
/// creation, except through uninitialized() and adopt()). Typed access
/// through as<T>(), whose T must have the element's size. Copyable value
/// type; not thread-safe for concurrent writes.
/// The bytes come from a std::pmr::memory_resource: the default heap, or one
/// given at construction (e.g. PinnedMemory, pinned_memory.hpp, for DMA
/// transfers). A move (construction or assignment) takes the source's bytes
/// and resource and leaves the source empty on the default heap; a copy
/// gets the default heap; copy assignment keeps the target's resource.
class HostBuffer {
 public:
  /// No elements, float32.
  HostBuffer() = default;
  /// A copy on the default heap.
  HostBuffer(const HostBuffer&) = default;
  /// Copies the bytes into this buffer's memory (its resource is kept).
  HostBuffer& operator=(const HostBuffer&) = default;
  /// Takes `other`'s bytes and resource; `other` is left empty on the default heap.
  HostBuffer(HostBuffer&& other) noexcept : type_(other.type_), bytes_(std::move(other.bytes_)) { other.reset(); }
  /// Lets this buffer's memory go, then takes `other`'s bytes and resource;
  /// `other` is left empty on the default heap.
  HostBuffer& operator=(HostBuffer&& other) noexcept {
    if (this != &other) {
      type_ = other.type_;
      std::destroy_at(&bytes_);
      std::construct_at(&bytes_, std::move(other.bytes_));
      other.reset();
    }
    return *this;
  }
  ~HostBuffer() = default;
  /// `count` zeroed elements of `type`.
  HostBuffer(ElementType type, std::size_t count) : type_(type), bytes_(type.bytes() * count) { zero(0); }
  /// `count` zeroed elements of `type` whose bytes come from `memory`
  /// (which must outlive the buffer).
  HostBuffer(ElementType type, std::size_t count, std::pmr::memory_resource* memory)
      : type_(type), bytes_(type.bytes() * count, memory) {
    zero(0);
  }
  /// `count` zeroed float32 elements.
  static HostBuffer floats(std::size_t count) { return HostBuffer(kFloat32, count); }
  /// `count` elements of `type` whose bytes are not written (whatever the
  /// allocation held): for a buffer that is filled at once, e.g. by a
  /// read-back or a receive, where zeroing a large buffer costs milliseconds.
  /// The bytes come from `memory` (the default heap when null; it must
  /// outlive the buffer).
  static HostBuffer uninitialized(ElementType type, std::size_t count, std::pmr::memory_resource* memory = nullptr);
  /// Releases memory handed to HostBuffer::adopt(): called once with the
  /// pointer and the byte count that were adopted.
  using Release = std::function<void(std::byte* data, std::size_t bytes)>;
  /// A buffer over `count` elements of `type` at `data`, which the caller
  /// hands over without a copy (e.g. a shared-memory mapping): the buffer
  /// calls `release(data, count × type.bytes())` exactly once, when it lets
  /// the memory go (destroyed, assigned another buffer by a move, or grown
  /// past it by resize() or a copy assignment). `data` must hold that many
  /// bytes, aligned for the type. A copy of the buffer lives on the default
  /// heap. With `count` 0, `release` is called at once. `release` runs on
  /// the thread that lets the memory go.
  static HostBuffer adopt(ElementType type, std::size_t count, std::byte* data, Release release);
  /// A float32 buffer holding `values`.
  static HostBuffer of(const std::vector<float>& values);

  /// The element type.
  [[nodiscard]] const ElementType& type() const noexcept { return type_; }
  /// Number of elements.
  [[nodiscard]] std::size_t size() const noexcept { return bytes_.size() / type_.bytes(); }
  /// Number of bytes (size() × type().bytes()).
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_.size(); }
  /// True without elements.
  [[nodiscard]] bool empty() const noexcept { return bytes_.empty(); }
  /// The bytes.
  [[nodiscard]] std::byte* data() noexcept { return bytes_.data(); }
  /// The bytes.
  [[nodiscard]] const std::byte* data() const noexcept { return bytes_.data(); }
  /// Resizes to `count` elements (new ones zeroed).
  void resize(std::size_t count) {
    const std::size_t had = bytes_.size();
    bytes_.resize(count * type_.bytes());
    zero(had);
  }
  /// Elements [first, first + count) as a new buffer; throws std::out_of_range beyond the end.
  [[nodiscard]] HostBuffer slice(std::size_t first, std::size_t count) const;
  /// Elements [first, first + count) of this buffer without a copy: a buffer
  /// over this one's bytes (adopt() with nothing to release). It is valid
  /// while this buffer lives and keeps its bytes (not resized, assigned or
  /// moved from); writes through it write this buffer. A copy of the view
  /// lives on the default heap; growing the view by resize() moves it there.
  /// For passing part of a large buffer where a HostBuffer is expected
  /// (KernelSpec::block_inputs). Throws std::out_of_range beyond the end.
  [[nodiscard]] HostBuffer view(std::size_t first, std::size_t count) const;
  /// view() of every element.
  [[nodiscard]] HostBuffer view() const { return view(0, size()); }
  /// Copies `src`'s elements to element offset `first` (same type; throws
  /// std::invalid_argument for another type, std::out_of_range beyond the end).
  void write(std::size_t first, const HostBuffer& src) { write(first, src, 0, src.size()); }
  /// Copies `src`'s elements [src_first, src_first + count) to element offset
  /// `first` (same type; throws std::invalid_argument for another type,
  /// std::out_of_range beyond either end).
  void write(std::size_t first, const HostBuffer& src, std::size_t src_first, std::size_t count);

  /// The elements as T (sizeof(T) must equal type().bytes(): float for
  /// float32, std::uint16_t for half, …); throws std::invalid_argument otherwise.
  template <class T>
  [[nodiscard]] std::span<T> as() {
    check_size(sizeof(T));
    return {reinterpret_cast<T*>(bytes_.data()), size()};
  }
  /// Read-only as<T>().
  template <class T>
  [[nodiscard]] std::span<const T> as() const {
    check_size(sizeof(T));
    return {reinterpret_cast<const T*>(bytes_.data()), size()};
  }
  /// Same type and bytes.
  friend bool operator==(const HostBuffer& a, const HostBuffer& b) {
    return a.type_ == b.type_ && a.bytes_ == b.bytes_;
  }

 private:
  using Bytes = std::vector<std::byte, detail::ByteAllocator<std::byte>>;
  HostBuffer(ElementType type, Bytes bytes) : type_(type), bytes_(std::move(bytes)) {}
  void check_size(std::size_t t) const;
  // Empty on the default heap (no hold on a moved-away resource).
  void reset() noexcept {
    std::destroy_at(&bytes_);
    std::construct_at(&bytes_);
  }
  // Zeroes the bytes from `from` on.
  void zero(std::size_t from) noexcept {
    if (from < bytes_.size()) std::memset(bytes_.data() + from, 0, bytes_.size() - from);
  }
  ElementType type_ = kFloat32;
  Bytes bytes_;
};

/// Component `k` (0-based over all components of all elements) of `b` as a
/// double: integers and bools converted, half decoded (IEEE 754 binary16).
double component(const HostBuffer& b, std::size_t k);
/// Stores `v` into component `k` of `b`, converted to the component type
/// (integers truncated toward zero and clamped to the type's range, NaN as 0;
/// bools as v != 0; half encoded, rounding to nearest even).
void set_component(HostBuffer& b, std::size_t k, double v);
/// Number of components of `b` (size() × type().width).
inline std::size_t components(const HostBuffer& b) {
  return b.size() * b.type().width;
}

}  // namespace wstune

// Typed host buffers, configurations and the search space of a kernel with
// tuning parameters (no OpenCL).
#include <gtest/gtest.h>

#include <rapidcheck.h>
#include <rapidcheck/gtest.h>
#include <cstdlib>
#include <cstring>
#include <memory_resource>

#include <cmath>
#include <functional>
#include <set>

#include "kernel/host_buffer.hpp"
#include "space/search_space.hpp"
#include "wstune/configuration.hpp"
#include "wstune/error.hpp"

using namespace wstune;
using nlohmann::json;

TEST(ElementType, NamesSizesAndParsing) {
  EXPECT_EQ(parse_element_type("float4").bytes(), 16u);
  EXPECT_EQ(parse_element_type("double16").bytes(), 128u);
  EXPECT_EQ(parse_element_type("half").bytes(), 2u);
  EXPECT_EQ(parse_element_type("uint64").bytes(), 8u);
  EXPECT_EQ(parse_element_type("bool").bytes(), 1u);
  for (const char* n : {"bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "half",
                        "half2", "float", "float8", "double", "double4"})
    EXPECT_EQ(parse_element_type(n).name(), n);
  for (const char* bad : {"float3", "int4", "custom", "", "floaty", "double32", "bool2"})
    EXPECT_THROW((void)parse_element_type(bad), std::invalid_argument) << bad;
}

TEST(HostBuffer, TypedViewsSlicesAndWrites) {
  HostBuffer b = HostBuffer::of({1.f, 2.f, 3.f, 4.f});
  EXPECT_EQ(b.size(), 4u);
  EXPECT_EQ(b.bytes(), 16u);
  EXPECT_EQ(b.slice(1, 2).as<float>()[1], 3.f);
  EXPECT_THROW((void)b.slice(3, 2), std::out_of_range);
  EXPECT_THROW((void)b.as<double>(), std::invalid_argument);
  b.write(2, HostBuffer::of({9.f}));
  EXPECT_EQ(b.as<float>()[2], 9.f);
  EXPECT_THROW(b.write(4, HostBuffer::of({1.f})), std::out_of_range);
  EXPECT_THROW(b.write(0, HostBuffer(ElementType{ScalarType::i32, 1}, 1)), std::invalid_argument);
  HostBuffer v(ElementType{ScalarType::f32, 4}, 2);
  EXPECT_EQ(components(v), 8u);
  set_component(v, 5, -1.5);
  EXPECT_EQ(component(v, 5), -1.5);
}

namespace {
// Memory that hands out 0xAB bytes: shows which constructors write their buffer.
class DirtyMemory final : public std::pmr::memory_resource {
  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    void* p = std::pmr::new_delete_resource()->allocate(bytes, alignment);
    std::memset(p, 0xAB, bytes);
    return p;
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override {
    std::pmr::new_delete_resource()->deallocate(p, bytes, alignment);
  }
  bool do_is_equal(const std::pmr::memory_resource& o) const noexcept override { return this == &o; }
};
bool all_bytes(const HostBuffer& b, unsigned char v) {
  for (std::size_t i = 0; i < b.bytes(); ++i)
    if (static_cast<unsigned char>(b.data()[i]) != v) return false;
  return true;
}
}  // namespace

// Buffers are zeroed, except uninitialized() ones (a read-back or receive
// fills them: zeroing 64 MB cost milliseconds per block); resize zeroes
// what it adds.
TEST(HostBuffer, ZeroedUnlessMadeUninitialized) {
  DirtyMemory dirty;
  HostBuffer z(kFloat32, 1000, &dirty);
  EXPECT_TRUE(all_bytes(z, 0));
  HostBuffer u = HostBuffer::uninitialized(kFloat32, 1000, &dirty);
  ASSERT_EQ(u.size(), 1000u);
  EXPECT_TRUE(all_bytes(u, 0xAB)) << "uninitialized() wrote its bytes";
  u.as<float>()[0] = 5.f;
  u.resize(3000);  // reallocates from `dirty`: the old bytes move, the new ones are zeroed
  EXPECT_EQ(u.as<float>()[0], 5.f);
  EXPECT_EQ(u.as<float>()[2999], 0.f);
  EXPECT_EQ(u.as<float>()[1000], 0.f);
  const HostBuffer copy = u;  // a copy lives on the heap with the same bytes
  EXPECT_EQ(copy, u);
}

// adopt(): the buffer is the caller's memory (no copy), moves keep it, a
// copy does not, and the memory is released exactly once.
TEST(HostBuffer, AdoptedMemoryIsUsedInPlaceAndReleasedOnce) {
  std::vector<float> storage{1.f, 2.f, 3.f, 4.f};
  auto* at = reinterpret_cast<std::byte*>(storage.data());
  int releases = 0;
  std::size_t released_bytes = 0;
  {
    HostBuffer a = HostBuffer::adopt(kFloat32, 4, at, [&](std::byte* p, std::size_t n) {
      EXPECT_EQ(p, at);
      released_bytes = n;
      ++releases;
    });
    EXPECT_EQ(a.data(), at);
    EXPECT_EQ(a.as<float>()[2], 3.f);
    HostBuffer moved = std::move(a);
    EXPECT_EQ(moved.data(), at);
    HostBuffer copy = moved;
    EXPECT_NE(copy.data(), at);
    EXPECT_EQ(copy, moved);
    moved.as<float>()[0] = 9.f;
    EXPECT_EQ(storage[0], 9.f) << "the buffer writes the adopted memory itself";
    EXPECT_EQ(releases, 0);
  }
  EXPECT_EQ(releases, 1);
  EXPECT_EQ(released_bytes, 16u);
  // Grown past the adopted memory: released at the reallocation, the bytes kept.
  releases = 0;
  HostBuffer g = HostBuffer::adopt(kFloat32, 4, at, [&](std::byte*, std::size_t) { ++releases; });
  g.resize(100);
  EXPECT_EQ(releases, 1);
  EXPECT_EQ(g.as<float>()[3], 4.f);
  EXPECT_EQ(g.as<float>()[99], 0.f);
  // Moved out, the target dropped, the source reused: the source is on the
  // heap, not on the released memory's resource.
  releases = 0;
  HostBuffer src = HostBuffer::adopt(kFloat32, 4, at, [&](std::byte*, std::size_t) { ++releases; });
  {
    HostBuffer dst = std::move(src);
    EXPECT_TRUE(src.empty());  // NOLINT(bugprone-use-after-move): the moved-from state is documented
  }
  EXPECT_EQ(releases, 1);
  src = HostBuffer::floats(8);
  src = HostBuffer(kFloat32, 16);
  src.resize(32);
  EXPECT_EQ(src.size(), 32u);
  // Move-assigned over: released then, not later.
  releases = 0;
  HostBuffer over = HostBuffer::adopt(kFloat32, 4, at, [&](std::byte*, std::size_t) { ++releases; });
  over = HostBuffer::floats(2);
  EXPECT_EQ(releases, 1);
  EXPECT_EQ(over.size(), 2u);
  // Released once although the heap may hand the address out again.
  int frees = 0;
  auto* owned = static_cast<std::byte*>(std::malloc(64));
  {
    HostBuffer m = HostBuffer::adopt(kFloat32, 16, owned, [&](std::byte* p, std::size_t) {
      ++frees;
      std::free(p);
    });
    m.resize(17);
    m.resize(40);
    m.resize(100);
  }
  EXPECT_EQ(frees, 1);
  // Nothing adopted: released at once.
  releases = 0;
  const HostBuffer none = HostBuffer::adopt(kFloat32, 0, at, [&](std::byte*, std::size_t) { ++releases; });
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(releases, 1);
}

// view(): part of a buffer without a copy; the buffer viewed is untouched when the view goes.
TEST(HostBuffer, ViewsShareTheBytesAndCopiesDoNot) {
  HostBuffer src = HostBuffer::of({1, 2, 3, 4, 5, 6});
  {
    HostBuffer v = src.view(2, 3);
    ASSERT_EQ(v.size(), 3u);
    EXPECT_EQ(v.data(), src.data() + 2 * sizeof(float)) << "a view is the source's bytes";
    EXPECT_EQ(v.as<float>()[0], 3.f);
    v.as<float>()[1] = 40.f;
    EXPECT_EQ(src.as<float>()[3], 40.f) << "writes through a view reach the source";
    HostBuffer copy = v;
    EXPECT_NE(copy.data(), v.data());
    copy.as<float>()[0] = -1.f;
    EXPECT_EQ(src.as<float>()[2], 3.f) << "a copy of a view is its own memory";
    HostBuffer moved = std::move(v);
    EXPECT_EQ(moved.data(), src.data() + 2 * sizeof(float)) << "a move keeps viewing";
    moved.resize(10);  // grown: moved to the heap, the source keeps its bytes
    EXPECT_NE(moved.data(), src.data() + 2 * sizeof(float));
    EXPECT_EQ(moved.as<float>()[1], 40.f);
  }
  const auto after = src.as<float>();
  EXPECT_EQ(std::vector<float>(after.begin(), after.end()), (std::vector<float>{1, 2, 3, 40, 5, 6}))
      << "views gone, source intact";
  EXPECT_EQ(src.view(6, 0).size(), 0u);
  EXPECT_THROW((void)src.view(4, 3), std::out_of_range);
  EXPECT_THROW((void)src.view(7, 0), std::out_of_range);
}

TEST(HostBuffer, ConversionsSaturateAndHalfRoundsToNearestEven) {
  HostBuffer i8(ElementType{ScalarType::i8, 1}, 3);
  set_component(i8, 0, 300);
  set_component(i8, 1, -300);
  set_component(i8, 2, NAN);
  EXPECT_EQ(component(i8, 0), 127);
  EXPECT_EQ(component(i8, 1), -128);
  EXPECT_EQ(component(i8, 2), 0);
  HostBuffer h(ElementType{ScalarType::f16, 1}, 6);
  const double values[] = {1.0, -2.5, 65504.0, 1e6, 5.960464477539063e-08, 1.0 + 1.0 / 2048};
  for (std::size_t i = 0; i < 6; ++i) set_component(h, i, values[i]);
  EXPECT_EQ(component(h, 0), 1.0);
  EXPECT_EQ(component(h, 1), -2.5);
  EXPECT_EQ(component(h, 2), 65504.0);  // the largest half
  EXPECT_TRUE(std::isinf(component(h, 3)));
  EXPECT_EQ(component(h, 4), 5.960464477539063e-08);  // the smallest subnormal half
  EXPECT_EQ(component(h, 5), 1.0);                    // halfway: ties to even
}

RC_GTEST_PROP(HostBuffer, HalfRoundTripsEveryFiniteHalf, ()) {
  const auto bits = *rc::gen::inRange<std::uint32_t>(0, 0x7c00);  // positive finite halves
  HostBuffer h(ElementType{ScalarType::f16, 1}, 1);
  h.as<std::uint16_t>()[0] = static_cast<std::uint16_t>(bits);
  const double v = component(h, 0);
  HostBuffer back(ElementType{ScalarType::f16, 1}, 1);
  set_component(back, 0, v);
  RC_ASSERT(back.as<std::uint16_t>()[0] == bits);
}

TEST(Configuration, KeysDefinesAndText) {
  const Configuration c{json{{"TILE", 16}, {"VEC", true}, {"MODE", "fast"}, {"ALPHA", 0.5}}, Extent{8, 4, 2}};
  EXPECT_EQ(c.key(), "ALPHA=0.5,MODE=\"fast\",TILE=16,VEC=true;8x4");
  EXPECT_EQ(define_options(c.params), "-D ALPHA=0.5 -D MODE=fast -D TILE=16 -D VEC=1");
  EXPECT_EQ(to_string(c), "ALPHA=0.5 MODE=fast TILE=16 VEC=true local=8x4");
  EXPECT_EQ(Configuration{}.key(), "null");
}

namespace {

std::vector<TuningParameter> two_params() {
  return {TuningParameter{"A", "int", {1, 2, 4}}, TuningParameter{"B", "int", {1, 2}}};
}

// The space of every combination of `ps`' values (the tests' spaces are
// small), each with the local sizes `locals` gives its values.
SearchSpace product_space(const std::vector<TuningParameter>& ps,
                          const std::function<std::vector<LocalSize>(const json&)>& locals, Configuration base,
                          const std::optional<Configuration>& rule) {
  std::vector<std::uint32_t> sizes;
  for (const auto& p : ps) sizes.push_back(static_cast<std::uint32_t>(p.values.size()));
  ParameterSets sets(sizes);
  std::vector<std::uint32_t> idx(ps.size(), 0);
  for (;;) {
    sets.push_back(idx);
    std::size_t k = idx.size();
    while (k > 0 && ++idx[k - 1] == sizes[k - 1]) idx[--k] = 0;
    if (k == 0) break;
  }
  auto by_index = [&](std::span<const std::uint32_t> i, std::vector<LocalSize>& out) {
    json p = json::object();
    for (std::size_t k = 0; k < ps.size(); ++k) p[ps[k].name] = ps[k].values[i[k]];
    out = locals(p);
  };
  return SearchSpace(ps, std::move(sets), by_index, std::move(base), rule);
}

}  // namespace

TEST(SearchSpace, ParametersConstraintsBaselineAndLocalSizes) {
  // A <= 2*B is the constraint; each combination runs NULL and (A, 1), (2A, 1).
  auto locals = [](const json& p) -> std::vector<LocalSize> {
    const int a = p["A"], b = p["B"];
    if (a > 2 * b) return {};
    return {std::nullopt, Extent{std::size_t(a), 1, 1}, Extent{2 * std::size_t(a), 1, 1}};
  };
  const Configuration base{json{{"A", 1}, {"B", 1}}, std::nullopt};
  const SearchSpace s =
      product_space(two_params(), locals, base, Configuration{json{{"A", 2}, {"B", 2}}, Extent{4, 1, 1}});
  // Valid combinations: (1,1) (1,2) (2,1) (2,2) (4,2); 3 local sizes each, minus the baseline.
  EXPECT_EQ(s.parameter_sets(), 5u);
  EXPECT_EQ(s.size(), 14u);
  EXPECT_FALSE(s.find(base));
  EXPECT_FALSE(s.find(Configuration{json{{"A", 4}, {"B", 1}}, std::nullopt})) << "violates the constraint";
  ASSERT_TRUE(s.rule());
  EXPECT_EQ(s.at(*s.rule()), (Configuration{json{{"A", 2}, {"B", 2}}, Extent{4, 1, 1}}));
  std::set<std::string> keys;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const Configuration c = s.at(i);
    EXPECT_TRUE(keys.insert(c.key()).second) << "duplicate " << c.key();
    EXPECT_EQ(s.find(c), i);
    EXPECT_LE(c.params["A"].get<int>(), 2 * c.params["B"].get<int>());
  }
  // Odometer order: the last parameter varies fastest.
  EXPECT_EQ(s.params_of_set(0), (json{{"A", 1}, {"B", 1}}));
  EXPECT_EQ(s.params_of_set(1), (json{{"A", 1}, {"B", 2}}));
}

TEST(SearchSpace, NeighboursStayInTheSpaceAndStepOneParameter) {
  auto locals = [](const json&) -> std::vector<LocalSize> {
    return {Extent{1, 1, 1}, Extent{2, 1, 1}, Extent{4, 1, 1}};
  };
  const SearchSpace s =
      product_space(two_params(), locals, Configuration{json{{"A", 4}, {"B", 2}}, Extent{4, 1, 1}}, std::nullopt);
  ASSERT_EQ(s.size(), 17u);
  const auto i = *s.find(Configuration{json{{"A", 2}, {"B", 1}}, Extent{2, 1, 1}});
  std::set<std::string> got;
  for (std::size_t n : s.neighbours(i)) got.insert(s.at(n).key());
  const std::set<std::string> want{"A=2,B=1;1", "A=2,B=1;4", "A=1,B=1;2", "A=4,B=1;2", "A=2,B=2;2"};
  EXPECT_EQ(got, want);
}

TEST(SearchSpace, NoSizeIsRefusedAndConfigurationsAreHeldCompactly) {
  // 4096 configurations (once refused above a limit): one byte per parameter
  // a set, one list of local sizes for all.
  std::vector<TuningParameter> ps;
  for (int k = 0; k < 4; ++k) ps.push_back(TuningParameter{"P" + std::to_string(k), "int", {1, 2, 3, 4, 5, 6, 7, 8}});
  auto one = [](const json&) -> std::vector<LocalSize> { return {std::nullopt}; };
  const SearchSpace s = product_space(ps, one, Configuration{}, std::nullopt);
  EXPECT_EQ(s.size(), 4096u);
  EXPECT_LE(s.memory_bytes(), 4096u * 4 + 256);
  EXPECT_EQ(s.at(4095).params, (json{{"P0", 8}, {"P1", 8}, {"P2", 8}, {"P3", 8}}));
}

RC_GTEST_PROP(SearchSpace, EveryConfigurationIsFoundAtItsIndex, ()) {
  const auto na = *rc::gen::inRange<int>(1, 5), nb = *rc::gen::inRange<int>(1, 5);
  std::vector<TuningParameter> ps(2);
  ps[0].name = "A";
  ps[1].name = "B";
  for (int v = 0; v < na; ++v) ps[0].values.push_back(v);
  for (int v = 0; v < nb; ++v) ps[1].values.push_back(v * 10);
  const auto mod = *rc::gen::inRange<int>(1, 4);
  auto locals = [&](const json& p) -> std::vector<LocalSize> {
    if ((p["A"].get<int>() + p["B"].get<int>()) % mod) return {};
    return {std::nullopt, Extent{2, 2, 2}};
  };
  const SearchSpace s = product_space(ps, locals, Configuration{json{{"A", 0}, {"B", 0}}, std::nullopt}, std::nullopt);
  for (std::size_t i = 0; i < s.size(); ++i) {
    RC_ASSERT(s.find(s.at(i)) == std::optional<std::size_t>(i));
    for (std::size_t n : s.neighbours(i)) RC_ASSERT(n < s.size() && n != i);
  }
}

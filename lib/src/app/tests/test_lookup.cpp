// The look-up chain: each level, validity of shapes, forcing, the cache.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "test_store_util.hpp"
#include "wstune/lookup.hpp"

using namespace wstune;
using wstune::test::fake_device;

namespace {

KernelKey key(const std::string& name) {
  return {name, "0123456789abcdef", ""};
}

// A best that beat NULL by `speedup` (null_ms / median_ms).
void store_best(Store& s, const DeviceInfo& d, const KernelKey& kernel, Extent global, LocalSize local,
                double speedup = 1.5) {
  s.put_device(d);
  BestConfig b;
  b.device_fingerprint = d.fingerprint();
  b.kernel = kernel;
  b.problem = {global, ""};
  b.local = local;
  b.median_ms = 1.0;
  b.null_ms = speedup;
  s.record_best(b);
}
void store_best(Store& s, const DeviceInfo& d, const std::string& kernel, Extent global, LocalSize local,
                double speedup = 1.5) {
  store_best(s, d, key(kernel), global, local, speedup);
}

LookupOptions no_rule() {
  LookupOptions o;
  o.rule = nullptr;
  o.forced = std::map<std::string, LocalSize, std::less<>>{};
  return o;
}

const Extent k1024{1024, 1024, 2};

}  // namespace

TEST(Lookup, DistanceIsSumOfLog2Ratios) {
  EXPECT_DOUBLE_EQ(problem_distance({512, 1, 1}, {1024, 1, 1}), 1.0);
  EXPECT_DOUBLE_EQ(problem_distance({2048, 1, 1}, {1024, 1, 1}), 1.0);
  EXPECT_DOUBLE_EQ(problem_distance({1024, 1024, 2}, {2048, 512, 2}), 2.0);
  EXPECT_DOUBLE_EQ(problem_distance(k1024, k1024), 0.0);
  EXPECT_DOUBLE_EQ(problem_distance({64, 64, 8, 3}, {64, 64, 16, 3}), 1.0);
}

TEST(Lookup, ExactThenNearestValidShape) {
  Store s(":memory:");
  const DeviceInfo d = fake_device("H100");
  store_best(s, d, "matmul", k1024, Extent{32, 8, 2});
  store_best(s, d, "matmul", {4096, 4096, 2}, Extent{64, 4, 2});
  store_best(s, d, "matmul", {1000, 1000, 2}, Extent{8, 8, 2});    // nearest to 1024 but 8 divides 1024: valid
  store_best(s, d, "matmul", {1200, 1200, 2}, Extent{48, 16, 2});  // 48 does not divide 2048
  Lookup l(s, no_rule());
  auto r = l.find(d, key("matmul"), k1024);
  EXPECT_EQ(r.level, LookupLevel::exact);
  EXPECT_EQ(r.local, (LocalSize{Extent{32, 8, 2}}));

  r = l.find(d, key("matmul"), {2048, 2048, 2});
  EXPECT_EQ(r.level, LookupLevel::nearest);
  EXPECT_EQ(r.local, (LocalSize{Extent{64, 4, 2}})) << "1024 and 4096 are both at distance 2: the newer row wins";
  ASSERT_TRUE(r.from);
  EXPECT_DOUBLE_EQ(r.distance, problem_distance(r.from->problem.global, {2048, 2048, 2}));

  // 512x512: 1000x1000 (8x8, distance ~1.9) is nearer than 1024 (32x8, distance 2)? No: 2 > 1.9.
  r = l.find(d, key("matmul"), {512, 512, 2});
  EXPECT_EQ(r.level, LookupLevel::nearest);
  EXPECT_EQ(r.local, (LocalSize{Extent{8, 8, 2}}));
  EXPECT_TRUE(local_fits(r.local, {512, 512, 2}, d));
  // 96x96 is over distance 2 from every stored size: no stored answer.
  EXPECT_EQ(l.find(d, key("matmul"), {96, 96, 2}).level, LookupLevel::null_);

  // Nothing valid for a prime size and no rule: NULL.
  r = l.find(d, key("matmul"), {97, 97, 2});
  EXPECT_EQ(r.level, LookupLevel::null_);
  EXPECT_FALSE(r.local);
  // 1-D requests never take 2-D shapes.
  EXPECT_EQ(l.find(d, key("matmul"), {1024, 1, 1}).level, LookupLevel::null_);
}

TEST(Lookup, ArchitectureThenVendorTypeThenRuleThenNull) {
  Store s(":memory:");
  const DeviceInfo h100 = fake_device("H100", "sm_90", "NVIDIA Corporation", "gpu", 132);
  const DeviceInfo gh200 = fake_device("GH200", "sm_90", "NVIDIA Corporation", "gpu", 144);
  const DeviceInfo a100 = fake_device("A100", "sm_80", "NVIDIA Corporation", "gpu", 108);
  const DeviceInfo mi = fake_device("MI250", "gfx90a", "AMD", "gpu", 110);
  store_best(s, h100, "sort", {1 << 20, 1, 1}, Extent{256, 1, 1});
  Lookup l(s, no_rule());
  auto r = l.find(gh200, key("sort"), {1 << 20, 1, 1});
  EXPECT_EQ(r.level, LookupLevel::architecture);
  EXPECT_EQ(r.local, (LocalSize{Extent{256, 1, 1}}));
  EXPECT_EQ(r.from->device_fingerprint, h100.fingerprint());
  r = l.find(a100, key("sort"), {1 << 19, 1, 1});
  EXPECT_EQ(r.level, LookupLevel::vendor_type);
  EXPECT_EQ(r.local, (LocalSize{Extent{256, 1, 1}}));
  EXPECT_EQ(l.find(mi, key("sort"), {1 << 20, 1, 1}).level, LookupLevel::null_);

  LookupOptions with_rule = no_rule();
  with_rule.rule = paper_rule_function();
  Lookup lr(s, with_rule);
  r = lr.find(mi, key("sort"), {1 << 20, 1, 1});
  EXPECT_EQ(r.level, LookupLevel::rule);
  EXPECT_EQ(r.local, (LocalSize{Extent{128, 1, 1}})) << "1-D rule: smallest divisor ≥ 128 PEs per CU";
  r = lr.find(mi, key("matmul"), k1024);
  EXPECT_EQ(r.level, LookupLevel::rule);
  ASSERT_TRUE(r.local);
  EXPECT_EQ(r.local->count() % 16, 0u);
  EXPECT_LT(r.local->count(), 1024u);
  // A rule answer that does not fit is not used.
  LookupOptions bad_rule = no_rule();
  bad_rule.rule = [](const DeviceInfo&, std::string_view, const Extent&, std::size_t) -> std::optional<LocalSize> {
    return LocalSize{Extent{3, 1, 1}};
  };
  Lookup lb(s, bad_rule);
  EXPECT_EQ(lb.find(mi, key("sort"), {1024, 1, 1}).level, LookupLevel::null_);
}

TEST(Lookup, KernelLimitMakesShapesInvalid) {
  Store s(":memory:");
  const DeviceInfo d = fake_device("H100");
  store_best(s, d, "matmul", k1024, Extent{32, 32, 2});
  Lookup l(s, no_rule());
  EXPECT_EQ(l.find(d, key("matmul"), k1024, {0}).level, LookupLevel::exact);
  EXPECT_EQ(l.find(d, key("matmul"), k1024, {256}).level, LookupLevel::null_) << "32x32 exceeds a 256 kernel limit";
}

TEST(Lookup, ForcedWinsAndIsParsed) {
  const auto f = parse_forced("matmul=16,16;sort=256;trapezoid=null;", "WSTUNE_FORCE_LOCAL");
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f.at("matmul"), (LocalSize{Extent{16, 16, 2}}));
  EXPECT_EQ(f.at("sort"), (LocalSize{Extent{256, 1, 1}}));
  EXPECT_FALSE(f.at("trapezoid"));
  EXPECT_THROW(parse_forced("matmul", "WSTUNE_FORCE_LOCAL"), UsageError);
  EXPECT_THROW(parse_forced("matmul=0", "WSTUNE_FORCE_LOCAL"), UsageError);

  Store s(":memory:");
  const DeviceInfo d = fake_device("H100");
  store_best(s, d, "matmul", k1024, Extent{32, 8, 2});
  setenv("WSTUNE_FORCE_LOCAL", "matmul=16,16", 1);
  LookupOptions o;
  o.rule = nullptr;
  Lookup l(s, o);
  unsetenv("WSTUNE_FORCE_LOCAL");
  const auto r = l.find(d, key("matmul"), k1024);
  EXPECT_EQ(r.level, LookupLevel::forced);
  EXPECT_EQ(r.local, (LocalSize{Extent{16, 16, 2}}));
  setenv("WSTUNE_FORCE_LOCAL", "oops", 1);
  EXPECT_THROW(Lookup(s, o), UsageError);
  unsetenv("WSTUNE_FORCE_LOCAL");
}

TEST(Lookup, CacheServesRepeatsAndDropsOnNewBest) {
  Store s(":memory:");
  const DeviceInfo d = fake_device("H100");
  store_best(s, d, "matmul", k1024, Extent{32, 8, 2});
  Lookup l(s, no_rule());
  EXPECT_EQ(l.find(d, key("matmul"), k1024).local, (LocalSize{Extent{32, 8, 2}}));
  EXPECT_EQ(l.cache_size(), 1u);
  EXPECT_EQ(l.find(d, key("matmul"), k1024).local, (LocalSize{Extent{32, 8, 2}}));
  EXPECT_EQ(l.cache_size(), 1u);
  store_best(s, d, "matmul", k1024, Extent{16, 16, 2});  // through the same Store: the cache drops
  EXPECT_EQ(l.find(d, key("matmul"), k1024).local, (LocalSize{Extent{16, 16, 2}}));
}

RC_GTEST_PROP(LookupProperty, AnswerAlwaysFitsTheAskedSize, ()) {
  Store s(":memory:");
  const DeviceInfo d = fake_device("H100");
  const auto n = *rc::gen::inRange(1, 8);
  for (int i = 0; i < n; ++i) {
    const std::size_t gx = *rc::gen::inRange<std::size_t>(1, 5000), gy = *rc::gen::inRange<std::size_t>(1, 5000);
    const std::size_t lx = *rc::gen::inRange<std::size_t>(1, 64), ly = *rc::gen::inRange<std::size_t>(1, 64);
    store_best(s, d, "k", {gx, gy, 2}, Extent{lx, ly, 2});
  }
  LookupOptions o = no_rule();
  o.rule = paper_rule_function();
  Lookup l(s, o);
  const Extent g{*rc::gen::inRange<std::size_t>(1, 5000), *rc::gen::inRange<std::size_t>(1, 5000), 2};
  const auto r = l.find(d, key("k"), g);
  RC_ASSERT(local_fits(r.local, g, d));
  if (r.local) RC_ASSERT(g.x % r.local->x == 0 && g.y % r.local->y == 0);
}

// Issue 16: after one launch at the prime size 9,999,991 (only local size 1
// divides it), 10^7 and 4096 must not get local size 1 from the nearest level.
TEST(Lookup, PrimeSizeAnswerDoesNotBleedToOtherSizes) {
  Store s(":memory:");
  const DeviceInfo d = fake_device("H100");
  store_best(s, d, "k", {9'999'991, 1, 1}, Extent{1, 1, 1}, 3.0);  // even a large "speed-up" does not help
  Lookup l(s, no_rule());
  EXPECT_EQ(l.find(d, key("k"), {9'999'991, 1, 1}).level, LookupLevel::exact) << "its own size still gets it";
  for (std::size_t g : {std::size_t{10'000'000}, std::size_t{4096}}) {
    const auto r = l.find(d, key("k"), {g, 1, 1});
    EXPECT_EQ(r.level, LookupLevel::null_) << g;
    EXPECT_FALSE(r.local) << g;
  }
  // A 2-D size whose y is prime: (64, 1) had no choice along y.
  store_best(s, d, "k2", {1024, 4099, 2}, Extent{64, 1, 2});
  EXPECT_EQ(l.find(d, key("k2"), {1024, 4096, 2}).level, LookupLevel::null_);
  // A bounds-guarded kernel tuned at the prime size with a padded NDRange chose 256 among many shapes.
  store_best(s, d, "g", {9'999'991, 1, 1}, Extent{256, 1, 1});
  const auto g = l.find(d, key("g"), {10'000'000, 1, 1}, {0, Remainder::pad});
  EXPECT_EQ(g.level, LookupLevel::nearest);
  EXPECT_EQ(g.local, (LocalSize{Extent{256, 1, 1}}));
}

TEST(Lookup, NearestNeedsAClearWinOverNullAndABoundedDistance) {
  Store s(":memory:");
  const DeviceInfo d = fake_device("H100");
  store_best(s, d, "tie", {1 << 20, 1, 1}, Extent{128, 1, 1}, 1.01);  // within noise of NULL
  store_best(s, d, "win", {1 << 20, 1, 1}, Extent{128, 1, 1}, 1.20);
  BestConfig unknown;  // no NULL time: no evidence
  unknown.device_fingerprint = d.fingerprint();
  unknown.kernel = key("unknown");
  unknown.problem = {{1 << 20, 1, 1}, ""};
  unknown.local = Extent{128, 1, 1};
  unknown.median_ms = 1;
  s.record_best(unknown);
  Lookup l(s, no_rule());
  EXPECT_EQ(l.find(d, key("tie"), {1 << 19, 1, 1}).level, LookupLevel::null_);
  EXPECT_EQ(l.find(d, key("unknown"), {1 << 19, 1, 1}).level, LookupLevel::null_);
  EXPECT_EQ(l.find(d, key("win"), {1 << 19, 1, 1}).level, LookupLevel::nearest);
  EXPECT_EQ(l.find(d, key("win"), {1 << 18, 1, 1}).level, LookupLevel::nearest) << "distance 2";
  EXPECT_EQ(l.find(d, key("win"), {1 << 17, 1, 1}).level, LookupLevel::null_) << "distance 3 > 2";
  LookupOptions wide = no_rule();
  wide.max_distance = 3;
  Lookup lw(s, wide);
  EXPECT_EQ(lw.find(d, key("win"), {1 << 17, 1, 1}).level, LookupLevel::nearest);
}

// Issue 16: a kernel built with other -D values, or another kernel with the
// same function name, is another kernel.
TEST(Lookup, MatchesTheWholeKernelIdentity) {
  Store s(":memory:");
  const DeviceInfo d = fake_device("H100");
  const KernelKey a{"stencil", "00000000000000aa", "-DN=4"};
  store_best(s, d, a, k1024, Extent{32, 8, 2});
  Lookup l(s, no_rule());
  EXPECT_EQ(l.find(d, a, k1024).level, LookupLevel::exact);
  EXPECT_EQ(l.find(d, a, {1024, 512, 2}).level, LookupLevel::nearest);
  for (const KernelKey& other : {KernelKey{"stencil", "00000000000000aa", "-DN=8"},
                                 KernelKey{"stencil", "00000000000000bb", "-DN=4"}, KernelKey{"stencil", "", ""}}) {
    EXPECT_EQ(l.find(d, other, k1024).level, LookupLevel::null_) << other.source_hash << " " << other.build_options;
    EXPECT_EQ(l.find(d, other, {1024, 512, 2}).level, LookupLevel::null_);
  }
  EXPECT_EQ(s.kernels("stencil").size(), 1u);
}

TEST(Lookup, ThreeDimensionalProblems) {
  Store s(":memory:");
  const DeviceInfo d = fake_device("H100");
  store_best(s, d, "vol", {64, 64, 64, 3}, Extent{16, 4, 4, 3});
  Lookup l(s, no_rule());
  auto r = l.find(d, key("vol"), {64, 64, 64, 3});
  EXPECT_EQ(r.level, LookupLevel::exact);
  EXPECT_EQ(r.local, (LocalSize{Extent{16, 4, 4, 3}}));
  r = l.find(d, key("vol"), {64, 64, 32, 3});
  EXPECT_EQ(r.level, LookupLevel::nearest);
  EXPECT_DOUBLE_EQ(r.distance, 1.0);
  EXPECT_EQ(l.find(d, key("vol"), {64, 64, 6, 3}).level, LookupLevel::null_) << "4 does not divide 6";
  EXPECT_EQ(l.find(d, key("vol"), {64, 4096, 1, 2}).level, LookupLevel::null_) << "2-D never takes 3-D shapes";
  EXPECT_THROW(l.find(d, key("vol"), {64, 64, 0, 3}), UsageError);
}

TEST(Lookup, PaddedAndNonUniformFits) {
  const DeviceInfo d = fake_device("H100");
  const Extent prime{9'999'991, 1, 1};
  EXPECT_FALSE(local_fits(Extent{256, 1, 1}, prime, d));
  EXPECT_TRUE(local_fits(Extent{256, 1, 1}, prime, d, {0, Remainder::pad}));
  EXPECT_TRUE(local_fits(Extent{256, 1, 1}, prime, d, {0, Remainder::non_uniform}));
  EXPECT_FALSE(local_fits(Extent{256, 1, 1}, {100, 1, 1}, d, {0, Remainder::non_uniform}));
  EXPECT_TRUE(local_fits(Extent{256, 1, 1}, {100, 1, 1}, d, {0, Remainder::pad}));
  EXPECT_EQ(padded_global(prime, Extent{256, 1, 1}), (Extent{10'000'128, 1, 1}));
  EXPECT_EQ(padded_global({100, 30, 2}, Extent{16, 16, 2}), (Extent{112, 32, 2}));
  EXPECT_EQ(padded_global({100, 30, 2}, std::nullopt), (Extent{100, 30, 2}));
}

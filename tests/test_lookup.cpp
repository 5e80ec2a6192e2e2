// The look-up chain: each level, validity of shapes, forcing, the cache.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "test_store_util.hpp"
#include "wstune/lookup.hpp"

using namespace wstune;
using wstune::test::fake_device;

namespace {

void store_best(Store& s, const DeviceInfo& d, const std::string& kernel, Extent global, LocalSize local,
                double ms = 1.0) {
  s.put_device(d);
  BestConfig b;
  b.device_fingerprint = d.fingerprint();
  b.kernel = {kernel, "", ""};
  b.problem = {global, ""};
  b.local = local;
  b.median_ms = ms;
  s.record_best(b);
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
}

TEST(Lookup, ExactThenNearestValidShape) {
  Store s(":memory:");
  const DeviceInfo d = fake_device("H100");
  store_best(s, d, "matmul", k1024, Extent{32, 8, 2});
  store_best(s, d, "matmul", {4096, 4096, 2}, Extent{64, 4, 2});
  store_best(s, d, "matmul", {1000, 1000, 2}, Extent{8, 8, 2});  // nearest to 1024 but 8 divides 1024: valid
  store_best(s, d, "matmul", {1200, 1200, 2}, Extent{48, 16, 2});  // 48 does not divide 2048
  Lookup l(s, no_rule());
  auto r = l.find(d, "matmul", k1024);
  EXPECT_EQ(r.level, LookupLevel::exact);
  EXPECT_EQ(r.local, (LocalSize{Extent{32, 8, 2}}));

  r = l.find(d, "matmul", {2048, 2048, 2});
  EXPECT_EQ(r.level, LookupLevel::nearest);
  EXPECT_EQ(r.local, (LocalSize{Extent{64, 4, 2}})) << "1024 and 4096 are both at distance 2: the newer row wins";
  ASSERT_TRUE(r.from);
  EXPECT_DOUBLE_EQ(r.distance, problem_distance(r.from->problem.global, {2048, 2048, 2}));

  // 96x96: 64x4 does not divide it; of the valid ones 1000x1000 (8x8) is nearest.
  r = l.find(d, "matmul", {96, 96, 2});
  EXPECT_EQ(r.level, LookupLevel::nearest);
  EXPECT_EQ(r.local, (LocalSize{Extent{8, 8, 2}}));
  EXPECT_TRUE(local_fits(r.local, {96, 96, 2}, d));

  // Nothing valid for a prime size and no rule: NULL.
  r = l.find(d, "matmul", {97, 97, 2});
  EXPECT_EQ(r.level, LookupLevel::null_);
  EXPECT_FALSE(r.local);
  // 1-D requests never take 2-D shapes.
  EXPECT_EQ(l.find(d, "matmul", {1024, 1, 1}).level, LookupLevel::null_);
}

TEST(Lookup, ArchitectureThenVendorTypeThenRuleThenNull) {
  Store s(":memory:");
  const DeviceInfo h100 = fake_device("H100", "sm_90", "NVIDIA Corporation", "gpu", 132);
  const DeviceInfo gh200 = fake_device("GH200", "sm_90", "NVIDIA Corporation", "gpu", 144);
  const DeviceInfo a100 = fake_device("A100", "sm_80", "NVIDIA Corporation", "gpu", 108);
  const DeviceInfo mi = fake_device("MI250", "gfx90a", "AMD", "gpu", 110);
  store_best(s, h100, "sort", {1 << 20, 1, 1}, Extent{256, 1, 1});
  Lookup l(s, no_rule());
  auto r = l.find(gh200, "sort", {1 << 20, 1, 1});
  EXPECT_EQ(r.level, LookupLevel::architecture);
  EXPECT_EQ(r.local, (LocalSize{Extent{256, 1, 1}}));
  EXPECT_EQ(r.from->device_fingerprint, h100.fingerprint());
  r = l.find(a100, "sort", {1 << 18, 1, 1});
  EXPECT_EQ(r.level, LookupLevel::vendor_type);
  EXPECT_EQ(r.local, (LocalSize{Extent{256, 1, 1}}));
  EXPECT_EQ(l.find(mi, "sort", {1 << 20, 1, 1}).level, LookupLevel::null_);

  LookupOptions with_rule = no_rule();
  with_rule.rule = paper_rule_function();
  Lookup lr(s, with_rule);
  r = lr.find(mi, "sort", {1 << 20, 1, 1});
  EXPECT_EQ(r.level, LookupLevel::rule);
  EXPECT_EQ(r.local, (LocalSize{Extent{128, 1, 1}})) << "1-D rule: smallest divisor ≥ 128 PEs per CU";
  r = lr.find(mi, "matmul", k1024);
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
  EXPECT_EQ(lb.find(mi, "sort", {1024, 1, 1}).level, LookupLevel::null_);
}

TEST(Lookup, KernelLimitMakesShapesInvalid) {
  Store s(":memory:");
  const DeviceInfo d = fake_device("H100");
  store_best(s, d, "matmul", k1024, Extent{32, 32, 2});
  Lookup l(s, no_rule());
  EXPECT_EQ(l.find(d, "matmul", k1024, 0).level, LookupLevel::exact);
  EXPECT_EQ(l.find(d, "matmul", k1024, 256).level, LookupLevel::null_) << "32x32 exceeds a 256 kernel limit";
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
  const auto r = l.find(d, "matmul", k1024);
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
  EXPECT_EQ(l.find(d, "matmul", k1024).local, (LocalSize{Extent{32, 8, 2}}));
  EXPECT_EQ(l.cache_size(), 1u);
  EXPECT_EQ(l.find(d, "matmul", k1024).local, (LocalSize{Extent{32, 8, 2}}));
  EXPECT_EQ(l.cache_size(), 1u);
  store_best(s, d, "matmul", k1024, Extent{16, 16, 2});  // through the same Store: the cache drops
  EXPECT_EQ(l.find(d, "matmul", k1024).local, (LocalSize{Extent{16, 16, 2}}));
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
  const auto r = l.find(d, "k", g);
  RC_ASSERT(local_fits(r.local, g, d));
  if (r.local) RC_ASSERT(g.x % r.local->x == 0 && g.y % r.local->y == 0);
}

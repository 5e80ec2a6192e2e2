// The parameter look-up chain (session/best_configuration.hpp) and warm-start
// seeds (session/warm_start.hpp): every level, on store fixtures of fake
// devices (the chain reads device records only; no OpenCL).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "session/best_configuration.hpp"
#include "session/tune_session.hpp"
#include "session/warm_start.hpp"
#include "test_store_util.hpp"
#include "tuning_file/tuning_file.hpp"
#include "wstune/error.hpp"

namespace {

using namespace wstune;
using nlohmann::json;
using wstune::test::fake_device;

const std::string kData = WSTUNE_TEST_DATA_DIR;
const std::string kExamples = kData + "/../../share/examples/kernels";

// A tuned configuration of matmul_tiled: 64x64 tiles, 4x4 work per item (local 16x16).
const json kTuned = {{"TSM", 64}, {"TSN", 64}, {"TSK", 16},   {"WPTM", 4},    {"WPTN", 4},
                     {"VW", 4},   {"PAD", 0},  {"UNROLL", 2}, {"PREFETCH", 1}};

// Records `params` as the best of `spec` at `size` on `d`, `speedup` times faster than the reference.
void store_best(Store& s, const KernelSpec& spec, const DeviceInfo& d, const std::string& size, const json& params,
                double speedup = 2.0) {
  s.put_device(d);
  const Problem p = spec.parse_size(size);
  BestConfig b;
  b.device_fingerprint = d.fingerprint();
  b.kernel = kernel_key(spec);
  b.problem = {spec.problem_extent(p), p.text};
  b.params = params;
  b.local = spec.parameter_local(with_params(p, params));
  b.median_ms = 1.0;
  b.null_ms = speedup;
  s.record_best(b);
}

class ParameterChain : public ::testing::Test {
 protected:
  std::shared_ptr<const KernelSpec> spec = load_tuning_file(kExamples + "/matmul_tiled.json");
  Store store{":memory:"};
  DeviceInfo h100 = fake_device("H100", "sm_90", "NVIDIA Corporation", "gpu", 132);
  DeviceInfo gh200 = fake_device("GH200", "sm_90", "NVIDIA Corporation", "gpu", 144);
  DeviceInfo a100 = fake_device("A100", "sm_80", "NVIDIA Corporation", "gpu", 108);
  DeviceInfo mi300 = fake_device("MI300X", "gfx942", "Advanced Micro Devices, Inc.", "gpu", 304);

  StoredConfiguration at(const std::string& size, const DeviceInfo& d) {
    return best_configuration(&store, *spec, spec->parse_size(size), d);
  }
};

TEST_F(ParameterChain, EmptyStoreGivesTheFilesDefaults) {
  const StoredConfiguration c = at("256x256x256", h100);
  EXPECT_EQ(c.level, LookupLevel::defaults);
  EXPECT_EQ(c.config.params.at("TSM"), 16);
  EXPECT_EQ(c.config.params.at("TSK"), 8);
  EXPECT_EQ(c.config.local, (LocalSize{Extent{16, 16, 1, 2}}));
  EXPECT_NE(c.build_options.find("-D TSM=16"), std::string::npos);
  EXPECT_NE(c.build_options.find("-cl-mad-enable"), std::string::npos);
  // Without a store: the same.
  EXPECT_EQ(best_configuration(nullptr, *spec, spec->parse_size("256x256x256"), h100).level, LookupLevel::defaults);
}

TEST_F(ParameterChain, ExactThenNearestOnTheSameDevice) {
  store_best(store, *spec, h100, "512x512x512", kTuned);
  const StoredConfiguration exact = at("512x512x512", h100);
  EXPECT_EQ(exact.level, LookupLevel::exact);
  EXPECT_EQ(exact.config.params, kTuned);
  const StoredConfiguration near = at("1024x512x512", h100);
  EXPECT_EQ(near.level, LookupLevel::nearest);
  EXPECT_EQ(near.config.params, kTuned);
  EXPECT_DOUBLE_EQ(near.distance, 1.0);
  EXPECT_EQ(near.row.problem.size_text, "512x512x512");
}

TEST_F(ParameterChain, FarSizesAndInvalidConfigurationsFallToTheDefaults) {
  store_best(store, *spec, h100, "512x512x512", kTuned);
  EXPECT_EQ(at("4096x4096x4096", h100).level, LookupLevel::defaults);  // distance 9 > 2
  // 64 does not divide 528 (the Conditions at the new size): not valid there.
  const StoredConfiguration c = at("528x512x512", h100);
  EXPECT_EQ(c.level, LookupLevel::defaults);
  EXPECT_EQ(c.config.params.at("TSM"), 16);
}

TEST_F(ParameterChain, OnlyABestThatBeatTheReferenceServesOtherSizes) {
  store_best(store, *spec, h100, "512x512x512", kTuned, 1.0);
  EXPECT_EQ(at("512x512x512", h100).level, LookupLevel::exact);  // its own size: always
  EXPECT_EQ(at("1024x512x512", h100).level, LookupLevel::defaults);
}

TEST_F(ParameterChain, ArchitectureThenVendorAndType) {
  store_best(store, *spec, gh200, "512x512x512", kTuned);
  EXPECT_EQ(at("1024x512x512", h100).level, LookupLevel::architecture);
  EXPECT_EQ(at("1024x512x512", a100).level, LookupLevel::vendor_type);
  EXPECT_EQ(at("1024x512x512", mi300).level, LookupLevel::defaults);
  // The device's own tuned size wins over another device's.
  json own = kTuned;
  own["UNROLL"] = 4;
  store_best(store, *spec, h100, "2048x512x512", own);
  const StoredConfiguration c = at("1024x512x512", h100);
  EXPECT_EQ(c.level, LookupLevel::nearest);
  EXPECT_EQ(c.config.params.at("UNROLL"), 4);
}

TEST_F(ParameterChain, LocalSizeMustFitTheDevice) {
  store_best(store, *spec, gh200, "512x512x512", kTuned);
  DeviceInfo small = fake_device("Small", "sm_90", "NVIDIA Corporation", "gpu", 8);
  small.max_work_group_size = 128;  // 16x16 = 256 items do not fit: neither the stored best's nor the Defaults'
  const StoredConfiguration c = at("1024x512x512", small);
  EXPECT_EQ(c.level, LookupLevel::reference);  // the first valid configuration that fits
  ASSERT_TRUE(c.config.local);
  EXPECT_LE(c.config.local->count(), 128u);
}

TEST(ParameterChainReference, AFileWithoutDefaultsGivesTheReferenceConfiguration) {
  json doc;
  std::ifstream(kExamples + "/stencil5.json") >> doc;
  for (json& p : doc["ConfigurationSpace"]["TuningParameters"]) p.erase("Default");
  doc["KernelSpecification"]["KernelFile"] = std::filesystem::absolute(kExamples + "/stencil5.cl").string();
  const std::string path = testing::TempDir() + "/stencil5_no_defaults.json";
  std::ofstream(path) << doc.dump();
  const auto spec = load_tuning_file(path);
  const StoredConfiguration c = best_configuration(nullptr, *spec, spec->parse_size("128x128"), fake_device("H100"));
  EXPECT_EQ(c.level, LookupLevel::reference);
  EXPECT_EQ(c.config.params, spec->reference_params());
  EXPECT_EQ(to_string(LookupLevel::reference), "reference");
  EXPECT_EQ(to_string(LookupLevel::defaults), "default");
}

TEST_F(ParameterChain, WarmSeedsComeNearestFirstFromEachScopeAndSkipInvalidOnes) {
  json other = kTuned;
  other["UNROLL"] = 4;
  json arch = kTuned;
  arch["PREFETCH"] = 0;
  json far = kTuned;
  far["PAD"] = 1;
  store_best(store, *spec, h100, "256x256x256", other);    // distance 3 from 512^3
  store_best(store, *spec, h100, "1024x512x512", kTuned);  // distance 1
  store_best(store, *spec, h100, "512x512x512", far);      // this very size: never a seed
  store_best(store, *spec, gh200, "512x512x512", arch);
  store_best(store, *spec, mi300, "512x512x512", far);
  const json tiles32{{"TSM", 32}, {"TSN", 32}, {"TSK", 32},   {"WPTM", 1},    {"WPTN", 1},
                     {"VW", 1},   {"PAD", 0},  {"UNROLL", 1}, {"PREFETCH", 0}};
  store_best(store, *spec, a100, "96x96x96", tiles32);
  const Problem p = spec->parse_size("512x512x512");
  const auto seeds = warm_seeds(store, *spec, p, h100, 6);
  ASSERT_EQ(seeds.size(), 5u);
  EXPECT_EQ(seeds[0].config.params, kTuned);  // the nearest size on this device first
  EXPECT_EQ(seed_scope(seeds[0]), "nearest");
  EXPECT_EQ(seeds[1].config.params, other);
  EXPECT_EQ(seed_scope(seeds[2]), "architecture");
  EXPECT_EQ(seeds[2].config.params, arch);
  EXPECT_EQ(seed_scope(seeds[3]), "vendor-type");
  EXPECT_EQ(seeds[3].config.params, tiles32);
  EXPECT_EQ(seed_scope(seeds[4]), "other-device");
  for (const WarmSeed& s : seeds)
    EXPECT_FALSE(s.from.device_fingerprint == h100.fingerprint() && s.from.problem.size_text == p.text);
  // An invalid configuration at the new size is no seed: 64-tiles at 96^3.
  const auto small = warm_seeds(store, *spec, spec->parse_size("96x96x96"), h100, 6);
  ASSERT_EQ(small.size(), 1u);
  EXPECT_EQ(small[0].config.params, tiles32);
}

}  // namespace

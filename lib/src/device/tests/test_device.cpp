// Device model: PE tables without hardware, overrides, selectors and the
// real PoCL device.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "wstune/device.hpp"
#include "wstune/error.hpp"

using namespace wstune;

TEST(NvidiaTable, KnownComputeCapabilities) {
  EXPECT_EQ(nvidia_fp32_cores_per_sm(9, 0), 128u);  // H100
  EXPECT_EQ(nvidia_fp32_cores_per_sm(8, 0), 64u);   // A100
  EXPECT_EQ(nvidia_fp32_cores_per_sm(8, 6), 128u);
  EXPECT_EQ(nvidia_fp32_cores_per_sm(8, 7), 128u);
  EXPECT_EQ(nvidia_fp32_cores_per_sm(8, 9), 128u);
  EXPECT_EQ(nvidia_fp32_cores_per_sm(7, 0), 64u);
  EXPECT_EQ(nvidia_fp32_cores_per_sm(7, 5), 64u);
  EXPECT_EQ(nvidia_fp32_cores_per_sm(6, 0), 64u);
  EXPECT_EQ(nvidia_fp32_cores_per_sm(6, 1), 128u);
  EXPECT_EQ(nvidia_fp32_cores_per_sm(5, 2), 128u);
  EXPECT_EQ(nvidia_fp32_cores_per_sm(3, 5), 192u);  // Tesla K20 (paper Table 2)
  EXPECT_EQ(nvidia_fp32_cores_per_sm(2, 1), 48u);   // Quadro 2000D (paper Table 2)
  EXPECT_EQ(nvidia_fp32_cores_per_sm(2, 0), 32u);
  EXPECT_EQ(nvidia_fp32_cores_per_sm(1, 0), 8u);  // GeForce 8800GTS (paper Table 2)
  EXPECT_FALSE(nvidia_fp32_cores_per_sm(4, 0).has_value());
  EXPECT_FALSE(nvidia_fp32_cores_per_sm(99, 0).has_value());
}

TEST(AmdQuery, SimdProduct) {
  EXPECT_EQ(amd_pe_per_cu(4, 16, 1), 64u);  // GCN
  EXPECT_EQ(amd_pe_per_cu(2, 32, 1), 64u);  // RDNA
  EXPECT_EQ(amd_pe_per_cu(4, 16, 0), 64u);  // an instruction width of 0 counts as 1
  EXPECT_EQ(amd_pe_per_cu(16, 5, 1), 80u);  // TeraScale VLIW5
}

TEST(PeOverrides, FileFormatAndLongestMatch) {
  auto o =
      PeOverrides::parse_file_text("# comment\n[pe_per_cu]\nNVIDIA H100 = 128\nNVIDIA = 64\npthread=8\n", "test.conf");
  EXPECT_EQ(o.size(), 3u);
  EXPECT_EQ(o.lookup("NVIDIA H100 80GB HBM3"), 128u);  // longest key wins
  EXPECT_EQ(o.lookup("NVIDIA A100"), 64u);
  EXPECT_EQ(o.lookup("PTHREAD-skylake"), 8u);  // case-insensitive
  EXPECT_FALSE(o.lookup("gfx90a").has_value());
}

TEST(PeOverrides, EnvFormat) {
  auto o = PeOverrides::parse_env_text("H100=132; pthread = 4 ;", "WSTUNE_PE_PER_CU");
  EXPECT_EQ(o.lookup("NVIDIA H100"), 132u);
  EXPECT_EQ(o.lookup("pthread-cpu"), 4u);
}

TEST(PeOverrides, MalformedEntriesNameTheSource) {
  try {
    (void)PeOverrides::parse_env_text("H100=lots", "WSTUNE_PE_PER_CU");
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("WSTUNE_PE_PER_CU"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("H100"), std::string::npos);
  }
  EXPECT_THROW((void)PeOverrides::parse_env_text("=4", "X"), UsageError);
  EXPECT_THROW((void)PeOverrides::parse_env_text("H100=0", "X"), UsageError);
  EXPECT_THROW((void)PeOverrides::parse_file_text("[other]\na = 1\n", "f.conf"), UsageError);
  EXPECT_THROW((void)PeOverrides::parse_file_text("[pe_per_cu]\na = -3\n", "f.conf"), UsageError);
}

TEST(DeviceInfo, FingerprintIsStableAndSensitive) {
  DeviceInfo a;
  a.vendor = "NVIDIA Corporation";
  a.name = "NVIDIA H100 80GB HBM3";
  a.driver_version = "550.54";
  a.compute_units = 132;
  DeviceInfo b = a;
  b.platform_index = 3;  // index order must not matter
  b.device_index = 7;
  EXPECT_EQ(a.fingerprint(), b.fingerprint());
  EXPECT_EQ(a.fingerprint().size(), 16u);
  b.compute_units = 114;
  EXPECT_NE(a.fingerprint(), b.fingerprint());
  b = a;
  b.driver_version = "550.55";
  EXPECT_NE(a.fingerprint(), b.fingerprint());
  a.pe_per_cu = 128;
  EXPECT_EQ(a.total_pe(), 132u * 128u);
}

class RealDevices : public ::testing::Test {
 protected:
  void SetUp() override {
    all_ = enumerate_devices(PeOverrides{});
    ASSERT_FALSE(all_.empty()) << "no OpenCL device: install pocl-opencl-icd";
  }
  std::vector<Device> all_;
};

TEST_F(RealDevices, EveryFieldIsFilled) {
  for (const auto& d : all_) {
    const auto& i = d.info;
    EXPECT_FALSE(i.name.empty());
    EXPECT_FALSE(i.platform.empty());
    EXPECT_GT(i.compute_units, 0u);
    EXPECT_GT(i.pe_per_cu, 0u);
    EXPECT_FALSE(i.pe_detail.empty());
    EXPECT_GT(i.max_work_group_size, 0u);
    EXPECT_GE(i.max_work_item_sizes.size(), 2u);
    EXPECT_GT(i.global_mem_bytes, 0u);
    EXPECT_GT(i.local_mem_bytes, 0u);
    EXPECT_FALSE(i.opencl_version.empty());
    EXPECT_FALSE(i.driver_version.empty());
    if (i.type == "cpu") {
      EXPECT_EQ(i.pe_source, PeSource::estimate);
      EXPECT_EQ(i.pe_per_cu, std::max(1u, i.native_float_width));
    }
  }
}

TEST_F(RealDevices, OverrideWinsAndRecordsItsSource) {
  PeOverrides o;
  o.set(all_.front().info.name, 7);
  auto again = enumerate_devices(o);
  EXPECT_EQ(again.front().info.pe_per_cu, 7u);
  EXPECT_EQ(again.front().info.pe_source, PeSource::override_);
  EXPECT_NE(again.front().info.pe_detail.find("override"), std::string::npos);
}

TEST_F(RealDevices, OverrideFromEnvironment) {
  ::setenv("WSTUNE_PE_PER_CU", (all_.front().info.name + "=5").c_str(), 1);
  auto again = enumerate_devices();
  ::unsetenv("WSTUNE_PE_PER_CU");
  EXPECT_EQ(again.front().info.pe_per_cu, 5u);
}

TEST_F(RealDevices, Selectors) {
  const auto& first = all_.front().info;
  EXPECT_EQ(select_device(all_, "0:0").info.name, first.name);
  EXPECT_EQ(select_device(all_, first.id()).info.fingerprint(), first.fingerprint());
  EXPECT_EQ(select_devices(all_, "all").size(), all_.size());
  EXPECT_EQ(select_device(all_, first.type).info.type, first.type);
  // A name substring, in another case.
  std::string sub = first.name.substr(0, std::min<std::size_t>(first.name.size(), 5));
  for (auto& c : sub) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_EQ(select_device(all_, sub).info.name.substr(0, 5), first.name.substr(0, 5));
  EXPECT_NO_THROW((void)select_device(all_, "default"));
}

TEST_F(RealDevices, UnknownSelectorListsDevices) {
  try {
    (void)select_device(all_, "no-such-device-xyz");
    FAIL();
  } catch (const UsageError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("no-such-device-xyz"), std::string::npos);
    EXPECT_NE(m.find(all_.front().info.id()), std::string::npos);
  }
  EXPECT_THROW((void)select_device(all_, "9:9"), UsageError);
}

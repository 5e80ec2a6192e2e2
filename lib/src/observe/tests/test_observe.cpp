// Energy observers without sensors: RAPL over a fake powercap tree (zones,
// wrap-around, unreadable counters), NVML through a fake function table
// (device by PCI bus id, differencing, errors), observation windows.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <thread>

#include "observe/nvml.hpp"
#include "observe/observer.hpp"
#include "observe/pci.hpp"
#include "observe/rapl.hpp"
#include "test_store_util.hpp"
#include "wstune/error.hpp"

using namespace wstune;
using wstune::test::TempDir;

namespace {

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text << "\n";
}

void zone(const TempDir& d, const std::string& dir, std::uint64_t uj, std::uint64_t max_uj) {
  write(d.path / dir / "energy_uj", std::to_string(uj));
  write(d.path / dir / "max_energy_range_uj", std::to_string(max_uj));
  write(d.path / dir / "name", dir);
}

// A counter that moves by a scripted amount each read.
class ScriptedObserver final : public EnergyObserver {
 public:
  explicit ScriptedObserver(std::vector<double> values) : values_(std::move(values)) {}
  std::string_view sensor() const override { return "fake"; }
  double read_j() override { return values_[std::min(i_++, values_.size() - 1)]; }
  double resolution_j() const override { return 0.5; }

 private:
  std::vector<double> values_;
  std::size_t i_ = 0;
};

}  // namespace

TEST(Rapl, SumsPackageZonesOnlyAndUnwraps) {
  TempDir d;
  zone(d, "intel-rapl:0", 1'000'000, 10'000'000);
  zone(d, "intel-rapl:1", 9'500'000, 10'000'000);
  zone(d, "intel-rapl:0:0", 500, 10'000'000);  // a sub-zone (cores of package 0): not added
  RaplObserver o(d.path.string());
  ASSERT_EQ(o.zones().size(), 2u);
  EXPECT_EQ(o.zones()[1].name, "intel-rapl:1");
  EXPECT_DOUBLE_EQ(o.read_j(), 0.0);
  zone(d, "intel-rapl:0", 3'000'000, 10'000'000);    // +2 J
  zone(d, "intel-rapl:1", 500'000, 10'000'000);      // wrapped: +1 J
  zone(d, "intel-rapl:0:0", 9'000'000, 10'000'000);  // ignored
  EXPECT_NEAR(o.read_j(), 3.0, 1e-9);
  zone(d, "intel-rapl:0", 3'500'000, 10'000'000);  // +0.5 J
  EXPECT_NEAR(o.read_j(), 3.5, 1e-9);
}

TEST(Rapl, DeltaAcrossTheWrap) {
  EXPECT_EQ(rapl_delta_uj(10, 25, 100), 15u);
  EXPECT_EQ(rapl_delta_uj(90, 5, 100), 15u);
  EXPECT_EQ(rapl_delta_uj(7, 7, 100), 0u);
}

TEST(Rapl, NoZoneOrUnreadableCounterIsAnErrorNamingTheFile) {
  TempDir d;
  EXPECT_THROW(RaplObserver(d.path.string()), Error);
  write(d.path / "intel-rapl:0" / "max_energy_range_uj", "100");
  try {
    RaplObserver o(d.path.string());
    FAIL() << "no energy_uj";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("intel-rapl:0/energy_uj"), std::string::npos) << e.what();
  }
  write(d.path / "intel-rapl:0" / "energy_uj", "lots");
  EXPECT_THROW(RaplObserver(d.path.string()), Error);
}

namespace {

// A fake NVML: devices by bus id, each a counter in mJ.
struct FakeNvml {
  std::map<std::string, unsigned long long> mj;  // bus id -> counter
  int inits = 0, shutdowns = 0;
  NvmlApi api() {
    NvmlApi a;
    a.init = [this] { return ++inits, 0; };
    a.shutdown = [this] { return ++shutdowns, 0; };
    a.device_by_pci_bus_id = [this](const char* id, void** dev) {
      const auto it = mj.find(id);
      if (it == mj.end()) return 6;  // NVML_ERROR_NOT_FOUND
      *dev = &it->second;
      return 0;
    };
    a.device_count = [this](unsigned* n) { return *n = static_cast<unsigned>(mj.size()), 0; };
    a.device_by_index = [this](unsigned i, void** dev) {
      auto it = mj.begin();
      std::advance(it, i);
      *dev = &it->second;
      return 0;
    };
    a.total_energy_mj = [](void* dev, unsigned long long* v) { return *v = *static_cast<unsigned long long*>(dev), 0; };
    a.power_mw = [](void*, unsigned* mw) { return *mw = 123'000, 0; };
    a.error_string = [](int s) { return s == 6 ? "Not Found" : "Unknown Error"; };
    return a;
  }
};

}  // namespace

TEST(Nvml, ReadsTheDeviceOfItsBusIdAsJoulesSinceTheStart) {
  FakeNvml f;
  f.mj = {{"00000000:17:00.0", 5'000'000}, {"00000000:65:00.0", 7'000'000}};
  {
    NvmlObserver o(f.api(), pci_bus_id_text(0, 0x65, 0, 0));
    EXPECT_DOUBLE_EQ(o.read_j(), 0.0);
    f.mj["00000000:65:00.0"] += 1'230'000;  // 1,230 J on this GPU
    f.mj["00000000:17:00.0"] += 999'000;    // the other GPU's energy is not this one's
    EXPECT_DOUBLE_EQ(o.read_j(), 1230.0);
    EXPECT_DOUBLE_EQ(o.power_now_w(), 123.0);
    EXPECT_DOUBLE_EQ(o.resolution_j(), 1e-3);
  }
  EXPECT_EQ(f.inits, 1);
  EXPECT_EQ(f.shutdowns, 1);
}

TEST(Nvml, UnknownBusIdIsAnErrorNamingTheCall) {
  FakeNvml f;
  f.mj = {{"00000000:17:00.0", 0}};
  try {
    NvmlObserver o(f.api(), std::string("00000000:99:00.0"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nvmlDeviceGetHandleByPciBusId_v2 failed: Not Found"), std::string::npos);
  }
  EXPECT_EQ(f.shutdowns, 1);  // initialised, so shut down again
}

TEST(Nvml, WithoutBusIdOnlyASingleDeviceIsChosen) {
  FakeNvml f;
  f.mj = {{"00000000:17:00.0", 100}};
  NvmlObserver one(f.api(), std::nullopt);
  f.mj["00000000:17:00.0"] += 2000;
  EXPECT_DOUBLE_EQ(one.read_j(), 2.0);
  f.mj["00000000:65:00.0"] = 0;
  EXPECT_THROW(NvmlObserver(f.api(), std::nullopt), Error);
}

TEST(Pci, BusIdTextIsNvmlsForm) {
  EXPECT_EQ(pci_bus_id_text(0, 0x65, 0x1f, 3), "00000000:65:1f.3");
}

TEST(Observe, WindowPowerIsTheCounterDifferenceOverTheWindow) {
  ScriptedObserver o({10.0, 12.0});  // 2 J across the window
  o.set_update_period_ms(5);
  const auto m = observe_window(o, 4, 1.0, [] { std::this_thread::sleep_for(std::chrono::milliseconds(40)); });
  EXPECT_EQ(m.sensor, "fake");
  EXPECT_EQ(m.runs, 4u);
  EXPECT_GE(m.window_ms, 40.0);
  EXPECT_NEAR(m.power_w, 2.0 / (m.window_ms / 1000), 1e-9);
  EXPECT_NEAR(m.energy_j, m.power_w * 1.0 / 1000, 1e-12);  // one run of 1 ms at that power
  EXPECT_DOUBLE_EQ(m.resolution_j, 0.5);
  EXPECT_DOUBLE_EQ(m.update_period_ms, 5.0);
  EXPECT_NEAR(m.relative_uncertainty(), 10.0 / m.window_ms, 1e-12);
  EXPECT_GE(m.read_ms, 0.0);
}

TEST(Observe, WindowRunsCoverTheWindow) {
  EXPECT_EQ(window_runs(100, 30), 4u);
  EXPECT_EQ(window_runs(100, 200), 1u);
  EXPECT_EQ(window_runs(100, 0), 1u);
  EXPECT_EQ(window_runs(1e9, 1e-6), 1'000'000u);
  ScriptedObserver o({0});
  o.set_update_period_ms(15);
  EXPECT_DOUBLE_EQ(window_ms(o, EnergyOptions{}), 150.0);
  EXPECT_DOUBLE_EQ(window_ms(o, EnergyOptions{true, 1, 20}), 20.0);
}

TEST(Observe, UpdatePeriodIsTheTimeBetweenTwoChanges) {
  // Changes on every 3rd read: polled every 2 ms, about 6 ms apart.
  std::vector<double> v;
  for (int i = 0; i < 100; ++i) v.push_back(i / 3);
  ScriptedObserver o(v);
  const double p = measure_update_period(o, std::chrono::milliseconds(1000), std::chrono::microseconds(2000));
  EXPECT_GE(p, 5.0);
  ScriptedObserver still({1.0});
  EXPECT_EQ(measure_update_period(still, std::chrono::milliseconds(20)), 0.0);
}

TEST(Observe, NoSensorIsAnAnswerNotAnError) {
  Device cpu;
  cpu.info.type = "cpu";
  cpu.info.vendor = "pocl";
  TempDir d;
  EnergyOptions opt;
  opt.powercap_root = (d.path / "absent").string();
  auto c = make_energy_observer(cpu, opt);
  EXPECT_FALSE(c.observer);
  EXPECT_NE(c.why_not.find("absent"), std::string::npos);
  opt.powercap_root = d.path.string();  // present but no zone
  c = make_energy_observer(cpu, opt);
  EXPECT_FALSE(c.observer);
  EXPECT_NE(c.why_not.find("no RAPL zone"), std::string::npos);
  opt.enabled = false;
  EXPECT_FALSE(make_energy_observer(cpu, opt).observer);
}

TEST(Observe, RaplObserverChosenForACpuDevice) {
  TempDir d;
  zone(d, "intel-rapl:0", 1, 1000);
  Device cpu;
  cpu.info.type = "cpu";
  EnergyOptions opt;
  opt.powercap_root = d.path.string();
  const auto c = make_energy_observer(cpu, opt);
  ASSERT_TRUE(c.observer) << c.why_not;
  EXPECT_EQ(c.observer->sensor(), "rapl");
  EXPECT_EQ(c.observer->update_period_ms(), 0.0);  // a fake counter that never moves
}

// Issue 38: a process the test cannot reach into (a wstuned worker) is
// pointed at a fake powercap tree through the environment.
TEST(Observe, PowercapRootComesFromTheEnvironmentWhenSet) {
  ::unsetenv("WSTUNE_POWERCAP_ROOT");
  EXPECT_EQ(default_powercap_root(), "/sys/class/powercap");
  ::setenv("WSTUNE_POWERCAP_ROOT", "", 1);
  EXPECT_EQ(default_powercap_root(), "/sys/class/powercap") << "empty: the default";
  ::setenv("WSTUNE_POWERCAP_ROOT", "/tmp/fake-powercap", 1);
  EXPECT_EQ(default_powercap_root(), "/tmp/fake-powercap");
  EXPECT_EQ(EnergyOptions{}.powercap_root, "/tmp/fake-powercap");
  ::unsetenv("WSTUNE_POWERCAP_ROOT");
}

// The joules of one round between two counter readings; none when a
// reading is missing (no observer, a failed read) or there was no round.
TEST(Observe, JoulesPerRoundNeedBothReadings) {
  EXPECT_EQ(joules_per_round(10.0, 16.0, 3), std::optional<double>(2.0));
  EXPECT_FALSE(joules_per_round(std::nullopt, 16.0, 3));
  EXPECT_FALSE(joules_per_round(10.0, std::nullopt, 3));
  EXPECT_FALSE(joules_per_round(10.0, 16.0, 0));
  EXPECT_FALSE(read_counter_j(nullptr));
  ScriptedObserver o({1.5, 2.5});
  EXPECT_EQ(read_counter_j(&o), std::optional<double>(1.5));
}

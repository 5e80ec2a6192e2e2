#pragma once
/// @file rapl.hpp
/// The CPU packages' energy through Linux powercap (internal): the sum of
/// every top-level RAPL zone's counter, <root>/intel-rapl:N/energy_uj (µJ;
/// the package domains, which include their cores, caches and uncore;
/// the sub-zones intel-rapl:N:M are parts of them and are not added),
/// each unwrapped at its max_energy_range_uj. AMD processors report RAPL
/// under the same names. Since Linux 5.10 energy_uj is readable by root
/// only (CVE-2020-8694): then there is no observer. Source: Linux
/// Documentation/power/powercap/powercap.rst.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "observe/observer.hpp"

namespace wstune {

/// One powercap zone's counter.
struct RaplZone {
  std::string path = {};           ///< the zone's directory
  std::string name = {};           ///< its "name" file, e.g. "package-0"
  std::uint64_t max_range_uj = 0;  ///< max_energy_range_uj: the counter wraps past it
  std::uint64_t last_uj = 0;       ///< the last raw reading
};

/// Sums the package zones' counters, unwrapped.
class RaplObserver final : public EnergyObserver {
 public:
  /// The zones under `root` (a powercap directory): throws Error naming the
  /// file and the reason when there is no zone or a counter cannot be read.
  explicit RaplObserver(const std::string& root);
  [[nodiscard]] std::string_view sensor() const override { return "rapl"; }
  double read_j() override;
  [[nodiscard]] double resolution_j() const override { return 1e-6; }
  /// The zones summed.
  [[nodiscard]] const std::vector<RaplZone>& zones() const noexcept { return zones_; }

 private:
  std::vector<RaplZone> zones_;
  double total_uj_ = 0;  // unwrapped energy since the start
};

/// The energy (µJ) between two raw readings of a counter that wraps past
/// `max_range_uj` (at most one wrap between readings).
std::uint64_t rapl_delta_uj(std::uint64_t before, std::uint64_t after, std::uint64_t max_range_uj) noexcept;

}  // namespace wstune

// The CPU packages' energy through Linux powercap (rapl.hpp).
#include "observe/rapl.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>

#include <fmt/format.h>

#include "wstune/error.hpp"

namespace wstune {

namespace {

namespace fs = std::filesystem;

std::string read_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line)) {
    throw Error(fmt::format("cannot read {} (powercap energy counters are readable by root only since Linux 5.10)",
                            file.string()));
  }
  return line;
}

std::uint64_t read_uj(const fs::path& file) {
  const std::string text = read_line(file);
  try {
    std::size_t used = 0;
    const auto v = std::stoull(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  throw Error(fmt::format("{} holds '{}', not a number of µJ", file.string(), text));
}

}  // namespace

std::uint64_t rapl_delta_uj(std::uint64_t before, std::uint64_t after, std::uint64_t max_range_uj) noexcept {
  return after >= before ? after - before : max_range_uj - before + after;
}

RaplObserver::RaplObserver(const std::string& root) {
  static const std::regex top_level(R"(intel-rapl:[0-9]+)");  // not the sub-zones intel-rapl:N:M
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const std::string dir = entry.path().filename().string();
    if (!std::regex_match(dir, top_level)) continue;
    RaplZone z;
    z.path = entry.path().string();
    z.name = fs::exists(entry.path() / "name") ? read_line(entry.path() / "name") : dir;
    z.max_range_uj = read_uj(entry.path() / "max_energy_range_uj");
    z.last_uj = read_uj(entry.path() / "energy_uj");
    zones_.push_back(std::move(z));
  }
  if (zones_.empty()) throw Error(fmt::format("no RAPL zone (intel-rapl:N) under {}", root));
  std::sort(zones_.begin(), zones_.end(), [](const RaplZone& a, const RaplZone& b) { return a.path < b.path; });
}

double RaplObserver::read_j() {
  for (auto& z : zones_) {
    const std::uint64_t now = read_uj(fs::path(z.path) / "energy_uj");
    total_uj_ += static_cast<double>(rapl_delta_uj(z.last_uj, now, z.max_range_uj));
    z.last_uj = now;
  }
  return total_uj_ * 1e-6;
}

}  // namespace wstune

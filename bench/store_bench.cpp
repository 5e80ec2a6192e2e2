// bench_store: trial inserts per second (batched transactions) and look-up
// latency (p50/p99, cached and uncached) over a database of N trials.
// Usage: bench_store [--trials N] [--batch B] [--lookups L] [--db FILE]
//                    [--out-dir DIR] [--tag TAG]
// Writes DIR/store_TAG.csv and .md (default tag "bench"). Targets (issue 4):
// look-up p99 ≤ 5 µs cached and ≤ 200 µs uncached; ≥ 50,000 inserts/s.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "wstune/lookup.hpp"
#include "wstune/store.hpp"
#include "wstune/version.hpp"

using namespace wstune;
using Clock = std::chrono::steady_clock;

namespace {

DeviceInfo device(unsigned i) {
  DeviceInfo d;
  d.platform = "Bench";
  d.name = fmt::format("Device {}", i);
  d.vendor = i % 2 ? "NVIDIA Corporation" : "Advanced Micro Devices, Inc.";
  d.type = "gpu";
  d.driver_version = "1";
  d.architecture = i % 2 ? "sm_90" : "gfx90a";
  d.compute_units = 100 + i;
  d.pe_per_cu = 64;
  d.max_work_group_size = 1024;
  d.max_work_item_sizes = {1024, 1024, 64};
  return d;
}

struct Stat {
  double p50, p99, mean;
};
Stat stats(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  double sum = 0;
  for (double v : us) sum += v;
  return {us[us.size() / 2], us[std::min(us.size() - 1, us.size() * 99 / 100)], sum / static_cast<double>(us.size())};
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t trials = 1'000'000, batch = 1000, lookups = 20000;
  std::string db, out_dir = ".", tag = "bench";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--trials") trials = std::stoul(v);
    else if (a == "--batch") batch = std::stoul(v);
    else if (a == "--lookups") lookups = std::stoul(v);
    else if (a == "--db") db = v;
    else if (a == "--out-dir") out_dir = v;
    else if (a == "--tag") tag = v;
    else {
      std::cerr << "bench_store: unknown option " << a << "\n";
      return 2;
    }
  }
  bool remove_db = false;
  if (db.empty()) {
    db = (std::filesystem::temp_directory_path() / fmt::format("wstune-bench-store-{}.db", getpid())).string();
    remove_db = true;
  }
  std::filesystem::remove(db);
  const unsigned kDevices = 4, kKernels = 2;
  const std::size_t per_session = 1000;  // configurations 1..1000 (1-D)
  const std::size_t sessions = std::max<std::size_t>(1, trials / per_session);
  const std::size_t problems = std::max<std::size_t>(1, sessions / (kDevices * kKernels));
  const std::vector<std::string> kernels{"matmul", "sort"};
  std::vector<Extent> globals;  // 1-D sizes 2^10 · k
  for (std::size_t p = 0; p < problems; ++p) globals.push_back({1024 * (p + 1), 1, 1});

  Store store(db);
  std::mt19937_64 rng(42);
  std::normal_distribution<double> noise(1.0, 0.02);
  // ---- inserts -------------------------------------------------------------
  std::vector<std::int64_t> sids;
  double insert_s = 0;
  std::size_t inserted = 0;
  for (std::size_t s = 0; s < sessions; ++s) {
    const unsigned d = static_cast<unsigned>(s % kDevices);
    const std::string& k = kernels[(s / kDevices) % kKernels];
    const Extent g = globals[(s / (kDevices * kKernels)) % problems];
    const auto sess = store.open_session(device(d), {k, "hash", ""}, {g, ""}, {"bench", {}, {}}, false);
    sids.push_back(sess.id);
    std::vector<TrialRecord> buf;
    for (std::size_t c = 1; c <= per_session; ++c) {
      TrialRecord t;
      t.local = c == 1 ? LocalSize{} : LocalSize{Extent{c, 1, 1}};
      t.status = g.x % c == 0 ? TrialStatus::correct : TrialStatus::constraints;
      if (t.status == TrialStatus::correct) {
        const double base = 1.0 + std::abs(std::log2(static_cast<double>(c) / 128.0));
        t.samples_ms = {base * noise(rng), base * noise(rng), base * noise(rng), base * noise(rng), base * noise(rng)};
      }
      t.compile_ms = 0.5;
      t.run_ms = 2.0;
      buf.push_back(std::move(t));
      if (buf.size() == batch || c == per_session) {
        const auto t0 = Clock::now();
        inserted += store.add_trials(sess.id, buf);
        insert_s += std::chrono::duration<double>(Clock::now() - t0).count();
        buf.clear();
      }
    }
  }
  const double rate = static_cast<double>(inserted) / insert_s;
  std::cerr << fmt::format("inserted {} trials in {:.2f} s: {:.0f} trials/s\n", inserted, insert_s, rate);
  const auto t_best = Clock::now();
  for (auto sid : sids) store.end_session(sid), store.derive_best(sid);
  const double best_s = std::chrono::duration<double>(Clock::now() - t_best).count();

  // ---- look-ups ------------------------------------------------------------
  auto run = [&](bool cache, bool exact) {
    LookupOptions o;
    o.cache = cache;
    o.forced = std::map<std::string, LocalSize, std::less<>>{};
    Lookup l(store, o);
    std::uniform_int_distribution<std::size_t> pick(0, problems - 1);
    std::vector<double> us;
    us.reserve(lookups);
    const std::size_t distinct = cache ? 64 : lookups;  // the cached run repeats a working set
    std::vector<std::pair<DeviceInfo, Extent>> qs;
    for (std::size_t i = 0; i < std::min(distinct, lookups); ++i) {
      Extent g = globals[pick(rng)];
      if (!exact) g.x += 512;  // between stored sizes: the nearest level
      qs.push_back({device(static_cast<unsigned>(i % kDevices)), g});
    }
    const KernelKey matmul_key{"matmul", "hash", ""};  // as stored above
    for (const auto& q : qs) l.find(q.first, matmul_key, q.second);  // warm (statements, page cache, the cache)
    std::size_t hits = 0;
    for (std::size_t i = 0; i < lookups; ++i) {
      const auto& q = qs[i % qs.size()];
      const auto t0 = Clock::now();
      const LookupResult r = l.find(q.first, matmul_key, q.second);
      us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      hits += r.level == (exact ? LookupLevel::exact : LookupLevel::nearest) ? 1 : 0;
    }
    if (hits != lookups) std::cerr << fmt::format("warning: {} of {} look-ups hit the expected level\n", hits, lookups);
    return stats(us);
  };
  const Stat cached = run(true, true), exact = run(false, true), nearest = run(false, false);
  const CheckReport rep = store.check();

  struct Row {
    std::string metric;
    double value;
    std::string unit, target;
    bool pass;
  };
  const std::vector<Row> rows{
      {"trial inserts (batches of " + std::to_string(batch) + ")", rate, "trials/s", ">= 50000", rate >= 50000},
      {"look-up cached p50", cached.p50, "us", "", true},
      {"look-up cached p99", cached.p99, "us", "<= 5", cached.p99 <= 5},
      {"look-up uncached exact p50", exact.p50, "us", "", true},
      {"look-up uncached exact p99", exact.p99, "us", "<= 200", exact.p99 <= 200},
      {"look-up uncached nearest p50", nearest.p50, "us", "", true},
      {"look-up uncached nearest p99", nearest.p99, "us", "<= 200", nearest.p99 <= 200},
      {"derive best per session (mean)", best_s / static_cast<double>(sids.size()) * 1000, "ms", "", true},
  };
  std::filesystem::create_directories(out_dir);
  std::ofstream csv(out_dir + "/store_" + tag + ".csv");
  csv << "metric,value,unit,target,pass\n";
  for (const Row& r : rows) csv << fmt::format("\"{}\",{:.3f},{},\"{}\",{}\n", r.metric, r.value, r.unit, r.target, r.pass);
  std::ofstream md(out_dir + "/store_" + tag + ".md");
  md << fmt::format("# Store benchmark ({})\n\nwstune {}, {} trials in {} sessions ({} best configurations), "
                    "database {:.0f} MiB, {} look-ups per row. Generated by scripts/bench-store.sh "
                    "(bench/store_bench.cpp).\n\n| metric | value | unit | target | met |\n|---|---:|---|---|---|\n",
                    tag, version(), rep.trials, rep.sessions, rep.best_configs,
                    static_cast<double>(std::filesystem::file_size(db)) / (1 << 20), lookups);
  for (const Row& r : rows)
    md << fmt::format("| {} | {:.2f} | {} | {} | {} |\n", r.metric, r.value, r.unit, r.target,
                      r.target.empty() ? "" : (r.pass ? "yes" : "NO"));
  md << "\nUncached look-ups open no cache (LookupOptions::cache = false) and ask the database each time; exact "
        "queries hit a stored size, nearest ones fall between stored sizes and rank every stored problem of the "
        "device and kernel. Cached look-ups repeat a working set of 64 queries.\n";
  for (const Row& r : rows) std::cout << fmt::format("{:<40} {:>12.2f} {}\n", r.metric, r.value, r.unit);
  store = Store(":memory:");
  if (remove_db) {
    std::filesystem::remove(db);
    std::filesystem::remove(db + "-wal");
    std::filesystem::remove(db + "-shm");
  }
  bool ok = true;
  for (const Row& r : rows) ok = ok && r.pass;
  return ok ? 0 : 1;
}

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
#include <optional>
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

constexpr unsigned kDevices = 4, kKernels = 2;
constexpr std::size_t kPerSession = 1000;  // configurations 1..1000 (1-D)

// The command line.
struct Options {
  std::size_t trials = 1'000'000, batch = 1000, lookups = 20000;
  std::string db, out_dir = ".", tag = "bench";
};

// The options; nullopt, after saying so, for an unknown one.
std::optional<Options> parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--trials")
      o.trials = std::stoul(v);
    else if (a == "--batch")
      o.batch = std::stoul(v);
    else if (a == "--lookups")
      o.lookups = std::stoul(v);
    else if (a == "--db")
      o.db = v;
    else if (a == "--out-dir")
      o.out_dir = v;
    else if (a == "--tag")
      o.tag = v;
    else {
      std::cerr << "bench_store: unknown option " << a << "\n";
      return std::nullopt;
    }
  }
  return o;
}

// The stored problems: sessions of kPerSession trials over kDevices devices,
// kKernels kernels and `problems` 1-D sizes 2^10 · k.
struct Workload {
  std::size_t sessions = 0, problems = 0;
  std::vector<std::string> kernels{"matmul", "sort"};
  std::vector<Extent> globals;
};

// The workload of about `trials` trials.
Workload make_workload(std::size_t trials) {
  Workload w;
  w.sessions = std::max<std::size_t>(1, trials / kPerSession);
  w.problems = std::max<std::size_t>(1, w.sessions / (kDevices * kKernels));
  for (std::size_t p = 0; p < w.problems; ++p) w.globals.push_back({1024 * (p + 1), 1, 1});
  return w;
}

// The one random source: samples' noise while inserting, then the look-ups' sizes.
struct Random {
  std::mt19937_64 rng{42};
  std::normal_distribution<double> noise{1.0, 0.02};
};

// Configuration c's trial (1: NULL) at global size g: correct where c divides
// g.x, with five noisy samples around a cost least at 128.
TrialRecord trial_record(std::size_t c, const Extent& g, Random& rnd) {
  TrialRecord t;
  t.local = c == 1 ? LocalSize{} : LocalSize{Extent{c, 1, 1}};
  t.status = g.x % c == 0 ? TrialStatus::correct : TrialStatus::constraints;
  if (t.status == TrialStatus::correct) {
    const double base = 1.0 + std::abs(std::log2(static_cast<double>(c) / 128.0));
    t.samples_ms = {base * rnd.noise(rnd.rng), base * rnd.noise(rnd.rng), base * rnd.noise(rnd.rng),
                    base * rnd.noise(rnd.rng), base * rnd.noise(rnd.rng)};
  }
  t.compile_ms = 0.5;
  t.run_ms = 2.0;
  return t;
}

// The inserts: the sessions opened and the trials stored per second.
struct Inserts {
  std::vector<std::int64_t> sids;
  double rate = 0;
};

// Stores every session's trials in batches of `batch` (a session's last
// batch may be smaller); only add_trials is timed. Says the rate.
Inserts insert_all(Store& store, const Workload& w, std::size_t batch, Random& rnd) {
  Inserts ins;
  double insert_s = 0;
  std::size_t inserted = 0;
  for (std::size_t s = 0; s < w.sessions; ++s) {
    const unsigned d = static_cast<unsigned>(s % kDevices);
    const std::string& k = w.kernels[(s / kDevices) % kKernels];
    const Extent g = w.globals[(s / (kDevices * kKernels)) % w.problems];
    const auto sess = store.open_session(device(d), {k, "hash", ""}, {g, ""}, {"bench", {}, {}}, false);
    ins.sids.push_back(sess.id);
    std::vector<TrialRecord> buf;
    for (std::size_t c = 1; c <= kPerSession; ++c) {
      buf.push_back(trial_record(c, g, rnd));
      if (buf.size() == batch || c == kPerSession) {
        const auto t0 = Clock::now();
        inserted += store.add_trials(sess.id, buf);
        insert_s += std::chrono::duration<double>(Clock::now() - t0).count();
        buf.clear();
      }
    }
  }
  ins.rate = static_cast<double>(inserted) / insert_s;
  std::cerr << fmt::format("inserted {} trials in {:.2f} s: {:.0f} trials/s\n", inserted, insert_s, ins.rate);
  return ins;
}

// Ends every session and derives its best configuration; the seconds that took.
double derive_bests(Store& store, const std::vector<std::int64_t>& sids) {
  const auto t_best = Clock::now();
  for (auto sid : sids) store.end_session(sid), store.derive_best(sid);
  return std::chrono::duration<double>(Clock::now() - t_best).count();
}

// The look-ups' queries (device, global size): a working set of 64 when
// cached, else one per look-up; between stored sizes unless `exact`.
std::vector<std::pair<DeviceInfo, Extent>> queries(const Workload& w, std::size_t lookups, Random& rnd, bool cache,
                                                   bool exact) {
  std::uniform_int_distribution<std::size_t> pick(0, w.problems - 1);
  const std::size_t distinct = cache ? 64 : lookups;  // the cached run repeats a working set
  std::vector<std::pair<DeviceInfo, Extent>> qs;
  for (std::size_t i = 0; i < std::min(distinct, lookups); ++i) {
    Extent g = w.globals[pick(rnd.rng)];
    if (!exact) g.x += 512;  // between stored sizes: the nearest level
    qs.push_back({device(static_cast<unsigned>(i % kDevices)), g});
  }
  return qs;
}

// Latencies (µs) of `lookups` look-ups of matmul, cached or not, at stored
// sizes (exact) or between them (nearest); warns when a look-up misses that level.
Stat time_lookups(Store& store, const Workload& w, std::size_t lookups, Random& rnd, bool cache, bool exact) {
  LookupOptions o;
  o.cache = cache;
  o.forced = std::map<std::string, LocalSize, std::less<>>{};
  Lookup l(store, o);
  std::vector<double> us;
  us.reserve(lookups);
  const auto qs = queries(w, lookups, rnd, cache, exact);
  const KernelKey matmul_key{"matmul", "hash", ""};                // as stored above
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
}

// One line of the results.
struct Row {
  std::string metric;
  double value;
  std::string unit, target;
  bool pass;
};

// What was measured.
struct Results {
  double rate = 0;  // trials/s
  Stat cached{}, exact{}, nearest{};
  double best_ms = 0;  // derive best per session (mean)
};

// The results against their targets, in the order of the tables.
std::vector<Row> result_rows(std::size_t batch, const Results& m) {
  return {
      {"trial inserts (batches of " + std::to_string(batch) + ")", m.rate, "trials/s", ">= 50000", m.rate >= 50000},
      {"look-up cached p50", m.cached.p50, "us", "", true},
      {"look-up cached p99", m.cached.p99, "us", "<= 5", m.cached.p99 <= 5},
      {"look-up uncached exact p50", m.exact.p50, "us", "", true},
      {"look-up uncached exact p99", m.exact.p99, "us", "<= 200", m.exact.p99 <= 200},
      {"look-up uncached nearest p50", m.nearest.p50, "us", "", true},
      {"look-up uncached nearest p99", m.nearest.p99, "us", "<= 200", m.nearest.p99 <= 200},
      {"derive best per session (mean)", m.best_ms, "ms", "", true},
  };
}

// Writes store_<tag>.csv and .md into --out-dir (the database as it is now) and prints the rows.
void write_outputs(const Options& o, const std::vector<Row>& rows, const CheckReport& rep) {
  std::filesystem::create_directories(o.out_dir);
  std::ofstream csv(o.out_dir + "/store_" + o.tag + ".csv");
  csv << "metric,value,unit,target,pass\n";
  for (const Row& r : rows)
    csv << fmt::format("\"{}\",{:.3f},{},\"{}\",{}\n", r.metric, r.value, r.unit, r.target, r.pass);
  std::ofstream md(o.out_dir + "/store_" + o.tag + ".md");
  md << fmt::format(
      "# Store benchmark ({})\n\nwstune {}, {} trials in {} sessions ({} best configurations), "
      "database {:.0f} MiB, {} look-ups per row. Generated by scripts/bench-store.sh "
      "(bench/store_bench.cpp).\n\n| metric | value | unit | target | met |\n|---|---:|---|---|---|\n",
      o.tag, version(), rep.trials, rep.sessions, rep.best_configs,
      static_cast<double>(std::filesystem::file_size(o.db)) / (1 << 20), o.lookups);
  for (const Row& r : rows)
    md << fmt::format("| {} | {:.2f} | {} | {} | {} |\n", r.metric, r.value, r.unit, r.target,
                      r.target.empty() ? "" : (r.pass ? "yes" : "NO"));
  md << "\nUncached look-ups open no cache (LookupOptions::cache = false) and ask the database each time; exact "
        "queries hit a stored size, nearest ones fall between stored sizes and rank every stored problem of the "
        "device and kernel. Cached look-ups repeat a working set of 64 queries.\n";
  for (const Row& r : rows) std::cout << fmt::format("{:<40} {:>12.2f} {}\n", r.metric, r.value, r.unit);
}

// Removes the database file with its WAL and shared-memory files.
void remove_db_files(const std::string& db) {
  std::filesystem::remove(db);
  std::filesystem::remove(db + "-wal");
  std::filesystem::remove(db + "-shm");
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<Options> o = parse_options(argc, argv);
  if (!o) return 2;
  const bool remove_db = o->db.empty();  // a scratch database in the temporary directory
  if (remove_db)
    o->db = (std::filesystem::temp_directory_path() / fmt::format("wstune-bench-store-{}.db", getpid())).string();
  std::filesystem::remove(o->db);
  const Workload w = make_workload(o->trials);
  Store store(o->db);
  Random rnd;
  const Inserts ins = insert_all(store, w, o->batch, rnd);
  Results m;
  m.rate = ins.rate;
  const double best_s = derive_bests(store, ins.sids);
  m.best_ms = best_s / static_cast<double>(ins.sids.size()) * 1000;
  m.cached = time_lookups(store, w, o->lookups, rnd, true, true);
  m.exact = time_lookups(store, w, o->lookups, rnd, false, true);
  m.nearest = time_lookups(store, w, o->lookups, rnd, false, false);
  const CheckReport rep = store.check();
  const std::vector<Row> rows = result_rows(o->batch, m);
  write_outputs(*o, rows, rep);
  store = Store(":memory:");
  if (remove_db) remove_db_files(o->db);
  bool ok = true;
  for (const Row& r : rows) ok = ok && r.pass;
  return ok ? 0 : 1;
}

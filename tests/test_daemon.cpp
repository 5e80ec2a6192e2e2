// wstuned's master and real workers (threads, PoCL devices) over the
// in-memory Communicator: all four kernels split, run, gathered and
// verified; worker faults handled as docs/daemon.md says; tune and
// calibrate modes; then the measured split from the calibrations.
#include <cmath>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <thread>

#include "app.hpp"
#include "communicator.hpp"
#include "master.hpp"
#include "split_plan.hpp"
#include "tasks.hpp"
#include "worker.hpp"
#include "wstune/multi_device.hpp"
#include "wstune/store.hpp"

using namespace wstune;
using namespace wstune::daemon;

namespace {

// A master on rank 0 and workers on 1..n (each its own thread and device
// runner on the first OpenCL device), with per-worker faults.
struct World {
  explicit World(std::vector<FaultKind> faults, std::chrono::milliseconds job_timeout = std::chrono::seconds(120))
      : world(static_cast<int>(faults.size()) + 1) {
    auto [device, why] = open_worker_device("auto", 0);
    if (!device) throw std::runtime_error("no OpenCL device for the tests: " + why);
    codes.resize(faults.size(), -1);
    for (std::size_t i = 0; i < faults.size(); ++i) {
      WorkerOptions wo;
      wo.host = "test-host";
      wo.fault = faults[i];
      wo.welcome_timeout = std::chrono::seconds(30);
      threads.emplace_back([this, i, wo, d = *device] {
        Worker w(world.at(static_cast<int>(i) + 1), d, "", wo);
        codes[i] = w.serve();
      });
    }
    MasterOptions mo;
    mo.job_timeout = job_timeout;
    mo.shutdown_timeout = std::chrono::seconds(30);
    master = std::make_unique<Master>(world.at(0), sink, mo);
  }
  ~World() {
    if (!shut) master->shutdown();
    join();
  }
  // Shuts the workers down and waits for their threads (codes are final then).
  bool shutdown() {
    shut = true;
    const bool ok = master->shutdown();
    join();
    return ok;
  }
  void join() {
    for (auto& t : threads)
      if (t.joinable()) t.join();
  }
  InMemoryWorld world;
  MemorySink sink;
  std::unique_ptr<Master> master;
  std::vector<std::thread> threads;
  std::vector<int> codes;
  bool shut = false;
};

// trapezoid 4096 (14 local sizes) to tune.
Job trapezoid_tune(unsigned repetitions, unsigned max_trials) {
  Job j;
  j.kernel = "trapezoid";
  j.size = "4096";
  j.repetitions = repetitions;
  j.max_trials = max_trials;
  return j;
}

std::vector<Job> small_jobs(const std::string& split, LocalPolicy local) {
  std::vector<Job> jobs;
  for (auto [k, s] : {std::pair{"matmul", "64"}, {"bilinear", "32x32:64x64"}, {"sort", "4096"},
                      {"trapezoid", "8192"}}) {
    Job j;
    j.kernel = k;
    j.size = s;
    j.repetitions = 2;
    j.split = split;
    j.local = local;
    jobs.push_back(j);
  }
  return jobs;
}

}  // namespace

TEST(Daemon, AllFourKernelsSplitRunGatherAndVerify) {
  World w({FaultKind::none, FaultKind::none});
  ASSERT_EQ(w.master->register_workers(), 2u);
  for (const char* model : {"even", "pe-ratio"}) {
    const auto reports = w.master->run_all(Mode::run, small_jobs(model, LocalPolicy::rule));
    ASSERT_EQ(reports.size(), 4u);
    for (const auto& r : reports) {
      SCOPED_TRACE(r.job.kernel + " " + model);
      EXPECT_TRUE(r.ok()) << r.error;
      EXPECT_TRUE(r.verdict.ok);
      EXPECT_TRUE(r.faults.empty());
      double shares = 0;
      for (const auto& p : r.parts) {
        shares += p.share;
        EXPECT_GT(p.kernel_ms, 0);
        EXPECT_EQ(p.local_source.rfind("rule", 0) == 0 || p.local_source.rfind("null", 0) == 0, true)
            << p.local_source;
      }
      EXPECT_NEAR(shares, 1.0, 1e-9);
      EXPECT_GE(r.makespan_ms, r.makespan_ms - r.overhead_ms);
    }
  }
  EXPECT_EQ(w.sink.runs.size(), 8u);
  EXPECT_TRUE(w.shutdown());
}

// A worker keeps the last block's inputs for a job that comes again: the
// same problem and seed reuse them (no input generation: inputs_ms 0),
// another seed or size does not (the master verifies each job against its
// own seed's reference).
TEST(Daemon, RepeatedJobsReuseTheBlockInputsOnlyForTheSameProblemAndSeed) {
  World w({FaultKind::none});
  ASSERT_EQ(w.master->register_workers(), 1u);
  std::vector<Job> jobs;
  for (auto [size, seed] : {std::pair{"64", 42}, {"64", 7}, {"64", 42}, {"64", 42}, {"96", 42}}) {
    Job j;
    j.kernel = "matmul";
    j.size = size;
    j.seed = static_cast<std::uint64_t>(seed);
    j.repetitions = 1;
    jobs.push_back(j);
  }
  const auto reports = w.master->run_all(Mode::run, jobs);
  ASSERT_EQ(reports.size(), jobs.size());
  for (std::size_t i = 0; i < reports.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_TRUE(reports[i].ok()) << reports[i].error;
    EXPECT_TRUE(reports[i].verdict.ok);
    ASSERT_EQ(reports[i].parts.size(), 1u);
    if (i == 3) {
      EXPECT_EQ(reports[i].parts[0].inputs_ms, 0) << "the repeated job generated its inputs again";
    } else {
      EXPECT_GT(reports[i].parts[0].inputs_ms, 0) << "a new problem or seed reused the kept inputs";
    }
  }
  EXPECT_TRUE(w.shutdown());
}

TEST(Daemon, BuildFaultIsReportedAndTheJobIsResplitOverTheHealthyWorker) {
  World w({FaultKind::none, FaultKind::build});
  ASSERT_EQ(w.master->register_workers(), 2u);
  const auto reports = w.master->run_all(Mode::run, small_jobs("even", LocalPolicy::null));
  ASSERT_EQ(reports.size(), 4u);
  for (const auto& r : reports) {
    SCOPED_TRACE(r.job.kernel);
    EXPECT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.attempts, 2u);
    ASSERT_EQ(r.faults.size(), 1u);
    EXPECT_NE(r.faults[0].find("rank 2"), std::string::npos) << r.faults[0];
    EXPECT_NE(r.faults[0].find("(compile)"), std::string::npos) << r.faults[0];
    ASSERT_EQ(r.parts.size(), 1u);
    EXPECT_EQ(r.parts[0].rank, 1);
    EXPECT_DOUBLE_EQ(r.parts[0].share, 1.0);
  }
  EXPECT_TRUE(w.shutdown());
  EXPECT_EQ(w.codes, (std::vector<int>{0, 0}));
}

TEST(Daemon, KernelFaultOnEveryWorkerFailsEachJobCleanlyAndGoesOn) {
  World w({FaultKind::kernel, FaultKind::kernel});
  ASSERT_EQ(w.master->register_workers(), 2u);
  auto jobs = small_jobs("even", LocalPolicy::null);
  jobs.resize(2);
  const auto reports = w.master->run_all(Mode::run, jobs);
  ASSERT_EQ(reports.size(), 2u);
  for (const auto& r : reports) {
    EXPECT_EQ(r.status, "failed");
    EXPECT_EQ(r.error.rfind("no healthy worker left for this job (the last fault: worker rank", 0), 0u) << r.error;
    EXPECT_EQ(r.faults.size(), 2u);
  }
  EXPECT_TRUE(w.shutdown());  // workers stay alive: a kernel fault is per job
}

TEST(Daemon, HangingWorkerIsReportedByRankAndHostAndDropped) {
  World w({FaultKind::hang, FaultKind::none}, std::chrono::milliseconds(1500));
  ASSERT_EQ(w.master->register_workers(), 2u);
  auto jobs = small_jobs("even", LocalPolicy::null);
  jobs.resize(2);
  const auto reports = w.master->run_all(Mode::run, jobs);
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_TRUE(reports[0].ok()) << reports[0].error;
  ASSERT_EQ(reports[0].faults.size(), 1u);
  EXPECT_NE(reports[0].faults[0].find("rank 1 on test-host"), std::string::npos) << reports[0].faults[0];
  EXPECT_NE(reports[0].faults[0].find("did not answer"), std::string::npos);
  EXPECT_FALSE(w.master->workers()[0].alive);
  EXPECT_TRUE(reports[1].ok());
  EXPECT_TRUE(reports[1].faults.empty());  // the dropped worker is not asked again
  EXPECT_EQ(reports[1].parts.size(), 1u);
}

TEST(Daemon, TuneModeStoresEveryWorkersTrialsAndCalibrationEnablesMeasuredSplit) {
  World w({FaultKind::none, FaultKind::none});
  ASSERT_EQ(w.master->register_workers(), 2u);
  Job j = trapezoid_tune(2, 4);
  auto tuned = w.master->run_all(Mode::tune, {j});
  ASSERT_EQ(tuned.size(), 1u);
  EXPECT_TRUE(tuned[0].ok()) << tuned[0].error;
  ASSERT_EQ(w.sink.tune_results.size(), 2u);
  for (const auto& t : w.sink.tune_results) {
    const auto& res = t["result"];
    EXPECT_GE(res["trials"].size(), 2u);  // NULL and the rule at least
    EXPECT_EQ(res["best"]["status"], "correct");
    EXPECT_TRUE(res["best"]["verified"].get<bool>());
  }
  j.split = "measured";
  auto before = w.master->run_all(Mode::run, {j});
  EXPECT_EQ(before[0].status, "failed");  // no calibration yet
  EXPECT_NE(before[0].error.find("calibrat"), std::string::npos) << before[0].error;
  auto cal = w.master->run_all(Mode::calibrate, {j});
  ASSERT_TRUE(cal[0].ok()) << cal[0].error;
  ASSERT_EQ(w.sink.calibrations.size(), 2u);
  EXPECT_GE(w.sink.calibrations[0]["calibration"]["points"].size(), 2u);
  auto after = w.master->run_all(Mode::run, {j, j, j});
  ASSERT_EQ(after.size(), 3u);
  EXPECT_TRUE(after[0].ok()) << after[0].error;
  EXPECT_EQ(after[0].plan.model, "measured");
  // The first measured job plans with no fixed costs; each worker's part
  // then shows what it cost beyond the model. Later plans of the same job
  // assume what each worker showed last, and a worker not seen yet the
  // largest of those.
  for (const auto& part : after[0].parts) {
    EXPECT_EQ(part.fixed_ms, 0.0);
    EXPECT_GT(part.answer_ms, 0.0);
    EXPECT_LE(part.answer_ms, after[0].makespan_ms + 1e-9);
  }
  std::map<int, double> learned;
  for (std::size_t k = 0; k < 3; ++k) {
    ASSERT_TRUE(after[k].ok()) << after[k].error;
    double most = 0;
    for (const auto& [rank, f] : learned) most = std::max(most, f);
    for (const auto& part : after[k].parts)
      EXPECT_DOUBLE_EQ(part.fixed_ms, learned.count(part.rank) ? learned[part.rank] : most) << k << " " << part.rank;
    for (const auto& part : after[k].parts) {
      const auto& device = *w.master->workers()[static_cast<std::size_t>(part.rank - 1)].device;
      const SplitWorker sw{part.rank, device, w.sink.calibration(device, kernel_spec(j.kernel))};
      const auto f = observed_fixed_ms(kernel_spec(j.kernel), kernel_spec(j.kernel).parse_size(after[k].size), sw,
                                       after[k].plan.dim, part.block, j.warmup + j.repetitions,
                                       part.answer_ms - part.build_ms - part.inputs_ms);
      ASSERT_TRUE(f.has_value());
      EXPECT_GE(*f, 0.0);
      learned[part.rank] = *f;
    }
  }
  EXPECT_TRUE(to_json(after[1])["parts"][0].contains("fixed_ms"));
  EXPECT_TRUE(w.shutdown());
}

// Issue 14: two workers with one fingerprint divide one search. Every
// configuration of the space (and the baseline) is measured once, by one of
// them, and logged as it arrives; a second tune of the job skips the tuned
// device, "retune" searches it again.
TEST(Daemon, WorkersWithOneFingerprintShareOneSearch) {
  World w({FaultKind::none, FaultKind::none});
  ASSERT_EQ(w.master->register_workers(), 2u);
  Job j = trapezoid_tune(1, 0);
  j.strategy = "exhaustive";
  const auto tuned = w.master->run_all(Mode::tune, {j});
  ASSERT_TRUE(tuned[0].ok()) << tuned[0].error;
  ASSERT_EQ(tuned[0].data.size(), 2u);
  const auto& res = tuned[0].data[0]["result"];
  EXPECT_EQ(res["shared_by"], (nlohmann::json{1, 2}));
  const auto& by = res["measured_by_rank"];
  ASSERT_EQ(by.size(), 2u) << by.dump();
  EXPECT_GT(by["1"].get<unsigned>(), 0u);
  EXPECT_GT(by["2"].get<unsigned>(), 0u);
  std::set<std::string> keys;
  for (const auto& e : w.sink.trials) {
    const Trial t = trial_from_json(e["trial"]);
    EXPECT_TRUE(keys.insert(t.configuration().key()).second) << "measured twice: " << t.configuration().key();
  }
  EXPECT_EQ(keys.size(), by["1"].get<std::size_t>() + by["2"].get<std::size_t>());
  EXPECT_EQ(keys.size(), res["space_size"].get<std::size_t>() + 1);  // the whole space and the baseline
  EXPECT_EQ(res["best"]["status"], "correct");

  EXPECT_EQ(w.master->run_all(Mode::tune, {j})[0].status, "stored");  // tuned: skipped
  EXPECT_EQ(w.sink.trials.size(), keys.size());
  j.retune = true;
  j.max_trials = 3;
  EXPECT_TRUE(w.master->run_all(Mode::tune, {j})[0].ok());
  EXPECT_GT(w.sink.trials.size(), keys.size());
  EXPECT_TRUE(w.shutdown());
}

// A device that is slow for the cap (the cap is 1/6 of what the whole problem
// takes) stops calibrating early and still predicts the whole problem: matmul
// rows cost the same each, so t = a + b·rows holds and the fit extrapolates.
// Tolerance: within a factor of 2 of the whole run (measured before and after
// the calibration, median of both; PoCL on a loaded 2-core machine swings by
// ±40 % between runs; a calibration that did not extrapolate is off by the
// factor of the slices it left out, 4× or more).
TEST(Daemon, CappedCalibrationStopsEarlyAndPredictsTheWholeProblem) {
  auto [device, why] = open_worker_device("auto", 0);
  ASSERT_TRUE(device.has_value()) << why;
  const KernelSpec& k = kernel_spec("matmul");
  const Problem p = k.parse_size("512");
  const unsigned dim = split_dim(k, "auto");
  const std::size_t total = k.split_units(p, dim);
  MultiDeviceRunner whole({*device}, k, p);
  Samples full;
  auto run_whole = [&] {
    const auto r = whole.run({Block{dim, 0, total}}, {std::nullopt}, TimingOptions{1, 3});
    ASSERT_TRUE(r.ok()) << r.error;
    const auto& s = r.slices.at(0);
    for (double ms : s.kernel.ms) full.ms.push_back(ms + s.h2d.median() + s.d2h.median());
  };
  run_whole();
  const CalibrationBudget budget{full.median() / 6};
  const auto cal = calibrate_device(*device, k, p, dim, 3, 42, budget);
  run_whole();
  const double full_ms = full.median();
  const auto points = device_calibration_from_json(cal).points;
  ASSERT_GE(points.size(), 2u) << cal.dump();
  EXPECT_LE(points.back().units, total / 4) << "the calibration did not stop at the cap: " << cal.dump();
  EXPECT_EQ(points.front().units, calibration_ladder(total, 1).front());
  EXPECT_DOUBLE_EQ(cal["budget_ms"].get<double>(), budget.max_slice_ms);
  EXPECT_EQ(cal["total_units"].get<std::size_t>(), total);
  const double predicted = cal["full_ms"].get<double>();
  // A prediction of the whole range from the capped ladder (how close it comes
  // is a timing figure, for the benchmarks: on 2 shared cores it is noise).
  EXPECT_TRUE(std::isfinite(predicted) && predicted > 0) << "measured " << full_ms << " ms; " << cal.dump();
  // No cap: the classic five slices up to the whole range.
  const auto uncapped = device_calibration_from_json(calibrate_device(*device, k, k.parse_size("64"), dim, 1, 42));
  ASSERT_EQ(uncapped.points.size(), calibration_sizes(64, 1).size());
  EXPECT_EQ(uncapped.points.back().units, 64u);
}

// mpiexec forwards a Ctrl-C to every rank; a worker busy with a long block
// sees the signal only afterwards, when the master's shutdown is already
// waiting: it must answer it (bye, status 0), not leave silently after the
// grace time. With nothing waiting it does leave (status 4).
TEST(Daemon, SignalledWorkerAnswersAWaitingShutdownAndLeavesWithoutOne) {
  WorkerOptions wo;
  wo.stop_requested = [] { return true; };
  wo.stop_grace = std::chrono::milliseconds(0);
  {
    InMemoryWorld world(2);
    world.at(0).send(1, Welcome{}.to_message());
    world.at(0).send(1, Message{Tag::shutdown, nlohmann::json::object(), {}});
    EXPECT_EQ(Worker(world.at(1), std::nullopt, "none", wo).serve(), 0);
    EXPECT_EQ(world.sent_count(Tag::bye), 1u);
  }
  {
    InMemoryWorld world(2);
    world.at(0).send(1, Welcome{}.to_message());
    EXPECT_EQ(Worker(world.at(1), std::nullopt, "none", wo).serve(), 4);
    EXPECT_EQ(world.sent_count(Tag::bye), 0u);
  }
}

TEST(Daemon, ProtocolMismatchWorkerIsRefusedWithAClearReason) {
  InMemoryWorld world(2);
  auto [device, why] = open_worker_device("auto", 0);
  ASSERT_TRUE(device.has_value()) << why;
  int code = -1;
  WorkerOptions wo;
  wo.protocol = kProtocolVersion + 1;
  std::thread t([&, device = device] { code = Worker(world.at(1), device, "", wo).serve(); });
  MemorySink sink;
  Master master(world.at(0), sink, MasterOptions{});
  EXPECT_EQ(master.register_workers(), 0u);
  t.join();
  EXPECT_EQ(code, 3);
  EXPECT_NE(master.workers()[0].problem.find("protocol version mismatch"), std::string::npos);
}

TEST(Daemon, DeviceSelectorThatMatchesNothingGivesAReason) {
  auto [device, why] = open_worker_device("no-such-device-xyz", 0);
  EXPECT_FALSE(device.has_value());
  EXPECT_NE(why.find("no-such-device-xyz"), std::string::npos) << why;
}

// Issue 17: a failure on the master's side of one job (here the database
// refusing the record; under a memory limit, std::bad_alloc for the host
// buffers: daemon_mpi_oom) fails that job alone; the master goes on.
TEST(Daemon, AMasterSideFailureFailsOneJobAndTheMasterGoesOn) {
  struct RefusingSink : MemorySink {
    int calls = 0;
    void run(const JobReport& r) override {
      if (++calls == 1) throw StoreError("database x.db: disk full (store a split run); free space and retry");
      MemorySink::run(r);
    }
  };
  InMemoryWorld world(1);  // the master alone: every job fails for want of workers
  RefusingSink sink;
  Master master(world.at(0), sink, MasterOptions{});
  EXPECT_EQ(master.register_workers(), 0u);
  std::vector<Job> jobs(2);
  jobs[0].kernel = "trapezoid";
  jobs[0].size = "4096";
  jobs[1] = jobs[0];
  std::vector<JobReport> reports;
  ASSERT_NO_THROW(reports = master.run_all(Mode::run, jobs));
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0].status, "failed");
  EXPECT_NE(reports[0].error.find("disk full"), std::string::npos) << reports[0].error;
  EXPECT_EQ(reports[1].status, "failed");
  EXPECT_EQ(reports[1].error.rfind("no healthy worker left for this job", 0), 0u) << reports[1].error;
  EXPECT_EQ(sink.runs.size(), 1u);
}

// plan_split() with the measured model adds each worker's fixed cost per
// job to its non-empty block: two equal workers share a job evenly, one
// whose fixed cost is larger than the whole job on the other gets nothing,
// and a smaller one takes less. observed_fixed_ms() recovers a known excess.
TEST(Daemon, MeasuredPlanAddsEachWorkersFixedCost) {
  const KernelSpec& k = kernel_spec("bilinear");
  const Problem p = k.parse_size("64x64:128x128");
  DeviceCalibration d;
  d.fingerprint = "equal";
  for (double w : {1024.0, 4096.0, 16384.0}) d.points.push_back(CalibrationPoint{0, w, 0.001 * w, 0, 0});
  d.fit = fit_linear(d.points);
  DeviceInfo info;
  info.name = "synthetic";
  info.compute_units = 1;
  info.pe_per_cu = 1;
  auto plan = [&](double fixed0, double fixed1) {
    const std::vector<SplitWorker> workers{SplitWorker{1, info, to_json(d), fixed0},
                                           SplitWorker{2, info, to_json(d), fixed1}};
    return plan_split("measured", "auto", k, p, workers, 1).blocks;
  };
  const auto even = plan(0, 0);
  EXPECT_EQ(even[0].size(), even[1].size());
  const auto none = plan(0, 100);  // the whole job takes 16 ms on one worker
  EXPECT_EQ(none[0].size(), k.split_units(p, none[0].dim));
  EXPECT_EQ(none[1].size(), 0u);
  const auto less = plan(0, 4);
  EXPECT_GT(less[0].size(), even[0].size());
  EXPECT_GT(less[1].size(), 0u);
  const SplitWorker w{1, info, to_json(d), 0};
  const Block half = even[0];
  const double work = static_cast<double>(k.block_global(p, Block{half.dim, 0, half.size()}).count());
  const auto f = observed_fixed_ms(k, p, w, half.dim, half, 1, d.predict_ms(work) + 2.5);
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(*f, 2.5, 1e-9);
  EXPECT_FALSE(observed_fixed_ms(k, p, SplitWorker{1, info, nullptr, 0}, half.dim, half, 1, 10).has_value());
  EXPECT_FALSE(observed_fixed_ms(k, p, w, half.dim, Block{half.dim, 0, 0}, 1, 10).has_value());
}

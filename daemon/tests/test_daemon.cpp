// wstuned's master and real workers (threads, PoCL devices) over the
// in-memory Communicator: all four kernels split, run, gathered and
// verified; worker faults handled as docs/daemon.md says; tune and
// calibrate modes; then the measured split from the calibrations.
#include <gtest/gtest.h>
#include <algorithm>
#include <cmath>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "app.hpp"
#include "format/trial_json.hpp"
#include "master/master.hpp"
#include "master/memory_sink.hpp"
#include "master/split_plan.hpp"
#include "protocol/kernel_source.hpp"
#include "split/multi_device.hpp"
#include "test_store_util.hpp"
#include "tests/support/in_memory_communicator.hpp"
#include "transport/communicator.hpp"
#include "worker/tasks.hpp"
#include "worker/worker.hpp"
#include "wstune/store.hpp"

using namespace wstune;
using namespace wstune::daemon;
using nlohmann::json;

namespace {

// A Communicator that changes the nonce of every result slot its worker is
// offered, as if the worker had opened another host's file at that path,
// and counts the offers.
class SlotSpoiler final : public ForwardingCommunicator {
 public:
  using ForwardingCommunicator::ForwardingCommunicator;
  std::optional<Received> recv(int source, std::chrono::milliseconds timeout) override {
    auto got = ForwardingCommunicator::recv(source, timeout);
    if (got && got->message.tag == Tag::run_block && got->message.body.contains("result_slot")) {
      ++offers;
      auto& nonce = got->message.body["result_slot"]["nonce"];
      nonce = nonce.get<std::uint64_t>() + 2;
    }
    return got;
  }
  std::atomic<int> offers{0};
};

// A Communicator that gives every run_block without a result slot the last
// slot its worker was offered: the worker then leaves its outputs in a slot
// this job did not offer.
class SlotReplayer final : public ForwardingCommunicator {
 public:
  using ForwardingCommunicator::ForwardingCommunicator;
  std::optional<Received> recv(int source, std::chrono::milliseconds timeout) override {
    auto got = ForwardingCommunicator::recv(source, timeout);
    if (!got || got->message.tag != Tag::run_block) return got;
    auto& body = got->message.body;
    if (body.contains("result_slot"))
      last_ = body["result_slot"];
    else if (!last_.is_null())
      body["result_slot"] = last_;
    return got;
  }

 private:
  nlohmann::json last_;
};

// A master on rank 0 and workers on 1..n (each its own thread and device
// runner on the first OpenCL device), with per-worker faults. With
// `master_host` "test-host" (the workers' host) the master offers result
// slots; worker 1's messages pass through `rank1` (SlotSpoiler,
// SlotReplayer) when given.
enum class Rank1 { plain, spoil_slots, replay_slots };
struct World {
  explicit World(std::vector<FaultKind> faults, std::chrono::milliseconds job_timeout = std::chrono::seconds(120),
                 std::string master_host = "", Rank1 rank1 = Rank1::plain, EnergyOptions energy = {})
      : world(static_cast<int>(faults.size()) + 1) {
    if (rank1 == Rank1::spoil_slots) spoiler = std::make_unique<SlotSpoiler>(world.at(1));
    if (rank1 == Rank1::replay_slots) replayer = std::make_unique<SlotReplayer>(world.at(1));
    auto [device, why] = open_worker_device("auto", 0);
    if (!device) throw std::runtime_error("no OpenCL device for the tests: " + why);
    codes.resize(faults.size(), -1);
    for (std::size_t i = 0; i < faults.size(); ++i) {
      WorkerOptions wo;
      wo.host = "test-host";
      wo.fault = faults[i];
      wo.welcome_timeout = std::chrono::seconds(30);
      wo.energy = energy;
      Communicator& comm = i == 0 && spoiler    ? static_cast<Communicator&>(*spoiler)
                           : i == 0 && replayer ? static_cast<Communicator&>(*replayer)
                                                : world.at(static_cast<int>(i) + 1);
      threads.emplace_back([this, i, wo, &comm, d = *device] {
        Worker w(comm, d, "", wo);
        codes[i] = w.serve();
      });
    }
    MasterOptions mo;
    mo.job_timeout = job_timeout;
    mo.shutdown_timeout = std::chrono::seconds(30);
    mo.host = std::move(master_host);
    mo.progress = &progress;
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
  std::unique_ptr<SlotSpoiler> spoiler;
  std::unique_ptr<SlotReplayer> replayer;
  MemorySink sink;
  std::ostringstream progress;  // the master's progress lines ("wstuned: ...")
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

std::vector<Job> small_jobs(SplitModel split, LocalPolicy local) {
  std::vector<Job> jobs;
  for (auto [k, s] :
       {std::pair{"matmul", "64"}, {"bilinear", "32x32:64x64"}, {"sort", "4096"}, {"trapezoid", "8192"}}) {
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

// A synthetic device calibration: 0.001 ms per work-item, no fixed cost.
DeviceCalibration linear_calibration() {
  DeviceCalibration d;
  d.fingerprint = "equal";
  for (double w : {1024.0, 4096.0, 16384.0}) d.points.push_back(CalibrationPoint{0, w, 0.001 * w, 0, 0});
  d.fit = fit_linear(d.points);
  return d;
}

// A synthetic one-PE device model.
DeviceInfo synthetic_device() {
  DeviceInfo info;
  info.name = "synthetic";
  info.compute_units = 1;
  info.pe_per_cu = 1;
  return info;
}

// Workers 1 and 2, each a synthetic device with linear_calibration().
std::vector<SplitWorker> two_linear_workers() {
  const DeviceCalibration cal = linear_calibration();
  return {SplitWorker{1, synthetic_device(), cal}, SplitWorker{2, synthetic_device(), cal}};
}

}  // namespace

TEST(Daemon, AllFourKernelsSplitRunGatherAndVerify) {
  World w({FaultKind::none, FaultKind::none});
  ASSERT_EQ(w.master->register_workers(), 2u);
  for (SplitModel model : {SplitModel::even, SplitModel::pe_ratio}) {
    const auto reports = w.master->run_all(Mode::run, small_jobs(model, LocalPolicy::rule));
    ASSERT_EQ(reports.size(), 4u);
    for (const auto& r : reports) {
      SCOPED_TRACE(r.job.kernel + " " + std::string(to_string(model)));
      EXPECT_TRUE(r.ok()) << r.error;
      EXPECT_TRUE(r.verdict.ok);
      EXPECT_TRUE(r.faults.empty());
      double shares = 0, slowest = 0, longest_kernel = 0;
      for (const auto& p : r.parts) {
        shares += p.share;
        slowest = std::max(slowest, p.device_ms());
        longest_kernel = std::max(longest_kernel, p.kernel_ms);
        EXPECT_GT(p.kernel_ms, 0);
        EXPECT_EQ(p.local_source.rfind("rule", 0) == 0 || p.local_source.rfind("null", 0) == 0, true) << p.local_source;
      }
      EXPECT_NEAR(shares, 1.0, 1e-9);
      // The overhead is what the makespan spent beyond the slowest worker's
      // part. The kernel times are profiling-event sums, which PoCL's
      // pthread device may overlap (START at submission), so they are not
      // compared with the master's wall clock.
      EXPECT_GT(r.makespan_ms, 0);
      EXPECT_GT(longest_kernel, 0);
      EXPECT_DOUBLE_EQ(r.overhead_ms, r.makespan_ms - slowest);
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
  const auto reports = w.master->run_all(Mode::run, small_jobs(SplitModel::even, LocalPolicy::null));
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
  auto jobs = small_jobs(SplitModel::even, LocalPolicy::null);
  jobs.resize(2);
  const auto reports = w.master->run_all(Mode::run, jobs);
  ASSERT_EQ(reports.size(), 2u);
  for (const auto& r : reports) {
    EXPECT_EQ(r.status, JobStatus::failed);
    EXPECT_EQ(r.error.rfind("no healthy worker left for this job (the last fault: worker rank", 0), 0u) << r.error;
    EXPECT_EQ(r.faults.size(), 2u);
  }
  EXPECT_TRUE(w.shutdown());  // workers stay alive: a kernel fault is per job
}

TEST(Daemon, HangingWorkerIsReportedByRankAndHostAndDropped) {
  World w({FaultKind::hang, FaultKind::none}, std::chrono::milliseconds(1500));
  ASSERT_EQ(w.master->register_workers(), 2u);
  auto jobs = small_jobs(SplitModel::even, LocalPolicy::null);
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
  j.split = SplitModel::measured;
  auto before = w.master->run_all(Mode::run, {j});
  EXPECT_EQ(before[0].status, JobStatus::failed);  // no calibration yet
  EXPECT_NE(before[0].error.find("calibrat"), std::string::npos) << before[0].error;
  auto cal = w.master->run_all(Mode::calibrate, {j});
  ASSERT_TRUE(cal[0].ok()) << cal[0].error;
  ASSERT_EQ(w.sink.calibrations.size(), 2u);
  EXPECT_GE(w.sink.calibrations[0].row.device.points.size(), 2u);
  auto after = w.master->run_all(Mode::run, {j, j, j});
  ASSERT_EQ(after.size(), 3u);
  EXPECT_TRUE(after[0].ok()) << after[0].error;
  EXPECT_EQ(after[0].plan.model, SplitModel::measured);
  // The first measured job plans with no fixed costs; each worker's part
  // then shows what it cost beyond the model (an overlapped part: beyond its
  // scaled prediction, observe_part()). Later plans of the same job assume
  // what each worker showed on a block it had run before (a first run of a
  // block pays for new buffers: FixedCosts::observe_block; in three jobs a
  // block is observed again at most once, so the window's lower median is
  // that observation, and a worker tried in the third job is not checked), a worker
  // not seen yet the largest of those, and a worker left out of a plan half
  // its cost (issue 18).
  for (const auto& part : after[0].parts) {
    EXPECT_EQ(part.fixed_ms, 0.0);
    EXPECT_EQ(part.scale, 1.0);
    EXPECT_GT(part.answer_ms, 0.0);
    EXPECT_LE(part.answer_ms, after[0].makespan_ms + 1e-9);
  }
  std::map<int, PartCost> learned;
  std::map<int, Block> ran;  // each worker's block in the job before
  for (std::size_t k = 0; k < 3; ++k) {
    ASSERT_TRUE(after[k].ok()) << after[k].error;
    double most = 0;
    for (const auto& [rank, c] : learned) most = std::max(most, c.fixed_ms);
    std::set<int> shared;
    for (const auto& part : after[k].parts) {
      const PartCost want = learned.count(part.rank) ? learned[part.rank] : PartCost{most, 1};
      EXPECT_DOUBLE_EQ(part.fixed_ms, want.fixed_ms) << k << " " << part.rank;
      EXPECT_DOUBLE_EQ(part.scale, want.scale) << k << " " << part.rank;
      shared.insert(part.rank);
    }
    for (int rank : {1, 2}) {  // left out: its assumed cost halves
      if (shared.count(rank)) continue;
      const PartCost was = learned.count(rank) ? learned[rank] : PartCost{most, 1};
      learned[rank] = PartCost{was.fixed_ms * kUnplannedFixedCostDecay, was.scale};
    }
    for (const auto& part : after[k].parts) {
      const auto& device = *w.master->workers()[static_cast<std::size_t>(part.rank - 1)].device;
      const SplitWorker sw{part.rank, device, w.sink.calibration(device, kernel_spec(j.kernel))};
      const auto c =
          observe_part(kernel_spec(j.kernel), kernel_spec(j.kernel).parse_size(after[k].size), sw, after[k].plan.dim,
                       part.block, j.warmup + j.repetitions,
                       own_answer_ms(part.answer_ms, part.busy_ms, part.return_ms, part.build_ms + part.inputs_ms),
                       part.overlap_wall_ms);
      ASSERT_TRUE(c.has_value());
      EXPECT_GE(c->fixed_ms, 0.0);
      EXPECT_EQ(c->scale == 1.0, part.chunks == 1) << c->scale;
      if (ran.count(part.rank) && ran[part.rank] == part.block) learned[part.rank] = *c;
      ran[part.rank] = part.block;
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
    const Trial t = trial_from_json(e["trial"], "trial");
    EXPECT_TRUE(keys.insert(t.configuration().key()).second) << "measured twice: " << t.configuration().key();
  }
  EXPECT_EQ(keys.size(), by["1"].get<std::size_t>() + by["2"].get<std::size_t>());
  EXPECT_EQ(keys.size(), res["space_size"].get<std::size_t>() + 1);  // the whole space and the baseline
  EXPECT_EQ(res["best"]["status"], "correct");

  w.progress.str("");
  EXPECT_EQ(w.master->run_all(Mode::tune, {j})[0].status, JobStatus::stored);  // tuned: skipped
  EXPECT_EQ(w.sink.trials.size(), keys.size());
  // Skipped because the devices are tuned, not because of --resume (not given).
  EXPECT_NE(w.progress.str().find("tune trapezoid 4096: stored: every device is tuned for it"), std::string::npos)
      << w.progress.str();
  EXPECT_EQ(w.progress.str().find("--resume"), std::string::npos) << w.progress.str();
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
  const unsigned dim = split_dimension(k, SplitDirection::auto_);
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
  DeviceRunner alone(*device, k);
  const auto cal = calibrate_device(alone, p, k.generate_inputs(p, 42), dim, 3, budget);
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
  const Problem small = k.parse_size("64");
  const auto uncapped =
      device_calibration_from_json(calibrate_device(alone, small, k.generate_inputs(small, 42), dim, 1));
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
  EXPECT_EQ(reports[0].status, JobStatus::failed);
  EXPECT_NE(reports[0].error.find("disk full"), std::string::npos) << reports[0].error;
  EXPECT_EQ(reports[1].status, JobStatus::failed);
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
  const DeviceCalibration d = linear_calibration();
  const DeviceInfo info = synthetic_device();
  auto plan = [&](double fixed0, double fixed1) {
    const std::vector<SplitWorker> workers{SplitWorker{1, info, d, fixed0}, SplitWorker{2, info, d, fixed1}};
    return plan_split(SplitModel::measured, SplitDirection::auto_, k, p, workers, 1).blocks;
  };
  const auto even = plan(0, 0);
  EXPECT_EQ(even[0].size(), even[1].size());
  const auto none = plan(0, 100);  // the whole job takes 16 ms on one worker
  EXPECT_EQ(none[0].size(), k.split_units(p, none[0].dim));
  EXPECT_EQ(none[1].size(), 0u);
  const auto less = plan(0, 4);
  EXPECT_GT(less[0].size(), even[0].size());
  EXPECT_GT(less[1].size(), 0u);
  const SplitWorker w{1, info, d, 0};
  const Block half = even[0];
  const double work = static_cast<double>(k.block_global(p, Block{half.dim, 0, half.size()}).count());
  const auto f = observed_fixed_ms(k, p, w, half.dim, half, 1, d.predict_ms(work) + 2.5);
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(*f, 2.5, 1e-9);
  EXPECT_FALSE(observed_fixed_ms(k, p, SplitWorker{1, info, std::nullopt, 0}, half.dim, half, 1, 10).has_value());
  EXPECT_FALSE(observed_fixed_ms(k, p, w, half.dim, Block{half.dim, 0, 0}, 1, 10).has_value());
}

// Issue 41: two workers of one fingerprint whose measured models predict an
// equal share within kIdenticalNoise get one model and equal shares (the
// plan's note names them); 30 % apart, each keeps its own and the slower
// gets less; unlike devices are never pooled.
TEST(Daemon, IdenticalDevicesWithinNoiseShareOneModel) {
  const KernelSpec& k = kernel_spec("bilinear");
  const Problem p = k.parse_size("1024x1024:2048x2048");
  const DeviceCalibration d = linear_calibration();
  const DeviceInfo info = synthetic_device();
  auto plan = [&](double slower, const DeviceInfo& second) {
    DeviceCalibration d2 = d;
    d2.concurrency_scale *= slower;
    const std::vector<SplitWorker> workers{SplitWorker{1, info, d, 0}, SplitWorker{2, second, d2, 0}};
    return plan_split(SplitModel::measured, SplitDirection::auto_, k, p, workers, 1);
  };
  const auto near = plan(1.05, info);
  EXPECT_EQ(near.blocks[0].size(), near.blocks[1].size());
  EXPECT_NE(near.note.find("ranks 1, 2 share one model"), std::string::npos) << near.note;
  const auto far = plan(1.3, info);
  EXPECT_GT(far.blocks[0].size(), far.blocks[1].size() + 64);
  EXPECT_EQ(far.note.find("share one model"), std::string::npos) << far.note;
  DeviceInfo other = info;
  other.name += " (another model)";
  ASSERT_NE(other.fingerprint(), info.fingerprint());
  const auto unlike = plan(1.05, other);
  EXPECT_GT(unlike.blocks[0].size(), unlike.blocks[1].size());
  EXPECT_EQ(unlike.note.find("share one model"), std::string::npos) << unlike.note;
  // Fixed costs within the noise (of a share's time) are pooled: still equal;
  // beyond it they are the device's own and its share shrinks.
  const double share_ms = d.predict_ms(static_cast<double>(k.block_global(p, near.blocks[0]).count()));
  const std::vector<SplitWorker> small{SplitWorker{1, info, d, 0}, SplitWorker{2, info, d, 0.05 * share_ms}};
  const auto pooled = plan_split(SplitModel::measured, SplitDirection::auto_, k, p, small, 1);
  EXPECT_EQ(pooled.blocks[0].size(), pooled.blocks[1].size());
  const std::vector<SplitWorker> large{SplitWorker{1, info, d, 0}, SplitWorker{2, info, d, 0.5 * share_ms}};
  const auto own = plan_split(SplitModel::measured, SplitDirection::auto_, k, p, large, 1);
  EXPECT_GT(own.blocks[0].size(), own.blocks[1].size());
  // The same noise on the other worker gives the same, equal, plan: no swing.
  DeviceCalibration d2 = d;
  d2.concurrency_scale *= 1.05;
  const std::vector<SplitWorker> swapped{SplitWorker{1, info, d2, 0}, SplitWorker{2, info, d, 0}};
  EXPECT_EQ(plan_split(SplitModel::measured, SplitDirection::auto_, k, p, swapped, 1).blocks, near.blocks);
}

// Issue 18: with the job key overlap 2 (the default) a worker runs its block
// as chunks over two queues; the gathered output verifies, the report shows
// the chunks (matmul, bilinear and trapezoid blocks chunk; sort's run
// whole: KernelSpec::merges_blocks) and the overlapped run's wall clock.
// overlap 1 runs every block whole.
TEST(Daemon, OverlappedWorkerBlocksVerifyAndReportTheirChunks) {
  World w({FaultKind::none, FaultKind::none});
  ASSERT_EQ(w.master->register_workers(), 2u);
  for (unsigned overlap : {2u, 1u}) {
    std::vector<Job> jobs = small_jobs(SplitModel::even, LocalPolicy::rule);
    for (Job& j : jobs) {
      j.overlap = overlap;
      j.warmup = 1;
    }
    const auto reports = w.master->run_all(Mode::run, jobs);
    ASSERT_EQ(reports.size(), 4u);
    for (const auto& r : reports) {
      SCOPED_TRACE(fmt::format("{} overlap {}", r.job.kernel, overlap));
      ASSERT_TRUE(r.ok()) << r.error;
      EXPECT_TRUE(r.verdict.ok);
      ASSERT_EQ(r.parts.size(), 2u);
      for (const auto& part : r.parts) {
        const bool chunked = overlap > 1 && !kernel_spec(r.job.kernel).merges_blocks();
        EXPECT_EQ(part.chunks > 1, chunked) << part.chunks;
        EXPECT_LE(part.chunks, overlap);
        EXPECT_EQ(part.overlap_wall_ms > 0, chunked) << part.overlap_wall_ms;
        EXPECT_GT(part.kernel_ms, 0);
        EXPECT_EQ(to_json(r)["parts"][0]["chunks"].get<std::size_t>(), r.parts[0].chunks);
      }
    }
  }
  EXPECT_TRUE(w.shutdown());
}

// Issue 18: every program a job builds is build time, not the job's fixed
// cost. A kernel file's parameters are built on first use, by the runner
// the worker keeps for the file: a new configuration's job reports its
// build (it reported 0 before, and the build counted as fixed cost), the
// same configuration again reports none.
TEST(Daemon, EveryProgramAJobBuildsIsBuildTime) {
  World w({FaultKind::none});
  ASSERT_EQ(w.master->register_workers(), 1u);
  Job j;
  j.kernel_file = WSTUNE_TEST_DATA_DIR "/../../share/examples/kernels/stencil5.json";
  j.kernel = std::string(master_kernel("", j.kernel_file)->name());
  j.size = "64x64";
  j.repetitions = 1;
  Job other = j;
  other.config = nlohmann::json{{"WPTX", 2}};
  const auto reports = w.master->run_all(Mode::run, {j, other, other});
  ASSERT_EQ(reports.size(), 3u);
  for (const auto& r : reports) ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_GT(reports[1].parts.at(0).build_ms, 0.0);  // WPTX=2 built in this job
  EXPECT_EQ(reports[2].parts.at(0).build_ms, 0.0);  // built already
  EXPECT_TRUE(w.shutdown());
}

// Issue 18: the measured model keeps a job's previous blocks unless the new
// ones are predicted faster by more than kReplanGain (a moved block pays
// new buffers, and on PoCL a compile, that the model does not predict);
// the master remembers each job's latest plan by its workers' keys.
TEST(Daemon, MeasuredPlanKeepsTheJobsBlocksUnlessMovingGainsMoreThanTheReplanGain) {
  const KernelSpec& k = kernel_spec("bilinear");
  const Problem p = k.parse_size("1024x1024:2048x2048");  // 2048 rows
  const std::vector<SplitWorker> workers = two_linear_workers();
  const auto fresh = plan_split(SplitModel::measured, SplitDirection::auto_, k, p, workers, 1);
  ASSERT_EQ(fresh.blocks.size(), 2u);
  EXPECT_EQ(fresh.blocks[0].size(), 1024u);
  EXPECT_TRUE(fresh.note.empty()) << fresh.note;
  const unsigned dim = fresh.blocks[0].dim;
  const std::vector<Block> near{Block{dim, 0, 1040}, Block{dim, 1040, 2048}};  // predicted 1.6 % slower
  const auto kept = plan_split(SplitModel::measured, SplitDirection::auto_, k, p, workers, 1, &near);
  EXPECT_EQ(kept.blocks, near);
  EXPECT_NE(kept.note.find("kept the job's previous blocks"), std::string::npos) << kept.note;
  EXPECT_NEAR(kept.fractions[0], 1040.0 / 2048, 1e-12);
  const std::vector<Block> far{Block{dim, 0, 1120}, Block{dim, 1120, 2048}};  // 9.4 % slower
  const auto far_plan = plan_split(SplitModel::measured, SplitDirection::auto_, k, p, workers, 1, &far);
  EXPECT_EQ(far_plan.blocks, fresh.blocks);
  EXPECT_TRUE(far_plan.note.empty()) << far_plan.note;
  // Either side of the 3 %: 1048 rows are predicted 2.3 % slower (kept), 1064 rows 3.9 % (moved).
  const std::vector<Block> inside{Block{dim, 0, 1048}, Block{dim, 1048, 2048}};
  const std::vector<Block> outside{Block{dim, 0, 1064}, Block{dim, 1064, 2048}};
  EXPECT_EQ(plan_split(SplitModel::measured, SplitDirection::auto_, k, p, workers, 1, &inside).blocks, inside);
  EXPECT_EQ(plan_split(SplitModel::measured, SplitDirection::auto_, k, p, workers, 1, &outside).blocks, fresh.blocks);
  // A previous plan that does not fit (another worker count, a gap, the
  // other dimension with the same extents: predicted alike) is ignored.
  const std::vector<Block> one{Block{dim, 0, 2048}};
  EXPECT_EQ(plan_split(SplitModel::measured, SplitDirection::auto_, k, p, workers, 1, &one).blocks, fresh.blocks);
  const std::vector<Block> gap{Block{dim, 0, 1000}, Block{dim, 1040, 2048}};
  EXPECT_EQ(plan_split(SplitModel::measured, SplitDirection::auto_, k, p, workers, 1, &gap).blocks, fresh.blocks);
  const unsigned other = 1 - dim;
  const std::vector<Block> across{Block{other, 0, 1040}, Block{other, 1040, 2048}};
  EXPECT_EQ(plan_split(SplitModel::measured, SplitDirection::auto_, k, p, workers, 1, &across).blocks, fresh.blocks);
  // A kept plan is predicted with the current costs: a worker whose cost
  // now outweighs its share is dropped at once.
  std::vector<SplitWorker> costly = workers;
  costly[1].fixed_ms = 10000;  // more than the whole job (4194 ms) on one worker
  const auto dropped = plan_split(SplitModel::measured, SplitDirection::auto_, k, p, costly, 1, &near);
  EXPECT_EQ(dropped.blocks[1].size(), 0u);
  // The master's memory of plans: per job, i.e. per ordered list of worker keys.
  FixedCosts costs;
  EXPECT_EQ(costs.last_plan({"w1", "w2"}), nullptr);
  costs.remember_plan({"w1", "w2"}, near);
  ASSERT_NE(costs.last_plan({"w1", "w2"}), nullptr);
  EXPECT_EQ(*costs.last_plan({"w1", "w2"}), near);
  EXPECT_EQ(costs.last_plan({"w2", "w1"}), nullptr);
  EXPECT_EQ(costs.last_plan({"w1"}), nullptr);
  EXPECT_THROW(costs.remember_plan({"w1"}, near), std::invalid_argument);
}

// Issue 18: a move pays its workers' one-time costs (new buffers; PoCL's
// compile per NDRange), learned as a block's first run's own time minus its
// second's. A plan predicted more than 3 % faster moves only when its gain
// over as many jobs as the job has run exceeds the largest one-time cost of
// a worker whose block changes, or leaves that worker out when that is
// cheaper (two workers sharing the H100 at 2fc3301: a 50/50
// bilinear plan moved to 46.9/53.1 in the reported job, whose moved block
// cost about 30 ms more than its run).
TEST(Daemon, APlanMovesOnlyWhenItsGainOverTheJobsSoFarExceedsTheMoveCost) {
  const KernelSpec& k = kernel_spec("bilinear");
  const Problem p = k.parse_size("1024x1024:2048x2048");  // 2048 rows, 4194 ms on one worker
  std::vector<SplitWorker> workers = two_linear_workers();
  const auto fresh = plan_split(SplitModel::measured, SplitDirection::auto_, k, p, workers, 1);
  const unsigned dim = fresh.blocks[0].dim;
  const std::vector<Block> far{Block{dim, 0, 1120}, Block{dim, 1120, 2048}};  // 196.6 ms a job slower
  workers[1].move_ms = 1000;  // both blocks change: the larger one-time cost counts
  workers[0].move_ms = 10;
  const auto one_job = plan_split(SplitModel::measured, SplitDirection::auto_, k, p, workers, 1, &far, 1);
  EXPECT_EQ(one_job.blocks, far);
  EXPECT_NE(one_job.note.find("one-time cost of 1000.000 ms"), std::string::npos) << one_job.note;
  EXPECT_EQ(one_job.held_by_move, (std::vector<std::size_t>{0, 1}));  // both would have moved
  EXPECT_EQ(plan_split(SplitModel::measured, SplitDirection::auto_, k, p, workers, 1, &far, 5).blocks,
            far);  // 983 ms < 1000
  EXPECT_EQ(plan_split(SplitModel::measured, SplitDirection::auto_, k, p, workers, 1, &far, 6).blocks,
            fresh.blocks);  // 1180 ms > 1000
  workers[1].move_ms = 0;
  EXPECT_EQ(plan_split(SplitModel::measured, SplitDirection::auto_, k, p, workers, 1, &far, 1).blocks,
            fresh.blocks);  // 197 ms > 10
  // Leaving a worker out costs it nothing to move: with rank 2 at 3000 ms a
  // job on an even split (5097 ms), the model's blocks (1760/288 rows,
  // 3604.5 ms) pay its 1000 ms move; without it 4194 ms and no move win
  // over one job, not ten.
  std::vector<SplitWorker> slow = two_linear_workers();
  slow[1].fixed_ms = 3000;
  slow[1].move_ms = 1000;
  const std::vector<Block> even{Block{dim, 0, 1024}, Block{dim, 1024, 2048}};
  const auto left_out = plan_split(SplitModel::measured, SplitDirection::auto_, k, p, slow, 1, &even, 1);
  EXPECT_EQ(left_out.blocks[1].size(), 0u);
  EXPECT_NE(left_out.note.find("without rank 2"), std::string::npos) << left_out.note;
  EXPECT_EQ(left_out.held_by_move, (std::vector<std::size_t>{1}));
  const auto ten_jobs = plan_split(SplitModel::measured, SplitDirection::auto_, k, p, slow, 1, &even, 10);
  EXPECT_GT(ten_jobs.blocks[1].size(), 0u);
  EXPECT_EQ(ten_jobs.blocks, plan_split(SplitModel::measured, SplitDirection::auto_, k, p, slow, 1).blocks);
  // Learned: a block's first run beyond its second; a plan counted per job.
  FixedCosts costs;
  const std::vector<std::string> keys{"w1", "w2"};
  costs.observe_block("w2", far[1], PartCost{31, 1, 40});
  costs.observe_block("w2", far[1], PartCost{6, 1, 15});
  costs.observe_block("w2", far[1], PartCost{2, 1, 11});  // a third run teaches the cost, not the move
  costs.assume(workers, keys);
  EXPECT_DOUBLE_EQ(workers[1].move_ms, 25);
  EXPECT_DOUBLE_EQ(workers[0].move_ms, 0);
  EXPECT_EQ(costs.plans_made(keys), 0u);
  costs.planned(workers, keys, far);
  costs.planned(workers, keys, far);
  EXPECT_EQ(costs.plans_made(keys), 2u);
  EXPECT_EQ(costs.plans_made({"w2", "w1"}), 0u);
  // A worker whose move cost held a plan back has that cost halved, so a
  // move cost learned once cannot hold plans back for good; left out for
  // its move, it keeps its fixed cost.
  costs.observe_block("w2", far[1], PartCost{2, 1, 11});
  costs.assume(workers, keys);
  ASSERT_DOUBLE_EQ(workers[1].fixed_ms, 2);
  costs.planned(workers, keys, far, {1});
  costs.assume(workers, keys);
  EXPECT_DOUBLE_EQ(workers[1].move_ms, 12.5);
  costs.planned(workers, keys, {Block{dim, 0, 2048}, Block{dim, 2048, 2048}}, {1});
  costs.assume(workers, keys);
  EXPECT_DOUBLE_EQ(workers[1].move_ms, 6.25);
  EXPECT_DOUBLE_EQ(workers[1].fixed_ms, 2);  // not decayed
  // Left out between its first and second run of a block: no move cost learned.
  FixedCosts gap;
  gap.observe_block("w2", far[1], PartCost{0, 1, 90});
  gap.planned(workers, keys, {Block{dim, 0, 2048}, Block{dim, 2048, 2048}});
  gap.observe_block("w2", far[1], PartCost{0, 1, 10});  // a first run again
  gap.observe_block("w2", far[1], PartCost{0, 1, 9});
  gap.assume(workers, keys);
  EXPECT_DOUBLE_EQ(workers[1].move_ms, 1);
}

// Issue 18: a worker left out of a measured plan for its learned fixed cost
// is planned again: each plan without a share halves that cost
// (kUnplannedFixedCostDecay), so after a few plans it gets a small share
// and is observed anew; still costly, it is left out again.
TEST(Daemon, ExcludedWorkerIsPlannedAgainAsItsCostDecays) {
  const KernelSpec& k = kernel_spec("bilinear");
  const Problem p = k.parse_size("64x64:128x128");
  std::vector<SplitWorker> workers = two_linear_workers();
  const std::vector<std::string> keys{"w1", "w2"};
  FixedCosts costs;
  costs.observe("w1", PartCost{0, 1});
  costs.observe("w2", PartCost{100, 1});  // the whole job takes 16 ms on one worker
  // Plans until worker 2 has a share again; its assumed cost each time.
  // The master's loop: each plan starts from the job's previous one
  // (kReplanGain), which a share for worker 2 here beats by far.
  auto plans_until_share = [&](std::vector<double>* assumed) {
    for (int n = 1; n <= 20; ++n) {
      costs.assume(workers, keys);
      assumed->push_back(workers[1].fixed_ms);
      const auto blocks =
          plan_split(SplitModel::measured, SplitDirection::auto_, k, p, workers, 1, costs.last_plan(keys)).blocks;
      costs.planned(workers, keys, blocks);  // also remembers the plan, as in the master
      if (blocks[1].size() > 0) return n;
    }
    return 0;
  };
  std::vector<double> assumed;
  const int first = plans_until_share(&assumed);
  // 100, 50, 25 leave it out (more than the 16 ms the job takes alone); at
  // 12.5 ms it takes 15 of the 128 rows (14.46 ms against 16.38 ms alone;
  // 16 rows in wstuned's 16-row steps before model_blocks()).
  EXPECT_EQ(first, 4);
  ASSERT_GE(assumed.size(), 4u);
  EXPECT_DOUBLE_EQ(assumed[0], 100);
  EXPECT_DOUBLE_EQ(assumed[3], 12.5);
  // Observed anew and still costly: left out again at once, then decaying
  // the same way.
  costs.observe("w2", PartCost{100, 1});
  costs.assume(workers, keys);
  const auto again =
      plan_split(SplitModel::measured, SplitDirection::auto_, k, p, workers, 1, costs.last_plan(keys)).blocks;
  EXPECT_EQ(again[1].size(), 0u);
  costs.remember_plan(keys, again);
  assumed.clear();
  EXPECT_EQ(plans_until_share(&assumed), first);
  // A worker never seen is assumed as costly as the costliest, and decays too.
  FixedCosts fresh;
  fresh.observe("w1", PartCost{40, 1});
  fresh.assume(workers, keys);
  EXPECT_DOUBLE_EQ(workers[1].fixed_ms, 40);
  fresh.planned(workers, keys, {Block{0, 0, 128}, Block{0, 128, 128}});
  fresh.assume(workers, keys);
  EXPECT_DOUBLE_EQ(workers[1].fixed_ms, 20);
  EXPECT_DOUBLE_EQ(workers[0].fixed_ms, 40);  // it had a share: unchanged until observed
  // A worker left out while nothing was learned (its prior 0) was not left
  // out for its cost: it stays unseen, and later assumes the costliest
  // learned cost (it was stored as costing 0 before, and a CPU worker then
  // got 7.8 % of bilinear 512² next to an H100 worker that had learned 0.97 ms).
  FixedCosts early;
  early.assume(workers, keys);
  EXPECT_DOUBLE_EQ(workers[1].fixed_ms, 0);
  early.planned(workers, keys, {Block{0, 0, 128}, Block{0, 128, 128}});
  early.planned(workers, keys, {Block{0, 0, 128}, Block{0, 128, 128}});
  early.observe("w1", PartCost{0.97, 1});
  early.assume(workers, keys);
  EXPECT_DOUBLE_EQ(workers[1].fixed_ms, 0.97);
}

// Issue 18: the master learns a worker's cost only from a block the worker
// ran in the job before: a block's first run (new buffers: allocation and
// first touch) teaches nothing, its repeat does, and a changed block again
// teaches nothing until it repeats.
TEST(Daemon, CostsAreLearnedFromRepeatedBlocksOnly) {
  std::vector<SplitWorker> workers = two_linear_workers();
  const std::vector<std::string> keys{"w1", "w2"};
  FixedCosts costs;
  const Block half{1, 0, 64}, more{1, 0, 80};
  auto assumed = [&] {
    costs.assume(workers, keys);
    return workers[0].fixed_ms;
  };
  costs.observe_block("w1", half, PartCost{30, 1});  // a first run: not learned
  EXPECT_DOUBLE_EQ(assumed(), 0);
  costs.observe_block("w1", half, PartCost{5, 1});  // the same block again: learned
  EXPECT_DOUBLE_EQ(assumed(), 5);
  costs.observe_block("w1", more, PartCost{40, 1});  // a new block: kept at 5
  EXPECT_DOUBLE_EQ(assumed(), 5);
  costs.observe_block("w1", more, PartCost{7, 1.5});
  EXPECT_DOUBLE_EQ(assumed(), 7);
  EXPECT_DOUBLE_EQ(workers[0].scale, 1.5);
  costs.observe_block("w2", half, PartCost{9, 1});  // another worker's key is its own
  EXPECT_DOUBLE_EQ(assumed(), 7);
}

// Issue 18: one slow job does not move what a worker learned: of the last
// three observations of a block it learns the one of lower-median own time
// (of two, the faster); a slowdown that lasts two jobs of three is learned.
TEST(Daemon, OneSlowJobIsNotLearnedButALastingSlowdownIs) {
  std::vector<SplitWorker> workers = two_linear_workers();
  const std::vector<std::string> keys{"w1", "w2"};
  FixedCosts costs;
  const Block b{1, 0, 64};
  auto assumed = [&] {
    costs.assume(workers, keys);
    return workers[0].fixed_ms;
  };
  costs.observe_block("w1", b, PartCost{90, 1, 100});  // first run of the block: not learned
  costs.observe_block("w1", b, PartCost{2, 1, 10});
  EXPECT_DOUBLE_EQ(assumed(), 2);
  costs.observe_block("w1", b, PartCost{42, 1, 50});  // one slow job: the faster of two
  EXPECT_DOUBLE_EQ(assumed(), 2);
  costs.observe_block("w1", b, PartCost{3, 1.25, 11});  // the median of 10, 50, 11: the whole observation
  EXPECT_DOUBLE_EQ(assumed(), 3);
  EXPECT_DOUBLE_EQ(workers[0].scale, 1.25);
  costs.observe_block("w1", b, PartCost{48, 1, 56});  // 50, 11, 56: two slow of three, a slowdown that lasts
  EXPECT_DOUBLE_EQ(assumed(), 42);
  costs.observe_block("w1", b, PartCost{52, 1, 60});  // 11, 56, 60
  EXPECT_DOUBLE_EQ(assumed(), 48);
  costs.observe_block("w1", Block{1, 0, 80}, PartCost{1, 1, 5});  // a new block: kept, the window starts over
  EXPECT_DOUBLE_EQ(assumed(), 48);
  costs.observe_block("w1", Block{1, 0, 80}, PartCost{1, 1, 5});
  EXPECT_DOUBLE_EQ(assumed(), 1);
}

// Issue 18: a worker that has learned nothing and is planned in at another
// worker's learned cost is being tried: its first run teaches it (an upper
// bound), so a costly one is dropped at the next job. A worker planned in
// while nothing was learned (a prior of 0) still learns from repeats only.
TEST(Daemon, ATriedWorkerLearnsItsFirstRun) {
  std::vector<SplitWorker> workers = two_linear_workers();
  const std::vector<std::string> keys{"w1", "w2"};
  const Block first{1, 0, 64}, second{1, 64, 128};
  FixedCosts fresh;  // nothing learned: both planned at 0
  fresh.assume(workers, keys);
  fresh.planned(workers, keys, {first, second});
  fresh.observe_block("w2", second, PartCost{9, 1, 12});
  fresh.assume(workers, keys);
  EXPECT_DOUBLE_EQ(workers[1].fixed_ms, 0);

  FixedCosts costs;
  costs.observe("w1", PartCost{0.34, 1, 2});
  costs.assume(workers, keys);
  ASSERT_DOUBLE_EQ(workers[1].fixed_ms, 0.34);  // the prior: the costliest learned cost
  costs.planned(workers, keys, {first, second});
  costs.observe_block("w2", second, PartCost{9, 1, 12});  // its first run: learned
  costs.assume(workers, keys);
  EXPECT_DOUBLE_EQ(workers[1].fixed_ms, 9);
  costs.observe_block("w2", Block{1, 96, 128}, PartCost{30, 1, 33});  // no longer tried: a new block teaches nothing
  costs.assume(workers, keys);
  EXPECT_DOUBLE_EQ(workers[1].fixed_ms, 9);
}

// Issue 18: a worker left out of a plan forgets its observations: when it
// comes back on the same block, old slow runs do not outvote its decayed
// cost, and its first run back is a new block's. A tried worker that is
// left out is no longer tried.
TEST(Daemon, ALeftOutWorkerForgetsItsObservationsAndIsNoLongerTried) {
  std::vector<SplitWorker> workers = two_linear_workers();
  const std::vector<std::string> keys{"w1", "w2"};
  const Block whole{1, 0, 128}, none{1, 128, 128}, b{1, 64, 128};
  FixedCosts costs;
  auto assumed = [&] {
    costs.assume(workers, keys);
    return workers[1].fixed_ms;
  };
  costs.observe("w1", PartCost{0, 1, 1});
  for (const PartCost& c : {PartCost{1, 1, 3}, PartCost{40, 1, 50}, PartCost{40, 1, 52}})
    costs.observe_block("w2", b, c);  // a first run, then two slow jobs: learned 40
  EXPECT_DOUBLE_EQ(assumed(), 40);
  costs.planned(workers, keys, {whole, none});  // left out: 20
  EXPECT_DOUBLE_EQ(assumed(), 20);
  costs.planned(workers, keys, {Block{1, 0, 64}, b});
  costs.observe_block("w2", b, PartCost{2, 1, 4});  // back on the same block: a first run again
  EXPECT_DOUBLE_EQ(assumed(), 20);
  costs.observe_block("w2", b, PartCost{2, 1, 4});  // the old 50 and 52 are gone: 2, not 40
  EXPECT_DOUBLE_EQ(assumed(), 2);

  FixedCosts fresh;
  fresh.observe("w1", PartCost{0.34, 1, 2});
  fresh.assume(workers, keys);
  fresh.planned(workers, keys, {Block{1, 0, 64}, b});  // w2 tried at 0.34
  fresh.assume(workers, keys);
  fresh.planned(workers, keys, {whole, none});  // left out: no longer tried
  fresh.observe("w1", PartCost{0, 1, 1});       // nothing costs anything now: w2's prior is 0
  fresh.assume(workers, keys);
  ASSERT_DOUBLE_EQ(workers[1].fixed_ms, 0);
  fresh.planned(workers, keys, {Block{1, 0, 64}, b});
  fresh.observe_block("w2", b, PartCost{9, 1, 12});  // planned at 0: its first run teaches nothing
  fresh.assume(workers, keys);
  EXPECT_DOUBLE_EQ(workers[1].fixed_ms, 0);
}

// Issue 18: a worker's own time is its answer's arrival, but no later than
// its work plus the master's receive of its result: a result that waited
// behind another worker's receive (the master takes one at a time) does not
// teach its worker the other's transfer. One-time costs are left out.
TEST(Daemon, OwnAnswerLeavesOutTheWaitBehindAnotherWorkersResult) {
  // Two workers sharing the H100, bilinear 2048²→4096² at 50/50.
  EXPECT_DOUBLE_EQ(own_answer_ms(17.0, 6.1, 5.1, 0), 11.2);  // arrived 5.1 ms after the other's result
  EXPECT_DOUBLE_EQ(own_answer_ms(11.9, 5.7, 5.0, 0), 10.7);  // received at once, after a send of 1.2 ms
  EXPECT_DOUBLE_EQ(own_answer_ms(300, 270, 5, 260), 15);     // a first job's build and input generation
}

// Issue 18: an overlapped part teaches the plan a scale on its whole-block
// prediction (its overlapped run's time ÷ that prediction) and the fixed
// cost beyond it; a whole part teaches scale 1.
TEST(Daemon, OverlappedPartTeachesAScaleAndTheFixedCostBeyondIt) {
  const KernelSpec& k = kernel_spec("bilinear");
  const Problem p = k.parse_size("64x64:128x128");
  const DeviceCalibration d = linear_calibration();
  const DeviceInfo info = synthetic_device();
  const SplitWorker w{1, info, d};
  const Block half{1, 0, 64};
  const double predicted = d.predict_ms(static_cast<double>(k.block_global(p, half).count()));
  const auto c = observe_part(k, p, w, half.dim, half, 1, 0.8 * predicted + 3, 0.8 * predicted);
  ASSERT_TRUE(c.has_value());
  EXPECT_NEAR(c->scale, 0.8, 1e-9);
  EXPECT_NEAR(c->fixed_ms, 3, 1e-9);
  const auto whole = observe_part(k, p, w, half.dim, half, 1, predicted + 3);
  ASSERT_TRUE(whole.has_value());
  EXPECT_DOUBLE_EQ(whole->scale, 1.0);
  EXPECT_NEAR(whole->fixed_ms, 3, 1e-9);
  // The plan uses the scale: a worker at 0.5 takes more than an equal one.
  const std::vector<SplitWorker> ws{SplitWorker{1, info, d, 0, 0.5}, SplitWorker{2, info, d}};
  const auto blocks = plan_split(SplitModel::measured, SplitDirection::auto_, k, p, ws, 1).blocks;
  EXPECT_GT(blocks[0].size(), blocks[1].size());
}

// Issue 18: workers on the master's host read their outputs back straight
// into the master's memory (result_memory.hpp): all four kernels, whole and
// overlapped blocks, verify with every part back through its slot; with
// `results: message` every part comes back as bytes and verifies too. A
// master on another host offers no slot (every other test here).
TEST(Daemon, WorkersOnTheMastersHostLeaveTheirResultsInItsMemory) {
  World w({FaultKind::none, FaultKind::none}, std::chrono::seconds(120), "test-host");
  ASSERT_EQ(w.master->register_workers(), 2u);
  for (const std::string results : {"auto", "message"}) {
    for (unsigned overlap : {1u, 2u}) {
      std::vector<Job> jobs = small_jobs(SplitModel::even, LocalPolicy::rule);
      for (Job& j : jobs) {
        j.overlap = overlap;
        j.results = results;
      }
      for (const auto& r : w.master->run_all(Mode::run, jobs)) {
        SCOPED_TRACE(fmt::format("{} overlap {} results {}", r.job.kernel, overlap, results));
        ASSERT_TRUE(r.ok()) << r.error;
        EXPECT_TRUE(r.verdict.ok);
        EXPECT_TRUE(r.faults.empty());
        ASSERT_EQ(r.parts.size(), 2u);
        for (std::size_t i = 0; i < 2; ++i) {
          EXPECT_EQ(r.parts[i].result_path, results == "auto" ? "slot" : "message");
          EXPECT_EQ(to_json(r)["parts"][i]["result_path"], r.parts[i].result_path);
        }
      }
    }
  }
  EXPECT_TRUE(w.shutdown());
}

// A worker whose slot does not map (its nonce differs: another host's file)
// says why and sends its outputs as bytes, so the job verifies; the master
// offers it no slot again, while the other worker keeps its own.
TEST(Daemon, AWorkerWhoseSlotDoesNotMapSendsBytesAndIsOfferedNoneAgain) {
  World w({FaultKind::none, FaultKind::none}, std::chrono::seconds(120), "test-host", Rank1::spoil_slots);
  ASSERT_EQ(w.master->register_workers(), 2u);
  const auto reports = w.master->run_all(Mode::run, small_jobs(SplitModel::even, LocalPolicy::rule));
  ASSERT_EQ(reports.size(), 4u);
  for (const auto& r : reports) {
    SCOPED_TRACE(r.job.kernel);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_TRUE(r.verdict.ok);
    ASSERT_EQ(r.parts.size(), 2u);
    EXPECT_EQ(r.parts[0].result_path, "message");
    EXPECT_EQ(r.parts[1].result_path, "slot");
  }
  EXPECT_EQ(w.spoiler->offers.load(), 1);
  EXPECT_TRUE(w.shutdown());
}

// Outputs listed in a slot the job did not offer (a `results: message` job
// after one with slots: the file may hold the earlier job's bytes) are a bad
// answer: that worker is left out of the job, which is re-split and verifies.
TEST(Daemon, OutputsInASlotTheJobDidNotOfferAreABadAnswer) {
  World w({FaultKind::none, FaultKind::none}, std::chrono::seconds(120), "test-host", Rank1::replay_slots);
  ASSERT_EQ(w.master->register_workers(), 2u);
  std::vector<Job> jobs = small_jobs(SplitModel::even, LocalPolicy::rule);
  jobs.resize(2);
  jobs[1] = jobs[0];
  jobs[1].results = "message";
  const auto reports = w.master->run_all(Mode::run, jobs);
  ASSERT_EQ(reports.size(), 2u);
  ASSERT_TRUE(reports[0].ok()) << reports[0].error;
  EXPECT_EQ(reports[0].parts.at(0).result_path, "slot");
  ASSERT_TRUE(reports[1].ok()) << reports[1].error;
  EXPECT_TRUE(reports[1].verdict.ok);
  ASSERT_EQ(reports[1].faults.size(), 1u);
  EXPECT_NE(reports[1].faults[0].find("offered none"), std::string::npos) << reports[1].faults[0];
  EXPECT_EQ(reports[1].attempts, 2u);
  ASSERT_EQ(reports[1].parts.size(), 1u);
  EXPECT_EQ(reports[1].parts[0].rank, 2);
  EXPECT_EQ(reports[1].parts[0].result_path, "message");
  EXPECT_TRUE(w.shutdown());
}

namespace {
// A fake powercap tree (one package zone) whose counter a thread advances
// by 1000 µJ (1 W) every millisecond; each value is written whole and
// renamed into place, so a reader never sees half a number.
struct FakeRapl {
  wstune::test::TempDir dir;
  std::atomic<bool> stop{false};
  std::thread ticker;
  FakeRapl() {
    const auto zone = dir.path / "intel-rapl:0";
    std::filesystem::create_directories(zone);
    std::ofstream(zone / "name") << "package-0\n";
    std::ofstream(zone / "max_energy_range_uj") << "262143328850\n";
    write(0);
    ticker = std::thread([this] {
      for (std::uint64_t uj = 1000; !stop; uj += 1000) {
        write(uj);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
  }
  ~FakeRapl() {
    stop = true;
    ticker.join();
  }
  void write(std::uint64_t uj) const {
    const auto zone = dir.path / "intel-rapl:0";
    std::ofstream(zone / "energy_uj.new") << uj << "\n";
    std::filesystem::rename(zone / "energy_uj.new", zone / "energy_uj");
  }
  [[nodiscard]] EnergyOptions options() const {
    EnergyOptions o;
    o.powercap_root = dir.path.string();
    return o;
  }
};

EnergyOptions no_sensor() {
  EnergyOptions o;
  o.powercap_root = "/nonexistent/powercap";
  return o;
}
}  // namespace

// Issue 38: without a sensor a run job's joules are "not measured", each
// worker's part says why, and the progress line and JSON say so.
TEST(Daemon, RunJobsWithoutASensorSayWhyNoJoules) {
  World w({FaultKind::none, FaultKind::none}, std::chrono::seconds(120), "", Rank1::plain, no_sensor());
  ASSERT_EQ(w.master->register_workers(), 2u);
  const auto reports = w.master->run_all(Mode::run, {small_jobs(SplitModel::even, LocalPolicy::null)[0]});
  ASSERT_EQ(reports.size(), 1u);
  const JobReport& r = reports[0];
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_FALSE(r.joules().has_value());
  for (const auto& p : r.parts) {
    EXPECT_FALSE(p.joules.has_value());
    EXPECT_EQ(p.energy_sensor, "");
    EXPECT_NE(p.energy_note.find("/nonexistent/powercap"), std::string::npos) << p.energy_note;
  }
  EXPECT_EQ(r.joules_note(), "not measured: r1, r2 (no RAPL (/nonexistent/powercap is absent))") << "grouped by why";
  JobReport mixed = r;
  mixed.parts[0].joules = 1.5;
  mixed.parts.push_back(mixed.parts[1]);
  mixed.parts[2].rank = 3;
  mixed.parts[2].energy_note = "the energy counter could not be read";
  EXPECT_FALSE(mixed.joules().has_value());
  EXPECT_EQ(mixed.joules_note(),
            "not measured: r2 (no RAPL (/nonexistent/powercap is absent)); r3 (the energy counter could not be read)");
  const json j = to_json(r);
  EXPECT_TRUE(j["joules"].is_null());
  EXPECT_EQ(j["joules_note"], r.joules_note());
  EXPECT_TRUE(j["parts"][0]["joules"].is_null());
  EXPECT_NE(w.progress.str().find("energy not measured: r1, r2 (no RAPL"), std::string::npos) << w.progress.str();
  EXPECT_TRUE(w.shutdown());
}

// Issue 38: each worker reads its device's sensor (here a fake RAPL tree)
// around its block and returns the joules with its result; the job's
// joules are their sum, beside the makespan.
TEST(Daemon, WorkersReadTheirSensorAroundTheirBlocksAndTheJobSumsThem) {
  FakeRapl rapl;
  World w({FaultKind::none, FaultKind::none}, std::chrono::seconds(120), "", Rank1::plain, rapl.options());
  ASSERT_EQ(w.master->register_workers(), 2u);
  const auto reports = w.master->run_all(Mode::run, small_jobs(SplitModel::even, LocalPolicy::rule));
  ASSERT_EQ(reports.size(), 4u);
  double all = 0;
  for (const auto& r : reports) {
    SCOPED_TRACE(r.job.kernel);
    ASSERT_TRUE(r.ok()) << r.error;
    ASSERT_TRUE(r.joules().has_value()) << r.joules_note();
    EXPECT_EQ(r.joules_note(), "");
    double sum = 0;
    for (const auto& p : r.parts) {
      ASSERT_TRUE(p.joules.has_value()) << p.energy_note;
      EXPECT_GE(*p.joules, 0.0);
      EXPECT_EQ(p.energy_sensor, "rapl");
      EXPECT_EQ(p.energy_note, "");
      sum += *p.joules;
    }
    EXPECT_DOUBLE_EQ(*r.joules(), sum);
    EXPECT_DOUBLE_EQ(to_json(r)["joules"].get<double>(), sum);
    all += sum;
  }
  EXPECT_GT(all, 0.0) << "the counter advanced while the workers worked";
  EXPECT_NE(w.progress.str().find(" J (rapl)"), std::string::npos) << w.progress.str();
  EXPECT_TRUE(w.shutdown());
}

// Issue 38: a tune job whose objective needs energy has its workers observe
// each configuration's first correct trial (as `wstune tune --energy auto`),
// the trials carry it in their JSON form to the master and the store, and
// the objective decides; a time objective observes nothing; without a
// sensor the time decides and the result says why.
TEST(Daemon, TuneJobsObserveEnergyWhenTheirObjectiveNeedsIt) {
  FakeRapl rapl;
  World w({FaultKind::none}, std::chrono::seconds(120), "", Rank1::plain, rapl.options());
  ASSERT_EQ(w.master->register_workers(), 1u);
  Job j = trapezoid_tune(2, 4);
  j.objectives = "energy,time";
  auto tuned = w.master->run_all(Mode::tune, {j});
  ASSERT_TRUE(tuned[0].ok()) << tuned[0].error;
  ASSERT_EQ(w.sink.tune_results.size(), 1u);
  const json& res = w.sink.tune_results[0]["result"];
  EXPECT_EQ(res["energy_sensor"], "rapl");
  EXPECT_EQ(res["objective_note"], "");
  EXPECT_EQ(res["objectives"], (json{"energy:min", "time:min"}));
  EXPECT_TRUE(res.contains("front"));
  ASSERT_TRUE(res["best"]["energy"].is_object()) << res["best"].dump();
  EXPECT_EQ(res["best"]["energy"]["sensor"], "rapl");
  std::size_t observed = 0;
  for (const auto& t : res["trials"])
    if (t["status"] == "correct") {
      EXPECT_TRUE(t["energy"].is_object()) << t.dump();
      observed += t["energy"].is_object() ? 1 : 0;
    }
  EXPECT_GE(observed, 2u);
  std::size_t stored = 0;
  for (const auto& t : w.sink.trials) stored += t["trial"].contains("energy") && t["trial"]["energy"].is_object();
  EXPECT_EQ(stored, observed) << "every observed trial is stored with its energy";

  j.objectives = "";
  j.retune = true;
  tuned = w.master->run_all(Mode::tune, {j});
  ASSERT_TRUE(tuned[0].ok()) << tuned[0].error;
  const json& plain = w.sink.tune_results[1]["result"];
  EXPECT_EQ(plain["energy_sensor"], "");
  EXPECT_NE(plain["energy_note"].get<std::string>().find("no objective needs energy"), std::string::npos);
  for (const auto& t : plain["trials"]) EXPECT_TRUE(t["energy"].is_null()) << t.dump();
  EXPECT_TRUE(w.shutdown());
}

TEST(Daemon, TuneJobWithAnEnergyObjectiveAndNoSensorLeavesTheTimeToDecide) {
  World w({FaultKind::none}, std::chrono::seconds(120), "", Rank1::plain, no_sensor());
  ASSERT_EQ(w.master->register_workers(), 1u);
  Job j = trapezoid_tune(2, 3);
  j.objectives = "edp";
  auto tuned = w.master->run_all(Mode::tune, {j});
  ASSERT_TRUE(tuned[0].ok()) << tuned[0].error;
  const json& res = w.sink.tune_results[0]["result"];
  EXPECT_EQ(res["energy_sensor"], "");
  const std::string note = res["objective_note"];
  EXPECT_EQ(note.rfind("edp:min needs energy, not measured (no RAPL", 0), 0u) << note;
  EXPECT_NE(note.find("the time decides"), std::string::npos) << note;
  EXPECT_TRUE(w.shutdown());
}

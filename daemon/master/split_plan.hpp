#pragma once
/// @file split_plan.hpp
/// How the master splits one job's NDRange over its workers: the library's
/// model_blocks() (split/model_blocks.hpp, as `wstune split` plans) gives
/// each worker a contiguous block along the split dimension (rows for 2-D
/// kernels by default, paper §3.1.1); for repeated measured jobs the master
/// keeps a job's blocks unless moving them pays (its learned costs).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kernel/kernel.hpp"
#include "split/split.hpp"
#include "wstune/device.hpp"

namespace wstune::daemon {

/// One worker as the split sees it.
struct SplitWorker {
  int rank = 0;       ///< MPI rank
  DeviceInfo device;  ///< its device model
  /// Its calibration for this kernel, for the `measured` model; none when
  /// it has not been calibrated.
  std::optional<DeviceCalibration> calibration;
  /// Its fixed cost per job of this kernel, size and run count (ms),
  /// learned from its earlier measured jobs (observe_part()); 0 = none.
  double fixed_ms = 0;
  /// Its block's device time ÷ the calibration's whole-block prediction,
  /// learned from its last part that ran overlapped (observe_part(); below
  /// 1 where overlapping transfers with kernels gains); 1 = none.
  double scale = 1;
  /// Its one-time cost when its block moves (ms): its own time on its first
  /// run of a block beyond its second (new buffers to allocate and touch; on
  /// PoCL a compile per new NDRange), learned by FixedCosts; 0 = none seen.
  double move_ms = 0;
  /// Its planning local size (model_blocks()): the one the job fixes for
  /// it (`local: stored`: its stored best for the whole problem), else the
  /// driver's choice (empty), also for the policies that choose a local
  /// size per block (rule, tune).
  LocalSize local = std::nullopt;
};

/// What one worker's part of a finished measured job showed (the model's
/// per-worker corrections, SplitWorker::fixed_ms and SplitWorker::scale).
struct PartCost {
  double fixed_ms = 0;  ///< its cost beyond the (scaled) prediction, ms
  double scale = 1;     ///< its device time ÷ the whole-block prediction (1: ran whole)
  double own_ms = 0;    ///< the part's own time it was learned from (ranks observations of one block), ms
};

/// How many observations of one block FixedCosts::observe_block() keeps: it
/// learns the one of lower-median own time (of two, the faster), so one
/// slow job does not move the next plan (on the H100 host at 84c3ae5 one
/// slow job of the H100 worker, learned as its cost, sent bilinear's next
/// plan to the CPU: 0.41× and 0.11× the H100 alone).
inline constexpr std::size_t kCostWindow = 3;

/// Each plan of a job in which a worker with a learned fixed cost gets no
/// share multiplies that cost by this factor (FixedCosts::planned()), so a
/// worker excluded for its cost is planned again after about log2(cost ÷
/// what a share saves) plans, once its share is predicted to gain more than
/// kReplanGain, and measured anew.
inline constexpr double kUnplannedFixedCostDecay = 0.5;

/// The least predicted gain (a fraction of the previous plan's predicted
/// makespan under the current costs) for which the measured model moves a
/// job's blocks away from its previous plan (plan_split()'s `previous`). A
/// moved block costs once what the model does not predict: new buffers to
/// allocate and touch, and on PoCL a compile per new NDRange (on the H100
/// host a CPU worker's bilinear block moved from 3.1 % to 1.6 % of the rows
/// and its job took 67.2 ms instead of 2.8 ms; docs/daemon.md, "Learned
/// costs"). Within about 3 % configurations are ties (timing noise).
inline constexpr double kReplanGain = 0.03;

/// What the master learns per worker and job (keys: the master's
/// fixed_cost_key()): each worker's costs, and each job's latest measured
/// plan, and how many plans it had. A worker learns the lower median of its
/// last observations of a block it ran in the job before (observe_block();
/// a tried worker its first run) and its one-time cost of a move from a
/// block's first two runs (kept while it is left out; halved by each plan it
/// holds back); a worker not seen is
/// assumed to cost as much as the costliest worker of the plan (fixed_ms)
/// with scale 1; a learned fixed cost decays
/// by kUnplannedFixedCostDecay with each plan that leaves its worker out,
/// so the regret of a stale cost is bounded: one share every few jobs (none
/// for a worker whose share gains at most kReplanGain even at no cost).
class FixedCosts {
 public:
  /// Sets each worker's fixed_ms, scale and move_ms for a plan; `keys` has
  /// one entry per worker.
  void assume(std::vector<SplitWorker>& workers, const std::vector<std::string>& keys) const;
  /// After a plan: remembers its `blocks` (remember_plan(); one per worker,
  /// else std::invalid_argument), marks a worker that has learned nothing
  /// and got a block at a prior above 0 as tried (observe_block() learns
  /// its first run), and each worker with an empty block (same
  /// order as `workers`, as assume() set them) has its learned fixed cost ×
  /// kUnplannedFixedCostDecay;
  /// its observations are forgotten (when it comes back its first run is a
  /// new block's);
  /// for a worker never observed, the factor on its prior (the costliest
  /// learned cost) is multiplied instead, and only when that prior was
  /// above 0: a worker left out while nothing was learned was not left out
  /// for its cost, and stays unseen (before 2026-11-24 it was stored as
  /// costing 0, and a later plan gave a CPU worker 7.8 % of bilinear 512²
  /// next to an H100 worker that had learned 0.97 ms).
  /// The workers in `held_by_move` (SplitPlan::held_by_move) have their
  /// one-time cost of a move × kUnplannedFixedCostDecay instead (learned
  /// once, from a first run that may carry costs a move does not repeat, it
  /// would otherwise hold plans back for good), and one of them left out
  /// keeps its fixed cost.
  void planned(const std::vector<SplitWorker>& workers, const std::vector<std::string>& keys,
               const std::vector<Block>& blocks, const std::vector<std::size_t>& held_by_move = {});
  /// Sets what `key` has learned, whatever block it ran (a cost known
  /// otherwise, or a test's starting point); the master uses observe_block().
  void observe(const std::string& key, const PartCost& cost) { records_[key].cost = cost; }
  /// The master's observation of a finished part that ran `block`: it
  /// teaches `key` only when the worker ran the same block in the job
  /// before (its buffers reused), and then `key` learns, of the last
  /// kCostWindow observations of that block, the one of lower-median own
  /// time (PartCost::own_ms). A block's first run's own time minus its
  /// second's is the worker's one-time cost of a move (SplitWorker::move_ms). One exception: a worker that had learned
  /// nothing and was planned in at a prior above 0 (another worker's
  /// learned cost: it is being tried) learns its first run, an upper bound
  /// since its buffers were new, so a worker that costs more than its
  /// share saves is dropped at the next job, not the one after (on the H100
  /// host at 2fc3301 the CPU, tried in bilinear 512²'s third job, ran its
  /// block again in the fourth, reported job: 13.4 ms against the H100
  /// alone's 5.7 ms). A block the worker runs for the first
  /// time pays allocation and first touch of its buffers, which are not a
  /// cost per job: on two H200s a worker's 58 % bilinear block took 29.5 ms
  /// of transfers on its first run and 8 ms later, and learning the first
  /// swung the next plan to 5/95 on identical GPUs. The block is remembered
  /// either way, so an unchanged plan is learned from at its second job.
  void observe_block(const std::string& key, const Block& block, const PartCost& cost);
  /// The blocks of the latest plan of the job whose workers have `keys` (in
  /// plan order, one block per key; the same workers in another order, or
  /// others, are another job); nullptr when there is none. The pointer stays
  /// valid until remember_plan() is called with the same keys.
  [[nodiscard]] const std::vector<Block>* last_plan(const std::vector<std::string>& keys) const;
  /// Remembers `blocks` as the latest plan of the job whose workers have
  /// `keys`, and counts it. Throws std::invalid_argument unless there is one
  /// block per key.
  void remember_plan(const std::vector<std::string>& keys, const std::vector<Block>& blocks);
  /// How many plans of the job whose workers have `keys` were remembered.
  [[nodiscard]] unsigned plans_made(const std::vector<std::string>& keys) const;

 private:
  // What is known of one worker key.
  struct Record {
    std::optional<PartCost> cost;        // learned
    std::optional<Block> block;          // the block it ran last
    std::vector<PartCost> window;        // observations of that block after its first run (at most kCostWindow)
    std::optional<double> first_run_ms;  // own time of that block's first run, until its second
    double move_ms = 0;                  // its one-time cost of a move
    double unseen_factor = 1;            // nothing learned: the factor on the costliest-seen prior
    bool tried = false;                  // planned in at a prior above 0 before learning anything
    // Left out of a plan: its observations are history and its buffers may be gone.
    void forget_block() {
      block.reset();
      window.clear();
      first_run_ms.reset();
      tried = false;
    }
  };
  // A job's latest plan and how many it had.
  struct Plans {
    std::vector<Block> latest;
    unsigned made = 0;
  };
  [[nodiscard]] const Record* record(const std::string& key) const;
  std::map<std::string, Record> records_;
  std::map<std::vector<std::string>, Plans> plans_;
};

/// Identical devices (one DeviceInfo::fingerprint()) whose measured models
/// predict an equal share within this fraction of each other (calibration
/// and learned scale; their learned fixed costs, pooled as the group's
/// lower median, within this fraction of that share's time) are timing noise
/// apart: the measured plan gives them one model (pool_identical()), so they get equal
/// shares and a plan does not swing from run to run with their noise; the
/// previous plan is then kept unless a new one gains more than kReplanGain
/// (hysteresis). Beyond it, each keeps its own (a device that really is
/// slower, e.g. sharing its host's PCIe lanes or a busy GPU, gets less).
inline constexpr double kIdenticalNoise = 0.10;

/// Gives each group of identical devices in `cal` (same fingerprint in
/// `workers`, same order) whose predictions for an equal share (1 / the
/// workers' count of `total_work` work-items), fixed costs left out, lie
/// within kIdenticalNoise of the group's fastest, and fixed costs within
/// kIdenticalNoise of its time, one model: the one of median prediction,
/// with the lower median of their fixed costs.
/// Returns the groups whose models this changed (worker indices), for the
/// plan's note.
std::vector<std::vector<std::size_t>> pool_identical(std::vector<DeviceCalibration>& cal,
                                                     const std::vector<SplitWorker>& workers, double total_work);

/// A job's split: one block per worker (same order; an empty block means the
/// worker gets nothing), each block's share and the dimension.
struct SplitPlan {
  SplitModel model = SplitModel::even;  ///< the model used
  unsigned dim = 0;                     ///< 0 = x (columns / elements), 1 = y (rows)
  std::vector<double> fractions;        ///< each block's share of the range (block_fractions()), summing to 1
  std::vector<Block> blocks;            ///< aligned blocks covering the whole range
  std::string note;  ///< e.g. why a model fell back, or that a measured plan kept the job's previous blocks
  /// Measured: the workers (indices) whose one-time cost of a move held the
  /// plan back: kept at their previous blocks, or left out rather than moved
  /// (FixedCosts::planned() decays their move cost instead of a left-out
  /// worker's fixed cost).
  std::vector<std::size_t> held_by_move;
};

/// The blocks of `model` for `workers`: model_blocks() (the library's one
/// planner, as `wstune split` plans) with each worker's total PEs, planning
/// local size (SplitWorker::local) and, for `measured`, calibration, along
/// split_dimension(spec, direction).
/// `measured` predicts a job that runs the kernel `kernel_runs` times per
/// upload and read-back (warm-up + repetitions; for_kernel_runs()), each
/// worker's prediction × its SplitWorker::scale and its fixed cost per job
/// (SplitWorker::fixed_ms) added to its non-empty block, so a worker whose
/// fixed cost exceeds what its share would save gets nothing. `previous`
/// (measured only; ignored unless it is one block per worker along the
/// plan's dimension, contiguous from 0 and covering the range) is the job's
/// previous plan: it is kept, and SplitPlan::note says so, unless a
/// candidate is predicted faster by more than kReplanGain and costs less
/// over as many jobs as the job has been planned already (`jobs_so_far`,
/// at least 1: as many again are expected) with the one-time cost of its
/// move (the largest SplitWorker::move_ms of a worker whose non-empty block
/// changes; the workers move at once). The candidates: the model's blocks,
/// and for each worker whose block there would move at a cost, the model's
/// blocks without it (a worker left out pays nothing); the cheapest wins.
/// Throws UsageError as model_blocks() does, and for `measured` when a
/// worker has no calibration.
SplitPlan plan_split(SplitModel model, SplitDirection direction, const KernelSpec& spec, const Problem& p,
                     const std::vector<SplitWorker>& workers, unsigned kernel_runs = 1,
                     const std::vector<Block>* previous = nullptr, unsigned jobs_so_far = 1);

/// What one worker's part of a finished `measured` job showed. A block
/// that ran overlapped (`overlap_wall_ms` > 0: its upload, runs and
/// read-back together) sets the scale to that time ÷ the calibration's
/// whole-block prediction for `kernel_runs` runs (observe_concurrent()); a
/// whole block sets it to 1. The fixed cost is then `answer_ms` (the job's
/// start to its result at the master, less one-time costs such as program
/// builds and input generation) minus the scaled prediction, never below 0
/// (observe_job()). nullopt without a calibration or for an empty block.
std::optional<PartCost> observe_part(const KernelSpec& spec, const Problem& p, const SplitWorker& w, unsigned dim,
                                     const Block& b, unsigned kernel_runs, double answer_ms,
                                     double overlap_wall_ms = 0);

/// A worker's own time for its part of a job (ms), what observe_part()
/// learns from: the arrival of its result at the master (`answer_ms`, from
/// the job's first send), but no later than its own work (`busy_ms`, receipt
/// of the job to its reply) plus the master's receive of its result
/// (`return_ms`), less its one-time costs (`one_time_ms`: program builds,
/// input generation). The master receives one result at a time, so a result
/// that waited behind another worker's would teach its worker the other's
/// transfer: with two workers sharing the H100, bilinear 2048²→4096² at
/// 50/50 answered at 17.0 and 11.9 ms (busy 6.1 and 5.7 ms, receives 5.1 and
/// 5.0 ms), and the next plan gave the first worker 15 % of the rows.
double own_answer_ms(double answer_ms, double busy_ms, double return_ms, double one_time_ms);

/// observe_part() of a block that ran whole: its fixed cost.
std::optional<double> observed_fixed_ms(const KernelSpec& spec, const Problem& p, const SplitWorker& w, unsigned dim,
                                        const Block& b, unsigned kernel_runs, double answer_ms);

}  // namespace wstune::daemon

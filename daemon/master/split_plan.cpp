#include "master/split_plan.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "split/model_blocks.hpp"
#include "split/split.hpp"
#include "wstune/error.hpp"

namespace wstune::daemon {

namespace {

// The workers that pay a one-time cost to go from `previous` to `fresh`:
// those whose non-empty new block differs and that have learned a cost.
std::vector<std::size_t> movers(const std::vector<SplitWorker>& workers, const std::vector<Block>& previous,
                                const std::vector<Block>& fresh) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < fresh.size(); ++i)
    if (fresh[i].size() != 0 && fresh[i] != previous[i] && workers[i].move_ms > 0) out.push_back(i);
  return out;
}

// The one-time cost of moving from `previous` to `fresh`: the largest
// move_ms of its movers (they move at once).
double move_cost_ms(const std::vector<SplitWorker>& workers, const std::vector<Block>& previous,
                    const std::vector<Block>& fresh) {
  double most = 0;
  for (const std::size_t i : movers(workers, previous, fresh)) most = std::max(most, workers[i].move_ms);
  return most;
}

// The measured plan's candidates besides `previous`: the model's blocks
// (`fresh`), and for each worker whose block there would move at a learned
// one-time cost, the model's blocks without that worker (left out, it pays
// nothing; `label` says which).
struct Candidate {
  std::vector<Block> blocks;
  std::string label;
  std::optional<std::size_t> left_out;  // the worker left out rather than moved
};
// The measured model's blocks for a calibration (model_blocks() of the job).
using MeasuredModel = std::function<std::vector<Block>(const Calibration&)>;
std::vector<Candidate> candidates(const Calibration& cal, const std::vector<SplitWorker>& workers,
                                  std::vector<Block> fresh, const std::vector<Block>& previous,
                                  const MeasuredModel& model) {
  std::vector<Candidate> out;
  for (const std::size_t j : movers(workers, previous, fresh)) {
    Calibration without = cal;
    without.devices[j].fixed_ms = 1e12;  // a cost no share saves: measured_blocks() leaves it out
    out.push_back({model(without),
                   fmt::format(" without rank {} (its block would cost {:.3f} ms once to move)", workers[j].rank,
                               workers[j].move_ms),
                   j});
  }
  out.insert(out.begin(), Candidate{std::move(fresh), "", std::nullopt});
  return out;
}

// The measured plan's blocks: `previous` (when it has one block per worker
// and tiles the range along the plan's dimension) unless a candidate is
// predicted faster by more than kReplanGain and costs less over `jobs` jobs
// with its move's one-time cost; then the cheapest such candidate. `note`
// says why it kept, or which candidate left a worker out.
std::vector<Block> stable_blocks(const Calibration& cal, const std::vector<SplitWorker>& workers,
                                 std::vector<Block> fresh, const std::vector<Block>* previous, unsigned jobs,
                                 std::size_t total, const MeasuredModel& model,
                                 const std::function<double(std::size_t, std::size_t)>& work, std::string& note,
                                 std::vector<std::size_t>& held) {
  if (!previous || *previous == fresh || previous->size() != fresh.size() || !blocks_tile(*previous, cal.dim, total))
    return fresh;
  jobs = std::max(1u, jobs);
  const double kept = predicted_makespan_ms(cal, *previous, work);
  double best = kept * jobs, best_ms = kept, best_once = 0, fresh_ms = 0, fresh_once = 0;
  const Candidate* chosen = nullptr;
  const auto all = candidates(cal, workers, std::move(fresh), *previous, model);
  for (const Candidate& c : all) {
    const double ms = predicted_makespan_ms(cal, c.blocks, work);
    const double once = move_cost_ms(workers, *previous, c.blocks);
    if (&c == &all.front()) fresh_ms = ms, fresh_once = once;
    if (c.blocks == *previous || ms >= kept * (1 - kReplanGain) || ms * jobs + once >= best) continue;
    best = ms * jobs + once;
    best_ms = ms;
    best_once = once;
    chosen = &c;
  }
  if (chosen) {
    if (chosen->left_out) held.push_back(*chosen->left_out);
    if (!chosen->label.empty())
      note = fmt::format("the model's blocks{}: {:.3f} ms a job and {:.3f} ms once against {:.3f} ms kept",
                         chosen->label, best_ms, best_once, kept);
    return chosen->blocks;
  }
  const bool faster = fresh_ms < kept * (1 - kReplanGain);
  if (faster)  // held back by its movers' one-time costs, if any
    for (const std::size_t i : movers(workers, *previous, all.front().blocks)) held.push_back(i);
  note = faster ? fmt::format(
                      "kept the job's previous blocks: new ones were predicted {:.3f} ms against {:.3f} ms, "
                      "{:.3f} ms gained over {} job(s) against a one-time cost of {:.3f} ms to move",
                      fresh_ms, kept, (kept - fresh_ms) * jobs, jobs, fresh_once)
                : fmt::format(
                      "kept the job's previous blocks: new ones were predicted {:.3f} ms against {:.3f} ms, not "
                      "more than {:.0f} % faster",
                      fresh_ms, kept, 100 * kReplanGain);
  return *previous;
}

// The workers' calibrations for a job of `kernel_runs` runs, each with its
// learned fixed cost and scale. Throws UsageError naming a worker without one.
Calibration measured_calibration(const KernelSpec& spec, const Problem& p, unsigned dim,
                                 const std::vector<SplitWorker>& workers, unsigned kernel_runs) {
  Calibration cal{std::string(spec.name()), p.text, dim, {}};
  for (const auto& w : workers) {
    if (!w.calibration) {
      throw UsageError(
          fmt::format("split model measured: no calibration of {} for {} on worker rank {} ({}); "
                      "run 'mpiexec ... wstuned calibrate' with the same jobs first",
                      spec.name(), p.text, w.rank, w.device.name));
    }
    DeviceCalibration d = for_kernel_runs(*w.calibration, kernel_runs);
    d.fixed_ms = w.fixed_ms;
    d.concurrency_scale *= w.scale;
    cal.devices.push_back(std::move(d));
  }
  return cal;
}

}  // namespace

SplitPlan plan_split(SplitModel model, SplitDirection direction, const KernelSpec& spec, const Problem& p,
                     const std::vector<SplitWorker>& workers, unsigned kernel_runs, const std::vector<Block>* previous,
                     unsigned jobs_so_far) {
  SplitPlan plan;
  plan.model = model;
  plan.dim = split_dimension(spec, direction);
  const std::size_t total = spec.split_units(p, plan.dim);
  std::vector<std::uint64_t> pe;
  std::vector<LocalSize> locals;
  for (const auto& w : workers) {
    pe.push_back(w.device.total_pe());
    locals.push_back(w.local);
  }
  const MeasuredModel blocks_of = [&](const Calibration& cal) {
    return model_blocks(SplitModel::measured, spec, p, plan.dim, pe, locals, &cal);
  };
  if (model == SplitModel::measured) {
    Calibration cal = measured_calibration(spec, p, plan.dim, workers, kernel_runs);
    const auto pooled = pool_identical(cal.devices, workers, slice_work_items(spec, p, plan.dim, total));
    for (const auto& group : pooled) {
      std::vector<int> ranks;
      for (const std::size_t i : group) ranks.push_back(workers[i].rank);
      plan.note += fmt::format("{}ranks {} share one model (identical devices within {:.0f} %)",
                               plan.note.empty() ? "" : "; ", fmt::join(ranks, ", "), 100 * kIdenticalNoise);
    }
    const auto work = [&](std::size_t, std::size_t units) { return slice_work_items(spec, p, plan.dim, units); };
    std::string note;
    plan.blocks = stable_blocks(cal, workers, blocks_of(cal), previous, jobs_so_far, total, blocks_of, work, note,
                                plan.held_by_move);
    if (!note.empty()) plan.note = plan.note.empty() ? note : note + "; " + plan.note;
  } else {
    plan.blocks = model_blocks(model, spec, p, plan.dim, pe, locals);
  }
  plan.fractions = block_fractions(plan.blocks, total);
  return plan;
}

std::vector<std::vector<std::size_t>> pool_identical(std::vector<DeviceCalibration>& cal,
                                                     const std::vector<SplitWorker>& workers, double total_work) {
  std::map<std::string, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < workers.size(); ++i) groups[workers[i].device.fingerprint()].push_back(i);
  const double share = total_work / static_cast<double>(std::max<std::size_t>(1, workers.size()));
  std::vector<std::vector<std::size_t>> pooled;
  // A device's time for the share without its learned fixed cost.
  const auto device_ms = [&](std::size_t i) { return cal.at(i).predict_ms(share) - cal.at(i).fixed_ms; };
  for (auto& [fp, group] : groups) {
    if (group.size() < 2) continue;
    std::sort(group.begin(), group.end(), [&](std::size_t a, std::size_t b) { return device_ms(a) < device_ms(b); });
    if (!(device_ms(group.back()) <= device_ms(group.front()) * (1 + kIdenticalNoise))) continue;
    DeviceCalibration median = cal[group[(group.size() - 1) / 2]];
    std::vector<double> fixed;
    for (const std::size_t i : group) fixed.push_back(cal[i].fixed_ms);
    std::sort(fixed.begin(), fixed.end());
    // A fixed cost that differs beyond the noise is the device's own (a worker on another host).
    if (fixed.back() - fixed.front() > kIdenticalNoise * device_ms(group.front())) continue;
    median.fixed_ms = fixed[(fixed.size() - 1) / 2];  // one device's outlier is noise
    bool changed = false;
    for (const std::size_t i : group) {
      DeviceCalibration one = median;
      one.device_id = cal[i].device_id;  // each keeps its own identity
      changed = changed || !(one == cal[i]);
      cal[i] = std::move(one);
    }
    std::sort(group.begin(), group.end());
    if (changed) pooled.push_back(group);
  }
  return pooled;
}

std::optional<PartCost> observe_part(const KernelSpec& spec, const Problem& p, const SplitWorker& w, unsigned dim,
                                     const Block& b, unsigned kernel_runs, double answer_ms, double overlap_wall_ms) {
  if (!w.calibration || b.size() == 0) return std::nullopt;
  DeviceCalibration d = for_kernel_runs(*w.calibration, kernel_runs);
  const double work = static_cast<double>(spec.block_global(p, Block{dim, 0, b.size()}).count());
  d.fixed_ms = 0;
  const double base = d.concurrency_scale;  // the calibration's own (plan_split() multiplies it by the scale)
  if (overlap_wall_ms > 0) observe_concurrent(d, work, overlap_wall_ms);
  observe_job(d, work, answer_ms);
  return PartCost{d.fixed_ms, base > 0 ? d.concurrency_scale / base : 1.0, answer_ms};
}

double own_answer_ms(double answer_ms, double busy_ms, double return_ms, double one_time_ms) {
  return std::min(answer_ms, busy_ms + return_ms) - one_time_ms;
}

std::optional<double> observed_fixed_ms(const KernelSpec& spec, const Problem& p, const SplitWorker& w, unsigned dim,
                                        const Block& b, unsigned kernel_runs, double answer_ms) {
  const auto c = observe_part(spec, p, w, dim, b, kernel_runs, answer_ms);
  return c ? std::optional<double>(c->fixed_ms) : std::nullopt;
}

const FixedCosts::Record* FixedCosts::record(const std::string& key) const {
  const auto it = records_.find(key);
  return it == records_.end() ? nullptr : &it->second;
}

void FixedCosts::assume(std::vector<SplitWorker>& workers, const std::vector<std::string>& keys) const {
  double most = 0;
  for (const auto& key : keys)
    if (const Record* r = record(key); r && r->cost) most = std::max(most, r->cost->fixed_ms);
  for (std::size_t i = 0; i < workers.size(); ++i) {
    const Record* r = record(keys.at(i));
    const PartCost c = r && r->cost ? *r->cost : PartCost{most * (r ? r->unseen_factor : 1.0), 1};
    workers[i].fixed_ms = c.fixed_ms;
    workers[i].scale = c.scale;
    workers[i].move_ms = r ? r->move_ms : 0;
  }
}

void FixedCosts::observe_block(const std::string& key, const Block& block, const PartCost& cost) {
  Record& r = records_[key];
  if (r.block != block) {  // a first run of this block: its buffers are new
    r.block = block;
    r.window.clear();
    r.first_run_ms = cost.own_ms;
    if (std::exchange(r.tried, false) && !r.cost) r.cost = cost;  // a tried worker: an upper bound
    return;
  }
  if (r.first_run_ms) {  // the block's second run
    r.move_ms = std::max(0.0, *r.first_run_ms - cost.own_ms);
    r.first_run_ms.reset();
  }
  r.window.push_back(cost);
  if (r.window.size() > kCostWindow) r.window.erase(r.window.begin());
  std::vector<PartCost> ranked = r.window;
  std::sort(ranked.begin(), ranked.end(), [](const PartCost& a, const PartCost& b) { return a.own_ms < b.own_ms; });
  r.cost = ranked[(ranked.size() - 1) / 2];
}

const std::vector<Block>* FixedCosts::last_plan(const std::vector<std::string>& keys) const {
  const auto it = plans_.find(keys);
  return it == plans_.end() ? nullptr : &it->second.latest;
}

void FixedCosts::remember_plan(const std::vector<std::string>& keys, const std::vector<Block>& blocks) {
  if (blocks.size() != keys.size())
    throw std::invalid_argument(fmt::format("remember_plan: {} blocks for {} workers", blocks.size(), keys.size()));
  Plans& p = plans_[keys];
  p.latest = blocks;
  ++p.made;
}

unsigned FixedCosts::plans_made(const std::vector<std::string>& keys) const {
  const auto it = plans_.find(keys);
  return it == plans_.end() ? 0 : it->second.made;
}

void FixedCosts::planned(const std::vector<SplitWorker>& workers, const std::vector<std::string>& keys,
                         const std::vector<Block>& blocks, const std::vector<std::size_t>& held_by_move) {
  remember_plan(keys, blocks);
  for (std::size_t i = 0; i < workers.size(); ++i) {
    Record& r = records_[keys.at(i)];
    const bool held = std::find(held_by_move.begin(), held_by_move.end(), i) != held_by_move.end();
    if (held) r.move_ms *= kUnplannedFixedCostDecay;
    if (blocks.at(i).size() != 0) {
      r.tried = !r.cost && workers[i].fixed_ms > 0;
      continue;
    }
    // Left out: the decayed cost must not be outvoted by old observations.
    r.forget_block();
    if (held) continue;  // left out for its move, not its fixed cost
    if (r.cost) {
      r.cost->fixed_ms *= kUnplannedFixedCostDecay;
    } else if (workers[i].fixed_ms > 0) {  // left out for its assumed cost: the prior decays
      r.unseen_factor *= kUnplannedFixedCostDecay;
    }  // left out at no assumed cost: not for its cost, nothing decays
  }
}

}  // namespace wstune::daemon

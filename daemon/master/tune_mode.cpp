// The master's tune mode: one search per device fingerprint shared by the
// workers that have it (shared_search.hpp), every trial stored.
#include "master/master.hpp"
#include "observe/observer.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <ostream>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "format/json.hpp"
#include "format/trial_json.hpp"
#include "master/router.hpp"
#include "metric/pareto.hpp"
#include "protocol/kernel_source.hpp"
#include "search/strategies.hpp"
#include "session/autotune.hpp"
#include "session/tune_request.hpp"
#include "tuning_file/tuning_file.hpp"
#include "wstune/store.hpp"

#include "master/master_util.hpp"

namespace wstune::daemon {

namespace {
// Whether a tune job's workers observe each trial's energy: its "energy"
// ("auto", "on", "off") decided over its objectives as `wstune tune
// --energy` decides (energy_for_objectives()).
bool observes_energy(const Job& job, const KernelSpec& spec, const Problem& p) {
  return energy_for_objectives(energy_options_of(job.energy), MetricSet(spec, p),
                               resolve_search(spec, tune_request(job)).objectives)
      .enabled;
}

// Why a tune job's workers observe no energy when it did not ask them to.
std::string unasked_energy_note(const Job& job) {
  return job.energy == "off" ? "energy observation is off (the job's \"energy\": \"off\")"
                             : "no objective needs energy (the job's \"energy\": \"auto\"; \"on\" observes it)";
}

// Sets `target`'s energy sensor and note: with the workers `asked` to
// observe, the first worker's answer (`ready`: its tune_result); else why not.
void describe_energy(TuneTarget& target, const Job& job, bool asked, const json& ready) {
  target.energy_sensor = asked ? ready.value("energy_sensor", "") : "";
  if (!asked)
    target.energy_note = unasked_energy_note(job);
  else if (target.energy_sensor.empty())
    target.energy_note = ready.value("energy_note", "the worker did not say (protocol < 6)");
  else
    target.energy_note.clear();
}
}  // namespace

JobReport Master::tune_job(JobReport r) {
  {
    // Workers that joined before this job are in its groups below.
    const std::lock_guard lock(workers_mutex_);
    joined_.clear();
  }
  const auto spec_ptr = master_kernel(r.job.kernel, r.job.kernel_file);
  const Problem p = resolve_problem(*spec_ptr, r.job.size);
  // One search per device fingerprint, shared by the workers that have it.
  std::vector<std::pair<std::string, std::vector<int>>> groups;
  for (const auto& w : workers_) {
    if (!w.usable()) continue;
    const std::string fp = w.device->fingerprint();
    auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& e) { return e.first == fp; });
    if (g == groups.end())
      groups.push_back({fp, {w.rank}});
    else
      g->second.push_back(w.rank);
  }
  r.attempts = 1;
  std::vector<std::vector<int>> todo;
  for (const auto& [fp, ranks] : groups) {
    if (!r.job.retune && sink_.tuned_before(*spec_ptr, p, *worker(ranks.front()).device)) {
      // Tuned before: the store has its best ("retune": true searches again).
      note(fmt::format("job {}: {} is tuned for {} {} (a best is stored): skipped; \"retune\": true searches again",
                       r.id, worker(ranks.front()).device->name, r.job.kernel, r.size));
      continue;
    }
    todo.push_back(ranks);
  }
  if (!todo.empty()) tune_groups(r, *spec_ptr, p, todo);
  std::sort(r.data.begin(), r.data.end(), [](const json& a, const json& b) { return a["rank"] < b["rank"]; });
  if (stopped()) {
    r.status = JobStatus::interrupted;
    r.error = "stop requested";
  } else if (r.data.empty()) {
    r.status = !groups.empty() && todo.empty() ? JobStatus::stored : JobStatus::failed;
    if (r.status == JobStatus::failed) r.error = groups.empty() ? "no healthy worker" : "no worker finished this job";
  }
  return r;
}

void Master::fault(JobReport& r, const std::string& text, const GroupContext& ctx) {
  const auto held = ctx.hold();
  r.faults.push_back(text);
  note(text);
}

// One group: on the master's communicator. Several: each in its own thread
// on a router channel, the router pumped here (the only thread that calls
// the communicator) until every search has ended.
void Master::tune_groups(JobReport& r, const KernelSpec& spec, const Problem& p,
                         const std::vector<std::vector<int>>& groups) {
  const json& kernel_file = packed(r.job);
  const bool energy = observes_energy(r.job, spec, p);
  auto one = [&](const std::vector<int>& ranks, const GroupContext& ctx) {
    try {
      tune_group(r, spec, p, ranks, ctx);
    } catch (const std::exception& e) {  // SearchAborted, a space the master cannot build, ...
      fault(r, fmt::format("the search on {} stopped: {}", worker(ranks.front()).label(), e.what()), ctx);
    }
  };
  if (groups.size() == 1) return one(groups.front(), GroupContext{comm_, nullptr, kernel_file, nullptr, energy});
  Router router(comm_);
  std::mutex lock;
  std::atomic<std::size_t> running{groups.size()};
  std::vector<std::thread> threads;
  for (const auto& ranks : groups) {
    Channel& channel = router.channel(ranks);
    threads.emplace_back([&, ranks, ctx = GroupContext{channel, &lock, kernel_file, &router, energy}] {
      one(ranks, ctx);
      --running;
    });
  }
  while (running > 0) router.pump(std::chrono::milliseconds(1));
  for (auto& t : threads) t.join();
}

// Sends Tag::tune to `ranks` and waits for each one's answer: the ranks
// that are ready (their answers in `ready`, by rank), faults for the others.
Message Master::prepare_message(const JobReport& r, const GroupContext& ctx) const {
  WorkRequest req{r.id, r.job.kernel, r.size,         r.job.repetitions, r.job.max_trials,
                  0,    r.job.seed,   json::object(), ctx.kernel_file,   ctx.energy};
  return req.to_message(Tag::tune);
}

std::vector<int> Master::prepare_group(JobReport& r, const std::vector<int>& ranks, json* ready,
                                       const GroupContext& ctx) {
  std::set<int> pending;
  for (int rank : ranks) {
    ctx.comm.send(rank, prepare_message(r, ctx));
    pending.insert(rank);
  }
  std::vector<int> ok;
  const auto deadline = clock_type::now() + opt_.job_timeout;
  while (!pending.empty() && !stopped()) {
    if (clock_type::now() >= deadline) {
      for (int rank : pending) fault(r, mark_late(r, rank), ctx);
      break;
    }
    auto got = ctx.comm.recv(kAnySource, slice_until(deadline));
    if (!got || !pending.count(got->source)) continue;
    try {
      if (got->message.tag == Tag::tune_result) {
        const WorkResult res = WorkResult::from(got->message);
        if (res.job != r.id) continue;
        (*ready)[std::to_string(got->source)] = res.data;
        ok.push_back(got->source);
      } else if (got->message.tag == Tag::worker_error) {
        const WorkerError e = WorkerError::from(got->message);
        if (e.job != r.id) continue;
        fault(r,
              fmt::format("worker {} failed job {} ({}): {}", worker(got->source).label(), r.id,
                          wstune::to_string(e.status), e.text),
              ctx);
      } else if (got->message.tag == Tag::bye) {
        fault(r,
              fmt::format("worker {} left before job {}'s search ({}); dropped from the pool",
                          worker(got->source).label(), r.id, got->message.body.value("reason", std::string("bye"))),
              ctx);
      } else {
        continue;
      }
    } catch (const ProtocolError& e) {
      fault(r, fmt::format("worker {} sent a bad answer: {}", worker(got->source).label(), e.what()), ctx);
    }
    pending.erase(got->source);
  }
  std::sort(ok.begin(), ok.end());
  return ok;
}

namespace {
// A group's TrialLog used under the lock the groups share.
class LockedLog final : public TrialLog {
 public:
  LockedLog(std::unique_ptr<TrialLog> log, std::mutex* lock) : log_(std::move(log)), lock_(lock) {}
  std::optional<Trial> stored(const Configuration& c) override {
    const auto held = hold();
    return log_->stored(c);
  }
  bool record(const Trial& t) override {
    const auto held = hold();
    return log_->record(t);
  }
  json finish(const TuneResult& result) override {
    const auto held = hold();
    return log_->finish(result);
  }

 private:
  std::unique_lock<std::mutex> hold() const {
    return lock_ ? std::unique_lock<std::mutex>(*lock_) : std::unique_lock<std::mutex>();
  }
  std::unique_ptr<TrialLog> log_;
  std::mutex* lock_;
};
}  // namespace

void Master::tune_group(JobReport& r, const KernelSpec& spec, const Problem& p, const std::vector<int>& ranks,
                        const GroupContext& ctx) {
  json ready = json::object();
  const std::vector<int> group = prepare_group(r, ranks, &ready, ctx);
  if (group.empty()) return;
  const json& first = ready[std::to_string(group.front())];
  const DeviceInfo& device = *worker(group.front()).device;
  // The master builds the target from the first worker's kernel limits and
  // the space once (the constraint solver); the workers build no space:
  // each trial request carries its configuration.
  TuneTarget target = make_tune_target(spec, device, first.at("kernel_work_group_size").get<std::size_t>(),
                                       first.at("kernel_local_mem_bytes").get<std::uint64_t>(), p, spec.whole(p));
  // The reference the worker took when the kernel's own did not build or run there.
  ReferenceChoice choice;
  choice.params = first.value("reference_params", json::object());
  if (first.contains("rejected_references"))
    for (const auto& params : first.at("rejected_references")) choice.rejected.emplace_back(params, "");
  apply_reference(target, spec, p, spec.whole(p), choice);
  describe_energy(target, r.job, ctx.energy, first);
  SearchSpace space = make_search_space(spec, p, spec.whole(p), target);
  // The job's search resolved as `wstune tune` resolves its options.
  const ResolvedSearch search = resolve_search(spec, tune_request(r.job));
  auto searcher = search.searcher();
  const TuneBudget budget = search.budget(spec, space);
  auto stop = budget.stop();
  SessionSpec session_spec = budget.session(searcher->name());
  session_spec.objectives = search.objective_names();
  std::unique_ptr<TrialLog> log;
  {
    const auto held = ctx.hold();
    log = std::make_unique<LockedLog>(sink_.open_trial_log(spec, target, session_spec), ctx.lock);
  }
  SearchGroup g{&ctx.comm,
                r.id,
                group,
                opt_.job_timeout,
                opt_.stop_requested,
                [&](int rank, const std::string& why) {
                  WorkerState& w = worker(rank);
                  w.alive = false;
                  if (!w.gone) w.problem = why;
                  fault(r, fmt::format("worker {} {}; dropped from the pool", w.label(), why), ctx);
                },
                {},
                {},
                {},
                std::chrono::milliseconds(0)};
  // Workers of this fingerprint that join during the search take part.
  g.joiners = [this, fp = device.fingerprint()] { return take_joiners(fp); };
  if (ctx.router) g.adopt = [&ctx](int rank) { ctx.router->adopt(static_cast<Channel&>(ctx.comm), rank); };
  g.prepare = prepare_message(r, ctx);
  g.rejoin_timeout = opt_.rejoin_timeout;
  SharedEvaluator ev(std::move(g), target, std::move(space), *log, *searcher, *stop);
  TuneOptions topt;
  topt.timing = TimingOptions{1, std::max(1u, r.job.repetitions)};
  topt.lookup = [&](const Configuration& c) { return log->stored(c); };
  topt.on_trial = [&](const Trial&, TrialPhase phase) { ev.phase(phase); };
  // The job's first objective decides, as `wstune tune --objective` (the
  // time where it needs energy the first worker's device does not measure).
  const MetricSet metrics(spec, p);
  ObjectiveDecision decision = decide_objective(metrics, search.objectives.front(), target);
  if (decision.score) topt.score = std::move(decision.score);
  const TuneResult res = tune(ev, *searcher, *stop, topt);
  ev.drain();
  const json session = log->finish(res);
  json trials = json::array();
  for (const auto& t : res.trials) trials.push_back(trial_report_json(t));
  json by_rank = json::object();
  for (const auto& [rank, n] : ev.measured_by()) by_rank[std::to_string(rank)] = n;
  json result{{"strategy", res.strategy},
              {"global", to_string(res.target.global)},
              {"space_size", res.space_size},
              {"trials", trials},
              {"best", trial_report_json(res.best)},
              {"null_ms", res.baseline.ok() ? json(res.baseline.median_ms()) : json(nullptr)},
              {"rule", res.rule ? to_string(res.rule->local) : "null"},
              {"evaluations", res.evaluations},
              {"tiebreak_trials", res.tiebreak_trials},
              {"measured_by_rank", by_rank},
              {"measured_ahead_unused", ev.unused_ahead()},
              {"stop_reason", res.stop_reason},
              {"wall_ms", res.wall_ms},
              {"shared_by", ev.members()},
              {"objectives", search.objective_names()},
              {"objective_note", decision.note},
              {"energy_sensor", target.energy_sensor},
              {"energy_note", target.energy_note},
              {"session", session}};
  if (search.objectives.size() > 1) {
    json front = json::array();
    for (std::size_t i : pareto_front(res.trials, search.objectives, metrics))
      front.push_back(trial_report_json(res.trials[i]));
    result["front"] = std::move(front);
  }
  const auto held = ctx.hold();
  note(
      fmt::format("job {}: {} worker(s) with fingerprint {} searched {} of {} configurations ({} stored before), best "
                  "{} {:.4f} ms",
                  r.id, group.size(), device.fingerprint(), res.evaluations, res.space_size + 1,
                  session.value("resumed_trials", 0), to_string(res.best.configuration()), res.best.median_ms()));
  for (int rank : ev.members()) {
    const WorkerState& w = worker(rank);
    sink_.tuned(w, r.job, r.size, result);
    r.data.push_back(json{{"rank", w.rank},
                          {"host", w.host},
                          {"device", w.device->name},
                          {"fingerprint", w.device->fingerprint()},
                          {"measured", by_rank.value(std::to_string(rank), 0)},
                          {"result", result}});
  }
}

}  // namespace wstune::daemon

// One search over a group of workers with one device fingerprint (shared_search.hpp).
#include "master/shared_search.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "protocol/protocol.hpp"

namespace wstune::daemon {

namespace {
using clock_type = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kSlice{100};
// Results measured ahead and not yet asked for, per worker, at most.
constexpr std::size_t kAheadPerWorker = 4;
}  // namespace

SharedEvaluator::SharedEvaluator(SearchGroup group, TuneTarget target, SearchSpace space, TrialLog& log,
                                 const Searcher& searcher, const StopCondition& stop)
    : g_(std::move(group)),
      target_(std::move(target)),
      space_(std::move(space)),
      log_(log),
      searcher_(searcher),
      stop_(stop),
      members_(g_.ranks.begin(), g_.ranks.end()) {}

Trial SharedEvaluator::evaluate(const Configuration& config, const TimingOptions& timing) {
  const std::string key = config.key();
  for (;;) {
    if (auto it = done_.find(key); it != done_.end()) {
      Trial t = std::move(it->second);
      done_.erase(it);
      return t;
    }
    const bool out = std::any_of(out_.begin(), out_.end(), [&](const auto& o) { return o.second.config == config; });
    if (!out) {
      // What tune() waits for goes to the first worker that is free, before
      // anything measured ahead.
      if (auto rank = idle())
        send(*rank, config, timing);
      else
        pump(timing, false);
      continue;
    }
    fill(timing);
    pump(timing, true);
  }
}

void SharedEvaluator::phase(TrialPhase p) {
  if (p == TrialPhase::tiebreak) ahead_ = false;
}

void SharedEvaluator::drain() {
  ahead_ = false;
  const TimingOptions none;
  try {
    while (!out_.empty()) pump(none, false);
  } catch (const SearchAborted&) {
    // A stop, or the last worker gone: the search's answer stands; what was
    // still out is not stored.
  }
}

void SharedEvaluator::send(int rank, const Configuration& c, const TimingOptions& timing) {
  g_.comm->send(rank, TrialRequest{g_.job, c, timing}.to_message());
  out_[rank] = Out{c, clock_type::now()};
  sent_.insert(c.key());
}

std::optional<int> SharedEvaluator::idle() const {
  for (int r : g_.ranks)
    if (!out_.count(r)) return r;
  return std::nullopt;
}

// Idle workers take the configurations the searcher proposes next that were
// never sent and are not stored, while the stop condition allows more.
void SharedEvaluator::fill(const TimingOptions& timing) {
  // Ahead, but not far: a searcher whose announcements tune() does not
  // follow leaves results waiting here, and then nothing more is sent.
  if (!ahead_ || done_.size() >= kAheadPerWorker * g_.ranks.size()) return;
  while (auto rank = idle()) {
    const SearchProgress progress{static_cast<unsigned>(sent_.size()), static_cast<unsigned>(space_.size()),
                                  clock_type::now() - t0_};
    if (stop_.reached(progress)) return;
    std::optional<Configuration> next;
    for (std::size_t i : searcher_.upcoming(kAheadPerWorker * g_.ranks.size() + done_.size() + out_.size())) {
      Configuration c = space_.at(i);
      if (sent_.count(c.key()) || log_.stored(c)) continue;
      next = std::move(c);
      break;
    }
    if (!next) return;
    send(*rank, *next, timing);
  }
}

void SharedEvaluator::pump(const TimingOptions& timing, bool ahead) {
  if (g_.stopped && g_.stopped()) throw SearchAborted("stop requested");
  take_joiners();
  check_timeouts(timing);
  auto got = g_.comm->recv(kAnySource, kSlice);
  if (got && got->message.tag == Tag::bye) {
    const auto& body = got->message.body;
    drop(got->source, body.is_object() && body.contains("reason") ? "left (" + body.value("reason", std::string()) + ")"
                                                                  : std::string("left (sent bye)"));
    return;
  }
  if (got && preparing_.count(got->source)) return prepared(*got);
  if (!got || !out_.count(got->source)) return;
  const int src = got->source;
  const Configuration& c = out_.at(src).config;
  try {
    if (got->message.tag == Tag::trial_result) {
      TrialAnswer a = TrialAnswer::from(got->message);
      if (a.job == g_.job) arrived(src, std::move(a.trial));
    } else if (got->message.tag == Tag::worker_error) {
      const WorkerError e = WorkerError::from(got->message);
      if (e.job != g_.job) return;
      Trial t;  // a worker's failure on this configuration is the trial's outcome
      t.params = c.params;
      t.local = c.local;
      t.status = e.status;
      t.error = e.text;
      arrived(src, std::move(t));
    }
  } catch (const ProtocolError& e) {
    Trial t;
    t.params = c.params;
    t.local = c.local;
    t.status = TrialStatus::runtime;
    t.error = fmt::format("rank {} sent a bad answer: {}", src, e.what());
    arrived(src, std::move(t));
  }
  if (ahead) fill(timing);
}

void SharedEvaluator::arrived(int rank, Trial t) {
  const Configuration c = out_.at(rank).config;
  out_.erase(rank);
  t.params = c.params;
  t.local = c.local;
  const std::string key = c.key();
  // A configuration the session held before (resumed) came back from a
  // tie-break round: not a first measurement.
  if (!log_.stored(c) && measured_.insert(key).second) {
    log_.record(t);  // committed as it is measured
    ++by_rank_[rank];
  }
  done_[key] = std::move(t);
}

// A worker past the trial timeout (or a joiner past it in its
// preparation) is dropped; its configuration is sent again when tune() asks
// for it.
void SharedEvaluator::check_timeouts(const TimingOptions&) {
  const auto now = clock_type::now();
  std::vector<int> late;
  for (const auto& [rank, out] : out_)
    if (now - out.sent >= g_.trial_timeout) late.push_back(rank);
  for (const auto& [rank, since] : preparing_)
    if (now - since >= g_.trial_timeout) late.push_back(rank);
  for (int rank : late)
    drop(rank, fmt::format("did not answer a {} of job {} within {} s", out_.count(rank) ? "trial" : "preparation",
                           g_.job, g_.trial_timeout.count() / 1000.0));
  check_orphaned();
}

void SharedEvaluator::drop(int rank, const std::string& why) {
  const bool member = std::find(g_.ranks.begin(), g_.ranks.end(), rank) != g_.ranks.end() || preparing_.count(rank);
  if (!member) return;
  std::string what = why;
  if (auto it = out_.find(rank); it != out_.end()) {
    what += fmt::format("; its trial of {} goes to another worker", to_string(it->second.config));
    out_.erase(it);
  }
  preparing_.erase(rank);
  g_.ranks.erase(std::remove(g_.ranks.begin(), g_.ranks.end(), rank), g_.ranks.end());
  if (g_.dropped) g_.dropped(rank, what);
}

// No worker left (none preparing either): wait up to rejoin_timeout for a
// joiner, then abort with what was measured.
void SharedEvaluator::check_orphaned() {
  if (!g_.ranks.empty() || !preparing_.empty()) {
    orphaned_.reset();
    return;
  }
  const auto now = clock_type::now();
  if (!orphaned_) orphaned_ = now;
  if (now - *orphaned_ < g_.rejoin_timeout) return;
  throw SearchAborted(fmt::format(
      "no worker of this device group is left{}; {} of {} configurations measured, the rest not",
      g_.rejoin_timeout.count() > 0 ? fmt::format(" and none joined within {} s", g_.rejoin_timeout.count() / 1000.0)
                                    : std::string(),
      measured_.size(), space_.size()));
}

void SharedEvaluator::take_joiners() {
  if (!g_.joiners) return;
  for (int rank : g_.joiners()) {
    if (g_.adopt) g_.adopt(rank);
    g_.comm->send(rank, g_.prepare);
    preparing_[rank] = clock_type::now();
    members_.insert(rank);
  }
}

void SharedEvaluator::prepared(const Received& got) {
  const int rank = got.source;
  try {
    if (got.message.tag == Tag::tune_result && WorkResult::from(got.message).job == g_.job) {
      preparing_.erase(rank);
      g_.ranks.push_back(rank);  // takes work from the next assignment on
      return;
    }
    if (got.message.tag == Tag::worker_error && WorkerError::from(got.message).job == g_.job) {
      drop(rank, "could not prepare the job: " + WorkerError::from(got.message).text);
    }
  } catch (const ProtocolError& e) {
    drop(rank, fmt::format("sent a bad answer to its preparation: {}", e.what()));
  }
}

}  // namespace wstune::daemon

#include "session/tune_session.hpp"
#include "store/trial_rows.hpp"

#include "tuning_file/tuning_file.hpp"
#include "wstune/tuner.hpp"

namespace wstune {

KernelKey kernel_key(const KernelSpec& spec, std::string_view extra_build_options) {
  std::string options = "-cl-std=CL1.2";
  // The kernel's own options without parameter values (those belong to each
  // configuration): a described kernel's T1 CompilerOptions.
  if (const TuningFile* file = tuning_file_of(spec)) {
    for (const std::string& o : file->compiler_options) options += " " + o;
  } else if (const std::string own = spec.build_options(Problem{}); !own.empty()) {
    options += " " + own;
  }
  if (!extra_build_options.empty()) options += " " + std::string(extra_build_options);
  return KernelKey{std::string(spec.entry_point()), fnv1a_hex(spec.source()), options};
}

StoredTuneSession::StoredTuneSession(Store& store, const KernelSpec& spec, const TuneTarget& target,
                                     const SessionSpec& session, bool resume)
    : store_(store),
      session_(store.open_session(target.device, kernel_key(spec), ProblemKey{target.problem, target.size}, session,
                                  resume)),
      baseline_global_(target.global),
      problem_(target.problem) {
  if (session_.resumed) {
    for (auto& t : store_.trials(session_.id)) stored_.emplace(configuration_key(t.params, t.local), std::move(t));
  }
}

std::optional<Trial> StoredTuneSession::stored(const Configuration& c) {
  // Asked before every measurement: a sign of life for other processes
  // (every committed trial is one too), at most every few seconds.
  const auto now = std::chrono::steady_clock::now();
  if (now - last_beat_ > kBeatEvery) {
    store_.heartbeat(session_.id);
    last_beat_ = now;
  }
  auto it = stored_.find(c.key());
  if (it == stored_.end()) return std::nullopt;
  return from_record(it->second);
}

std::optional<Extent> StoredTuneSession::stored_global(const Trial& t) const {
  if (t.global) return t.global;
  if (baseline_global_ != problem_) return baseline_global_;
  return std::nullopt;
}

bool StoredTuneSession::record(const Trial& t) {
  TrialRecord r = to_record(t);
  r.global = stored_global(t);
  return store_.add_trial(session_.id, r);
}

void StoredTuneSession::attach(TuneOptions& options) {
  options.lookup = [this](const Configuration& c) { return stored(c); };
  auto user = std::move(options.on_trial);
  options.on_trial = [this, user = std::move(user)](const Trial& t, TrialPhase phase) {
    // Tie-break re-measurements of a configuration are not new rows: the
    // store keeps one trial per configuration and never overwrites it.
    if (phase != TrialPhase::tiebreak) record(t);
    if (user) user(t, phase);
  };
}

std::optional<BestConfig> StoredTuneSession::finish(const TuneResult& result) {
  // Taken over by another process (a heartbeat older than
  // kLiveHeartbeatSeconds seen from another host): its new writer finishes it.
  if (!store_.heartbeat(session_.id)) return std::nullopt;
  std::optional<BestConfig> best;
  if (result.best.ok() && result.best.kernel.size()) {
    // tune()'s answer, with the medians over all its trials (the confirmation
    // and tie rounds included), not the fastest first trial in the store.
    BestConfig b;
    b.device_fingerprint = session_.device_fingerprint;
    b.kernel = session_.kernel;
    b.problem = session_.problem;
    b.params = result.best.params;
    b.local = result.best.local;
    b.global = stored_global(result.best);
    b.median_ms = result.best.median_ms();
    if (result.baseline.ok() && result.baseline.kernel.size()) b.null_ms = result.baseline.median_ms();
    if (result.rule && result.rule->ok() && result.rule->kernel.size()) b.rule_ms = result.rule->median_ms();
    b.session_id = session_.id;
    b.id = store_.record_best(b);
    best = std::move(b);
  } else {
    const LocalSize rule = result.rule ? result.rule->local : LocalSize{};
    best = store_.derive_best(session_.id, rule ? &rule : nullptr);
  }
  store_.end_session(session_.id);
  return best;
}

}  // namespace wstune

#pragma once
/// @file tune_session.hpp
/// Binds one tune() run (search.hpp) to the SQLite store (store.hpp): every
/// trial is committed as soon as it is measured, configurations already
/// stored in an unfinished session of the same device, kernel, problem and
/// strategy are taken from the store instead of being measured again (so a
/// session killed at any point, SIGKILL included, resumes without measuring
/// a trial twice or losing one), and the best configuration is derived from
/// the stored trials when tune() ends.

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "kernel/kernel.hpp"
#include "search/search.hpp"
#include "wstune/store.hpp"

namespace wstune {

/// The store's identity of a kernel: its __kernel function name, the FNV-1a
/// hash of its source and its build options without parameter values
/// ("-cl-std=CL1.2", a described kernel's T1 CompilerOptions, plus
/// `extra_build_options` when given).
KernelKey kernel_key(const KernelSpec& spec, std::string_view extra_build_options = {});

/// One stored tuning session driven by tune().
class StoredTuneSession {
 public:
  /// Opens a session for `target` (device model, NDRange, size text) of
  /// `spec`; with `resume`, the newest unfinished session with the same
  /// device, kernel, problem and strategy is reused and its trials are
  /// loaded. Throws StoreError when the database refuses.
  StoredTuneSession(Store& store, const KernelSpec& spec, const TuneTarget& target, const SessionSpec& session,
                    bool resume = true);
  /// Installs TuneOptions::lookup (stored trials of this session; it also
  /// refreshes the session's heartbeat, at most every 5 s) and wraps
  /// TuneOptions::on_trial so each measured trial is committed first (the
  /// caller's callback still runs after). The session must outlive tune().
  void attach(TuneOptions& options);
  /// The stored trial of configuration `c` in this session, or std::nullopt
  /// (what attach()'s lookup answers; refreshes the heartbeat at most every 5 s).
  [[nodiscard]] std::optional<Trial> stored(const Configuration& c);
  /// Commits one measured trial at once (what attach()'s on_trial does for
  /// every phase but tiebreak); false when the session already has its
  /// configuration (the store keeps one trial per configuration). A trial
  /// without its own NDRange (Trial::global: it ran the baseline's, or failed
  /// before one was known) is stored with the baseline's where that differs
  /// from the session's problem extent (a described kernel whose GlobalSize
  /// is not its ProblemSize): a stored trial without one means the problem
  /// extent (docs/store.md), which such a kernel never launches.
  bool record(const Trial& t);
  /// Records tune()'s answer as the best configuration, with its ratios to
  /// NULL and to the paper's rule, all medians over every trial of the
  /// configuration (confirmation and tie rounds included; those extra trials
  /// are not stored as rows). If tune() has no correct answer, derives it
  /// from the stored trials. Marks the session finished. Records nothing
  /// and returns std::nullopt when another process has taken the session
  /// over (Store::heartbeat() false). Throws StoreError when the database
  /// refuses.
  std::optional<BestConfig> finish(const TuneResult& result);
  /// The session row (id, resumed flag, …).
  [[nodiscard]] const SessionRecord& session() const noexcept { return session_; }
  /// Trials found in the store when the session was opened (0 unless resumed).
  [[nodiscard]] std::size_t stored_at_start() const noexcept { return stored_.size(); }

 private:
  static constexpr std::chrono::seconds kBeatEvery{5};
  Store& store_;
  SessionRecord session_;
  // The NDRange stored with `t` (its own, else the baseline's where that is
  // not the problem extent; empty: the problem extent), for trials and the best.
  [[nodiscard]] std::optional<Extent> stored_global(const Trial& t) const;
  Extent baseline_global_;  // the NDRange of a trial without its own (TuneTarget::global)
  Extent problem_;          // the session's problem extent (TuneTarget::problem)
  std::chrono::steady_clock::time_point last_beat_ = std::chrono::steady_clock::now();
  std::map<std::string, TrialRecord> stored_;  // configuration key → stored trial
};

}  // namespace wstune

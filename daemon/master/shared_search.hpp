#pragma once
/// @file shared_search.hpp
/// One search over many devices: wstuned's master runs the library's tune()
/// (search.hpp) for a group of workers whose devices share a fingerprint,
/// with an Evaluator that hands each configuration to an idle worker of the
/// group over the protocol (Tag::trial) and, while it waits, keeps the other
/// workers busy with the configurations the searcher proposes next
/// (Searcher::upcoming). Every configuration is measured once, by one
/// worker; every first measurement is committed to the session the moment
/// it arrives (TrialLog), and configurations the session already holds are
/// never sent (a restarted master resumes without repeating a trial).
/// Strategies that announce nothing ahead (guided, the model-based ones)
/// still run on the group, one configuration at a time. docs/daemon.md
/// "Tune: one search per fingerprint". Elastic (issue 40): a worker that
/// leaves (its bye, a lost TCP connection) or stops answering is dropped and
/// its configuration in flight goes to another worker of the group; a worker
/// of the group's fingerprint that joins meanwhile is prepared (Tag::tune)
/// and takes work; with no worker left the search waits up to
/// SearchGroup::rejoin_timeout for one to join.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "evaluate/trial.hpp"
#include "search/search.hpp"
#include "transport/communicator.hpp"

namespace wstune::daemon {

/// Where one tune session's trials go (the master's store, or memory).
class TrialLog {
 public:
  virtual ~TrialLog() = default;
  /// The trial of `c` the session held before this search (resumed), or
  /// std::nullopt; never one recorded during it (tune() would count no
  /// evaluation for a trial measured ahead and never collect it).
  virtual std::optional<Trial> stored(const Configuration& c) = 0;
  /// Commits one first measurement now; false when the session has it.
  virtual bool record(const Trial& t) = 0;
  /// Records tune()'s answer as the best and ends the session; returns
  /// {"session": id, "resumed_trials": n, "best_id": row or null}.
  virtual nlohmann::json finish(const TuneResult& result) = 0;
};

/// A search aborted: a stop was requested, or no worker of the group is left.
class SearchAborted : public Error {
 public:
  using Error::Error;
};

/// The workers of one group and how to talk to them.
struct SearchGroup {
  Communicator* comm = nullptr;                      ///< the master's communicator
  std::uint64_t job = 0;                             ///< job id (trials and answers carry it)
  std::vector<int> ranks;                            ///< the group's prepared workers
  std::chrono::milliseconds trial_timeout{600'000};  ///< a trial's answer must come within this
  std::function<bool()> stopped;                     ///< a stop was requested (may be empty)
  /// A worker did not answer within trial_timeout, or left: the master drops it (rank, why).
  std::function<void(int, const std::string&)> dropped;
  /// Workers of the group's fingerprint that joined since it was last asked
  /// (may be empty: nobody joins).
  std::function<std::vector<int>()> joiners;
  /// Called for each joiner before anything is sent to it (a router
  /// channel adopts its rank); may be empty.
  std::function<void(int)> adopt;
  /// The Tag::tune request that prepares a joiner (the one the group got).
  Message prepare;
  /// With no worker left, wait this long for one to join before aborting.
  std::chrono::milliseconds rejoin_timeout{0};
};

/// tune()'s Evaluator on the master for one group (see the file comment).
class SharedEvaluator final : public Evaluator {
 public:
  /// `log`, `searcher` and `stop` must outlive the evaluator; `searcher` is
  /// the one tune() drives (its upcoming() is read, never advanced).
  SharedEvaluator(SearchGroup group, TuneTarget target, SearchSpace space, TrialLog& log, const Searcher& searcher,
                  const StopCondition& stop);
  const TuneTarget& target() const override { return target_; }
  const SearchSpace& space() const override { return space_; }
  /// The trial of `config`: taken from what a worker already measured ahead,
  /// else sent to the first idle worker. Throws SearchAborted.
  Trial evaluate(const Configuration& config, const TimingOptions& timing) override;
  /// tune()'s on_trial: after the first tie-break trial nothing more is
  /// measured ahead.
  void phase(TrialPhase p);
  /// Waits for the trials still out (measured ahead past the search's end)
  /// and commits them, so none is lost; gives up on a stop request or when
  /// no worker is left (never throws).
  void drain();
  /// First measurements per rank (tie-break trials not counted).
  [[nodiscard]] const std::map<int, unsigned>& measured_by() const noexcept { return by_rank_; }
  /// Configurations measured ahead that tune() never asked for (committed).
  [[nodiscard]] std::size_t unused_ahead() const noexcept { return done_.size(); }
  /// Every worker that took part: the group's first ones and those that joined, rank order.
  [[nodiscard]] std::vector<int> members() const { return {members_.begin(), members_.end()}; }

 private:
  struct Out {
    Configuration config;
    std::chrono::steady_clock::time_point sent;
  };
  void send(int rank, const Configuration& c, const TimingOptions& timing);
  std::optional<int> idle() const;
  void fill(const TimingOptions& timing);
  // Receives one answer (or waits a slice); with `ahead`, then gives idle
  // workers configurations to measure ahead.
  void pump(const TimingOptions& timing, bool ahead);
  void arrived(int rank, Trial t);
  void check_timeouts(const TimingOptions& timing);
  void take_joiners();
  // A message from a joiner being prepared: ready (tune_result) or not.
  void prepared(const Received& got);
  // `rank` left or stopped answering: out of the group; what it had in
  // flight is sent again when tune() asks for it.
  void drop(int rank, const std::string& why);
  void check_orphaned();
  SearchGroup g_;
  TuneTarget target_;
  SearchSpace space_;
  TrialLog& log_;
  const Searcher& searcher_;
  const StopCondition& stop_;
  const std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
  bool ahead_ = true;                  // measure upcoming configurations ahead
  std::map<int, Out> out_;             // rank → its configuration in flight
  std::map<std::string, Trial> done_;  // arrived, not yet asked for by tune()
  std::set<std::string> sent_;         // every configuration ever sent (never sent twice ahead)
  std::set<std::string> measured_;     // first measurements received
  std::map<int, unsigned> by_rank_;
  std::set<int> members_;                                           // took part
  std::map<int, std::chrono::steady_clock::time_point> preparing_;  // joiners sent Tag::tune
  std::optional<std::chrono::steady_clock::time_point> orphaned_;   // since when no worker is left
};

}  // namespace wstune::daemon

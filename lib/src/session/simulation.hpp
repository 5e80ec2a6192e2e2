#pragma once
/// @file simulation.hpp
/// Simulation mode: a recorded exhaustive table (every configuration of one
/// kernel, problem and device, measured once) replayed instead of running
/// kernels, so that strategies can be compared over many seeds in seconds
/// (after Kernel Tuner's simulation mode and KTT's simulated tuning).
/// Tables come from a store session (store.hpp), a `wstune export` file or
/// a T4 results file (TuningSchema T4 1.0.0, Kernel Tuner's
/// `kernel_tuner/schema/T4/1.0.0/results-schema.json`). A table also
/// defines its own search space: the parameters and values as recorded,
/// every recorded configuration and no other. See docs/tuning.md.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "evaluate/trial.hpp"
#include "space/search_space.hpp"
#include "wstune/configuration.hpp"
#include "wstune/store.hpp"

namespace wstune {

/// One recorded exhaustive table.
struct RecordedTable {
  std::string source;  ///< where it was read from (a file name, or "store session N"), for messages
  /// What was tuned, as far as the source tells: kernel name, size text, the
  /// NDRange (Extent{1} when unknown), the device model and limits (empty
  /// for a T4 file), the kernel's priority for wstune's own kernels.
  TuneTarget target;
  /// The tuning parameters, each with the values recorded (numbers
  /// ascending, other values in first-seen order); empty when the
  /// configurations are local sizes only.
  std::vector<TuningParameter> parameters;
  /// One trial per configuration, in recorded order; the first is the
  /// baseline (tune() measures the baseline first, so a wstune session's
  /// first trial is its baseline; a T4 file's first result is taken as it).
  std::vector<Trial> trials;
  /// Index of the fastest correct median in `trials`; nullopt when none is correct.
  [[nodiscard]] std::optional<std::size_t> best() const;
};

/// The table of store session `session_id`: its trials (samples, status,
/// error), kernel, problem and device. Throws UsageError when the session
/// does not exist or has no trial, StoreError on a database failure.
RecordedTable table_from_store(const Store& store, std::int64_t session_id);

/// The table of one session of a `wstune export` document (docs/store.md),
/// validated as `wstune import` validates it (an error names the JSON path,
/// e.g. `sessions[0].trials[3] has no field 'samples_ms'`). `session` picks
/// the session by uuid; empty picks the only one. Throws UsageError naming
/// `source` when the document is malformed, the uuid is absent, or the
/// document holds several sessions and none was picked (listing them).
RecordedTable table_from_export(const nlohmann::json& doc, const std::string& source, std::string_view session = {});

/// The table of a T4 results document: `results[i].configuration` (an object
/// of parameter name → number, bool or string: every key is a tuning
/// parameter, except a string "local_size" ("32x8", "null"), the local size
/// as `wstune export --format t4` writes it, t4.hpp), `times.runtimes` (ms unless
/// `metadata.timeunit` says "seconds"/"s" or "microseconds"/"us"; a correct
/// result without runtimes takes its `measurements` entry named "time"),
/// and `invalidity` ("correct", "compile", "runtime", "constraints",
/// "correctness" or "timeout"). Throws UsageError naming `source` and the
/// JSON path (e.g. `results[3].times.runtimes[0] is not a number`) when
/// malformed, when two results have the same configuration, or when
/// configurations have different parameter names.
RecordedTable table_from_t4(const nlohmann::json& doc, const std::string& source);

/// Reads a table file: a `wstune export` document (it has "format":
/// "wstune-store-export") or a T4 results document (it has "results").
/// `session` as in table_from_export(). Throws UsageError naming the file
/// when it cannot be read, is not JSON, or is neither format.
RecordedTable load_table(const std::string& path, std::string_view session = {});

/// The search space of a table alone: its parameters with their recorded
/// values, every recorded configuration except the first (the baseline),
/// and no other (a combination never recorded is left out, as a constraint
/// would). Without parameters, the recorded local sizes in recorded order,
/// with the paper's rule (rules.hpp) when the table knows the NDRange and
/// the device. Throws UsageError when the table has no trial.
SearchSpace table_space(const RecordedTable& table);

/// The table as a Kernel Tuner cache file (kernel_tuner/util.py
/// process_cache, read by its simulation mode): device_name, kernel_name,
/// problem_size, tune_params_keys and tune_params (the parameters, then
/// block_size_x/y/z for the local size, with 0 in every dimension standing
/// for NULL), objective "time", and "cache": one entry per configuration,
/// keyed by its values joined with "," in tune_params_keys order (Python's
/// str(): True/False for bools), holding the values, "time" (the median,
/// ms; the failure class name "CompilationFailedConfig",
/// "RuntimeFailedConfig" or "InvalidConfig" when it failed), "times" (the
/// samples) and zero compile, verification and benchmark times. The keys
/// keep that order ("cache" last), as Kernel Tuner's reader expects.
nlohmann::ordered_json kernel_tuner_cache(const RecordedTable& table);

/// A generated landscape with constraints, for tests and benchmarks of the
/// strategies when no recorded table is at hand.
struct SyntheticSpec {
  std::size_t parameters = 5;  ///< tuning parameters P0, P1, … (at least 2)
  std::size_t values = 7;      ///< values per parameter: 1, 2, 4, … (powers of two)
  /// Amplitude of the per-configuration term of ln(time) (uniform in ±this):
  /// 0 is a smooth landscape, 0.1 varies neighbours by up to ±10 %.
  double ruggedness = 0.1;
  unsigned basins = 3;     ///< local minima; the first is the deepest
  double failures = 0.02;  ///< fraction of configurations that fail (status runtime)
  std::uint64_t seed = 1;  ///< the landscape's seed
};

/// A table of every configuration of a synthetic kernel (kernel "synthetic",
/// size text "P{parameters}V{values}R{ruggedness}S{seed}"): parameters P0…
/// with values 1, 2, 4, …, and the constraint index(P0) + index(P1) <
/// values (as a tile's width × height bound), so about 55 % of the grid
/// (e.g. 9,604 configurations of 5 parameters × 7 values, 2,304 of 4 × 8).
/// ln(time) is the smallest over the basins of (depth + a weighted squared
/// distance in value indices, with one interaction term), plus the rugged
/// term; each trial has 5 samples within ±1 % of its median. The first
/// configuration (every parameter at its middle value) is the baseline.
/// Throws UsageError for fewer than 2 parameters or values.
RecordedTable synthetic_table(const SyntheticSpec& spec);

/// An Evaluator that replays a table: evaluate() returns the recorded trial
/// of the configuration (its samples, status and error; the timing options
/// are ignored, so a re-measurement merges the same samples and every
/// median stays the recorded one). A configuration missing from the table
/// is a TrialStatus::constraints trial ("not in the recorded table"): it
/// was never run, as Kernel Tuner's simulation treats a configuration
/// outside its cache as invalid.
class SimulatedEvaluator final : public Evaluator {
 public:
  /// Replays `table` over table_space(table). Throws UsageError as table_space().
  explicit SimulatedEvaluator(RecordedTable table);
  /// Replays `table` over `space` (e.g. a kernel's own space, to check a
  /// strategy against a table recorded for it).
  SimulatedEvaluator(RecordedTable table, SearchSpace space);
  const TuneTarget& target() const override;
  const SearchSpace& space() const override;
  Trial evaluate(const Configuration& config, const TimingOptions& timing) override;
  /// The table being replayed.
  [[nodiscard]] const RecordedTable& table() const noexcept { return table_; }
  /// How many times evaluate() ran.
  [[nodiscard]] std::size_t calls() const noexcept { return calls_; }

 private:
  RecordedTable table_;
  SearchSpace space_;
  std::unordered_map<std::string, std::size_t> index_;  // configuration key -> trial
  std::size_t calls_ = 0;
};

}  // namespace wstune

#pragma once
/// @file jobs.hpp
/// wstuned's jobs: what to run (kernel, size, repetitions, split model,
/// local-size policy), from command-line options or a JSON job file whose
/// format is documented in docs/daemon.md (example: share/examples/jobs.json).

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/protocol.hpp"
#include "session/tune_request.hpp"
#include "split/split.hpp"

namespace wstune::daemon {

/// What the daemon does with its jobs.
enum class Mode {
  run,       ///< split each job over the workers, run, gather, verify, store
  tune,      ///< every worker searches local sizes for each job on its device; the master stores every trial
  calibrate  ///< every worker measures what the `measured` split model needs; the master stores it
};
/// "run", "tune", "calibrate".
std::string_view to_string(Mode m) noexcept;
/// Inverse of to_string(Mode); throws UsageError naming the choices.
Mode parse_mode(std::string_view text);

/// A job's split model by its name (parse_split_model()); throws UsageError
/// "unknown split model 'TEXT': use even, proportional, pe-ratio or
/// measured".
SplitModel parse_job_split(std::string_view text);

/// One job.
struct Job {
  std::string kernel;                   ///< kernel name (matmul, bilinear, sort, trapezoid)
  std::string size;                     ///< size text; "" = the paper's Table 3 size
  unsigned repetitions = 3;             ///< timed kernel runs per worker (the paper: 10 / 10000)
  unsigned warmup = 0;                  ///< untimed runs before them (inside the makespan)
  SplitModel split = SplitModel::even;  ///< split model: even, proportional, pe-ratio, measured
  SplitDirection direction =
      SplitDirection::auto_;              ///< split direction (split_dimension(): auto follows the kernel's priority)
  LocalPolicy local = LocalPolicy::null;  ///< local-size policy
  std::uint64_t seed = 42;                ///< input seed
  unsigned max_trials = 0;                ///< tune: search budget per worker (0 = the search's default)
  /// calibrate: cap (ms) on one calibration slice's time (CalibrationBudget; 0 = no cap)
  double calibrate_budget_ms = 250;
  /// run: each worker runs its block as up to this many chunks over two
  /// command queues, so transfers overlap kernels (RunBlock::overlap;
  /// 1 = whole blocks; 2, as `wstune split --run --overlap`)
  unsigned overlap = 2;
  /// run: how block results reach the master: "auto" (a worker on the
  /// master's host leaves them in the master's memory, result_memory.hpp;
  /// others send them as MPI messages) or "message" (every worker sends
  /// them as messages, e.g. to compare the two).
  std::string results = "auto";
  /// A T1 tuning file describing the kernel ("" for a built-in kernel);
  /// `kernel` is then the file's KernelName, `size` binds its sizes as the
  /// CLI's --size does ("N=4096", "ProblemSize[0]=512", ...).
  std::string kernel_file;
  /// run and calibrate with a kernel file: tuning parameter values
  /// {NAME: value} over the file's reference configuration ({} = the reference).
  nlohmann::json config = nlohmann::json::object();
  /// tune: search a device even when the store has its best for this
  /// kernel and size (otherwise such a device is skipped).
  bool retune = false;
  /// tune: search strategy (make_searcher()); "" = the file's Search, else
  /// auto (resolve_tune(), as `wstune tune`).
  std::string strategy;
  /// tune: what decides the best, as `wstune tune --objectives`
  /// ("GFLOP/s:max", "time,GFLOP/s:max", "energy", "time,energy";
  /// metric/metric.hpp); "" = time. A worker whose device has no energy
  /// sensor leaves the time to decide where the first needs energy (the
  /// result's objective_note says why).
  std::string objectives = {};
  /// tune: when the workers observe each trial's energy, as `wstune tune
  /// --energy`: "auto" (when an objective needs it), "on" (always, where a
  /// sensor is) or "off".
  std::string energy = "auto";
};

/// A job's "energy" (`--energy`): "auto", "on" or "off" as given; throws
/// UsageError "WHAT 'TEXT': use auto (...), on (...) or off".
std::string parse_energy_mode(const std::string& text, std::string_view what);

/// What `job` asks of a search, for resolve_tune() (tune_request.hpp): its
/// size, strategy, seed (input and search), objectives and max_trials as the evaluation
/// budget; no time limit of its own (a tuning file's TuningDuration applies).
TuneRequest tune_request(const Job& job);

/// {"kernel":..,"size":..,"repetitions":..,"warmup":..,"split":..,"direction":..,"local":..,"seed":..,"max_trials":..,
/// "calibrate_budget_ms":..,"overlap":..,"kernel_file":..,"config":{..},"retune":..,"strategy":..}, and
/// "results" and "energy" when not "auto" and "objectives" when not "" (so a job list's run_key() is the one it had
/// before these keys existed)
nlohmann::json to_json(const Job& j);

/// Reads one job object over `defaults`. Unknown keys and bad values throw
/// UsageError naming `where` (e.g. "jobs.json: job 3") and the key.
Job job_from_json(const nlohmann::json& j, const Job& defaults, const std::string& where);

/// Parses a job document: {"defaults": {...}, "jobs": [{...}, ...]} or a bare
/// array of jobs. "kernel": "all" expands to the four kernels. Validates
/// kernel names and sizes (KernelSpec::parse_size). Throws UsageError naming
/// `origin`.
std::vector<Job> parse_jobs(const nlohmann::json& doc, const Job& defaults, const std::string& origin);

/// Reads and parses a job file; throws UsageError when it cannot be read or
/// is not valid JSON (with the parser's position). A relative kernel_file
/// is taken from the job file's directory.
std::vector<Job> read_job_file(const std::string& path, const Job& defaults);

/// Expands `kernels` ("all" or names) into jobs of size `size` over `defaults`.
std::vector<Job> jobs_from_options(const std::vector<std::string>& kernels, const std::string& size,
                                   const Job& defaults);

/// One job of the kernel described by the tuning file `path` (`size`
/// binds its sizes; `config` is a JSON object of tuning parameter values, or
/// "") over `defaults`. Throws UsageError naming the option.
std::vector<Job> jobs_from_kernel_file(const std::string& path, const std::string& size, const std::string& config,
                                       const Job& defaults);

}  // namespace wstune::daemon

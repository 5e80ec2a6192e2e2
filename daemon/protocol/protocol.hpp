#pragma once
/// @file protocol.hpp
/// wstuned's wire protocol: typed messages with a tag enum, a JSON body and
/// float buffers (block inputs and outputs), encoded into one byte string per
/// message. The protocol version is checked at registration (Tag::hello).
/// Source: paper §3.1.1 (master/slave over MPI: Node0 sends slices, gathers
/// results); typed tags after Pegasus MPI Cluster.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "evaluate/trial.hpp"
#include "kernel/kernel.hpp"
#include "runner/runner.hpp"
#include "transport/result_memory.hpp"
#include "wstune/device.hpp"
#include "wstune/error.hpp"
#include "wstune/types.hpp"

namespace wstune::daemon {

/// The protocol version. A worker whose hello carries another version is
/// refused (Tag::welcome with accepted = false) and never gets work.
/// 3: a trial and its request in their one JSON forms (format/trial_json.hpp,
/// format/target_json.hpp; issue 35).
/// 4: a worker's tune_result carries the reference it took
/// ("reference_params", "rejected_references"; issue 36) and no longer
/// "space_size" (the master builds the one search space; issue 37).
/// 5: a welcome names the worker's rank ("rank"; a worker connected over TCP
/// learns it so), and a bye that is not the answer to a shutdown says why
/// the worker leaves ("reason": a drained worker's, or "lost: ..." made by
/// the master's TcpHub for a connection that ended; issue 40).
/// 6: a block_result carries the joules its device's energy sensor counted
/// while the worker worked on the block ("joules", "energy_sensor"), or why
/// none ("energy_note"); a tune request says whether its trials observe
/// energy ("energy"), and the tune_result names the sensor or why none
/// ("energy_sensor", "energy_note"; issue 38); a block_result also carries
/// the worker's receipt on its monotonic clock and the block's timeline
/// ("clock_ms", "timeline"), and a run_block the inputs the master sends
/// and whether to keep inputs resident ("inputs", "resident"; issue 41).
inline constexpr int kProtocolVersion = 6;

/// Message kinds. The numbers are the MPI tags; never renumber.
enum class Tag : int {
  hello = 1,             ///< worker → master: registration (version, host, device model or error)
  welcome = 2,           ///< master → worker: accepted or refused (with the reason)
  run_block = 3,         ///< master → worker: run one block; buffers = block inputs
  block_result = 4,      ///< worker → master: times and local size; buffers = {block output}
  worker_error = 5,      ///< worker → master: a job failed on the worker (status class and text)
  tune = 6,              ///< master → worker: prepare to measure a job's configurations (build, inputs, reference)
  tune_result = 7,       ///< worker → master: ready: the built kernel's limits (or worker_error)
  calibrate = 8,         ///< master → worker: measure what the `measured` split model needs
  calibrate_result = 9,  ///< worker → master: the measurements
  shutdown = 10,         ///< master → worker: finish and exit
  bye = 11,              ///< worker → master: acknowledged shutdown
  trial = 12,            ///< master → worker: measure one configuration of the prepared job
  trial_result = 13      ///< worker → master: that trial (failures as data)
};

/// "hello", "welcome", ... ; "tag-N" for an unknown number.
std::string to_string(Tag t);
/// True when `value` is one of Tag's numbers.
bool is_known_tag(int value) noexcept;

/// Malformed bytes or a body that lacks a field: a protocol error.
class ProtocolError : public Error {
 public:
  using Error::Error;
};

/// One message: a tag, a JSON body (an object) and typed bulk buffers.
struct Message {
  Tag tag = Tag::hello;                            ///< what it is
  nlohmann::json body = nlohmann::json::object();  ///< typed payload, see the structs below
  std::vector<HostBuffer> buffers;                 ///< bulk data (never inside the JSON)
};

/// Encodes a message: u32 body length, the body in CBOR, u32 buffer count,
/// then per buffer its shape (u8 ScalarType, u8 vector width, u64 element
/// count) and its bytes (host byte order; the nodes of one job share a byte
/// order). The tag travels beside the bytes.
std::vector<std::uint8_t> encode(const Message& m);
/// Inverse of encode(). Throws ProtocolError naming what is wrong.
Message decode(Tag tag, std::span<const std::uint8_t> bytes);
/// The header of a message whose buffers travel separately (MpiCommunicator
/// sends each buffer as its own MPI messages, straight from its memory): as
/// encode(), but each buffer is only its shape, no bytes.
std::vector<std::uint8_t> encode_header(const Message& m);
/// One buffer's element type and element count, as a header announces it.
struct BufferShape {
  ElementType type;         ///< element type
  std::uint64_t count = 0;  ///< elements
};
/// Inverse of encode_header(): the message with no buffers, and the shape of
/// each buffer that follows. Throws ProtocolError naming what is wrong.
std::pair<Message, std::vector<BufferShape>> decode_header(Tag tag, std::span<const std::uint8_t> bytes);

/// The local-size policy of a job: stored (the database's best for the
/// device, else the rule), tune (measured search on the worker first), rule
/// (paper §3.2.3), null (driver default).
enum class LocalPolicy { stored, tune, rule, null };
/// "stored", "tune", "rule", "null".
std::string_view to_string(LocalPolicy p) noexcept;
/// Inverse of to_string(LocalPolicy); throws UsageError naming the choices.
LocalPolicy parse_local_policy(std::string_view text);

/// Tag::hello.
struct Hello {
  int protocol = kProtocolVersion;   ///< the worker's protocol version
  int rank = 0;                      ///< the worker's rank
  std::string host;                  ///< the worker's host name
  std::string selector;              ///< the device selector it used
  std::optional<DeviceInfo> device;  ///< its device model; empty when it has none
  std::string error;                 ///< why there is no device (empty otherwise)
  [[nodiscard]] Message to_message() const;
  static Hello from(const Message& m);
};

/// Tag::welcome.
struct Welcome {
  bool accepted = true;  ///< false: the worker must exit
  std::string reason;    ///< why it was refused
  int rank = 0;          ///< the worker's rank (0 or absent: not said)
  [[nodiscard]] Message to_message() const;
  static Welcome from(const Message& m);
};

/// One input of a run_block whose inputs the master sends (the job key
/// `inputs: "master"`): the problem's input `index` (KernelSpec::generate_inputs
/// order), `whole` elements of `type`, of which the message's buffer
/// `buffer` holds those from element `offset` on; no buffer: the worker holds
/// this input whole from an earlier job of the same problem and seed (an
/// input every block needs whole, such as matmul's B, is sent once).
struct SentInput {
  std::size_t index = 0;              ///< the problem's input (KernelSpec::generate_inputs order)
  std::string type;                   ///< its element type's name (ElementType)
  std::size_t whole = 0;              ///< the whole input's elements
  std::size_t offset = 0;             ///< the first element the buffer holds
  std::optional<std::size_t> buffer;  ///< the message's buffer holding it; none: held from an earlier job
};

/// Tag::run_block. Without sent_inputs (no buffers) the worker generates
/// the problem's inputs from `seed` (KernelSpec::generate_inputs, as the
/// master and the CLI do) and takes its block's (KernelSpec::block_inputs);
/// with them (`inputs: "master"`) the message's buffers carry them.
struct RunBlock {
  std::uint64_t job = 0;                             ///< job id (master-wide)
  unsigned attempt = 0;                              ///< re-split attempt; stale answers are dropped
  std::string kernel;                                ///< kernel name
  std::string size;                                  ///< problem size text (Problem::text)
  Block block;                                       ///< the block to run
  LocalPolicy policy = LocalPolicy::null;            ///< how the worker picks the local size
  LocalSize local;                                   ///< the explicit local size (policy stored, when found)
  unsigned warmup = 0;                               ///< untimed runs first
  unsigned repetitions = 1;                          ///< timed runs
  std::uint64_t seed = 42;                           ///< input seed
  nlohmann::json params = nlohmann::json::object();  ///< tuning parameter values (kernel files; {} = reference)
  nlohmann::json kernel_file;  ///< pack_tuning_file() of a kernel file; null for a built-in kernel
  /// Chunks the worker may run the block as (DeviceRunner::run_overlapped;
  /// the job key `overlap`); 1 = whole. Absent on the wire (an older
  /// master) = 1.
  unsigned overlap = 1;
  /// Where a worker on the master's host leaves the block's outputs
  /// (result_memory.hpp); absent (and on the wire from an older master):
  /// they travel in the block_result.
  std::optional<ResultSlot> result_slot;
  /// The inputs the master sent (one entry per problem input; the job key
  /// `inputs: "master"`); empty (absent on the wire): the worker generates
  /// them from the seed.
  std::vector<SentInput> sent_inputs;
  /// Keep the block's inputs on the device across the jobs that repeat them
  /// (DeviceRunner::upload()'s resident id; the job key `inputs:
  /// "resident"`); absent = upload every job.
  bool resident = false;
  [[nodiscard]] Message to_message(std::vector<HostBuffer> inputs = {}) const;
  static RunBlock from(const Message& m);
};

/// Tag::block_result. The block's outputs (KernelSpec::outputs()), or for a
/// block run as chunks each chunk's outputs in chunk order (the master
/// places each chunk as a block of its own): those left in the master's
/// result slot are listed in `shared` by their position, the others are the
/// message's buffers in order. Times in ms.
struct BlockResult {
  std::uint64_t job = 0;     ///< job id
  unsigned attempt = 0;      ///< attempt it answers
  Block block;               ///< the block it ran
  LocalSize local;           ///< the local size it ran with
  std::string local_source;  ///< "null", "rule", "stored", "tune", or "null (fallback: …)"
  Samples kernel;            ///< kernel time per repetition (profiling events)
  Samples h2d;               ///< host→device upload (profiling events)
  Samples d2h;               ///< device→host read-back (profiling events)
  double recv_ms = 0;        ///< time the worker spent receiving the input message
  double h2d_wall_ms = 0;    ///< wall clock of the upload, host staging included (ms)
  double d2h_wall_ms = 0;    ///< wall clock of the read-back, host staging included (ms)
  double build_ms = 0;       ///< a new runner's set-up and every program built for this block (0 when cached)
  double busy_ms = 0;        ///< worker wall clock from receipt to reply
  double inputs_ms = 0;      ///< the worker's input generation (0 when cached), inside busy_ms
  nlohmann::json trials = nlohmann::json::array();  ///< tune-policy trials (else empty)
  /// The consecutive sub-blocks the block ran as (overlapped); empty = whole.
  /// Absent on the wire (an older worker) = whole.
  std::vector<Block> chunks;
  /// An overlapped block: wall clock of its upload, runs and read-back
  /// together (they overlap, so kernel + h2d + d2h exceed it), program
  /// builds excluded; 0 for a whole block.
  double overlap_wall_ms = 0;
  /// Outputs left in the run_block's result slot (absent on the wire = none).
  std::vector<SharedOutput> shared;
  /// Why a result slot offered was not used ("" when used or none offered).
  std::string shared_error;
  /// The joules the device's energy sensor counted from the run_block's
  /// receipt to this reply (busy_ms: input generation, upload, warm-up and
  /// timed runs, read-back); none without a sensor (energy_note says why).
  std::optional<double> joules;
  std::string energy_sensor;  ///< "nvml", "rapl", ... ("" without joules)
  /// Why no joules ("" with them); absent on the wire (an older worker):
  /// "the worker does not measure energy (protocol < 6)".
  std::string energy_note;
  /// The worker's receipt of the run_block on its monotonic clock
  /// (steady_clock, ms since its epoch; one clock for every process of a
  /// host); 0 (absent) = unknown.
  double clock_ms = 0;
  /// Its timeline of the block: [{"what","chunk","start_ms","end_ms"}] in ms
  /// from its receipt of the run_block (receive, build, inputs, then each
  /// upload, kernel run and download, RunResult::spans); absent = [].
  nlohmann::json timeline = nlohmann::json::array();
  [[nodiscard]] Message to_message(std::vector<HostBuffer> outputs) const;
  static BlockResult from(const Message& m);
};

/// Tag::worker_error.
struct WorkerError {
  std::uint64_t job = 0;                      ///< job id (0 outside a job)
  unsigned attempt = 0;                       ///< attempt it answers
  TrialStatus status = TrialStatus::runtime;  ///< the failure class
  std::string text;                           ///< what failed
  [[nodiscard]] Message to_message() const;
  static WorkerError from(const Message& m);
};

/// Tag::tune and Tag::calibrate: a kernel and size to prepare (tune: build,
/// generate the inputs from `seed`, compute the reference, answer the
/// kernel's limits) or to measure (calibrate).
struct WorkRequest {
  std::uint64_t job = 0;                             ///< job id
  std::string kernel;                                ///< kernel name
  std::string size;                                  ///< problem size text
  unsigned repetitions = 3;                          ///< timed runs per trial
  unsigned max_trials = 0;                           ///< search budget (0: the search's default)
  double calibrate_budget_ms = 0;                    ///< calibrate: per-slice cap in ms (0 or absent: no cap)
  std::uint64_t seed = 42;                           ///< input seed
  nlohmann::json params = nlohmann::json::object();  ///< calibrate: tuning parameter values ({} = reference)
  nlohmann::json kernel_file;  ///< pack_tuning_file() of a kernel file; null for a built-in kernel
  /// tune: observe each configuration's first correct trial's energy
  /// (Trial::energy; the master decides as `wstune tune --energy` does,
  /// energy_for_objectives()); absent on the wire = false.
  bool energy = false;
  [[nodiscard]] Message to_message(Tag tag) const;
  static WorkRequest from(const Message& m);
};

/// Tag::trial: one configuration of the job the worker prepared (Tag::tune),
/// its timing under "timing" in TimingOptions' one JSON form
/// (format/target_json.hpp); from() throws ProtocolError naming a malformed field.
struct TrialRequest {
  std::uint64_t job = 0;  ///< job id
  Configuration config;   ///< parameters and local size
  TimingOptions timing;   ///< warm-up, repetitions (adaptive fields too)
  [[nodiscard]] Message to_message() const;
  static TrialRequest from(const Message& m);
};

/// Tag::trial_result: the trial (failures as data, Trial::status) in its
/// one JSON form (format/trial_json.hpp) under "trial"; from() throws
/// ProtocolError naming the malformed field.
struct TrialAnswer {
  std::uint64_t job = 0;  ///< job id
  Trial trial;            ///< the measurement
  [[nodiscard]] Message to_message() const;
  static TrialAnswer from(const Message& m);
};

/// Tag::tune_result and Tag::calibrate_result: a JSON document (trials or
/// measurements, see docs/daemon.md).
struct WorkResult {
  std::uint64_t job = 0;                           ///< job id
  nlohmann::json data = nlohmann::json::object();  ///< payload
  [[nodiscard]] Message to_message(Tag tag) const;
  static WorkResult from(const Message& m);
};

/// {"dim":..,"begin":..,"end":..}
nlohmann::json to_json(const Block& b);
/// Inverse of to_json(Block).
Block block_from_json(const nlohmann::json& j);

}  // namespace wstune::daemon

#pragma once
/// @file timeline.hpp
/// A run job's timeline (wstuned --timeline FILE): for each worker its
/// waits, receive, build, input generation, every upload, kernel run and
/// download (RunResult::spans) and the master's receive of its result, and
/// the master's sends, all on one clock: the master's monotonic clock in ms
/// from the job's first send (the makespan's start). A worker's spans are
/// its own offsets from its receipt of the run_block, placed at that
/// receipt: read on the shared clock when the worker runs on the master's
/// host (steady_clock is one clock for every process of a host: "shared"),
/// else estimated as the result's arrival less the master's receive of it
/// and the worker's busy time ("estimated": the reply is taken as
/// immediate). Format in docs/daemon.md ("Timeline").

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/protocol.hpp"

namespace wstune::daemon {

/// What the master knows of one worker's part for the timeline (ms on the
/// master's clock from the job's first send, unless said otherwise).
struct PartClock {
  int rank = 0;
  std::string device;
  double sent_ms = 0;       ///< the master began sending its run_block
  double sent_end_ms = 0;   ///< that send returned
  double answer_ms = 0;     ///< its result arrived (received whole)
  double return_ms = 0;     ///< the master's receive of that result
  bool same_host = false;   ///< it runs on the master's host (the shared clock)
  double master_t0_ms = 0;  ///< the job's first send on the master's steady clock (ms since its epoch)
};

/// One worker's timeline: {"rank","device","clock":"shared"|"estimated",
/// "start_ms" (its receipt), "answer_ms", "spans":[{"what","chunk",
/// "start_ms","end_ms"}]} with the spans wait_message (from the job's
/// start to its receive), receive, build, inputs, upload, kernel, download
/// (per chunk; chunk -1: the whole block or a shared input), reply (from
/// its reply to the master's receive) and return (that receive), in time
/// order of their start.
nlohmann::json part_timeline(const PartClock& c, const BlockResult& br);

/// The critical path of a job's worker timelines (part_timeline()s): the
/// worker whose result arrived last, and what it spent its time on:
/// {"rank","device","answer_ms","wait_message_ms","receive_ms","build_ms",
/// "inputs_ms","upload_ms","kernel_ms","download_ms" (each the spans'
/// added lengths), "before_kernel_ms" (its receipt to its first kernel's
/// start), "exposed_upload_ms" (upload time before that start),
/// "kernel_span_ms" (first kernel start to last kernel end),
/// "after_kernel_ms" (its last kernel's end to its result's arrival),
/// "exposed_download_ms" (download time after that end), "reply_ms",
/// "return_ms"}; null without workers.
nlohmann::json critical_path(const nlohmann::json& workers);

/// One line of critical_path(): "rank R (DEVICE) last at X ms: ...".
std::string critical_path_text(const nlohmann::json& path);

}  // namespace wstune::daemon

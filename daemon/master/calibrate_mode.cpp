// The master's calibrate mode: every worker measures what the measured split
// model needs, the master stores it.
#include "master/master.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <ostream>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "format/json.hpp"
#include "master/router.hpp"
#include "protocol/kernel_source.hpp"
#include "search/strategies.hpp"
#include "session/autotune.hpp"
#include "tuning_file/tuning_file.hpp"
#include "wstune/store.hpp"

#include "master/master_util.hpp"

namespace wstune::daemon {

namespace {
// A worker's calibrate answer as its typed row; ProtocolError when it is not one.
CalibrationRow calibration_answer(const json& data) {
  try {
    return calibration_row_from_json(data);
  } catch (const json::exception& e) {
    throw ProtocolError(fmt::format("a calibration that is not one ({})", e.what()));
  }
}
}  // namespace

JobReport Master::fanout_job(JobReport r, Tag request, Tag answer) {
  r.attempts = 1;
  std::size_t stored = 0;
  std::set<int> pending = send_requests(r, request, stored);
  if (pending.empty()) {
    r.status = stored ? JobStatus::stored : JobStatus::failed;
    r.error = stored ? "" : "no healthy worker";
    return r;
  }
  if (!gather_work(r, request, answer, pending)) return r;  // interrupted
  if (r.data.empty()) {
    r.status = JobStatus::failed;
    if (r.error.empty()) r.error = "no worker finished this job";
  }
  return r;
}

// Sends `request` to every usable worker whose part is not stored already
// (--resume; those are counted in `stored`): the ranks that owe an answer.
std::set<int> Master::send_requests(const JobReport& r, Tag request, std::size_t& stored) {
  std::set<int> pending;
  for (const auto& w : workers_) {
    if (!w.usable()) continue;
    if (opt_.resume && sink_.stored(r.mode, r.run_key, r.index, r.job, r.size, &w)) {
      ++stored;  // an earlier run stored this worker's part
      continue;
    }
    WorkRequest req{
        r.id,       r.job.kernel, r.size,       r.job.repetitions, r.job.max_trials, r.job.calibrate_budget_ms,
        r.job.seed, r.job.config, packed(r.job)};
    comm_.send(w.rank, req.to_message(request));
    pending.insert(w.rank);
  }
  return pending;
}

// Receives the `pending` workers' answers until none is pending or the
// job's timeout passes (the late ones dropped for good); false, the job
// interrupted, when a stop is requested.
bool Master::gather_work(JobReport& r, Tag request, Tag answer, std::set<int>& pending) {
  const auto deadline = clock_type::now() + opt_.job_timeout;
  while (!pending.empty()) {
    if (stopped()) {
      r.status = JobStatus::interrupted;
      r.error = "stop requested";
      return false;
    }
    const auto now = clock_type::now();
    if (now >= deadline) {
      for (int rank : pending) drop_late(r, rank);
      break;
    }
    auto got = comm_.recv(kAnySource, slice_until(deadline));
    if (!got || !pending.count(got->source)) continue;
    take_work_answer(r, request, answer, *got, pending);
  }
  return true;
}

// One pending worker's message for a fanned-out job: its result (to the
// sink and the report) or its error; other tags and other jobs' answers
// are ignored.
void Master::take_work_answer(JobReport& r, Tag request, Tag answer, const Received& got, std::set<int>& pending) {
  WorkerState& w = worker(got.source);
  try {
    if (got.message.tag == answer) {
      const WorkResult res = WorkResult::from(got.message);
      if (res.job != r.id) return;
      if (request == Tag::tune)
        sink_.tuned(w, r.job, r.size, res.data);
      else
        sink_.calibrated(w, r.job, r.size, calibration_answer(res.data));
      r.data.push_back(json{{"rank", w.rank},
                            {"host", w.host},
                            {"device", w.device->name},
                            {"fingerprint", w.device->fingerprint()},
                            {"result", res.data}});
      pending.erase(got.source);
    } else if (got.message.tag == Tag::worker_error) {
      const WorkerError e = WorkerError::from(got.message);
      if (e.job != r.id) return;
      r.faults.push_back(
          fmt::format("worker {} failed job {} ({}): {}", w.label(), r.id, wstune::to_string(e.status), e.text));
      note(r.faults.back());
      pending.erase(got.source);
    }
  } catch (const ProtocolError& e) {
    r.faults.push_back(fmt::format("worker {} sent a bad answer: {}", w.label(), e.what()));
    pending.erase(got.source);
  }
}

}  // namespace wstune::daemon

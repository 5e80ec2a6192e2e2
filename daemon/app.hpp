#pragma once
/// @file app.hpp
/// wstuned's command line (Boost.Program_options, WSTUNE_* environment
/// variables) and what one rank does with it, independent of MPI so the
/// whole daemon runs in tests over an in-memory world.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <mpi.h>

#include "protocol/jobs.hpp"
#include "transport/communicator.hpp"
#include "worker/worker.hpp"

namespace wstune::daemon {

/// run_rank()'s return on the master when a worker did not acknowledge the
/// shutdown: main() then calls MPI_Abort (status 5) so mpiexec does not hang.
inline constexpr int kAbortCode = 1000;
/// run_rank()'s return on the master after a SIGINT/SIGTERM stopped the run,
/// once the workers were shut down (or did not answer within the shutdown
/// timeout, still busy with a block) and everything was recorded: main()
/// ends the job with MPI_Abort(130). An abort's status survives the launcher;
/// a plain exit status of 130 does not always (MPICH 4.0's hydra reports 0
/// now and then for ranks it forwarded a Ctrl-C to).
inline constexpr int kAbortStoppedCode = 1130;
/// The exit status main() passes to MPI_Abort for run_rank()'s `code`, or
/// std::nullopt when `code` asks for no abort.
constexpr std::optional<int> abort_status(int code) noexcept {
  if (code == kAbortCode) return 5;
  if (code == kAbortStoppedCode) return 130;
  return std::nullopt;
}
/// run_rank()'s usage-error status (exit status 2); on a worker rank main()
/// then aborts the job, on the master every worker was shut down first.
inline constexpr int kUsageCode = 2;

/// Handles --help and --version without MPI; returns the exit status, or
/// std::nullopt to go on.
std::optional<int> early_exit(int argc, char** argv);

/// The worker's index among the workers on its node (shared-memory
/// communicator, MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), ranks > 0 in
/// rank order); −1 on the master. Collective over `world`.
int node_local_worker_index(MPI_Comm world);

/// The device rule for a worker: `selector` "auto" picks the node's devices
/// round-robin by `local_index` (enumeration order over all platforms);
/// anything else goes to select_device(). Returns the device, or the reason
/// there is none (no OpenCL platform, or a selector that matches nothing).
std::pair<std::optional<Device>, std::string> open_worker_device(const std::string& selector, int local_index);

/// Parses argv and runs rank comm.rank() (master on 0, worker elsewhere).
/// Returns the exit status: 0 all jobs ok, 1 some job failed, 2 usage error,
/// 3 no usable worker (master), 4 master vanished (worker), 130 stopped by a
/// signal, kAbortCode / kAbortStoppedCode (see above). A worker refused at
/// registration returns 0 (the master reports the refusal), or 2 when it was
/// refused for its own usage error.
int run_rank(int argc, char** argv, Communicator& comm, int local_index, std::function<bool()> stop_requested);

/// `wstuned worker --connect HOST:PORT [options]`: a worker outside any MPI
/// launch that connects to a master started with --listen (TcpClient) and
/// serves it as a rank would; a signal drains it (it answers the request it
/// runs, says bye and returns 0). Returns std::nullopt when argv is not
/// worker mode (the MPI path goes on), else the exit status: 0 after a
/// shutdown or a drain, 2 usage error, 4 the master unreachable or gone.
std::optional<int> run_connected_worker(int argc, char** argv, std::function<bool()> stop_requested);

}  // namespace wstune::daemon

// wstuned: the MPI master/worker daemon. `mpiexec -n N wstuned [options]`:
// rank 0 is the master, ranks 1..N-1 are workers (docs/daemon.md).
#include <mpi.h>

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string_view>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "app.hpp"
#include "transport/mpi_communicator.hpp"

namespace {
volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_signal(int) {
  g_stop = 1;
}
}  // namespace

int main(int argc, char** argv) {
  using namespace wstune::daemon;
  // --help and --version need no MPI (and work without mpiexec).
  if (auto early = early_exit(argc, argv)) return *early;
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  // A worker that connects over TCP (wstuned worker --connect) uses no MPI.
  if (auto code = run_connected_worker(argc, argv, [] { return g_stop != 0; })) return *code;

  // The master's tune searches of several device groups run in threads that
  // never call MPI (router.hpp): funneled is enough.
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
#if defined(__GLIBC__)
  // Bulk buffers (slices, results: tens to hundreds of MB per job) come from
  // the heap and stay mapped when freed, so the next job of that size reuses
  // pages that are already faulted in. glibc would otherwise mmap every block
  // over 32 MB and unmap it on free: each job then pays first-touch page
  // faults on its output (about 20 ms for 64 MB), which is daemon overhead.
  // The price: the process keeps its peak heap. WSTUNE_KEEP_HEAP=0 turns it off.
  if (const char* keep = std::getenv("WSTUNE_KEEP_HEAP"); !keep || std::string_view(keep) != "0") {
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
  }
#endif
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int code = 0;
  {
    MpiCommunicator comm(MPI_COMM_WORLD);
    const int local_index = node_local_worker_index(MPI_COMM_WORLD);
    code = run_rank(argc, argv, comm, local_index, [] { return g_stop != 0; });
    if (const auto status = abort_status(code)) {
      // The master could not shut a worker down (it hangs), or a signal
      // stopped the run: end the job so mpiexec neither waits forever nor
      // loses the status. Everything was recorded (and the database closed)
      // before; after a stop the workers that answered said bye already.
      std::cerr.flush();
      MPI_Abort(MPI_COMM_WORLD, *status);
    }
  }
  MPI_Finalize();
  return code;
}

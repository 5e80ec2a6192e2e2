// wstuned: the MPI master/worker daemon (skeleton until the daemon issue).
#include <mpi.h>

#include <cstring>
#include <iostream>

#include "wstune/version.hpp"

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--version") == 0) {
      std::cout << "wstuned " << wstune::version() << "\n";
      return 0;
    }
    if (std::strcmp(argv[i], "--help") == 0) {
      std::cout << "usage: mpiexec -n N wstuned [options]\n(rank 0 is the master; ranks 1..N-1 are workers)\n";
      return 0;
    }
  }
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) std::cerr << "wstuned: " << size << " rank(s); no jobs (daemon not implemented yet)\n";
  MPI_Finalize();
  return 0;
}

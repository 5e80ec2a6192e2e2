#pragma once
/// @file mpi_communicator.hpp
/// Communicator over MPI point-to-point calls on one communicator (MPI
/// standard only: works with MPICH and Open MPI). Sends are MPI_Isend of the
/// encoded bytes with the Tag as the MPI tag; receives poll MPI_Iprobe with
/// exponential back-off (50 µs doubling to 250 µs) until the timeout, so the
/// caller never waits forever.

#include <list>

#include <mpi.h>

#include "communicator.hpp"

namespace wstune::daemon {

/// Communicator over an MPI communicator (MPI_COMM_WORLD by default). MPI
/// must be initialised for the object's whole life.
class MpiCommunicator final : public Communicator {
 public:
  /// Wraps `comm` (not duplicated, not freed).
  explicit MpiCommunicator(MPI_Comm comm = MPI_COMM_WORLD);
  /// Waits up to 5 s for pending sends, then cancels what is left.
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void send(int dest, Message m) override;
  std::optional<std::pair<int, Tag>> probe(int source) override;
  std::optional<Received> recv(int source, std::chrono::milliseconds timeout) override;
  bool flush(std::chrono::milliseconds timeout) override;

 private:
  struct Pending {
    std::vector<std::uint8_t> bytes;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  void reap();  // completes finished sends
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
  std::list<Pending> pending_;
};

}  // namespace wstune::daemon

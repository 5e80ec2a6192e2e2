#pragma once
/// @file mpi_communicator.hpp
/// Communicator over MPI point-to-point calls (MPI standard only: works with
/// MPICH and Open MPI). A message is a header (encode_header(): the body and
/// the buffers' shapes) sent with MPI_Isend on the given communicator,
/// the Tag as the MPI tag, then each non-empty buffer as its own MPI_BYTE
/// MPI_Isend calls (chunks of at most 1 GiB), straight from its memory, on a duplicate of that communicator
/// (MPI_Comm_dup, so MPI_ANY_TAG probes never see bulk data; MPI's
/// non-overtaking rule keeps one sender's buffers in order). Nothing bulk is
/// copied into a byte buffer. Receives poll MPI_Iprobe with exponential
/// back-off (50 µs doubling to 250 µs) until the timeout, so the caller never
/// waits forever; while sends of this rank are in flight the polling does not
/// sleep, since a rendezvous send advances only inside MPI calls (a sleeping
/// sender would move 100 MB at well under 1 GB/s); after 1 s without
/// progress of an own send the usual back-off returns (a peer that never
/// receives costs no core).

#include <list>

#include <mpi.h>

#include "transport/communicator.hpp"

namespace wstune::daemon {

/// Communicator over an MPI communicator (MPI_COMM_WORLD by default). MPI
/// must be initialised for the object's whole life.
class MpiCommunicator final : public Communicator {
 public:
  /// Wraps `comm` (not freed) and duplicates it for bulk data: collective
  /// over `comm` (MPI_Comm_dup), so every rank constructs one at the start.
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
    std::vector<std::uint8_t> header;   // encode_header() of the message
    std::vector<HostBuffer> buffers;    // its bulk data, sent in place
    std::vector<MPI_Request> requests;  // header first, then one per non-empty buffer
  };
  using clock = std::chrono::steady_clock;
  void reap();  // completes finished sends
  bool iprobe(int source, MPI_Status& st);
  Received receive(const MPI_Status& st);
  HostBuffer recv_buffer(const BufferShape& shape, int source);
  void wait_between_polls(clock::time_point now, clock::time_point deadline, std::chrono::microseconds& backoff);
  /// How long polling spins (no sleep) after the last progress of an own send.
  static constexpr std::chrono::seconds kSpinAfterProgress{1};
  std::chrono::steady_clock::time_point spin_since_{};  // last send posted or completed
  MPI_Comm comm_;
  MPI_Comm data_comm_ = MPI_COMM_NULL;  // bulk buffers; freed by MPI_Finalize
  int rank_ = 0;
  int size_ = 1;
  std::list<Pending> pending_;
};

}  // namespace wstune::daemon

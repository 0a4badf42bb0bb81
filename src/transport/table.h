// The transports of a communicator, in order of preference, and the choice per pair of ranks: for a pair and a
// FIFO memory, the first transport of that memory whose canConnect() accepts the pair. Built in order:
//   inproc  host FIFOs   ranks in one process (PeerInfo::processId)
//   shm     host FIFOs   ranks on one host (PeerInfo::hostHash)
//   cuda    device FIFOs CUDA ranks on one host (CUDA builds)
//   socket  host FIFOs   any two ranks
// A communicator owns one table, and so one instance of every transport (the socket transport's proxy thread
// is therefore per communicator). More transports join with add() (a network plugin goes before "socket").
// CHORUS_TRANSPORT=inproc|shm|socket forces one host transport for every pair; a pair it cannot connect is an
// error that names the variable.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "transport/transport.h"

namespace chorus::transport {

class TransportTable {
 public:
  // The built-in transports; reads CHORUS_TRANSPORT. Throws chorusInvalidArgument naming the variable and the
  // value when it names no host transport.
  TransportTable();
  // As above with an explicit value instead of the environment ("" chooses per pair).
  explicit TransportTable(const std::string& forced);
  ~TransportTable();
  TransportTable(const TransportTable&) = delete;
  TransportTable& operator=(const TransportTable&) = delete;

  // Inserts `t` before the transport named `before` (nullptr or an unknown name: at the end).
  void add(std::unique_ptr<Transport> t, const char* before = nullptr);

  // The transport for connections between self and peer whose FIFOs live in `memory` (the same answer on both
  // sides of a pair). Throws chorusInvalidArgument when CHORUS_TRANSPORT forces one that cannot connect the
  // pair, chorusInvalidUsage when no transport can.
  Transport& select(const PeerInfo& self, const PeerInfo& peer, FifoMemory memory = FifoMemory::kHost) const;

 private:
  std::string forced_;
  std::vector<std::unique_ptr<Transport>> transports_;
};

}  // namespace chorus::transport

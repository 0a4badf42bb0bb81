#include "core/connections.h"

#include "base/error.h"
#include "transport/cuda/device_connection.h"
#include "transport/fifo_geometry.h"

namespace chorus::core {

namespace {

using transport::FifoMemory;

// Bootstrap tag of the descriptor message of a connection on `lane`. Tags below 2^32 are left to other users
// of the bootstrap.
uint64_t descriptorTag(FifoMemory memory, int lane) {
  return (memory == FifoMemory::kHost ? (1ull << 40) : (1ull << 41)) | static_cast<uint64_t>(lane);
}

// The executors read an end through the class its kind names (fifo.h, cuda/device_connection.h).
void checkEnd(const transport::Connection& c, FifoMemory memory, bool send) {
  CHORUS_ENFORCE(c.memory() == memory && c.sends() == send, c.what(), ": the transport built another kind of end");
}

}  // namespace

ConnectionSet::ConnectionSet(Context ctx) : ctx_(std::move(ctx)) {
  const size_t n = ctx_.peers->size();
  for (int lane = 0; lane < coll::kLanes; ++lane) {
    sendTable_.emplace_back(new std::atomic<transport::SendConnection*>[n]);
    recvTable_.emplace_back(new std::atomic<transport::RecvConnection*>[n]);
    for (size_t r = 0; r < n; ++r) {
      sendTable_[lane][r].store(nullptr);
      recvTable_[lane][r].store(nullptr);
    }
  }
}

ConnectionSet::~ConnectionSet() = default;

transport::ConnectSpec ConnectionSet::spec(const coll::ConnKey& k, const char* step) const {
  transport::ConnectSpec s;
  s.self = (*ctx_.peers)[ctx_.rank];
  s.peer = (*ctx_.peers)[k.peer];
  s.commHash = ctx_.bootstrap->commHash();
  s.lane = k.lane;
  s.nslots = transport::kFifoSlots;
  s.slotBytes = transport::fifoSlotBytes(s.self.device >= 0);
  s.ctx = ctx_.waitContext(step + std::to_string(k.peer) + " (lane " + std::to_string(k.lane) + ")");
  return s;
}

bool ConnectionSet::haveAllHost(const std::vector<coll::ConnKey>& keys) const {
  for (const coll::ConnKey& k : keys) {
    if (k.peer == ctx_.rank) continue;
    const bool have = k.send ? sendTable_[k.lane][k.peer].load(std::memory_order_acquire) != nullptr
                             : recvTable_[k.lane][k.peer].load(std::memory_order_acquire) != nullptr;
    if (!have) return false;
  }
  return true;
}

void ConnectionSet::connect(const std::vector<coll::ConnKey>& keys, FifoMemory memory) {
  // The common case after the first operation: everything is there, and the host tables tell without a lock.
  if (memory == FifoMemory::kHost && haveAllHost(keys)) return;
  postReceivers(keys, memory);
  connectSenders(keys, memory);
}

void ConnectionSet::postReceivers(const std::vector<coll::ConnKey>& keys, FifoMemory memory) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const coll::ConnKey& k : keys) {
    if (k.send || k.peer == ctx_.rank || conns_.count(Key{memory, k}) != 0) continue;
    const transport::ConnectSpec s =
        spec(k, memory == FifoMemory::kHost ? "connecting from rank " : "connecting the device FIFO from rank ");
    std::vector<uint8_t> desc;
    std::unique_ptr<transport::Connection> c = ctx_.transports->select(s.self, s.peer, memory).createRecv(s, &desc);
    checkEnd(*c, memory, false);
    if (memory == FifoMemory::kHost) {
      recvTable_[k.lane][k.peer].store(static_cast<transport::RecvConnection*>(c.get()), std::memory_order_release);
    }
    conns_[Key{memory, k}] = std::move(c);
    ctx_.bootstrap->send(k.peer, descriptorTag(memory, k.lane), desc.data(), desc.size(), s.ctx);
  }
}

void ConnectionSet::connectSenders(const std::vector<coll::ConnKey>& keys, FifoMemory memory) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const coll::ConnKey& k : keys) {
    if (!k.send || k.peer == ctx_.rank || conns_.count(Key{memory, k}) != 0) continue;
    const transport::ConnectSpec s =
        spec(k, memory == FifoMemory::kHost ? "connecting to rank " : "connecting the device FIFO to rank ");
    // Waits for the receiver's descriptor, which it posts once it made its end (postReceivers).
    std::vector<uint8_t> desc = ctx_.bootstrap->recv(k.peer, descriptorTag(memory, k.lane), s.ctx);
    std::unique_ptr<transport::Connection> c = ctx_.transports->select(s.self, s.peer, memory).connectSend(s, desc);
    checkEnd(*c, memory, true);
    if (memory == FifoMemory::kHost) {
      sendTable_[k.lane][k.peer].store(static_cast<transport::SendConnection*>(c.get()), std::memory_order_release);
    }
    conns_[Key{memory, k}] = std::move(c);
  }
}

transport::SendConnection* ConnectionSet::sendConn(int peer, int lane) {
  transport::SendConnection* c = sendTable_[lane][peer].load(std::memory_order_acquire);
  CHORUS_ENFORCE(c != nullptr, "no connection to rank ", peer, " lane ", lane);
  return c;
}

transport::RecvConnection* ConnectionSet::recvConn(int peer, int lane) {
  transport::RecvConnection* c = recvTable_[lane][peer].load(std::memory_order_acquire);
  CHORUS_ENFORCE(c != nullptr, "no connection from rank ", peer, " lane ", lane);
  return c;
}

transport::Connection& ConnectionSet::find(FifoMemory memory, int peer, int lane, bool send) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = conns_.find(Key{memory, coll::ConnKey{peer, lane, send}});
  CHORUS_ENFORCE(it != conns_.end(), "no device connection ", send ? "to" : "from", " rank ", peer, " lane ", lane);
  return *it->second;
}

transport::cuda::DevConn ConnectionSet::devSendConn(int peer, int lane) {
  return static_cast<transport::cuda::DeviceConnection&>(find(FifoMemory::kDevice, peer, lane, true)).fifo();
}

transport::cuda::DevConn ConnectionSet::devRecvConn(int peer, int lane) {
  return static_cast<transport::cuda::DeviceConnection&>(find(FifoMemory::kDevice, peer, lane, false)).fifo();
}

void ConnectionSet::closeHost() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [key, c] : conns_) {
    if (key.memory == FifoMemory::kHost) c->close();
  }
}

void ConnectionSet::drainSends(const WaitContext& ctx) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [key, c] : conns_) {
    if (key.memory == FifoMemory::kHost && c->sends()) c->drain(ctx);
  }
}

}  // namespace chorus::core

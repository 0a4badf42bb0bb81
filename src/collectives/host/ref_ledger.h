// The send ends that carried remote refs (transport/fifo.h: the receiver copies straight from this rank's buffer)
// during one operation. A receiver reads this rank's memory until it frees the slot holding the reference, so the
// operation must not end, and the caller must not reuse or free a buffer, before drain() has seen every such slot
// freed. Kept per executor thread, so that noting an end allocates nothing once the thread has seen as many peers.
#pragma once

#include <vector>

#include "base/wait.h"
#include "transport/fifo.h"

namespace chorus::coll {

class RefLedger {
 public:
  // Notes that `c` carried a reference (once per end; cheap when the same end is noted again).
  void add(transport::SendConnection* c) {
    if (!conns_.empty() && conns_.back() == c) return;
    for (transport::SendConnection* x : conns_) {
      if (x == c) return;
    }
    conns_.push_back(c);
  }
  bool empty() const { return conns_.empty(); }
  // Waits until every noted end's receiver has freed every slot posted to it (deadline, abort and the peer's
  // liveness watched as in every wait), then forgets them.
  void drain(const WaitContext& ctx) {
    for (transport::SendConnection* c : conns_) c->drain(ctx);
    conns_.clear();
  }
  // Forgets the noted ends without waiting (after a failure: the connections are being closed).
  void clear() { conns_.clear(); }

  // Clears the ledger however the operation ends: after a failure the ends are not drained (the connections are
  // closed), and a later operation must not wait on them.
  class Scope {
   public:
    explicit Scope(RefLedger& l) : l_(l) {}
    ~Scope() { l_.clear(); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    RefLedger& l_;
  };

 private:
  std::vector<transport::SendConnection*> conns_;
};

}  // namespace chorus::coll

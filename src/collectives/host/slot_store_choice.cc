#include "collectives/host/slot_store_choice.h"

#include <bit>

#include "base/wait.h"
#include "collectives/tuning.h"

namespace chorus::coll {

SlotStoreChooser::Entry& SlotStoreChooser::entry(CollType type, size_t bytes) {
  const int sizeClass = bytes == 0 ? 0 : std::bit_width(bytes) - 1;
  return table_[static_cast<int>(type)][sizeClass];
}

bool SlotStoreChooser::choose(CollType type, size_t bytes, bool fallback) {
  Entry& e = entry(type, bytes);
  const uint32_t n = e.count++;
  // The first operation (untimed) and the third take the fallback, the second the other kind: both are timed early.
  if (n == 0 || n == 2) return fallback;
  if (n == 1) return !fallback;
  bool best = fallback;
  if (e.nsPerByte[0] > 0 && e.nsPerByte[1] > 0) best = e.nsPerByte[1] < e.nsPerByte[0];
  return n % kExploreEvery == 0 ? !best : best;
}

void SlotStoreChooser::record(CollType type, size_t bytes, bool streamed, uint64_t ns) {
  Entry& e = entry(type, bytes);
  if (bytes == 0 || e.count <= 1) return;  // the first operation of this kind and size: not timed
  double& avg = e.nsPerByte[streamed ? 1 : 0];
  const double now = static_cast<double>(ns) / static_cast<double>(bytes);
  avg = avg == 0 ? now : kNewWeight * now + (1 - kNewWeight) * avg;
}

SlotStoreChooser& SlotStoreChooser::forThisThread() {
  thread_local SlotStoreChooser chooser;
  return chooser;
}

SlotStoreDecision::SlotStoreDecision(const TopoView& topo, bool toPeers, CollType type, size_t footprint)
    : type_(type), footprint_(footprint), streamed_(streamsOutput(footprint, topo.slotStreamMinBytes)) {
  if (!toPeers || streamed_ || footprint < topo.slotStoresAdaptFrom) return;
  chooser_ = &SlotStoreChooser::forThisThread();
  streamed_ = chooser_->choose(type, footprint, streamed_);
  startNs_ = nowNs();
}

void SlotStoreDecision::finish() {
  if (chooser_ != nullptr) chooser_->record(type_, footprint_, streamed_, nowNs() - startNs_);
}

}  // namespace chorus::coll

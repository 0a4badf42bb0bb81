// The socket proxy's data movement: slots from a sender's FIFO onto its streams, and from a receiver's
// streams into its FIFO, with non-blocking I/O that resumes partial reads and writes (proxy.h).
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>

#include "base/error.h"
#include "base/futex.h"
#include "transport/socket/proxy.h"

namespace chorus::transport::socket {
namespace {

// Outcome of one non-blocking read on a receiving stream.
enum class Read { kData, kAgain, kEnd };

Read readSome(ConnState& c, Stream& st, uint32_t index, void* buf, size_t n, bool atBoundary, ssize_t* got) {
  ssize_t r = ::recv(st.sock.fd(), buf, n, MSG_DONTWAIT);
  *got = r;
  if (r > 0) return Read::kData;
  if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return Read::kAgain;
  if (r == 0 && atBoundary) {
    st.eof = true;  // a clean close between slots; whether data is missing is decided by the caller
    return Read::kEnd;
  }
  c.fail(r == 0 ? detail::concat("stream ", index, " from ", st.peer, " closed in the middle of a slot")
                : detail::concat("stream ", index, " from ", st.peer, ": ", errnoText("recv", errno)));
  return Read::kEnd;
}

}  // namespace

// Sender: the proxy is the FIFO's consumer. Each stream writes its chunk of every posted slot; a slot is
// freed (head advanced) once every stream has written its part.
bool Proxy::progressSend(ConnState& c) {
  FifoControl* f = c.fifo.control();
  const uint32_t tail = f->tail.load(std::memory_order_seq_cst);  // seq_cst: pairs with consumerSleeping
  const uint32_t nstreams = static_cast<uint32_t>(c.streams.size());
  bool moved = false;
  for (uint32_t s = 0; s < nstreams; ++s) {
    Stream& st = c.streams[s];
    while (!st.blocked && st.slot != tail) {
      const uint64_t word = f->sizes[st.slot % f->nslots];  // bytes and tag (fifo.h slotWord): the header
      const uint64_t total = word & kSlotBytesMask;
      uint64_t lo, hi;
      chunkRange(total, nstreams, s, &lo, &hi);
      iovec iov[2];
      int k = 0;
      if (s == 0 && st.headerOff < sizeof(st.header)) {
        if (st.headerOff == 0) st.header = word;
        iov[k++] = {reinterpret_cast<char*>(&st.header) + st.headerOff, sizeof(st.header) - st.headerOff};
      }
      if (st.off < hi - lo) iov[k++] = {fifoSlot(f, st.slot) + lo + st.off, hi - lo - st.off};
      if (k > 0) {
        msghdr m{};
        m.msg_iov = iov;
        m.msg_iovlen = static_cast<size_t>(k);
        ssize_t r = ::sendmsg(st.sock.fd(), &m, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (r < 0) {
          if (errno == EINTR) continue;
          if (errno == EAGAIN || errno == EWOULDBLOCK) {
            st.blocked = true;  // poll() tells when the socket drains
            break;
          }
          c.fail(detail::concat("stream ", s, " to ", st.peer, ": ", errnoText("send", errno)));
          return true;
        }
        moved = true;
        auto left = static_cast<uint64_t>(r);
        if (s == 0 && st.headerOff < sizeof(st.header)) {
          uint64_t h = std::min<uint64_t>(left, sizeof(st.header) - st.headerOff);
          st.headerOff += static_cast<uint32_t>(h);
          left -= h;
        }
        st.off += left;
        if ((s == 0 && st.headerOff < sizeof(st.header)) || st.off < hi - lo) continue;
      }
      ++st.slot;  // this stream's part of the slot is on the wire (or it had none)
      st.headerOff = 0;
      st.off = 0;
      moved = true;
    }
  }
  // head = the slot the slowest stream is on.
  uint32_t lag = 0;
  for (const Stream& st : c.streams) lag = std::max(lag, tail - st.slot);
  const uint32_t head = tail - lag;
  if (head != c.published) {
    c.published = head;
    f->head.store(head, std::memory_order_seq_cst);
    if (f->producerSleeping.load(std::memory_order_seq_cst) != 0) futexWake(&f->head);
    moved = true;
  }
  return moved;
}

// Receiver: the proxy is the FIFO's producer. Stream 0 reads each slot's size and its own chunk; the other
// streams fill their chunks of the slots whose size is known. A slot is published (tail advanced) once every
// stream has filled its part; no stream writes a slot the user has not freed.
bool Proxy::progressRecv(ConnState& c) {
  const uint32_t nstreams = static_cast<uint32_t>(c.streams.size());
  if (c.attached < nstreams) return false;
  FifoControl* f = c.fifo.control();
  const uint32_t head = f->head.load(std::memory_order_seq_cst);  // seq_cst: pairs with producerSleeping
  bool moved = false;
  ssize_t got = 0;

  Stream& s0 = c.streams[0];
  while (!s0.eof && s0.slot - head < f->nslots) {
    if (s0.headerOff < sizeof(s0.header)) {
      bool boundary = s0.headerOff == 0;
      Read r = readSome(c, s0, 0, reinterpret_cast<char*>(&s0.header) + s0.headerOff, sizeof(s0.header) - s0.headerOff,
                        boundary, &got);
      if (r != Read::kData) break;
      moved = true;
      s0.headerOff += static_cast<uint32_t>(got);
      if (s0.headerOff < sizeof(s0.header)) continue;
      if ((s0.header & kSlotBytesMask) > f->slotBytes) {
        c.fail(detail::concat("protocol error on stream 0 from ", s0.peer, ": a slot of ", s0.header & kSlotBytesMask,
                              " bytes exceeds the slot size ", f->slotBytes));
        break;
      }
      f->sizes[s0.slot % f->nslots] = s0.header;
      c.headers = s0.slot + 1;
    }
    uint64_t lo, hi;
    chunkRange(s0.header & kSlotBytesMask, nstreams, 0, &lo, &hi);
    if (s0.off < hi - lo) {
      Read r = readSome(c, s0, 0, fifoSlot(f, s0.slot) + lo + s0.off, hi - lo - s0.off, false, &got);
      if (r != Read::kData) break;
      moved = true;
      s0.off += static_cast<uint64_t>(got);
      if (s0.off < hi - lo) continue;
    }
    ++s0.slot;
    s0.headerOff = 0;
    s0.off = 0;
    moved = true;
  }
  for (uint32_t s = 1; s < nstreams && !c.dead; ++s) {
    Stream& st = c.streams[s];
    while (st.slot != c.headers) {
      uint64_t lo, hi;
      chunkRange(f->sizes[st.slot % f->nslots] & kSlotBytesMask, nstreams, s, &lo, &hi);
      if (st.off < hi - lo) {
        // A stream that ends while it owes a chunk has lost data: readSome fails the connection.
        Read r = readSome(c, st, s, fifoSlot(f, st.slot) + lo + st.off, hi - lo - st.off, false, &got);
        if (r != Read::kData) break;
        moved = true;
        st.off += static_cast<uint64_t>(got);
        if (st.off < hi - lo) continue;
      }
      ++st.slot;
      st.off = 0;
      moved = true;
    }
  }
  if (c.dead) return true;

  // tail = the slot the slowest stream is on.
  uint32_t ahead = f->nslots;
  for (const Stream& st : c.streams) ahead = std::min(ahead, st.slot - head);
  const uint32_t tail = head + ahead;
  if (tail != c.published) {
    c.published = tail;
    f->tail.store(tail, std::memory_order_seq_cst);
    if (f->consumerSleeping.load(std::memory_order_seq_cst) != 0) futexWake(&f->tail);
    moved = true;
  }
  // Stream 0 closed between slots and the other streams owe nothing: the sender went away. Everything it
  // sent is published above, so the user reads it all before the closed flag stops its waits.
  if (s0.eof) {
    bool owed = false;
    for (uint32_t s = 1; s < nstreams; ++s) owed |= c.streams[s].slot != c.headers;
    if (!owed) {
      c.fail(detail::concat("the sender closed the connection (stream 0 from ", s0.peer, ")"));
      moved = true;
    }
  }
  return moved;
}

}  // namespace chorus::transport::socket

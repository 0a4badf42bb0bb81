// The network plugin interface: how Chorus moves bytes between hosts, shaped like NCCL's ncclNet (v8). A
// plugin is a table of C functions (chorusNet_v1_t); the library drives it from the network transport's
// progress thread (transport/net/transport.h), which turns every FIFO slot into one message. Built in:
// "socket" (TCP). Shared libraries built in this tree: "ucx" (libchorus-net-ucx.so), "ib" (libchorus-net-ib.so:
// ibverbs, InfiniBand and RoCE; never run on RDMA hardware, see docs/networks.md) and the test plugins "testsock"
// (libchorus-net-testsock.so) and "ib-fake" (the ib plugin over an in-process fake verbs provider).
// CHORUS_NET=name chooses one by name (as NCCL_NET does); CHORUS_NET_PLUGIN=path loads a plugin from a shared
// library that exports a symbol named chorusNetPlugin_v1 of type chorusNet_v1_t (docs/networks.md).
//
// This header is plain C, so that a plugin can be written in C and built outside the tree (installed as
// chorus/net.h).
//
// The contract, for every plugin:
//  - Connections are one-way: listen() on the receiving side fills an opaque handle of at most
//    CHORUS_NET_HANDLE_MAXSIZE bytes, which reaches the sender out of band; the sender calls connect() with it
//    and the receiver accept() on its listening communicator. Both are non-blocking: they return
//    chorusNetSuccess with *comm == NULL while the connection is not made yet, and are called again.
//  - isend()/irecv() post one message and return a request, or *request == NULL when the plugin has no room
//    (call again later). test() reports completion without blocking; for a receive it gives the size received.
//  - Messages on one connection are matched to receives in the order both are posted. A receive's tag must
//    equal its message's tag (0 <= tag < 2^24) and its size must be at least the message's size; otherwise the
//    receive completes with chorusNetProtocolError. A message may be 0 bytes.
//  - Memory passed to isend/irecv must come from regMr() on the same communicator (type CHORUS_PTR_HOST, or
//    CHORUS_PTR_CUDA where the properties say so); the handle stays valid until deregMr().
//  - iflush() makes data received into device memory visible to the device (a no-op for host memory: it
//    returns a NULL request).
//  - Every failure (the peer died, the link broke, bad input) is an error return from the call that sees it,
//    never a hang and never an abort(); lastError() then describes it. After an error on a communicator only
//    its close call is valid. Nothing blocks longer than a few milliseconds: the caller owns the deadline.
//  - A plugin is used from several threads (one progress thread per communicator), one thread per
//    net-communicator at a time; listen/connect/accept/close may come from any thread.
#ifndef CHORUS_NET_H_
#define CHORUS_NET_H_

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CHORUS_NET_HANDLE_MAXSIZE 128
#define CHORUS_NET_MAX_TAG (1 << 24)

// Pointer kinds for regMr and ptrSupport.
#define CHORUS_PTR_HOST 0x1
#define CHORUS_PTR_CUDA 0x2

typedef enum {
  chorusNetSuccess = 0,
  chorusNetSystemError = 1,      // a system call or library call failed (lastError() says which)
  chorusNetInvalidArgument = 2,  // bad input: unknown device, tag out of range, unregistered memory
  chorusNetRemoteError = 3,      // the peer closed, died or is unreachable
  chorusNetProtocolError = 4,    // a message did not fit its receive (size or tag)
  chorusNetUnavailable = 5,      // no device or no kernel support here (init; lastError() says why)
} chorusNetResult_t;

typedef struct {
  const char* name;     // device name: "eth0", "mlx5_0:1"
  const char* pciPath;  // sysfs path of the device, or NULL
  uint64_t guid;        // unique per device
  int ptrSupport;       // CHORUS_PTR_HOST | CHORUS_PTR_CUDA
  int speed;            // link speed in Mbit/s (0 when unknown)
  int port;             // port number (ib) or 0
  float latency;        // microseconds, 0 when unknown
  int maxComms;         // connections the device can hold
  int maxRecvs;         // messages one irecv can take (always 1 in v1)
  int maxRequests;      // outstanding isend/irecv per communicator before they return NULL requests
  size_t maxMessage;    // largest message (bytes)
} chorusNetProperties_v1_t;

// Logging callback the library passes to init: level 0 = warn, 1 = info, 2 = trace.
typedef void (*chorusNetLogger_t)(int level, const char* message);

typedef struct {
  const char* name;  // "socket", "ucx", "ib", ...
  // Called once before any other function. listenAddress is the IP address ("198.18.0.1", "fe80::1%eth0")
  // of the interface the library chose for this host (CHORUS_SOCKET_IFNAME); plugins that listen on TCP use
  // it. Returns chorusNetUnavailable (with lastError()) when this host cannot run the plugin.
  chorusNetResult_t (*init)(chorusNetLogger_t logger, const char* listenAddress);
  chorusNetResult_t (*devices)(int* ndev);
  chorusNetResult_t (*getProperties)(int dev, chorusNetProperties_v1_t* props);
  // Receiving side: fills handle (at most CHORUS_NET_HANDLE_MAXSIZE bytes) and creates a listening comm.
  chorusNetResult_t (*listen)(int dev, void* handle, void** listenComm);
  // Sending side: *sendComm stays NULL until the connection is made (call again with the same handle memory:
  // the plugin may keep its connection state in it, as NCCL plugins do).
  chorusNetResult_t (*connect)(int dev, void* handle, void** sendComm);
  // *recvComm stays NULL until a sender has connected (call again).
  chorusNetResult_t (*accept)(void* listenComm, void** recvComm);
  chorusNetResult_t (*regMr)(void* comm, void* data, size_t size, int type, void** mhandle);
  chorusNetResult_t (*deregMr)(void* comm, void* mhandle);
  chorusNetResult_t (*isend)(void* sendComm, void* data, size_t size, int tag, void* mhandle, void** request);
  chorusNetResult_t (*irecv)(void* recvComm, void* data, size_t size, int tag, void* mhandle, void** request);
  chorusNetResult_t (*iflush)(void* recvComm, void* data, size_t size, void* mhandle, void** request);
  // *done = 1 once the request finished (the request is then freed); *size = bytes sent or received.
  chorusNetResult_t (*test)(void* request, int* done, size_t* size);
  // Close calls free the comm and every request still outstanding on it; they never block on the peer.
  chorusNetResult_t (*closeSend)(void* sendComm);
  chorusNetResult_t (*closeRecv)(void* recvComm);
  chorusNetResult_t (*closeListen)(void* listenComm);
  // The message of the last error on the calling thread ("" when none).
  const char* (*lastError)(void);
  // Optional (NULL: the library wakes on a timer, 20-200 us, while requests are outstanding). Fills up to
  // `max` pollfd entries (fd and events) whose readiness means that a test() on this send or recv comm may now
  // make progress: data arrived (POLLIN), a blocked send can go on (POLLOUT). Returns how many it filled (0:
  // nothing to wait for on the network). The progress thread then sleeps in poll() until the network has
  // something, so the first message after a pause costs a wake-up, not a timer slice. An fd must not be
  // ready while test() would make no progress (the thread would spin).
  int (*pollFds)(void* comm, struct pollfd* fds, int max);
} chorusNet_v1_t;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // CHORUS_NET_H_

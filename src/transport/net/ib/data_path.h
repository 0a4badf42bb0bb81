// The ib plugin's data path (net.h's isend, irecv, iflush, test, pollFds and the close calls of send and recv
// comms): the protocol of wire.h over a comm's QPs. Every call polls the comm's completion queue and posts
// what it can; none waits.
#pragma once

#include <poll.h>

#include "transport/net/net.h"

namespace chorus::netplugin::ib {

chorusNetResult_t ibIsend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void** request);
chorusNetResult_t ibIrecv(void* recvComm, void* data, size_t size, int tag, void* mhandle, void** request);
chorusNetResult_t ibIflush(void* recvComm, void* data, size_t size, void* mhandle, void** request);
chorusNetResult_t ibTest(void* request, int* done, size_t* size);
int ibPollFds(void* comm, pollfd* fds, int max);
chorusNetResult_t ibCloseComm(void* comm);

}  // namespace chorus::netplugin::ib

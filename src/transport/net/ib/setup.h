// Connection setup of the ib plugin (net.h's listen, connect, accept and closeListen): the exchange wire.h
// describes, over a non-blocking TCP socket, each call doing what it can without waiting.
#pragma once

#include "transport/net/net.h"

namespace chorus::netplugin::ib {

chorusNetResult_t ibListen(int dev, void* handle, void** listenComm);
chorusNetResult_t ibConnect(int dev, void* handle, void** sendComm);
chorusNetResult_t ibAccept(void* listenComm, void** recvComm);
chorusNetResult_t ibCloseListen(void* listenComm);

}  // namespace chorus::netplugin::ib

// NCCL's environment variables that mean the same in Chorus: a program run with NCCL_DEBUG=INFO (or a topology
// file, a socket interface) gets Chorus's equivalent, unless the CHORUS_* variable is set already.
#pragma once

namespace chorus::nccl {

// Copies NCCL_DEBUG, NCCL_DEBUG_SUBSYS, NCCL_DEBUG_FILE, NCCL_SOCKET_IFNAME, NCCL_TOPO_FILE,
// NCCL_TOPO_DUMP_FILE and NCCL_GRAPH_DUMP_FILE to their CHORUS_* names where those are unset. Runs when the
// library is loaded, and again in ncclResetDebugInit.
void adoptNcclEnvironment();

}  // namespace chorus::nccl

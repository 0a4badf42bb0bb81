// NCCL's topology XML (NCCL_TOPO_FILE / NCCL_TOPO_DUMP_FILE format, version 1) turned into a Graph.
//
//   <system version="1">
//     <cpu numaid affinity arch vendor familyid modelid host_hash>
//       <pci busid class vendor device subsystem_vendor subsystem_device link_speed link_width>
//         <pci ...> (PCI switch levels)          <pcilink target/> (switch-to-switch links)
//         <gpu dev sm rank gdr> <nvlink target count tclass/> <c2c bw count/> </gpu>
//         <nic> <net name dev speed port latency guid maxconn gdr coll/> </nic>
//       </pci>
//       <nic> ... </nic> (NICs without a PCI path, such as virtual Ethernet)
//     </cpu>
//   </system>
//
// NVLinks whose target class is 0x068000 go to NVSwitches, which NCCL models as one NVS node per host: all GPUs of
// a host's NVLink domain reach each other through it. Several host_hash values make a multi-host system, whose
// hosts meet through their NICs. A <pci> device with no <gpu> or <nic> child that is not a bridge (the GPUs and
// NICs of cloud providers' files, listed by class code only; NVSwitches; storage) stays in the graph as a PCI
// node with its class code (Graph::isClassOnlyDevice); an NVLink to such a GPU is ignored. Unknown elements
// and attributes are ignored (logged at INFO). Errors (chorus::Error, invalid argument) name the source, the
// line and the element: a GPU or NET named twice, an NVLink to an unknown GPU, a negative or absurd bandwidth,
// width or count, a missing required attribute, or no <cpu> at all.
#pragma once

#include <string>

#include "topology/graph.h"
#include "topology/xml_tree.h"

namespace chorus::topology {

Graph graphFromXml(const XmlElement& root, const std::string& source);
// Reads a topology file and builds its graph.
Graph loadTopoFile(const std::string& path);

}  // namespace chorus::topology

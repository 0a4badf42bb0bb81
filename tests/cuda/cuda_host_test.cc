// The CUDA executor's host-checkable parts, run on every machine (no GPU needed): the device FIFO layout, the
// kernel instantiation list, the descriptor wire format, the buffer-placement rule (through a mock pointer
// query), and the device reduction code compiled for the host and compared bit for bit with the host kernels.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "base/error.h"
#include "collectives/device/device_executor.h"
#include "collectives/device/device_kernel_table.h"
#include "collectives/device/device_launch_args.h"
#include "collectives/device/reduce_device.h"
#include "collectives/reduce/reduce.h"
#include "transport/cuda/cuda_descriptor.h"
#include "transport/cuda/cuda_util.h"
#include "transport/cuda/device_fifo.h"

namespace chorus {
namespace {

using reduce::DType;
using reduce::Op;
using transport::cuda::DevFifoControl;

TEST(DeviceFifoLayout, CountersOnTheirOwnLinesAndSlotsAligned) {
  EXPECT_EQ(offsetof(DevFifoControl, tail) % transport::cuda::kDevFifoLine, 0u);
  EXPECT_GE(offsetof(DevFifoControl, head) - offsetof(DevFifoControl, tail), transport::cuda::kDevFifoLine);
  EXPECT_GE(offsetof(DevFifoControl, sizes) - offsetof(DevFifoControl, head), transport::cuda::kDevFifoLine);
  EXPECT_EQ(transport::cuda::devFifoSlotsOffset() % 4096, 0u);
  EXPECT_GE(transport::cuda::devFifoSlotsOffset(), sizeof(DevFifoControl));
  const size_t slot = 1 << 19;
  EXPECT_EQ(transport::cuda::devFifoSlotOffset(0, slot), transport::cuda::devFifoSlotsOffset());
  EXPECT_EQ(transport::cuda::devFifoSlotOffset(transport::cuda::kDevFifoSlots + 3, slot),
            transport::cuda::devFifoSlotsOffset() + 3 * slot);
  EXPECT_EQ(transport::cuda::devFifoBytes(slot),
            transport::cuda::devFifoSlotsOffset() + transport::cuda::kDevFifoSlots * slot);
  static_assert((transport::cuda::kDevFifoSlots & (transport::cuda::kDevFifoSlots - 1)) == 0, "power of two");
}

TEST(DeviceKernelTable, EveryTypeExactlyOnce) {
  int n = 0;
  const coll::device::DevKernelEntry* t = coll::device::deviceKernelTable(&n);
  ASSERT_EQ(n, reduce::kNumDTypes);
  std::set<int> seen;
  std::set<const void*> kernels;
  for (int i = 0; i < n; ++i) {
    EXPECT_TRUE(seen.insert(static_cast<int>(t[i].dtype)).second) << t[i].name;
    EXPECT_NE(t[i].launch, nullptr);
    EXPECT_NE(t[i].symbol(), nullptr) << t[i].name;
    EXPECT_TRUE(kernels.insert(t[i].symbol()).second) << t[i].name;
  }
  // loadKernels (device_executor.h) loads these and the point-to-point kernel, which must be one more.
  EXPECT_NE(coll::device::deviceP2pSymbol(), nullptr);
  EXPECT_TRUE(kernels.insert(coll::device::deviceP2pSymbol()).second);
}

// Every (collective, algorithm) of collectives/algo has a kernel body, and no other pair claims one: the device
// never falls back silently to another algorithm than the one planned.
TEST(DeviceKernelTable, EveryAlgorithmHasABody) {
  using coll::CollType;
  for (CollType type :
       {CollType::kAllReduce, CollType::kBroadcast, CollType::kReduce, CollType::kAllGather, CollType::kReduceScatter,
        CollType::kAllToAll, CollType::kGather, CollType::kScatter, CollType::kSend, CollType::kRecv}) {
    for (coll::Algo algo : {coll::Algo::kRing, coll::Algo::kTree, coll::Algo::kDirect}) {
      coll::CollOp op;
      op.type = type;
      op.algo = algo;
      EXPECT_EQ(coll::device::algoKind(op) >= 0, coll::hasAlgorithm(type, algo))
          << coll::collName(type) << " " << coll::algoName(algo);
    }
  }
}

// A point-to-point transfer split over lanes: the parts are contiguous, cover every byte once, and start on 16
// bytes (each part's copy is vectorized), for sizes around the cuts and every lane count.
TEST(DeviceP2pParts, CoverTheTransferOnceOnSixteenByteCuts) {
  for (uint64_t bytes : {0ull, 1ull, 15ull, 16ull, 17ull, 127ull, 4096ull, 1048583ull, (64ull << 20) + 3}) {
    for (int parts = 1; parts <= 8; ++parts) {
      uint64_t next = 0;
      for (int p = 0; p < parts; ++p) {
        const coll::device::DevP2pPart part = coll::device::devP2pPart(bytes, p, parts);
        EXPECT_EQ(part.begin, next) << bytes << " bytes, part " << p << " of " << parts;
        EXPECT_LE(part.begin, part.end);
        EXPECT_EQ(part.begin % 16, 0u);
        next = part.end;
      }
      EXPECT_EQ(next, bytes) << bytes << " bytes in " << parts << " parts";
    }
  }
}

TEST(DevFifoDescriptor, RoundTrip) {
  transport::cuda::DevFifoDescriptor d;
  d.kind = transport::cuda::DevFifoKind::kIpc;
  d.device = 3;
  d.processId = 0x1234567890abcdefull;
  for (size_t i = 0; i < transport::cuda::kIpcHandleBytes; ++i) d.ipcHandle[i] = static_cast<uint8_t>(i * 7 + 1);
  d.ipcOffset = 4096;
  d.slotBytes = 1 << 19;
  d.nslots = 8;
  const std::vector<uint8_t> bytes = transport::cuda::serialize(d);
  const transport::cuda::DevFifoDescriptor e = transport::cuda::parseDevFifoDescriptor(bytes);
  EXPECT_EQ(e.kind, d.kind);
  EXPECT_EQ(e.device, d.device);
  EXPECT_EQ(e.processId, d.processId);
  EXPECT_EQ(0, std::memcmp(e.ipcHandle, d.ipcHandle, sizeof(d.ipcHandle)));
  EXPECT_EQ(e.ipcOffset, d.ipcOffset);
  EXPECT_EQ(e.slotBytes, d.slotBytes);
  EXPECT_EQ(e.nslots, d.nslots);

  std::vector<uint8_t> bad = bytes;
  bad[0] ^= 1;
  EXPECT_THROW(transport::cuda::parseDevFifoDescriptor(bad), Error);
  bad = bytes;
  bad.pop_back();
  EXPECT_THROW(transport::cuda::parseDevFifoDescriptor(bad), Error);
  transport::cuda::DevFifoDescriptor direct;
  direct.kind = transport::cuda::DevFifoKind::kDirect;
  direct.slotBytes = 64;
  direct.nslots = 8;  // pointer 0: rejected
  EXPECT_THROW(transport::cuda::parseDevFifoDescriptor(transport::cuda::serialize(direct)), Error);
}

// Mock pointer query: addresses encode their kind and device (0x1000 * (kind + 1) + device).
transport::cuda::PointerInfo mockQuery(const void* p) {
  const auto v = reinterpret_cast<uintptr_t>(p);
  transport::cuda::PointerInfo r;
  r.kind = static_cast<transport::cuda::MemKind>(v / 0x1000 - 1);
  r.device = static_cast<int>(v % 0x1000);
  if (r.kind == transport::cuda::MemKind::kHost) r.device = -1;
  return r;
}
const void* fake(transport::cuda::MemKind k, int device) {
  return reinterpret_cast<const void*>(0x1000 * (static_cast<uintptr_t>(k) + 1) + static_cast<uintptr_t>(device));
}

// Expects chorusInvalidArgument whose message names `what`.
void expectRejected(const void* p, int commDevice, const char* what) {
  try {
    transport::cuda::checkBufferPlacement(p, 64, commDevice, what);
    ADD_FAILURE() << what << " accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(BufferPlacement, RulesThroughAMockQuery) {
  using transport::cuda::MemKind;
  transport::cuda::PointerQuery prev = transport::cuda::setPointerQuery(&mockQuery);
  // CUDA communicator on device 1.
  EXPECT_NO_THROW(transport::cuda::checkBufferPlacement(fake(MemKind::kDevice, 1), 64, 1, "x"));
  EXPECT_NO_THROW(transport::cuda::checkBufferPlacement(fake(MemKind::kManaged, 0), 64, 1, "x"));
  expectRejected(fake(MemKind::kHost, 0), 1, "AllReduce: sendbuff");
  expectRejected(fake(MemKind::kPinnedHost, 1), 1, "Broadcast: recvbuff");
  expectRejected(fake(MemKind::kDevice, 0), 1, "Reduce: sendbuff");
  // Host communicator.
  EXPECT_NO_THROW(transport::cuda::checkBufferPlacement(fake(MemKind::kHost, 0), 64, -1, "x"));
  EXPECT_NO_THROW(transport::cuda::checkBufferPlacement(fake(MemKind::kPinnedHost, 0), 64, -1, "x"));
  expectRejected(fake(MemKind::kDevice, 2), -1, "AllGather: recvbuff");
  // Empty buffers are never queried.
  EXPECT_NO_THROW(transport::cuda::checkBufferPlacement(fake(MemKind::kHost, 0), 0, 1, "x"));
  transport::cuda::setPointerQuery(prev);
}

// ---- device reduction on the host vs. the host kernels -------------------------------------------------------

template <DType kT>
void deviceReduceCopy(const coll::device::ReduceCopyArgs& a, const coll::device::DevReduceParams& p, size_t n) {
  // Two "threads" interleaved, then one: the partition must not matter.
  coll::device::reduceCopy<kT>(a, p, n, 1, 2);
  coll::device::reduceCopy<kT>(a, p, n, 0, 2);
}

void runDevice(DType t, const coll::device::ReduceCopyArgs& a, const coll::device::DevReduceParams& p, size_t n) {
  switch (t) {
#define CHORUS_CASE(kType) \
  case DType::kType: deviceReduceCopy<DType::kType>(a, p, n); break;
    CHORUS_DEVICE_DTYPES(CHORUS_CASE)
#undef CHORUS_CASE
  }
}

struct Case {
  DType t;
  Op op;
};

class DeviceReduceVsHost : public ::testing::TestWithParam<Case> {};

// Random bit patterns (NaNs, infinities and subnormals included for floating types), 16-byte aligned and
// misaligned, 1 to 3 remote sources, with and without the avg epilogue.
TEST_P(DeviceReduceVsHost, BitForBit) {
  const DType t = GetParam().t;
  const Op op = GetParam().op;
  const size_t elt = reduce::dtypeSize(t);
  const bool floating = reduce::isFloating(t);
  std::mt19937_64 rng(static_cast<uint64_t>(t) * 31 + static_cast<uint64_t>(op));
  for (size_t n : {size_t(1), size_t(7), size_t(64), size_t(1000)}) {
    for (int nrecv = 0; nrecv <= 3; ++nrecv) {
      for (size_t misalign : {size_t(0), elt}) {
        for (bool epilogue : {false, true}) {
          const size_t bytes = n * elt;
          std::vector<std::vector<uint8_t>> src(1 + nrecv, std::vector<uint8_t>(bytes + 32));
          for (auto& s : src) {
            for (auto& b : s) b = static_cast<uint8_t>(rng());
          }
          std::vector<uint8_t> devOut(bytes + 32, 0), hostOut(bytes + 32, 0);
          auto at = [&](std::vector<uint8_t>& v) {
            return v.data() + 16 - reinterpret_cast<uintptr_t>(v.data()) % 16 + misalign;
          };
          coll::device::DevReduceParams p;
          p.op = static_cast<int>(op);
          reduce::ReduceParams premul;
          int64_t postDiv = 1;
          if (epilogue && floating) p.premul = premul.premul = 1.0 / 3;
          if (epilogue && !floating) p.postDiv = postDiv = 3;
          coll::device::ReduceCopyArgs a;
          for (auto& s : src) a.srcs[a.nsrcs++] = at(s);
          a.dsts[a.ndsts++] = at(devOut);
          a.premulFirst = true;
          a.postOp = true;
          runDevice(t, a, p, n);

          // The host executor's composition (HostPrims::run / reduceInto).
          const reduce::Kernels& kAvg = reduce::kernels(t, op);
          uint8_t* dst = at(hostOut);
          if (nrecv == 0) {
            reduce::ReduceParams sp = premul;
            sp.postDiv = postDiv;
            kAvg.scale(dst, at(src[0]), n, sp);
          } else {
            reduce::ReduceParams first = premul;
            reduce::ReduceParams rest;
            (nrecv == 1 ? first : rest).postDiv = postDiv;
            kAvg.reduce(dst, at(src[0]), at(src[1]), n, first);
            for (int i = 2; i <= nrecv; ++i) {
              reduce::ReduceParams q = rest;
              if (i != nrecv) q.postDiv = 1;
              kAvg.reduce(dst, dst, at(src[i]), n, q);
            }
          }
          ASSERT_EQ(0, std::memcmp(at(devOut), dst, bytes))
              << reduce::dtypeName(t) << " op " << static_cast<int>(op) << " n " << n << " nrecv " << nrecv
              << " misalign " << misalign << " epilogue " << epilogue;
        }
      }
    }
  }
}

std::vector<Case> allCases() {
  std::vector<Case> v;
  for (int t = 0; t < reduce::kNumDTypes; ++t) {
    for (int o = 0; o < reduce::kNumOps; ++o) v.push_back({static_cast<DType>(t), static_cast<Op>(o)});
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(AllTypesOps, DeviceReduceVsHost, ::testing::ValuesIn(allCases()),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           return std::string(reduce::dtypeName(i.param.t)) + "_op" +
                                  std::to_string(static_cast<int>(i.param.op));
                         });

}  // namespace
}  // namespace chorus

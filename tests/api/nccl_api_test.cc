// The parts of NCCL 2.28's API that chorus.h mirrors beyond the collectives, through the public header only:
// the layout and values of its types, chorusConfig_t's NCCL semantics (size, version gating, validation),
// PreMulSum, Bcast, chorusGroupSimulateEnd, chorusCommInitRankScalable, windows and chorusCommRevoke.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "chorus/chorus.h"

namespace chorus::test {
namespace {

// ---- layout and values -------------------------------------------------------------------------------------

// NCCL 2.28.9's ncclConfig_t, offset by offset; tests/nccl_compat/nccl_abi_check.c compares every value and offset
// with the toolkit's own nccl.h.
static_assert(offsetof(chorusConfig_t, size) == 0);
static_assert(offsetof(chorusConfig_t, magic) == 8);
static_assert(offsetof(chorusConfig_t, version) == 12);
static_assert(offsetof(chorusConfig_t, blocking) == 16);
static_assert(offsetof(chorusConfig_t, cgaClusterSize) == 20);
static_assert(offsetof(chorusConfig_t, minCTAs) == 24);
static_assert(offsetof(chorusConfig_t, maxCTAs) == 28);
static_assert(offsetof(chorusConfig_t, netName) == 32);
static_assert(offsetof(chorusConfig_t, splitShare) == 40);
static_assert(offsetof(chorusConfig_t, trafficClass) == 44);
static_assert(offsetof(chorusConfig_t, commName) == 48);
static_assert(offsetof(chorusConfig_t, collnetEnable) == 56);
static_assert(offsetof(chorusConfig_t, CTAPolicy) == 60);
static_assert(offsetof(chorusConfig_t, shrinkShare) == 64);
static_assert(offsetof(chorusConfig_t, nvlsCTAs) == 68);
static_assert(offsetof(chorusConfig_t, nChannelsPerNetPeer) == 72);
static_assert(offsetof(chorusConfig_t, nvlinkCentricSched) == 76);
static_assert(offsetof(chorusConfig_t, device) == CHORUS_CONFIG_NCCL_BYTES && CHORUS_CONFIG_NCCL_BYTES == 80);
static_assert(sizeof(chorusSimInfo_t) == 24 && offsetof(chorusSimInfo_t, estimatedTime) == 16);
static_assert(sizeof(chorusRedOp_t) == sizeof(int) && sizeof(chorusResult_t) == sizeof(int));
static_assert(chorusNumResults == 8 && chorusInProgress == 7 && chorusTimeout > chorusNumResults);
static_assert(chorusNumOps == 5 && chorusMaxRedOp == 0x7fffffff);
static_assert(chorusScalarDevice == 0 && chorusScalarHostImmediate == 1);
static_assert(CHORUS_WIN_DEFAULT == 0 && CHORUS_WIN_COLL_SYMMETRIC == 1 && CHORUS_WIN_REQUIRED_ALIGNMENT == 4096);
static_assert(CHORUS_CTA_POLICY_DEFAULT == 0 && CHORUS_CTA_POLICY_EFFICIENCY == 1 && CHORUS_CTA_POLICY_ZERO == 2);
static_assert(CHORUS_REVOKE_DEFAULT == 0 && CHORUS_SHRINK_ABORT == 1 && CHORUS_SPLIT_NOCOLOR == -1);
static_assert(CHORUS_CONFIG_UNDEF_INT == INT_MIN && CHORUS_NCCL_API_VERSION == 22809);

TEST(NcclApi, InitializersMatchNccls) {
  chorusConfig_t c = CHORUS_CONFIG_INITIALIZER;
  EXPECT_EQ(c.size, sizeof(chorusConfig_t));
  EXPECT_EQ(c.magic, 0xcafebeefu);
  EXPECT_EQ(c.version, 22809u);
  for (int v :
       {c.blocking, c.cgaClusterSize, c.minCTAs, c.maxCTAs, c.splitShare, c.trafficClass, c.collnetEnable, c.CTAPolicy,
        c.shrinkShare, c.nvlsCTAs, c.nChannelsPerNetPeer, c.nvlinkCentricSched, c.device, c.timeoutMs, c.checkMode}) {
    EXPECT_EQ(v, CHORUS_CONFIG_UNDEF_INT);
  }
  EXPECT_EQ(c.netName, nullptr);
  EXPECT_EQ(c.commName, nullptr);
  chorusSimInfo_t s = CHORUS_SIM_INFO_INITIALIZER;
  EXPECT_EQ(s.size, sizeof(chorusSimInfo_t));
  EXPECT_EQ(s.magic, 0x74685283u);
  EXPECT_EQ(s.version, 22809u);
  EXPECT_EQ(s.estimatedTime, -1.0f);
  EXPECT_STRNE(chorusGetErrorString(chorusTimeout), "unknown result code");
}

// ---- helpers -----------------------------------------------------------------------------------------------

std::vector<chorusComm_t> initAll(int n) {
  std::vector<chorusComm_t> comms(n, nullptr);
  EXPECT_EQ(chorusCommInitAll(comms.data(), n, nullptr), chorusSuccess) << chorusGetLastError(nullptr);
  return comms;
}

void destroyAll(const std::vector<chorusComm_t>& comms) {
  for (chorusComm_t c : comms) EXPECT_EQ(chorusCommDestroy(c), chorusSuccess);
}

template <typename Fn>
void onThreads(int n, Fn fn) {
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back([&, r] { fn(r); });
  for (auto& t : threads) t.join();
}

// Creates n ranks as threads with chorusCommInitRankConfig and `config` (which each thread copies). The last
// error of rank 0's thread goes to *error.
std::vector<chorusResult_t> initWithConfig(int n, const chorusConfig_t* config, std::vector<chorusComm_t>* comms,
                                           std::string* error = nullptr) {
  chorusUniqueId id;
  EXPECT_EQ(chorusGetUniqueId(&id), chorusSuccess);
  comms->assign(n, nullptr);
  std::vector<chorusResult_t> rcs(n);
  onThreads(n, [&](int r) {
    std::vector<char> mine(4096);
    // What the caller's struct holds beyond its `size` (garbage, for some tests) comes along.
    std::memcpy(mine.data(), config, std::max(config->size, sizeof(chorusConfig_t)));
    rcs[r] = chorusCommInitRankConfig(&(*comms)[r], n, id, r, reinterpret_cast<chorusConfig_t*>(mine.data()));
    if (r == 0 && error != nullptr) *error = chorusGetLastError(nullptr);
  });
  return rcs;
}

// ---- chorusConfig_t ------------------------------------------------------------------------------------------

// A config of NCCL's 80 bytes (what a program built against nccl.h passes): valid, Chorus's fields default.
TEST(NcclConfig, AnNcclSizedConfigIsValid) {
  chorusConfig_t c = CHORUS_CONFIG_INITIALIZER;
  c.size = CHORUS_CONFIG_NCCL_BYTES;
  c.blocking = 1;
  c.minCTAs = 1;
  c.maxCTAs = 4;
  c.commName = "nccl-sized";
  c.device = 12345;  // beyond `size`: must not be read
  std::vector<chorusComm_t> comms;
  for (chorusResult_t rc : initWithConfig(2, &c, &comms)) EXPECT_EQ(rc, chorusSuccess) << chorusGetLastError(nullptr);
  int dev = 0;
  EXPECT_EQ(chorusCommCuDevice(comms[0], &dev), chorusSuccess);
  EXPECT_EQ(dev, CHORUS_DEVICE_HOST);
  destroyAll(comms);
}

// Fields newer than the config's version are ignored, as NCCL ignores them: an invalid value in such a field
// passes with version 2.27 and fails with 2.28.
TEST(NcclConfig, FieldsNewerThanTheVersionAreIgnored) {
  chorusConfig_t c = CHORUS_CONFIG_INITIALIZER;
  c.nChannelsPerNetPeer = 0;  // invalid (2.28 field)
  c.version = CHORUS_VERSION(2, 27, 0);
  std::vector<chorusComm_t> comms;
  for (chorusResult_t rc : initWithConfig(2, &c, &comms)) EXPECT_EQ(rc, chorusSuccess) << chorusGetLastError(nullptr);
  destroyAll(comms);
  c.version = CHORUS_NCCL_API_VERSION;
  std::string error;
  for (chorusResult_t rc : initWithConfig(2, &c, &comms, &error)) EXPECT_EQ(rc, chorusInvalidArgument);
  EXPECT_NE(error.find("nChannelsPerNetPeer"), std::string::npos) << error;
  // 2.17 ignores maxCTAs < minCTAs as it ignores both (they are 2.17's), 2.16 ignores them.
  c = CHORUS_CONFIG_INITIALIZER;
  c.minCTAs = 8;
  c.maxCTAs = 2;
  c.version = CHORUS_VERSION(2, 16, 0);
  for (chorusResult_t rc : initWithConfig(2, &c, &comms)) EXPECT_EQ(rc, chorusSuccess) << chorusGetLastError(nullptr);
  destroyAll(comms);
  c.version = CHORUS_VERSION(2, 17, 0);
  for (chorusResult_t rc : initWithConfig(2, &c, &comms)) EXPECT_EQ(rc, chorusInvalidArgument);
}

// A smaller, older struct (NCCL 2.17's ended after netName, 40 bytes): nothing beyond its size is read.
TEST(NcclConfig, OnlySizeBytesAreRead) {
  std::vector<char> raw(4096, static_cast<char>(0x7f));  // garbage after the struct
  chorusConfig_t c = CHORUS_CONFIG_INITIALIZER;
  c.size = 40;
  c.version = CHORUS_VERSION(2, 17, 0);
  c.blocking = 1;
  std::memcpy(raw.data(), &c, 40);
  std::vector<chorusComm_t> comms;
  for (chorusResult_t rc : initWithConfig(2, reinterpret_cast<chorusConfig_t*>(raw.data()), &comms)) {
    EXPECT_EQ(rc, chorusSuccess) << chorusGetLastError(nullptr);
  }
  destroyAll(comms);
}

struct BadField {
  const char* name;
  std::function<void(chorusConfig_t*)> set;
};

class NcclConfigBad : public ::testing::TestWithParam<BadField> {};

TEST_P(NcclConfigBad, IsRejectedNamingTheField) {
  chorusConfig_t c = CHORUS_CONFIG_INITIALIZER;
  GetParam().set(&c);
  std::vector<chorusComm_t> comms;
  std::string error;
  for (chorusResult_t rc : initWithConfig(1, &c, &comms, &error)) EXPECT_EQ(rc, chorusInvalidArgument);
  EXPECT_EQ(comms[0], nullptr);
  EXPECT_NE(error.find(GetParam().name), std::string::npos) << error;
}

INSTANTIATE_TEST_SUITE_P(
    Fields, NcclConfigBad,
    ::testing::Values(BadField{"CHORUS_CONFIG_INITIALIZER", [](chorusConfig_t* c) { c->magic = 0; }},
                      BadField{"CHORUS_CONFIG_INITIALIZER", [](chorusConfig_t* c) { c->size = 8; }},
                      BadField{"version", [](chorusConfig_t* c) { c->version = CHORUS_VERSION_CODE; }},
                      BadField{"blocking", [](chorusConfig_t* c) { c->blocking = 2; }},
                      BadField{"cgaClusterSize", [](chorusConfig_t* c) { c->cgaClusterSize = -1; }},
                      BadField{"minCTAs", [](chorusConfig_t* c) { c->minCTAs = 0; }},
                      BadField{"maxCTAs", [](chorusConfig_t* c) { c->maxCTAs = -3; }},
                      BadField{"exceeds config->maxCTAs",
                               [](chorusConfig_t* c) {
                                 c->minCTAs = 4;
                                 c->maxCTAs = 2;
                               }},
                      BadField{"splitShare", [](chorusConfig_t* c) { c->splitShare = 5; }},
                      BadField{"collnetEnable", [](chorusConfig_t* c) { c->collnetEnable = 2; }},
                      BadField{"CTAPolicy", [](chorusConfig_t* c) { c->CTAPolicy = 3; }},
                      BadField{"shrinkShare", [](chorusConfig_t* c) { c->shrinkShare = -1; }},
                      BadField{"nvlsCTAs", [](chorusConfig_t* c) { c->nvlsCTAs = 0; }},
                      BadField{"nChannelsPerNetPeer", [](chorusConfig_t* c) { c->nChannelsPerNetPeer = 65; }},
                      BadField{"nvlinkCentricSched", [](chorusConfig_t* c) { c->nvlinkCentricSched = 9; }},
                      BadField{"device", [](chorusConfig_t* c) { c->device = -7; }},
                      BadField{"timeoutMs", [](chorusConfig_t* c) { c->timeoutMs = -1; }}));

// Every NCCL field at a valid value is accepted (most have no effect on host communicators).
TEST(NcclConfig, EveryValidNcclFieldIsAccepted) {
  chorusConfig_t c = CHORUS_CONFIG_INITIALIZER;
  c.blocking = 1;
  c.cgaClusterSize = 4;
  c.minCTAs = 2;
  c.maxCTAs = 64;  // beyond Chorus's 16 channels: clamped
  c.netName = "Socket";
  c.splitShare = 1;
  c.trafficClass = 3;
  c.commName = "all-fields";
  c.collnetEnable = 1;
  c.CTAPolicy = CHORUS_CTA_POLICY_ZERO;
  c.shrinkShare = 0;
  c.nvlsCTAs = 16;
  c.nChannelsPerNetPeer = 8;
  c.nvlinkCentricSched = 1;
  c.timeoutMs = 60000;
  c.checkMode = 1;
  std::vector<chorusComm_t> comms;
  for (chorusResult_t rc : initWithConfig(3, &c, &comms)) EXPECT_EQ(rc, chorusSuccess) << chorusGetLastError(nullptr);
  onThreads(3, [&](int r) {
    int x = r + 1, y = 0;
    EXPECT_EQ(chorusAllReduce(&x, &y, 1, chorusInt32, chorusSum, comms[r], nullptr), chorusSuccess);
    EXPECT_EQ(y, 6);
  });
  destroyAll(comms);
}

// ---- PreMulSum ------------------------------------------------------------------------------------------------

// One element of a type as raw bits, and back, for the reference computations.
struct TypeInfo {
  chorusDataType_t type;
  size_t size;
  bool floating;
};

const TypeInfo kTypes[] = {{chorusInt8, 1, false},    {chorusUint8, 1, false},     {chorusInt32, 4, false},
                           {chorusUint32, 4, false},  {chorusInt64, 8, false},     {chorusUint64, 8, false},
                           {chorusFloat16, 2, true},  {chorusFloat32, 4, true},    {chorusFloat64, 8, true},
                           {chorusBfloat16, 2, true}, {chorusFloat8e4m3, 1, true}, {chorusFloat8e5m2, 1, true}};

// Encodings of the few float values the tests use (0, 0.25, 0.5, ..., small integers), per type.
uint64_t encodeFloat(chorusDataType_t t, double v) {
  switch (t) {
    case chorusFloat32: {
      float f = static_cast<float>(v);
      uint32_t b;
      std::memcpy(&b, &f, 4);
      return b;
    }
    case chorusFloat64: {
      uint64_t b;
      std::memcpy(&b, &v, 8);
      return b;
    }
    default: break;
  }
  // Narrow types: exact values only (0 or +-2^e * (1 + m/2^mbits)).
  const int mbits = t == chorusFloat16 ? 10 : t == chorusBfloat16 ? 7 : t == chorusFloat8e4m3 ? 3 : 2;
  const int bias = t == chorusFloat16 ? 15 : t == chorusBfloat16 ? 127 : t == chorusFloat8e4m3 ? 7 : 15;
  const int total = t == chorusFloat16 || t == chorusBfloat16 ? 16 : 8;
  if (v == 0) return 0;
  const uint64_t sign = v < 0 ? 1ull << (total - 1) : 0;
  int e = 0;
  double m = std::frexp(std::fabs(v), &e);  // v = m * 2^e, m in [0.5, 1)
  const uint64_t frac = static_cast<uint64_t>(std::ldexp(m * 2 - 1, mbits));
  EXPECT_EQ(std::ldexp(1 + std::ldexp(static_cast<double>(frac), -mbits), e - 1), std::fabs(v)) << "inexact " << v;
  return sign | (static_cast<uint64_t>(e - 1 + bias) << mbits) | frac;
}

void put(std::vector<uint8_t>* buf, size_t i, size_t size, uint64_t bits) {
  std::memcpy(buf->data() + i * size, &bits, size);
}
uint64_t get(const std::vector<uint8_t>& buf, size_t i, size_t size) {
  uint64_t bits = 0;
  std::memcpy(&bits, buf.data() + i * size, size);
  return bits;
}

// Element i of rank r's input: floats 0 or 0.25; integers that wrap when multiplied.
double floatInput(int r, size_t i) {
  return ((i + static_cast<size_t>(r)) % 2) * 0.25;
}
uint64_t intInput(int r, size_t i) {
  return static_cast<uint64_t>(i) * 7919u + static_cast<uint64_t>(r) * 104729u + 3u;
}

// The expected sum over n ranks of scalar*input, element i, as bits of the type.
uint64_t expected(const TypeInfo& t, int n, size_t i, uint64_t intScalar, double floatScalar) {
  if (t.floating) {
    double sum = 0;
    for (int r = 0; r < n; ++r) sum += floatScalar * floatInput(r, i);
    return encodeFloat(t.type, sum);
  }
  const uint64_t mask = t.size == 8 ? ~0ull : (1ull << (8 * t.size)) - 1;
  uint64_t sum = 0;
  for (int r = 0; r < n; ++r) sum += (intInput(r, i) & mask) * (intScalar & mask);
  return sum & mask;
}

enum class Coll { kAllReduce, kReduce, kReduceScatter };

// Every rank runs `coll` with a PreMulSum op of scalar 2 (floats) or 37 (integers), then changes the scalar to
// 4 or -5 and runs it again: the second result uses the new scalar only when the scalar lives on the "device".
// (With inputs 0 and 0.25 every partial sum of up to 5 ranks is exact in every float type, e5m2 included.)
void checkPreMulSum(int n, const TypeInfo& t, Coll coll, chorusScalarResidence_t residence, bool inPlace) {
  const size_t count = 37;
  auto comms = initAll(n);
  onThreads(n, [&](int r) {
    uint64_t scalarBits = t.floating ? encodeFloat(t.type, 2.0) : 37u;
    chorusRedOp_t op;
    ASSERT_EQ(chorusRedOpCreatePreMulSum(&op, &scalarBits, t.type, residence, comms[r]), chorusSuccess)
        << chorusGetLastError(comms[r]);
    EXPECT_GE(static_cast<int>(op), static_cast<int>(chorusNumOps));
    for (int round = 0; round < 2; ++round) {
      const bool second = round == 1;
      // A device-resident scalar is read when the collective runs; an immediate one was read at creation.
      const bool newScalar = second && residence == chorusScalarDevice;
      const double fs = newScalar ? 4.0 : 2.0;
      const uint64_t is = newScalar ? static_cast<uint64_t>(-5) : 37u;
      const size_t inCount = coll == Coll::kReduceScatter ? count * n : count;
      std::vector<uint8_t> in(inCount * t.size), out(inCount * t.size, 0xee);
      for (size_t i = 0; i < inCount; ++i) {
        put(&in, i, t.size, t.floating ? encodeFloat(t.type, floatInput(r, i)) : intInput(r, i));
      }
      void* recv = inPlace ? in.data() : out.data();
      if (inPlace && coll == Coll::kReduceScatter) recv = in.data() + static_cast<size_t>(r) * count * t.size;
      chorusResult_t rc = chorusSuccess;
      if (coll == Coll::kAllReduce) rc = chorusAllReduce(in.data(), recv, count, t.type, op, comms[r], nullptr);
      if (coll == Coll::kReduce) rc = chorusReduce(in.data(), recv, count, t.type, op, n - 1, comms[r], nullptr);
      if (coll == Coll::kReduceScatter) rc = chorusReduceScatter(in.data(), recv, count, t.type, op, comms[r], nullptr);
      ASSERT_EQ(rc, chorusSuccess) << chorusGetLastError(comms[r]);
      // The change for the second round: seen by its collective only when the scalar lives on the "device".
      scalarBits = t.floating ? encodeFloat(t.type, 4.0) : static_cast<uint64_t>(-5);
      if (coll == Coll::kReduce && r != n - 1) continue;
      const std::vector<uint8_t>& res = inPlace ? in : out;
      const size_t first = coll == Coll::kReduceScatter ? static_cast<size_t>(r) * count : 0;
      const size_t at = inPlace && coll == Coll::kReduceScatter ? first : 0;
      for (size_t i = 0; i < count; ++i) {
        ASSERT_EQ(get(res, at + i, t.size), expected(t, n, first + i, is, fs))
            << "rank " << r << " element " << i << " type " << t.type << " round " << round;
      }
    }
    EXPECT_EQ(chorusRedOpDestroy(op, comms[r]), chorusSuccess);
  });
  destroyAll(comms);
}

class PreMulSum : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(PreMulSum, EveryTypeAndCollectiveBothResidences) {
  auto [n, typeIndex] = GetParam();
  const TypeInfo& t = kTypes[typeIndex];
  for (Coll coll : {Coll::kAllReduce, Coll::kReduce, Coll::kReduceScatter}) {
    for (auto residence : {chorusScalarHostImmediate, chorusScalarDevice}) {
      for (bool inPlace : {false, true}) {
        SCOPED_TRACE(::testing::Message()
                     << "coll " << static_cast<int>(coll) << " residence " << residence << " in-place " << inPlace);
        checkPreMulSum(n, t, coll, residence, inPlace);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(RanksTypes, PreMulSum,
                         ::testing::Combine(::testing::Values(1, 2, 3, 5), ::testing::Range(0, 12)));

TEST(PreMulSumErrors, MisuseIsRejectedNamingTheArgument) {
  auto comms = initAll(2);
  auto other = initAll(1);
  float two = 2;
  chorusRedOp_t op;
  EXPECT_EQ(chorusRedOpCreatePreMulSum(nullptr, &two, chorusFloat32, chorusScalarHostImmediate, comms[0]),
            chorusInvalidArgument);
  EXPECT_EQ(chorusRedOpCreatePreMulSum(&op, nullptr, chorusFloat32, chorusScalarHostImmediate, comms[0]),
            chorusInvalidArgument);
  EXPECT_EQ(
      chorusRedOpCreatePreMulSum(&op, &two, static_cast<chorusDataType_t>(99), chorusScalarHostImmediate, comms[0]),
      chorusInvalidArgument);
  EXPECT_EQ(chorusRedOpCreatePreMulSum(&op, &two, chorusFloat32, static_cast<chorusScalarResidence_t>(7), comms[0]),
            chorusInvalidArgument);
  EXPECT_NE(std::string(chorusGetLastError(comms[0])).find("residence"), std::string::npos);
  ASSERT_EQ(chorusRedOpCreatePreMulSum(&op, &two, chorusFloat32, chorusScalarHostImmediate, comms[0]), chorusSuccess);
  float x = 1, y = 0;
  // Another datatype, another communicator, a destroyed op: chorusInvalidArgument, nothing sent.
  EXPECT_EQ(chorusAllReduce(&x, &y, 1, chorusFloat64, op, comms[0], nullptr), chorusInvalidArgument);
  EXPECT_NE(std::string(chorusGetLastError(comms[0])).find("created for datatype float32"), std::string::npos)
      << chorusGetLastError(comms[0]);
  EXPECT_EQ(chorusAllReduce(&x, &y, 1, chorusFloat32, op, other[0], nullptr), chorusInvalidArgument);
  EXPECT_EQ(chorusRedOpDestroy(op, other[0]), chorusInvalidArgument);
  EXPECT_EQ(chorusRedOpDestroy(chorusSum, comms[0]), chorusInvalidArgument);
  EXPECT_NE(std::string(chorusGetLastError(comms[0])).find("built-in"), std::string::npos);
  EXPECT_EQ(chorusRedOpDestroy(op, comms[0]), chorusSuccess);
  EXPECT_EQ(chorusRedOpDestroy(op, comms[0]), chorusInvalidArgument);
  EXPECT_EQ(chorusAllReduce(&x, &y, 1, chorusFloat32, op, comms[0], nullptr), chorusInvalidArgument);
  // A freed slot is reused: values stay small, as NCCL's.
  chorusRedOp_t again;
  ASSERT_EQ(chorusRedOpCreatePreMulSum(&again, &two, chorusFloat32, chorusScalarDevice, comms[0]), chorusSuccess);
  EXPECT_EQ(again, op);
  EXPECT_EQ(chorusRedOpDestroy(again, comms[0]), chorusSuccess);
  destroyAll(comms);
  destroyAll(other);
}

// ---- Bcast -----------------------------------------------------------------------------------------------------

TEST(Bcast, IsAnInPlaceBroadcastFromEveryRoot) {
  for (int n : {1, 2, 3, 5}) {
    auto comms = initAll(n);
    for (int root = 0; root < n; ++root) {
      onThreads(n, [&](int r) {
        std::vector<int64_t> buf(1021);
        for (size_t i = 0; i < buf.size(); ++i) buf[i] = r == root ? static_cast<int64_t>(i * 31 + root) : -1;
        ASSERT_EQ(chorusBcast(buf.data(), buf.size(), chorusInt64, root, comms[r], nullptr), chorusSuccess)
            << chorusGetLastError(comms[r]);
        for (size_t i = 0; i < buf.size(); ++i) ASSERT_EQ(buf[i], static_cast<int64_t>(i * 31 + root)) << i;
      });
    }
    int x = 0;
    EXPECT_EQ(chorusBcast(&x, 1, chorusInt32, n, comms[0], nullptr), chorusInvalidArgument);
    destroyAll(comms);
  }
}

// ---- GroupSimulateEnd ------------------------------------------------------------------------------------------

TEST(GroupSimulateEnd, PredictsTheGroupAndLaunchesNothing) {
  // One rank of two simulates: were anything launched, it would wait for its peer forever.
  auto comms = initAll(2);
  std::vector<float> in(1 << 18, 1.0f), out(in.size(), -1.0f);
  chorusSimInfo_t small = CHORUS_SIM_INFO_INITIALIZER, big = CHORUS_SIM_INFO_INITIALIZER;
  ASSERT_EQ(chorusGroupStart(), chorusSuccess);
  ASSERT_EQ(chorusAllReduce(in.data(), out.data(), 1024, chorusFloat32, chorusSum, comms[0], nullptr), chorusSuccess);
  ASSERT_EQ(chorusGroupSimulateEnd(&small), chorusSuccess) << chorusGetLastError(nullptr);
  ASSERT_EQ(chorusGroupStart(), chorusSuccess);
  ASSERT_EQ(chorusAllReduce(in.data(), out.data(), in.size(), chorusFloat32, chorusSum, comms[0], nullptr),
            chorusSuccess);
  ASSERT_EQ(chorusSend(in.data(), in.size(), chorusFloat32, 1, comms[0], nullptr), chorusSuccess);
  ASSERT_EQ(chorusGroupSimulateEnd(&big), chorusSuccess) << chorusGetLastError(nullptr);
  EXPECT_GT(small.estimatedTime, 0.0f);
  EXPECT_GT(big.estimatedTime, small.estimatedTime);
  for (float v : out) ASSERT_EQ(v, -1.0f);
  EXPECT_EQ(chorusGroupEnd(), chorusInvalidUsage);  // the simulation ended the group

  // An empty group leaves the estimate undefined.
  chorusSimInfo_t info = CHORUS_SIM_INFO_INITIALIZER;
  ASSERT_EQ(chorusGroupStart(), chorusSuccess);
  ASSERT_EQ(chorusGroupSimulateEnd(&info), chorusSuccess);
  EXPECT_EQ(info.estimatedTime, CHORUS_UNDEF_FLOAT);
  // A nested simulated end only closes the inner group: the outer End launches the calls.
  float x[2] = {1, 2}, y[2] = {0, 0};
  ASSERT_EQ(chorusGroupStart(), chorusSuccess);
  ASSERT_EQ(chorusGroupStart(), chorusSuccess);
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(chorusAllReduce(&x[r], &y[r], 1, chorusFloat32, chorusSum, comms[r], nullptr), chorusSuccess);
  }
  ASSERT_EQ(chorusGroupSimulateEnd(&info), chorusSuccess);
  EXPECT_EQ(info.estimatedTime, CHORUS_UNDEF_FLOAT);
  ASSERT_EQ(chorusGroupEnd(), chorusSuccess) << chorusGetLastError(nullptr);
  EXPECT_EQ(y[0], 3.0f);
  EXPECT_EQ(y[1], 3.0f);
  // An uninitialized simInfo is an error, and the group still ends.
  chorusSimInfo_t raw{};
  ASSERT_EQ(chorusGroupStart(), chorusSuccess);
  EXPECT_EQ(chorusGroupSimulateEnd(&raw), chorusInvalidArgument);
  EXPECT_NE(std::string(chorusGetLastError(nullptr)).find("CHORUS_SIM_INFO_INITIALIZER"), std::string::npos);
  EXPECT_EQ(chorusGroupEnd(), chorusInvalidUsage);
  EXPECT_EQ(chorusGroupSimulateEnd(&info), chorusInvalidUsage);  // not in a group
  // The communicators were not disturbed.
  onThreads(2, [&](int r) {
    float x = 1.0f + r, y = 0;
    EXPECT_EQ(chorusAllReduce(&x, &y, 1, chorusFloat32, chorusSum, comms[r], nullptr), chorusSuccess);
    EXPECT_EQ(y, 3.0f);
  });
  destroyAll(comms);
}

// ---- InitRankScalable ------------------------------------------------------------------------------------------

TEST(InitRankScalable, SeveralIdsMakeOneCommunicator) {
  const int n = 4;
  chorusUniqueId ids[2];
  ASSERT_EQ(chorusGetUniqueId(&ids[0]), chorusSuccess);
  ASSERT_EQ(chorusGetUniqueId(&ids[1]), chorusSuccess);
  std::vector<chorusComm_t> comms(n, nullptr);
  chorusConfig_t config = CHORUS_CONFIG_INITIALIZER;
  onThreads(n, [&](int r) {
    ASSERT_EQ(chorusCommInitRankScalable(&comms[r], n, r, 2, ids, &config), chorusSuccess)
        << chorusGetLastError(nullptr);
    int x = r, y = 0;
    EXPECT_EQ(chorusAllReduce(&x, &y, 1, chorusInt32, chorusSum, comms[r], nullptr), chorusSuccess);
    EXPECT_EQ(y, 6);
  });
  destroyAll(comms);
  chorusComm_t c = nullptr;
  EXPECT_EQ(chorusCommInitRankScalable(&c, 2, 0, 0, ids, nullptr), chorusInvalidArgument);
  EXPECT_EQ(chorusCommInitRankScalable(&c, 2, 0, 3, ids, nullptr), chorusInvalidArgument);
  EXPECT_NE(std::string(chorusGetLastError(nullptr)).find("nId"), std::string::npos);
  EXPECT_EQ(chorusCommInitRankScalable(&c, 2, 0, 1, nullptr, nullptr), chorusInvalidArgument);
  chorusUniqueId bad[2] = {ids[0], ids[1]};
  bad[1].internal[9] ^= 1;
  EXPECT_EQ(chorusCommInitRankScalable(&c, 2, 0, 2, bad, nullptr), chorusInvalidArgument);
  EXPECT_EQ(c, nullptr);
}

// ---- init inside a group ---------------------------------------------------------------------------------------

// NCCL's "several devices per thread": one thread creates every rank between GroupStart and GroupEnd.
TEST(InitInGroup, OneThreadCreatesEveryRank) {
  for (int n : {1, 2, 3}) {
    chorusUniqueId id;
    ASSERT_EQ(chorusGetUniqueId(&id), chorusSuccess);
    std::vector<chorusComm_t> comms(n, nullptr);
    ASSERT_EQ(chorusGroupStart(), chorusSuccess);
    for (int r = 0; r < n; ++r) {
      chorusConfig_t config = CHORUS_CONFIG_INITIALIZER;
      ASSERT_EQ(
          r % 2 == 0 ? chorusCommInitRank(&comms[r], n, id, r) : chorusCommInitRankConfig(&comms[r], n, id, r, &config),
          chorusSuccess);
      ASSERT_NE(comms[r], nullptr);
    }
    ASSERT_EQ(chorusGroupEnd(), chorusSuccess) << chorusGetLastError(nullptr);
    std::vector<int> in(n), out(n, -1);
    ASSERT_EQ(chorusGroupStart(), chorusSuccess);
    for (int r = 0; r < n; ++r) {
      in[r] = r + 1;
      ASSERT_EQ(chorusAllReduce(&in[r], &out[r], 1, chorusInt32, chorusSum, comms[r], nullptr), chorusSuccess);
    }
    ASSERT_EQ(chorusGroupEnd(), chorusSuccess) << chorusGetLastError(nullptr);
    for (int r = 0; r < n; ++r) EXPECT_EQ(out[r], n * (n + 1) / 2);
    destroyAll(comms);
  }
}

TEST(InitInGroup, NonBlockingRanksAreInProgressUntilReady) {
  chorusUniqueId id;
  ASSERT_EQ(chorusGetUniqueId(&id), chorusSuccess);
  chorusComm_t comms[2];
  chorusConfig_t config = CHORUS_CONFIG_INITIALIZER;
  config.blocking = 0;
  ASSERT_EQ(chorusGroupStart(), chorusSuccess);
  for (int r = 0; r < 2; ++r) EXPECT_EQ(chorusCommInitRankConfig(&comms[r], 2, id, r, &config), chorusInProgress);
  const chorusResult_t end = chorusGroupEnd();
  EXPECT_TRUE(end == chorusInProgress || end == chorusSuccess) << end;
  for (chorusComm_t c : comms) {
    chorusResult_t state = chorusInProgress;
    for (int i = 0; i < 10000 && state == chorusInProgress; ++i) {
      ASSERT_EQ(chorusCommGetAsyncError(c, &state), chorusSuccess);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_EQ(state, chorusSuccess);
  }
  for (chorusComm_t c : comms) chorusCommDestroy(c);
}

TEST(InitInGroup, AFailedCreationIsTheGroupsError) {
  chorusUniqueId id;
  ASSERT_EQ(chorusGetUniqueId(&id), chorusSuccess);
  chorusComm_t comms[2];
  ASSERT_EQ(chorusGroupStart(), chorusSuccess);
  // The two ranks disagree on nranks: the rendezvous fails both.
  ASSERT_EQ(chorusCommInitRank(&comms[0], 2, id, 0), chorusSuccess);
  ASSERT_EQ(chorusCommInitRank(&comms[1], 3, id, 1), chorusSuccess);
  EXPECT_EQ(chorusGroupEnd(), chorusInvalidArgument);
  EXPECT_NE(std::string(chorusGetLastError(nullptr)).find("nranks"), std::string::npos) << chorusGetLastError(nullptr);
  for (chorusComm_t c : comms) chorusCommDestroy(c);
}

// NCCL defers chorusCommSplit and chorusCommShrink inside a group as it does init: one thread splits every rank of
// a communicator it drives (two splits of each parent in one group, in issue order), then shrinks them.
TEST(InitInGroup, OneThreadSplitsAndShrinksEveryRank) {
  const int n = 4;
  std::vector<chorusComm_t> comms = initAll(n);
  std::vector<chorusComm_t> parity(n, nullptr), halves(n, nullptr);
  ASSERT_EQ(chorusGroupStart(), chorusSuccess);
  for (int r = 0; r < n; ++r) {
    parity[r] = reinterpret_cast<chorusComm_t>(0x1);
    ASSERT_EQ(chorusCommSplit(comms[r], r % 2, -r, &parity[r], nullptr), chorusSuccess);
    EXPECT_EQ(parity[r], nullptr);  // NULL until the group ends, as NCCL's
    // Rank 0 stays out of the second split.
    ASSERT_EQ(chorusCommSplit(comms[r], r == 0 ? CHORUS_SPLIT_NOCOLOR : r / 2, r, &halves[r], nullptr), chorusSuccess);
  }
  ASSERT_EQ(chorusGroupEnd(), chorusSuccess) << chorusGetLastError(nullptr);
  EXPECT_EQ(halves[0], nullptr);
  std::vector<int> sumParity(n, -1), sumHalf(n, -1), in(n);
  ASSERT_EQ(chorusGroupStart(), chorusSuccess);
  for (int r = 0; r < n; ++r) {
    ASSERT_NE(parity[r], nullptr) << r;
    int count = 0, rank = -1;
    ASSERT_EQ(chorusCommCount(parity[r], &count), chorusSuccess);
    ASSERT_EQ(chorusCommUserRank(parity[r], &rank), chorusSuccess);
    EXPECT_EQ(count, 2);
    EXPECT_EQ(rank, r < 2 ? 1 : 0) << r;  // key -r: the higher parent rank comes first
    in[r] = r + 1;
    ASSERT_EQ(chorusAllReduce(&in[r], &sumParity[r], 1, chorusInt32, chorusSum, parity[r], nullptr), chorusSuccess);
    if (r > 0) {
      ASSERT_NE(halves[r], nullptr) << r;
      ASSERT_EQ(chorusAllReduce(&in[r], &sumHalf[r], 1, chorusInt32, chorusSum, halves[r], nullptr), chorusSuccess);
    }
  }
  ASSERT_EQ(chorusGroupEnd(), chorusSuccess) << chorusGetLastError(nullptr);
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(sumParity[r], r % 2 == 0 ? 1 + 3 : 2 + 4) << r;
    if (r > 0) {
      EXPECT_EQ(sumHalf[r], r == 1 ? 2 : 3 + 4) << r;
    }
  }
  // Shrink: ranks 0-2 drop rank 3, from one thread.
  std::vector<chorusComm_t> shrunk(n - 1, nullptr);
  const int excluded = n - 1;
  ASSERT_EQ(chorusGroupStart(), chorusSuccess);
  for (int r = 0; r < n - 1; ++r) {
    ASSERT_EQ(chorusCommShrink(comms[r], const_cast<int*>(&excluded), 1, &shrunk[r], nullptr, CHORUS_SHRINK_DEFAULT),
              chorusSuccess);
  }
  ASSERT_EQ(chorusGroupEnd(), chorusSuccess) << chorusGetLastError(nullptr);
  std::vector<int> max(n - 1, -1);
  ASSERT_EQ(chorusGroupStart(), chorusSuccess);
  for (int r = 0; r < n - 1; ++r) {
    ASSERT_NE(shrunk[r], nullptr);
    ASSERT_EQ(chorusAllReduce(&in[r], &max[r], 1, chorusInt32, chorusMax, shrunk[r], nullptr), chorusSuccess);
  }
  ASSERT_EQ(chorusGroupEnd(), chorusSuccess) << chorusGetLastError(nullptr);
  for (int r = 0; r < n - 1; ++r) EXPECT_EQ(max[r], n - 1);
  for (auto* list : {&parity, &halves, &shrunk}) {
    for (chorusComm_t c : *list) {
      if (c != nullptr) {
        EXPECT_EQ(chorusCommDestroy(c), chorusSuccess);
      }
    }
  }
  destroyAll(comms);
}

// A deferred split that fails (a rank of the parent never joins) is the group's error, naming the call.
TEST(InitInGroup, AFailedSplitIsTheGroupsError) {
  chorusUniqueId id;
  ASSERT_EQ(chorusGetUniqueId(&id), chorusSuccess);
  std::vector<chorusComm_t> comms(2, nullptr);
  chorusConfig_t config = CHORUS_CONFIG_INITIALIZER;
  config.timeoutMs = 300;
  onThreads(2, [&](int r) { EXPECT_EQ(chorusCommInitRankConfig(&comms[r], 2, id, r, &config), chorusSuccess); });
  chorusComm_t child = nullptr;
  ASSERT_EQ(chorusGroupStart(), chorusSuccess);
  ASSERT_EQ(chorusCommSplit(comms[0], 0, 0, &child, nullptr), chorusSuccess);  // rank 1 never splits
  const chorusResult_t end = chorusGroupEnd();
  EXPECT_TRUE(end == chorusTimeout || end == chorusRemoteError) << end;
  const std::string msg = chorusGetLastError(nullptr);
  EXPECT_NE(msg.find("chorusCommSplit"), std::string::npos) << msg;
  EXPECT_EQ(child, nullptr);
  for (chorusComm_t c : comms) chorusCommAbort(c);
}

// ---- windows -------------------------------------------------------------------------------------------------

TEST(Windows, RegisterCheckAndDeregisterCollectively) {
  const int n = 3;
  auto comms = initAll(n);
  std::vector<void*> bufs(n);
  for (auto& b : bufs) ASSERT_EQ(chorusMemAlloc(&b, 1 << 16), chorusSuccess);
  std::vector<chorusWindow_t> wins(n, nullptr);
  onThreads(n, [&](int r) {
    ASSERT_EQ(chorusCommWindowRegister(comms[r], bufs[r], 1 << 16, &wins[r], CHORUS_WIN_COLL_SYMMETRIC), chorusSuccess)
        << chorusGetLastError(comms[r]);
    // Collectives on a window's buffer run as on any buffer.
    auto* p = static_cast<int32_t*>(bufs[r]);
    for (int i = 0; i < 1000; ++i) p[i] = r + i;
    ASSERT_EQ(chorusAllReduce(p, p, 1000, chorusInt32, chorusSum, comms[r], nullptr), chorusSuccess);
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(p[i], 3 * i + 3);
  });
  onThreads(n, [&](int r) { EXPECT_EQ(chorusCommWindowDeregister(comms[r], wins[r]), chorusSuccess); });
  // Ranks that disagree: every rank learns it.
  onThreads(n, [&](int r) {
    chorusWindow_t w = nullptr;
    const size_t size = r == 1 ? 4096 : 8192;
    EXPECT_EQ(chorusCommWindowRegister(comms[r], bufs[r], size, &w, CHORUS_WIN_COLL_SYMMETRIC), chorusInvalidUsage);
    EXPECT_NE(std::string(chorusGetLastError(comms[r])).find("symmetric window"), std::string::npos);
    EXPECT_EQ(w, nullptr);
  });
  onThreads(n, [&](int r) {
    chorusWindow_t w = nullptr;
    char* unaligned = static_cast<char*>(bufs[r]) + (r == 2 ? 64 : 0);
    EXPECT_EQ(chorusCommWindowRegister(comms[r], unaligned, 4096, &w, CHORUS_WIN_COLL_SYMMETRIC), chorusInvalidUsage);
    EXPECT_NE(std::string(chorusGetLastError(comms[r])).find("aligned"), std::string::npos);
  });
  // Default windows may differ in size and alignment.
  onThreads(n, [&](int r) {
    chorusWindow_t w = nullptr;
    ASSERT_EQ(chorusCommWindowRegister(comms[r], static_cast<char*>(bufs[r]) + r, 100 + r, &w, CHORUS_WIN_DEFAULT),
              chorusSuccess);
    EXPECT_EQ(chorusCommWindowDeregister(comms[r], w), chorusSuccess);
  });
  chorusWindow_t w;
  EXPECT_EQ(chorusCommWindowRegister(comms[0], bufs[0], 0, &w, 0), chorusInvalidArgument);
  EXPECT_EQ(chorusCommWindowRegister(comms[0], bufs[0], 64, &w, 4), chorusInvalidArgument);
  EXPECT_EQ(chorusCommWindowRegister(comms[0], bufs[0], 64, nullptr, 0), chorusInvalidArgument);
  EXPECT_EQ(chorusCommWindowDeregister(comms[0], wins[0]), chorusInvalidArgument);  // already released
  for (void* b : bufs) EXPECT_EQ(chorusMemFree(b), chorusSuccess);
  destroyAll(comms);
}

// ---- Revoke --------------------------------------------------------------------------------------------------

TEST(Revoke, PendingAndLaterOperationsFailClearly) {
  auto comms = initAll(2);
  chorusResult_t pending = chorusSuccess;
  std::string pendingError;
  // Rank 0 waits for a message rank 1 never sends; revoking rank 0 ends the wait.
  std::thread waiter([&] {
    float x = 0;
    pending = chorusRecv(&x, 1, chorusFloat32, 1, comms[0], nullptr);
    pendingError = chorusGetLastError(comms[0]);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(chorusCommRevoke(comms[0], 1), chorusInvalidArgument);
  ASSERT_EQ(chorusCommRevoke(comms[0], CHORUS_REVOKE_DEFAULT), chorusSuccess) << chorusGetLastError(comms[0]);
  waiter.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_NE(pending, chorusSuccess);
  EXPECT_NE(pendingError.find("revoked"), std::string::npos) << pendingError;
  float x = 1, y = 0;
  EXPECT_EQ(chorusAllReduce(&x, &y, 1, chorusFloat32, chorusSum, comms[0], nullptr), chorusInvalidUsage);
  EXPECT_NE(std::string(chorusGetLastError(comms[0])).find("revoked (chorusCommRevoke)"), std::string::npos)
      << chorusGetLastError(comms[0]);
  EXPECT_EQ(chorusCommFinalize(comms[0]), chorusInvalidUsage);
  destroyAll(comms);
}

}  // namespace
}  // namespace chorus::test

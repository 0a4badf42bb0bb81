#include "core/red_ops.h"

#include <cstring>
#include <mutex>
#include <optional>
#include <type_traits>
#include <unordered_map>

#include "base/error.h"
#include "core/comm.h"

namespace chorus::core {

namespace {

struct PreMulSum {
  reduce::DType dtype;
  uint64_t bits;   // the scalar, when read at creation
  const void* at;  // or where it is read at each run (chorusScalarDevice)
};

std::mutex mu;
// Per communicator, its ops by index (op value - chorusNumOps); a destroyed op leaves an empty slot that the
// next creation reuses. Never destroyed: communicators are destroyed from atexit paths too.
std::unordered_map<const Comm*, std::vector<std::optional<PreMulSum>>>& tables() {
  static auto* t = new std::unordered_map<const Comm*, std::vector<std::optional<PreMulSum>>>();
  return *t;
}

uint64_t readScalar(const void* p, reduce::DType t) {
  uint64_t bits = 0;
  std::memcpy(&bits, p, reduce::dtypeSize(t));
  return bits;
}

double scalarValue(uint64_t bits, reduce::DType t) {
  switch (t) {
    case reduce::DType::kFloat16: return reduce::halfToFloat(static_cast<uint16_t>(bits));
    case reduce::DType::kBfloat16: return reduce::bf16ToFloat(static_cast<uint16_t>(bits));
    case reduce::DType::kFloat8e4m3: return reduce::e4m3ToFloat(static_cast<uint8_t>(bits));
    case reduce::DType::kFloat8e5m2: return reduce::e5m2ToFloat(static_cast<uint8_t>(bits));
    case reduce::DType::kFloat32: {
      float f;
      std::memcpy(&f, &bits, sizeof f);
      return f;
    }
    case reduce::DType::kFloat64: {
      double d;
      std::memcpy(&d, &bits, sizeof d);
      return d;
    }
    default: CHORUS_THROW(Status::kInternalError, "scalarValue of an integer type");
  }
}

// dst[i] = src[i] * scalar in T's width, wrapping as NCCL's integer arithmetic does.
template <typename T>
void scaleIntegers(void* dst, const void* src, size_t n, uint64_t bits) {
  using U = std::make_unsigned_t<T>;
  U s;
  std::memcpy(&s, &bits, sizeof s);
  const auto* in = static_cast<const U*>(src);
  auto* out = static_cast<U*>(dst);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<U>(in[i] * s);
}

void scale(reduce::DType t, void* dst, const void* src, size_t n, uint64_t bits) {
  switch (t) {
    case reduce::DType::kInt8:
    case reduce::DType::kUint8: return scaleIntegers<uint8_t>(dst, src, n, bits);
    case reduce::DType::kInt32:
    case reduce::DType::kUint32: return scaleIntegers<uint32_t>(dst, src, n, bits);
    case reduce::DType::kInt64:
    case reduce::DType::kUint64: return scaleIntegers<uint64_t>(dst, src, n, bits);
    default: {
      reduce::ReduceParams p;
      p.premul = scalarValue(bits, t);
      // The scale kernel copies bit for bit when the scalar is 1.
      reduce::kernels(t, reduce::Op::kSum).scale(dst, src, n, p);
    }
  }
}

}  // namespace

int createPreMulSum(Comm* comm, const void* scalar, reduce::DType dtype, bool immediate) {
  CHORUS_CHECK_USAGE(comm->device() < 0,
                     "chorusRedOpCreatePreMulSum is implemented for host communicators only (this one is on CUDA "
                     "device ",
                     comm->device(), ")");
  PreMulSum op{dtype, immediate ? readScalar(scalar, dtype) : 0, immediate ? nullptr : scalar};
  std::lock_guard<std::mutex> lock(mu);
  auto& table = tables()[comm];
  size_t i = 0;
  while (i < table.size() && table[i].has_value()) ++i;
  CHORUS_CHECK_USAGE(i < static_cast<size_t>(chorusMaxRedOp) - chorusNumOps, "too many reduction operations");
  if (i == table.size()) table.emplace_back();
  table[i] = op;
  return static_cast<int>(chorusNumOps + i);
}

void destroyRedOp(const Comm* comm, int op) {
  std::lock_guard<std::mutex> lock(mu);
  auto it = tables().find(comm);
  const size_t i = static_cast<size_t>(op) - chorusNumOps;
  CHORUS_CHECK_ARG(op >= chorusNumOps && it != tables().end() && i < it->second.size() && it->second[i], "op ", op,
                   " is not a reduction operation created on this communicator",
                   op >= 0 && op < chorusNumOps ? " (built-in operations cannot be destroyed)" : "");
  it->second[i].reset();
}

void forgetRedOps(const Comm* comm) {
  std::lock_guard<std::mutex> lock(mu);
  tables().erase(comm);
}

void resolveDynamicRedOp(const Comm& comm, int redop, coll::CollOp* op) {
  std::lock_guard<std::mutex> lock(mu);
  auto it = tables().find(&comm);
  const size_t i = static_cast<size_t>(redop) - chorusNumOps;
  CHORUS_CHECK_ARG(redop >= chorusNumOps && it != tables().end() && i < it->second.size() && it->second[i], "op ",
                   redop, " is neither a chorusRedOp_t (0..", chorusNumOps - 1,
                   ") nor an operation of chorusRedOpCreatePreMulSum on this communicator");
  const PreMulSum& p = *it->second[i];
  CHORUS_CHECK_ARG(p.dtype == op->dtype, "op ", redop, " was created for datatype ", reduce::dtypeName(p.dtype),
                   ", not ", reduce::dtypeName(op->dtype));
  op->op = reduce::Op::kSum;
  op->preMulSum = true;
  op->preMulBits = p.bits;
  op->preMulAt = p.at;
}

coll::CollOp applyPreMulSum(const coll::CollOp& op, int nranks, std::vector<char>* scratch) {
  coll::CollOp p = op;
  p.preMulSum = false;
  const uint64_t bits = op.preMulAt != nullptr ? readScalar(op.preMulAt, op.dtype) : op.preMulBits;
  const size_t n = op.type == coll::CollType::kReduceScatter ? op.count * static_cast<size_t>(nranks) : op.count;
  if (n == 0) return p;
  scratch->resize(n * reduce::dtypeSize(op.dtype));
  scale(op.dtype, scratch->data(), op.sendbuff, n, bits);
  p.sendbuff = scratch->data();
  return p;
}

}  // namespace chorus::core

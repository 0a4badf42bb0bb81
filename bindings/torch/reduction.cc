#include "reduction.h"

#include <c10/util/Exception.h>

#include "tensor_util.h"

namespace chorus_torch {

namespace {

const char* opName(c10d::ReduceOp::RedOpType op) {
  switch (op) {
    case c10d::ReduceOp::SUM: return "SUM";
    case c10d::ReduceOp::AVG: return "AVG";
    case c10d::ReduceOp::PRODUCT: return "PRODUCT";
    case c10d::ReduceOp::MIN: return "MIN";
    case c10d::ReduceOp::MAX: return "MAX";
    case c10d::ReduceOp::BAND: return "BAND";
    case c10d::ReduceOp::BOR: return "BOR";
    case c10d::ReduceOp::BXOR: return "BXOR";
    case c10d::ReduceOp::PREMUL_SUM: return "PREMUL_SUM";
    default: return "UNUSED";
  }
}

}  // namespace

Reduction planReduction(const char* name, const c10d::ReduceOp& op, at::ScalarType type) {
  Reduction r;
  r.foldOp = op.op_;
  const std::optional<chorusDataType_t> dtype = chorusTypeOf(type);
  const bool isBool = type == at::kBool;
  const bool integral = at::isIntegralType(type, /*includeBool=*/true);
  switch (op.op_) {
    case c10d::ReduceOp::SUM:
    case c10d::ReduceOp::PRODUCT:
    case c10d::ReduceOp::MIN:
    case c10d::ReduceOp::MAX: {
      static const chorusRedOp_t kOps[] = {chorusSum, chorusAvg, chorusProd, chorusMin, chorusMax};
      r.op = kOps[op.op_];
      if (isBool) r.op = (r.op == chorusSum || r.op == chorusMax) ? chorusMax : chorusMin;
      break;
    }
    case c10d::ReduceOp::AVG:
      TORCH_CHECK(dtype.has_value() && !isBool, name, ": ReduceOp.AVG is not supported on ", type,
                  " tensors (Chorus averages ", "int8/uint8/int32/int64/float16/bfloat16/float32/float64)");
      r.op = chorusAvg;
      break;
    case c10d::ReduceOp::BAND:
    case c10d::ReduceOp::BOR:
    case c10d::ReduceOp::BXOR:
      TORCH_CHECK(integral, name, ": cannot use ReduceOp.", opName(op.op_), " with non-integral dtype ", type);
      r.native = false;
      break;
    case c10d::ReduceOp::PREMUL_SUM: {
      TORCH_CHECK(at::isFloatingType(type), name, ": ReduceOp.PREMUL_SUM needs a floating-point tensor, got ", type);
      TORCH_CHECK(op.supplement_.defined(), name, ": ReduceOp.PREMUL_SUM without a factor");
      // The only supplement c10d defines (torch.distributed._make_nccl_premul_sum builds it).
      const auto* factor = static_cast<const c10d::NCCLPreMulSumSupplement*>(op.supplement_.get());
      if (!factor->tensor_factors.empty()) {
        TORCH_CHECK(factor->tensor_factors.size() == 1, name, ": PREMUL_SUM takes one factor per input tensor");
        r.premulTensor = factor->tensor_factors[0];
      } else {
        r.premulScalar = factor->double_factor;
      }
      r.op = chorusSum;
      r.foldOp = c10d::ReduceOp::SUM;
      break;
    }
    default: TORCH_CHECK(false, name, ": unsupported ReduceOp ", static_cast<int>(op.op_));
  }
  if (!dtype.has_value()) {
    TORCH_CHECK(r.foldOp != c10d::ReduceOp::AVG, name, ": ReduceOp.AVG is not supported on ", type);
    r.native = false;
  } else {
    r.dtype = *dtype;
  }
  return r;
}

void fold(at::Tensor& acc, const at::Tensor& x, c10d::ReduceOp::RedOpType op) {
  const bool isBool = acc.scalar_type() == at::kBool;
  switch (op) {
    case c10d::ReduceOp::SUM:
      if (isBool) {
        acc.logical_or_(x);
      } else {
        acc.add_(x);
      }
      break;
    case c10d::ReduceOp::PRODUCT:
      if (isBool) {
        acc.logical_and_(x);
      } else {
        acc.mul_(x);
      }
      break;
    case c10d::ReduceOp::MIN: at::minimum_out(acc, acc, x); break;
    case c10d::ReduceOp::MAX: at::maximum_out(acc, acc, x); break;
    case c10d::ReduceOp::BAND: acc.bitwise_and_(x); break;
    case c10d::ReduceOp::BOR: acc.bitwise_or_(x); break;
    case c10d::ReduceOp::BXOR: acc.bitwise_xor_(x); break;
    default: TORCH_CHECK(false, "chorus: no local fold for ReduceOp ", opName(op));
  }
}

void premultiply(const at::Tensor& t, const Reduction& r) {
  if (r.premulTensor.has_value()) {
    t.mul_(r.premulTensor->to(t.device()));
  } else if (r.premulScalar.has_value()) {
    t.mul_(*r.premulScalar);
  }
}

}  // namespace chorus_torch

// c10d's ReduceOp on a tensor type, as Chorus does it. Chorus reduces sum, prod, max, min and avg over its
// own element types; the rest is built here on top of the public API:
//  - bool (held as uint8 0/1): sum is max (logical or), product is min (logical and), as ProcessGroupNCCL
//    maps them (Gloo 1.13 refuses bool);
//  - PREMUL_SUM: the input multiplied by the factor, then summed;
//  - BAND, BOR, BXOR and types Chorus lacks (int16, ...): the values are gathered and folded locally, in rank
//    order, so every rank computes the same bits.
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <optional>

#include "chorus/chorus.h"

namespace chorus_torch {

struct Reduction {
  bool native = true;  // one Chorus reduction (op, dtype); else gather and fold(foldOp)
  chorusRedOp_t op = chorusSum;
  chorusDataType_t dtype = chorusFloat32;
  c10d::ReduceOp::RedOpType foldOp = c10d::ReduceOp::SUM;
  std::optional<double> premulScalar;      // PREMUL_SUM: multiply the input by this ...
  std::optional<at::Tensor> premulTensor;  // ... or by this one-element tensor, before summing
  bool premul() const { return premulScalar.has_value() || premulTensor.has_value(); }
};

// Throws (RuntimeError) "<opName>: ..." when the op cannot apply to the type (bitwise ops on floating
// types, AVG where no Chorus type exists, UNUSED).
Reduction planReduction(const char* opName, const c10d::ReduceOp& op, at::ScalarType type);

// acc = acc (op) x, element-wise, in place (acc and x of one type and size).
void fold(at::Tensor& acc, const at::Tensor& x, c10d::ReduceOp::RedOpType op);

// Multiplies `t` in place by the PREMUL_SUM factor of r.
void premultiply(const at::Tensor& t, const Reduction& r);

}  // namespace chorus_torch

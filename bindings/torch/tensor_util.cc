#include "tensor_util.h"

#include <c10/util/Exception.h>

namespace chorus_torch {

std::optional<chorusDataType_t> chorusTypeOf(at::ScalarType type) {
  switch (type) {
    case at::kByte: return chorusUint8;
    case at::kChar: return chorusInt8;
    case at::kInt: return chorusInt32;
    case at::kLong: return chorusInt64;
    case at::kHalf: return chorusFloat16;
    case at::kFloat: return chorusFloat32;
    case at::kDouble: return chorusFloat64;
    case at::kBFloat16: return chorusBfloat16;
    case at::kBool: return chorusUint8;
    default: return std::nullopt;
  }
}

size_t byteSize(const at::Tensor& t) {
  return static_cast<size_t>(t.numel()) * t.element_size();
}

void checkTensors(const char* op, const std::vector<at::Tensor>& tensors, bool sameShape) {
  TORCH_CHECK(!tensors.empty(), op, ": requires non-empty tensor list");
  const at::Tensor& first = tensors[0];
  for (const at::Tensor& t : tensors) {
    TORCH_CHECK(t.defined(), op, ": undefined tensor");
    TORCH_CHECK(t.layout() == at::kStrided, op, ": only dense (strided) tensors are supported, got layout ",
                t.layout());
    TORCH_CHECK(t.device().type() == first.device().type(), op, ": tensors must be on one device type, got ",
                first.device(), " and ", t.device());
    TORCH_CHECK(t.device().is_cpu() || t.device().is_cuda(), op, ": tensors must be on the CPU or a CUDA device, got ",
                t.device());
    if (sameShape) {
      TORCH_CHECK(t.scalar_type() == first.scalar_type(), op, ": tensors must have the same type, got ",
                  first.scalar_type(), " and ", t.scalar_type());
      TORCH_CHECK(t.sizes() == first.sizes(), op, ": tensors must have the same size, got ", first.sizes(), " and ",
                  t.sizes());
    }
  }
}

void checkLike(const char* op, const char* what, const std::vector<at::Tensor>& tensors, const at::Tensor& like) {
  for (const at::Tensor& t : tensors) {
    TORCH_CHECK(t.defined() && t.layout() == at::kStrided, op, ": ", what, " must be dense tensors");
    TORCH_CHECK(t.scalar_type() == like.scalar_type(), op, ": ", what, " must have type ", like.scalar_type(), ", got ",
                t.scalar_type());
    TORCH_CHECK(t.numel() == like.numel(), op, ": ", what, " must have ", like.numel(), " elements, got ", t.numel());
    TORCH_CHECK(t.device() == like.device(), op, ": ", what, " must be on ", like.device(), ", got ", t.device());
  }
}

void checkRoot(const char* op, int64_t root, int size) {
  TORCH_CHECK(root >= 0 && root < size, op, ": invalid root rank: ", root, " (the group has ", size, " ranks)");
}

bool isDense(const at::Tensor& t) {
  // Row-major only: a channels-last tensor is dense too, but its bytes are in another order than a peer's
  // row-major tensor of the same shape, so it is staged like any strided view.
  return t.is_contiguous();
}

Staged stage(const at::Tensor& t) {
  if (isDense(t)) return Staged{t, t};
  return Staged{t, at::empty(t.sizes(), t.options().memory_format(at::MemoryFormat::Contiguous))};
}

at::Tensor flatBuffer(const std::vector<at::Tensor>& tensors) {
  int64_t total = 0;
  for (const at::Tensor& t : tensors) total += t.numel();
  return at::empty({total}, tensors[0].options().memory_format(at::MemoryFormat::Contiguous));
}

void copyIntoFlat(const at::Tensor& flat, const std::vector<at::Tensor>& tensors) {
  int64_t at = 0;
  for (const at::Tensor& t : tensors) {
    flat.narrow(0, at, t.numel()).view(t.sizes()).copy_(t);
    at += t.numel();
  }
}

void copyFromFlat(const at::Tensor& flat, const std::vector<at::Tensor>& tensors) {
  int64_t at = 0;
  for (const at::Tensor& t : tensors) {
    // t may be non-contiguous: copy_ writes through its strides.
    t.copy_(flat.narrow(0, at, t.numel()).view(t.sizes()));
    at += t.numel();
  }
}

}  // namespace chorus_torch

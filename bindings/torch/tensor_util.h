// Tensors as Chorus buffers: element types, argument checks with Gloo's wording, and staging buffers for
// tensors that are not contiguous or that c10d hands over as lists.
#pragma once

#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <vector>

#include "chorus/chorus.h"

namespace chorus_torch {

// Chorus's element type for a tensor's, nullopt where Chorus has none (int16, complex, ...). Bool maps to
// uint8 (bytes that hold 0 or 1); reductions over it need the remapping done by planReduction().
std::optional<chorusDataType_t> chorusTypeOf(at::ScalarType type);

// Bytes of a tensor's elements; data movement sends any type as this many chorusUint8.
size_t byteSize(const at::Tensor& t);

// Throws (c10::Error, Python RuntimeError) "<op>: <message>" unless the tensors are dense, on one device
// type, and (when sameShape) of one type and size.
void checkTensors(const char* op, const std::vector<at::Tensor>& tensors, bool sameShape = true);
// Each of `tensors` has the element type and the number of elements of `like`.
void checkLike(const char* op, const char* what, const std::vector<at::Tensor>& tensors, const at::Tensor& like);
void checkRoot(const char* op, int64_t root, int size);

// True when `t`'s elements lie row-major and contiguous, so its storage can be handed to Chorus as is.
bool isDense(const at::Tensor& t);

// A contiguous stand-in for a user tensor: the tensor itself when isDense, else a staging buffer of the
// same type and size that the plan copies from (inputs, in its prologue) or into (outputs, in its epilogue).
struct Staged {
  at::Tensor user;
  at::Tensor buffer;
  bool copy() const { return !user.is_same(buffer); }
};
Staged stage(const at::Tensor& t);

// One contiguous buffer laid out as the concatenation of `tensors` (flattened), and the copies in and out.
at::Tensor flatBuffer(const std::vector<at::Tensor>& tensors);
void copyIntoFlat(const at::Tensor& flat, const std::vector<at::Tensor>& tensors);
void copyFromFlat(const at::Tensor& flat, const std::vector<at::Tensor>& tensors);

}  // namespace chorus_torch

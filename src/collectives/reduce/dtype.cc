#include "collectives/reduce/reduce.h"

namespace chorus::reduce {

const char* dtypeName(DType t) {
  switch (t) {
    case DType::kInt8: return "int8";
    case DType::kUint8: return "uint8";
    case DType::kInt32: return "int32";
    case DType::kUint32: return "uint32";
    case DType::kInt64: return "int64";
    case DType::kUint64: return "uint64";
    case DType::kFloat16: return "float16";
    case DType::kFloat32: return "float32";
    case DType::kFloat64: return "float64";
    case DType::kBfloat16: return "bfloat16";
    case DType::kFloat8e4m3: return "float8e4m3";
    case DType::kFloat8e5m2: return "float8e5m2";
  }
  return "unknown";
}

bool isFloating(DType t) {
  switch (t) {
    case DType::kFloat16:
    case DType::kFloat32:
    case DType::kFloat64:
    case DType::kBfloat16:
    case DType::kFloat8e4m3:
    case DType::kFloat8e5m2: return true;
    default: return false;
  }
}

const char* isaName(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kSse2: return "sse2";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
  }
  return "unknown";
}

}  // namespace chorus::reduce

#include "model/embedding.h"

#include <cstring>

namespace chorus::train {

template <typename F>
void embeddingForward(F* out, const int32_t* tokens, const F* wte, int vocabStart, int vocabLocal, const F* wpe, int B,
                      int T, int C) {
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < T; ++t) {
      F* o = out + (static_cast<int64_t>(b) * T + t) * C;
      int row = tokens[b * T + t] - vocabStart;
      if (row >= 0 && row < vocabLocal) {
        const F* e = wte + static_cast<int64_t>(row) * C;
        if (wpe) {
          const F* p = wpe + static_cast<int64_t>(t) * C;
          for (int i = 0; i < C; ++i) o[i] = e[i] + p[i];
        } else {
          std::memcpy(o, e, sizeof(F) * C);
        }
      } else if (wpe) {
        std::memcpy(o, wpe + static_cast<int64_t>(t) * C, sizeof(F) * C);
      } else {
        std::memset(o, 0, sizeof(F) * C);
      }
    }
  }
}

template <typename F>
void addPositions(F* out, const F* wpe, int B, int T, int C) {
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) {
      F* o = out + (static_cast<int64_t>(b) * T + t) * C;
      const F* p = wpe + static_cast<int64_t>(t) * C;
      for (int i = 0; i < C; ++i) o[i] += p[i];
    }
}

template <typename F>
void embeddingBackward(F* dwte, F* dwpe, const F* dout, const int32_t* tokens, int vocabStart, int vocabLocal, int B,
                       int T, int C, bool accumulate) {
  if (!accumulate) std::memset(dwte, 0, sizeof(F) * vocabLocal * C);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) {
      int row = tokens[b * T + t] - vocabStart;
      if (row < 0 || row >= vocabLocal) continue;
      const F* d = dout + (static_cast<int64_t>(b) * T + t) * C;
      F* g = dwte + static_cast<int64_t>(row) * C;
      for (int i = 0; i < C; ++i) g[i] += d[i];
    }
  if (!dwpe) return;
  for (int t = 0; t < T; ++t) {
    F* g = dwpe + static_cast<int64_t>(t) * C;
    std::memcpy(g, dout + static_cast<int64_t>(t) * C, sizeof(F) * C);
    for (int b = 1; b < B; ++b) {
      const F* d = dout + (static_cast<int64_t>(b) * T + t) * C;
      for (int i = 0; i < C; ++i) g[i] += d[i];
    }
  }
}

template <typename F>
void addPositionRows(F* out, const F* wpe, int64_t firstRow, int R, int T, int C) {
  for (int r = 0; r < R; ++r) {
    F* o = out + static_cast<int64_t>(r) * C;
    const F* p = wpe + ((firstRow + r) % T) * C;
    for (int i = 0; i < C; ++i) o[i] += p[i];
  }
}

template <typename F>
void positionGradRows(F* dwpe, const F* dout, int64_t firstRow, int R, int T, int C) {
  std::memset(dwpe, 0, sizeof(F) * T * C);
  for (int r = 0; r < R; ++r) {
    const F* d = dout + static_cast<int64_t>(r) * C;
    F* g = dwpe + ((firstRow + r) % T) * C;
    for (int i = 0; i < C; ++i) g[i] += d[i];
  }
}

template void addPositionRows<float>(float*, const float*, int64_t, int, int, int);
template void addPositionRows<double>(double*, const double*, int64_t, int, int, int);
template void positionGradRows<float>(float*, const float*, int64_t, int, int, int);
template void positionGradRows<double>(double*, const double*, int64_t, int, int, int);
template void embeddingForward<float>(float*, const int32_t*, const float*, int, int, const float*, int, int, int);
template void embeddingForward<double>(double*, const int32_t*, const double*, int, int, const double*, int, int, int);
template void addPositions<float>(float*, const float*, int, int, int);
template void addPositions<double>(double*, const double*, int, int, int);
template void embeddingBackward<float>(float*, float*, const float*, const int32_t*, int, int, int, int, int, bool);
template void embeddingBackward<double>(double*, double*, const double*, const int32_t*, int, int, int, int, int, bool);

}  // namespace chorus::train

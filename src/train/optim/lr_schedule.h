// The learning rate of a step: linear warm-up from 0, then constant or a cosine decay to minLr at the last step
// (nanoGPT's schedule).
#ifndef CHORUS_TRAIN_OPTIM_LR_SCHEDULE_H_
#define CHORUS_TRAIN_OPTIM_LR_SCHEDULE_H_

#include <cmath>
#include <cstdint>
#include <string>

namespace chorus::train {

inline float learningRate(int64_t step, int64_t totalSteps, float lr, float minLr, int64_t warmup,
                          const std::string& schedule) {
  if (warmup > 0 && step <= warmup) return lr * static_cast<float>(step) / static_cast<float>(warmup);
  if (schedule != "cosine" || totalSteps <= warmup) return lr;
  double progress = static_cast<double>(step - warmup) / static_cast<double>(totalSteps - warmup);
  return static_cast<float>(minLr + 0.5 * (lr - minLr) * (1.0 + std::cos(3.141592653589793 * progress)));
}

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_OPTIM_LR_SCHEDULE_H_

// A fully connected layer, out = inp * W^T + b with W stored (out, in) as nn.Linear does. With tensor
// parallelism a column-parallel layer holds a slice of W's rows (its output features) and a row-parallel
// layer a slice of its columns (input features); the layer itself only sees its local shapes.
#ifndef CHORUS_TRAIN_MODEL_LINEAR_H_
#define CHORUS_TRAIN_MODEL_LINEAR_H_

namespace chorus::train {

// out (N,O) = inp (N,I) * w (O,I)^T + b (O); b may be null.
template <typename F>
void linearForward(F* out, const F* inp, const F* w, const F* b, int N, int I, int O);

// dinp (N,I) = dout * w, or += when `accumulateInput`; dw (O,I) and db (O) are overwritten with this pass's
// gradient (db may be null, dinp may be null when the input needs no gradient).
template <typename F>
void linearBackward(F* dinp, F* dw, F* db, const F* dout, const F* inp, const F* w, int N, int I, int O,
                    bool accumulateInput);

// db (O) = dout (N,O) summed over its rows, overwritten.
template <typename F>
void columnSum(F* db, const F* dout, int N, int O);

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_MODEL_LINEAR_H_

// Token and position embeddings. With tensor parallelism the token table is split by rows (vocabulary
// parallel, as Megatron-LM does): a rank looks up only the tokens in its range [vocabStart, vocabStart +
// vocabLocal) and writes zeros for the others, and the ranks' outputs are summed.
#ifndef CHORUS_TRAIN_MODEL_EMBEDDING_H_
#define CHORUS_TRAIN_MODEL_EMBEDDING_H_

#include <cstdint>

namespace chorus::train {

// out is (B,T,C); tokens is (B,T); wte is (vocabLocal, C) holding rows [vocabStart, ...); wpe is (T, C), or
// null to leave the positions out (added later with addPositions, after a tensor-parallel sum).
template <typename F>
void embeddingForward(F* out, const int32_t* tokens, const F* wte, int vocabStart, int vocabLocal, const F* wpe, int B,
                      int T, int C);

// out (B,T,C) += wpe (T,C) broadcast over the batch.
template <typename F>
void addPositions(F* out, const F* wpe, int B, int T, int C);

// out (R,C) += the position embedding of rows [firstRow, firstRow + R) of the flattened (B,T) batch (row r is
// position r % T): the rows a rank holds under sequence parallelism.
template <typename F>
void addPositionRows(F* out, const F* wpe, int64_t firstRow, int R, int T, int C);

// dwpe (T,C) = the gradient of the positions from rows [firstRow, firstRow + R) of dout (R,C), overwritten (a
// partial sum under sequence parallelism: the group sums it).
template <typename F>
void positionGradRows(F* dwpe, const F* dout, int64_t firstRow, int R, int T, int C);

// dwte (vocabLocal, C): when `accumulate`, adds every in-range token's row of dout; else overwrites with
// that sum. dwpe (T, C), when not null, is overwritten with dout summed over the batch.
template <typename F>
void embeddingBackward(F* dwte, F* dwpe, const F* dout, const int32_t* tokens, int vocabStart, int vocabLocal, int B,
                       int T, int C, bool accumulate);

}  // namespace chorus::train

#endif  // CHORUS_TRAIN_MODEL_EMBEDDING_H_

#include "run/trainer.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "ckpt/atomic_file.h"
#include "ckpt/checkpoint.h"
#include "data/sampler.h"
#include "model/gpt_stage.h"
#include "model/init.h"
#include "optim/adamw.h"
#include "optim/lr_schedule.h"
#include "parallel/data_parallel.h"
#include "run/report.h"
#include "tensor/blas.h"
#include "tensor/memory_ledger.h"

namespace chorus::train {
namespace {

using Clock = std::chrono::steady_clock;
double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double totalWait(const std::vector<Comm*>& comms) {
  double s = 0;
  for (Comm* c : comms) s += c->stats().waitSeconds;
  return s;
}

int64_t zeroFormulaBytes(int zero, int64_t psi, int n) {
  switch (zero) {
    case 0: return 16 * psi;
    case 1: return 8 * psi + 8 * psi / n;
    case 2: return 4 * psi + 12 * psi / n;
    default: return 16 * psi / n;
  }
}

class RankTrainer {
 public:
  RankTrainer(const TrainOptions& opt, Comm& world, const Corpus& corpus)
      : opt_(opt),
        world_(world),
        layout_(opt.model, ModelPart::whole(opt.model), 16 * static_cast<int64_t>(world.size())),
        corpus_(corpus),
        report_(world.rank() == 0, opt.quiet),
        control_(world.duplicate()) {
    DataParallelOptions dpo;
    dpo.zero = opt.zero;
    dpo.bucketElems = static_cast<int64_t>(opt.bucketMb * (1 << 20) / sizeof(float));
    dpo.bf16Comm = opt.gradCommDtype == "bf16";
    engine_ = DataParallel::create(dpo, layout_, world_);
    model_ = std::make_unique<GptStage<float>>(layout_, opt.batch, nullptr);
    acts_ = std::make_unique<StageActivations<float>>(layout_, opt.batch);
    adam_.beta1 = opt.beta1;
    adam_.beta2 = opt.beta2;
    adam_.weightDecay = opt.weightDecay;
  }

  void run() {
    start();
    for (int64_t step = firstStep_; step <= opt_.steps; ++step) trainStep(step);
    finish();
  }

 private:
  int dp() const { return world_.size(); }
  int64_t globalTokens() const { return static_cast<int64_t>(opt_.globalSequences(dp())) * opt_.model.seqLen; }

  void start() {
    std::vector<float> p(static_cast<size_t>(layout_.size())), zeros(p.size());
    uint64_t seed = opt_.seed;
    checkSaveDirectory();
    if (!opt_.resume.empty()) {
      std::string dir = latestCheckpoint(opt_.resume);
      FullState state = loadFullState(dir);
      checkSameModel(state, opt_.model);
      importState(state, *engine_);
      firstStep_ = state.run.step + 1;
      seed = state.run.seed;
      if (seed != opt_.seed)
        report_.line("resume: using the checkpoint's seed %llu", static_cast<unsigned long long>(seed));
      report_.line("resumed from %s at step %lld (saved by %d ranks: dp %d, ZeRO-%d)", dir.c_str(),
                   static_cast<long long>(state.run.step), state.run.world, state.run.dp, state.run.zero);
    } else {
      initParams(layout_, seed, p.data());
      engine_->importFull(p.data(), zeros.data(), zeros.data());
    }
    report_.openCsv(opt_.csv);
    seed_ = seed;
    train_.emplace(corpus_.train, opt_.model.seqLen, seed);
    val_.emplace(corpus_.val, opt_.model.seqLen, seed);
    // The GEMM peak each rank reaches while the others measure theirs: the machine's aggregate, which MFU uses.
    double peak = measureGemmPeakGflops(opt_.peakMs) * 1e9;
    control_->allReduce(&peak, &peak, 1, DType::kFloat64, RedOp::kSum).wait();
    peakFlops_ = peak;
    if (!opt_.quiet) banner();
    for (Comm* c : commsForStats()) c->stats().reset();
    MemoryLedger::current().resetPeaks();
  }

  void banner() {
    report_.line("chorus-train: %s, %lld parameters (%.2f M)", opt_.model.describe().c_str(),
                 static_cast<long long>(opt_.model.paramCount()), opt_.model.paramCount() / 1e6);
    report_.line("layout: %d ranks, dp %d, ZeRO-%d, backend %s, gradient buckets %.1f MiB (%zu), gradients in %s",
                 world_.size(), dp(), opt_.zero, world_.backendName(), opt_.bucketMb, engine_->plan().buckets().size(),
                 opt_.gradCommDtype.c_str());
    report_.line(
        "data: %s (%lld training bytes, %lld validation bytes); %d sequences of %d tokens per step "
        "(batch %d x grad-accum %d x dp %d)",
        corpus_.name.c_str(), static_cast<long long>(corpus_.train.size()), static_cast<long long>(corpus_.val.size()),
        opt_.globalSequences(dp()), opt_.model.seqLen, opt_.batch, opt_.gradAccum, dp());
    report_.line("GEMM peak %.1f GFLOP/s over all ranks; %.1f MFLOP per token", peakFlops_ / 1e9,
                 opt_.model.flopsPerToken() / 1e6);
  }

  // Every communicator whose waits count as exposed communication: the engine's and the control one (the
  // loss and gradient-norm reduction).
  std::vector<Comm*> commsForStats() {
    std::vector<Comm*> c = engine_->comms();
    c.push_back(control_.get());
    return c;
  }

  // A --save directory that already holds checkpoints of another model is refused: saving would bury them.
  void checkSaveDirectory() {
    if (opt_.save.empty() || opt_.save == opt_.resume) return;
    std::string dir;
    try {
      dir = latestCheckpoint(opt_.save);
    } catch (const CheckpointError&) {
      return;  // nothing there yet
    }
    FullState there = loadFullState(dir);
    if (there.run.model.describe() != opt_.model.describe())
      throw CheckpointError("--save " + opt_.save + " holds checkpoints of another model (" +
                            there.run.model.describe() + "); choose another directory");
  }

  void trainStep(int64_t step) {
    const auto comms = commsForStats();
    const double wait0 = totalWait(comms);
    const auto t0 = Clock::now();
    const float gradScale = 1.0f / static_cast<float>(globalTokens());
    double lossSum = 0;
    for (int micro = 0; micro < opt_.gradAccum; ++micro) {
      engine_->beginMicroStep(micro, opt_.gradAccum);
      int64_t first = firstSequence(micro, world_.rank(), dp(), opt_.batch);
      train_->fill(step, first, opt_.batch, acts_->tokens.data(), acts_->targets.data());
      model_->forward(*acts_, *engine_);
      lossSum += acts_->loss;
      model_->backward(*acts_, gradScale, nullptr, *engine_);
    }
    engine_->finishGradients();
    if (step == opt_.steps && !opt_.dumpGrads.empty()) dumpGradients();
    // The loss and the squared gradient norm of the whole data-parallel group in one small reduction.
    double sums[2] = {lossSum, engine_->shardGradSquares()};
    control_->allReduce(sums, sums, 2, DType::kFloat64, RedOp::kSum).wait();
    const double loss = sums[0] / static_cast<double>(globalTokens());
    const double norm = std::sqrt(sums[1]);
    const float clipScale = opt_.clip > 0 && norm > opt_.clip ? static_cast<float>(opt_.clip / (norm + 1e-6)) : 1.0f;
    const float lr = learningRate(step, opt_.steps, opt_.lr, opt_.minLr, opt_.warmup, opt_.schedule);
    engine_->step(adam_, step, lr, clipScale);
    const double dt = seconds(t0, Clock::now());

    StepRecord r;
    r.step = step;
    r.loss = loss;
    r.lr = lr;
    r.gradNorm = norm;
    r.stepMs = dt * 1e3;
    r.tokensPerSecond = static_cast<double>(globalTokens()) / dt;
    r.exposedCommMs = (totalWait(comms) - wait0) * 1e3;
    r.mfu = opt_.model.flopsPerToken() * static_cast<double>(globalTokens()) / dt / peakFlops_;
    stepsRun_++;
    timeRun_ += dt;
    commRun_ += r.exposedCommMs / 1e3;
    tokensRun_ += globalTokens();
    if (opt_.evalEvery > 0 && (step % opt_.evalEvery == 0 || step == opt_.steps)) r.valLoss = validationLoss();
    report_.step(r, opt_.steps, step % opt_.logEvery == 0 || step == opt_.steps || r.valLoss >= 0);
    lastVal_ = r.valLoss >= 0 ? r.valLoss : lastVal_;
    lastLoss_ = loss;
    if (step == firstStep_ && !opt_.quiet) memoryTable();
    if (!opt_.save.empty() && ((opt_.saveEvery > 0 && step % opt_.saveEvery == 0) || step == opt_.steps)) save(step);
  }

  double validationLoss() {
    engine_->beginEvaluation();
    double sum = 0;
    for (int k = world_.rank(); k < opt_.evalBatches; k += dp()) {
      val_->fillFixed(static_cast<int64_t>(k) * opt_.batch, opt_.batch, acts_->tokens.data(), acts_->targets.data());
      model_->forward(*acts_, *engine_);
      sum += acts_->loss;
    }
    engine_->endEvaluation();
    control_->allReduce(&sum, &sum, 1, DType::kFloat64, RedOp::kSum).wait();
    return sum / (static_cast<double>(opt_.evalBatches) * opt_.batch * opt_.model.seqLen);
  }

  void memoryTable() {
    const MemoryLedger& ledger = MemoryLedger::current();
    const int kinds = static_cast<int>(MemKind::kCount);
    std::vector<int64_t> mine(kinds), all(static_cast<size_t>(kinds) * world_.size());
    for (int k = 0; k < kinds; ++k) mine[k] = ledger.peak(static_cast<MemKind>(k));
    control_->allGather(mine.data(), all.data(), kinds, DType::kInt64).wait();
    std::vector<MemoryRow> rows;
    for (int r = 0; r < world_.size(); ++r) {
      MemoryRow row;
      row.rank = r;
      row.bytes.assign(all.begin() + static_cast<int64_t>(r) * kinds,
                       all.begin() + static_cast<int64_t>(r + 1) * kinds);
      row.formula = zeroFormulaBytes(opt_.zero, layout_.size(), dp());
      rows.push_back(row);
    }
    report_.memory(rows, opt_.zero, dp(), layout_.size());
  }

  // Rank 0 writes the whole gradient: each rank contributes its shard, the others' parts are zeros.
  void dumpGradients() {
    std::vector<float> g(static_cast<size_t>(layout_.size()), 0.0f);
    engine_->exportGradShard(g.data());
    control_->allReduce(g.data(), g.data(), g.size(), DType::kFloat32, RedOp::kSum).wait();
    if (world_.rank() != 0) return;
    std::vector<uint8_t> bytes(g.size() * sizeof(float));
    std::memcpy(bytes.data(), g.data(), bytes.size());
    writeFileAtomic(opt_.dumpGrads, bytes);
  }

  void save(int64_t step) {
    RunState run;
    run.step = step;
    run.seed = seed_;
    run.corpus = corpus_.name;
    run.globalBatch = opt_.globalSequences(dp());
    run.model = opt_.model;
    run.world = world_.size();
    run.dp = dp();
    run.zero = opt_.zero;
    saveCheckpoint(opt_.save, run, *engine_, *control_);
    report_.line("saved checkpoint of step %lld in %s", static_cast<long long>(step), opt_.save.c_str());
  }

  void finish() {
    if (stepsRun_ == 0) {
      report_.line("nothing to do: the checkpoint is already at step %d", opt_.steps);
      return;
    }
    report_.line(
        "done: %lld steps, %.0f tokens/s, %.1f ms per step, exposed communication %.2f ms per step, "
        "final loss %.4f%s",
        static_cast<long long>(stepsRun_), static_cast<double>(tokensRun_) / timeRun_, 1e3 * timeRun_ / stepsRun_,
        1e3 * commRun_ / stepsRun_, lastLoss_,
        lastVal_ >= 0 ? (", validation " + std::to_string(lastVal_)).c_str() : "");
    for (Comm* c : engine_->comms())
      report_.comm(c == &world_ ? "data-parallel" : "parameter-gather", c->stats(), static_cast<int>(stepsRun_));
  }

  const TrainOptions& opt_;
  Comm& world_;
  ParamLayout layout_;
  const Corpus& corpus_;
  Report report_;
  // Bookkeeping reductions (loss, norm, memory table, checkpoint manifest) on a communicator of their own,
  // so the data-parallel group's statistics count only the training traffic.
  std::unique_ptr<Comm> control_;
  std::unique_ptr<DataParallel> engine_;
  std::unique_ptr<GptStage<float>> model_;
  std::unique_ptr<StageActivations<float>> acts_;
  AdamWConfig adam_;
  std::optional<Sampler> train_, val_;
  int64_t firstStep_ = 1;
  uint64_t seed_ = 0;
  double peakFlops_ = 1;
  int64_t stepsRun_ = 0, tokensRun_ = 0;
  double timeRun_ = 0, commRun_ = 0, lastLoss_ = 0, lastVal_ = -1;
};

}  // namespace

void trainRank(const TrainOptions& opt, Comm& world, const Corpus& corpus) {
  MemoryLedger ledger;
  MemoryLedger::Scope scope(&ledger);
  RankTrainer t(opt, world, corpus);
  t.run();
}

}  // namespace chorus::train

#include "run/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ckpt/atomic_file.h"
#include "ckpt/checkpoint.h"
#include "data/sampler.h"
#include "model/init.h"
#include "optim/adamw.h"
#include "optim/lr_schedule.h"
#include "parallel/data_parallel.h"
#include "parallel/flash_snapshot.h"
#include "parallel/grid.h"
#include "parallel/pipeline.h"
#include "parallel/tensor_parallel.h"
#include "run/make_device.h"
#include "run/report.h"
#include "run/setup.h"
#include "run/volumes.h"
#include "tensor/device.h"
#include "tensor/memory_ledger.h"

namespace chorus::train {
namespace {

using Clock = std::chrono::steady_clock;
double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}
// Seconds since the epoch: comparable between the processes of one host.
double wallClock() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
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
      : opt_(opt), corpus_(corpus), report_(world.rank() == 0, opt.quiet), s_(std::make_unique<Setup>(opt_, world)) {
    adam_.beta1 = opt.beta1;
    adam_.beta2 = opt.beta2;
    adam_.weightDecay = opt.weightDecay;
  }

  void run() {
    start();
    for (int64_t step = firstStep_; step <= opt_.steps;) {
      try {
        if (s_->world.rank() == opt_.faultRank && step == opt_.faultStep && !faulted_) {
          // Fault injection (tests): a real process death at the start of the step. The wall clock of the death
          // lets a test measure the time from it to the survivors' next completed step (same host).
          std::printf("fault injection: world rank %d SIGKILLs itself at the start of step %lld (wall clock %.6f s)\n",
                      opt_.faultRank, static_cast<long long>(step), wallClock());
          std::fflush(stdout);
          std::raise(SIGKILL);
        }
        trainStep(step);
        if (opt_.elastic && step % opt_.snapshotEvery == 0) takeSnapshot(step);
        if (recoveredAt_) {
          report_.line(
              "elastic: %d ranks completed step %lld, %.3f s after the failure was detected (wall clock %.6f s)",
              s_->world.size(), static_cast<long long>(step), seconds(*recoveredAt_, Clock::now()), wallClock());
          recoveredAt_.reset();
        }
        ++step;
      } catch (const CommError& e) {
        if (!opt_.elastic) throw;
        step = recover(step, e) + 1;
      }
    }
    finish();
  }

 private:
  // Elastic recovery after a lost rank: the survivors agree on who failed, abandon every communicator,
  // shrink the world, rebuild the state of the last in-memory snapshot for the smaller group and go on from
  // the step after it. Returns the snapshot's step.
  int64_t recover(int64_t step, const CommError& why) {
    const auto t0 = Clock::now();
    if (snapshot_.empty()) throw CommError(std::string(why.what()) + " (no in-memory snapshot to recover from yet)");
    // Revoke every communicator first: a survivor still waiting in another group's collective fails at once
    // and joins the agreement.
    s_->abandon();
    std::vector<int> lost = s_->world.failedRanks();
    if (lost.empty()) throw CommError(why.what());
    std::string names;
    for (int r : lost) names += (names.empty() ? "" : ", ") + std::to_string(r);
    std::unique_ptr<Comm> survivors = s_->world.shrink(lost);
    std::vector<float> p, m, v;
    snapshot_.rebuild(lost, s_->layout.size(), *survivors, p, m, v);
    const ParamLayout old = s_->layout;
    s_.reset();  // aborts the old communicators
    world_ = std::move(survivors);
    opt_.dp = world_->size();
    std::string err = fitToWorld(opt_, world_->size());
    if (!err.empty()) throw CommError("cannot continue on " + std::to_string(world_->size()) + " ranks: " + err);
    s_ = std::make_unique<Setup>(opt_, *world_);
    std::vector<float> np(static_cast<size_t>(s_->layout.size())), nm(np.size()), nv(np.size());
    relayout(old, s_->layout, p.data(), np.data());
    relayout(old, s_->layout, m.data(), nm.data());
    relayout(old, s_->layout, v.data(), nv.data());
    s_->engine->importFull(np.data(), nm.data(), nv.data());
    if (s_->world.rank() == 0) report_.takeOver(opt_.csv);
    report_.line(
        "elastic: at step %lld lost rank(s) %s (%s); %d ranks go on from the snapshot of step %lld "
        "(%.3f s to rebuild)",
        static_cast<long long>(step), names.c_str(), why.what(), world_->size(),
        static_cast<long long>(snapshot_.step()), seconds(t0, Clock::now()));
    const int64_t at = snapshot_.step();
    takeSnapshot(at);
    // The summary and the communication tables describe the run on the survivors' layout from here on.
    stepsRun_ = tokensRun_ = 0;
    timeRun_ = commRun_ = bubbleRun_ = 0;
    for (Comm* c : allComms()) c->stats().reset();
    faulted_ = true;
    recoveredAt_ = t0;
    return at;
  }

  // The in-memory snapshot travels on the control communicator, so the data-parallel group's traffic stays
  // the training step's alone. --elastic is data parallelism only: the control ranks are the data-parallel
  // ranks, in the same order.
  void takeSnapshot(int64_t step) { snapshot_.take(step, *s_->engine, *s_->control); }

  int dp() const { return opt_.dp; }
  int64_t globalTokens() const { return static_cast<int64_t>(opt_.globalSequences(dp())) * opt_.model.seqLen; }
  // The rank whose loss counts: the end of the model, tensor-parallel rank 0 (the others compute the same).
  bool reportsLoss() const { return s_->layout.part().hasHead && s_->grid.tpRank() == 0; }

  void start() {
    checkSaveDirectory();
    uint64_t seed = opt_.seed;
    if (!opt_.resume.empty()) {
      std::string dir = latestCheckpoint(opt_.resume);
      FullState state = loadFullState(dir);
      checkSameModel(state, opt_.model);
      importState(state, *s_->engine);
      firstStep_ = state.run.step + 1;
      seed = state.run.seed;
      if (seed != opt_.seed)
        report_.line("resume: using the checkpoint's seed %llu", static_cast<unsigned long long>(seed));
      report_.line("resumed from %s at step %lld (saved by %d ranks: dp %d, tp %d, pp %d, ZeRO-%d)", dir.c_str(),
                   static_cast<long long>(state.run.step), state.run.world, state.run.dp, state.run.tp, state.run.pp,
                   state.run.zero);
    } else {
      std::vector<float> p(static_cast<size_t>(s_->layout.size())), zeros(p.size());
      initParams(s_->layout, seed, p.data());
      s_->engine->importFull(p.data(), zeros.data(), zeros.data());
    }
    report_.openCsv(opt_.csv);
    seed_ = seed;
    train_.emplace(corpus_.train, opt_.model.seqLen, seed);
    val_.emplace(corpus_.val, opt_.model.seqLen, seed);
    // The GEMM peak each rank reaches while the others measure theirs at the same time: summed, the
    // machine's aggregate (ranks that share a core share its peak), which MFU is reported against.
    s_->control->barrier();
    double peak = Device::current().gemmPeakGflops(opt_.peakMs) * 1e9;
    s_->control->allReduce(&peak, &peak, 1, DType::kFloat64, RedOp::kSum).wait();
    peakFlops_ = peak;
    if (!opt_.quiet) banner();
    for (Comm* c : allComms()) c->stats().reset();
    MemoryLedger::current().resetPeaks();
  }

  void banner() {
    const ModelConfig& m = opt_.model;
    report_.line("chorus-train: %s, %lld parameters (%.2f M)", m.describe().c_str(),
                 static_cast<long long>(m.paramCount()), m.paramCount() / 1e6);
    report_.line(
        "layout: %d ranks = dp %d x tp %d%s x pp %d (%s schedule, %d chunk(s) per stage), ZeRO-%d, backend %s, "
        "gradient buckets %.1f MiB, gradients in %s",
        s_->world.size(), dp(), opt_.tp, opt_.sequenceParallel ? " (sequence parallel)" : "", opt_.pp,
        opt_.pipeSchedule.c_str(), opt_.virtualStages, opt_.zero, s_->world.backendName(), opt_.bucketMb,
        opt_.gradCommDtype.c_str());
    if (opt_.tp > 1 || opt_.pp > 1) report_.line("%s", s_->grid.describe().c_str());
    report_.line(
        "data: %s (%lld training bytes, %lld validation bytes); %d sequences of %d tokens per step "
        "(batch %d x micro-batches %d x dp %d)",
        corpus_.name.c_str(), static_cast<long long>(corpus_.train.size()), static_cast<long long>(corpus_.val.size()),
        opt_.globalSequences(dp()), m.seqLen, opt_.batch, opt_.gradAccum, dp());
    report_.line("device: %s; GEMM peak %.1f GFLOP/s over all ranks; %.1f MFLOP per token",
                 Device::current().name().c_str(), peakFlops_ / 1e9, m.flopsPerToken() / 1e6);
  }

  // Every communicator whose waits count as exposed communication.
  std::vector<Comm*> allComms() {
    std::vector<Comm*> c = s_->engine->comms();
    for (auto& [name, comm] : s_->grid.groups())
      if (std::find(c.begin(), c.end(), comm) == c.end()) c.push_back(comm);
    for (bool wrap : {false, true})
      for (Comm* in : {s_->grid.activationsFrom(wrap), s_->grid.gradientsFrom(wrap)})
        if (in && std::find(c.begin(), c.end(), in) == c.end()) c.push_back(in);
    c.push_back(s_->control.get());
    return c;
  }
  double totalWait() {
    double s = 0;
    for (Comm* c : allComms()) s += c->stats().waitSeconds;
    return s;
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

  Pipeline::Fill trainingData(int64_t step) {
    return [this, step](int micro, int32_t* tokens, int32_t* targets) {
      train_->fill(step, firstSequence(micro, s_->grid.dpRank(), dp(), opt_.batch), opt_.batch, tokens, targets);
    };
  }

  // With several pipeline stages the embedding's two copies (first and last stage) get the sum of both
  // gradients: each rank of the tied group puts its shard of its copy's gradient into a full-size buffer,
  // the group sums them, and each takes its shard back.
  void syncTiedEmbedding() {
    Comm* tied = s_->grid.tiedGroup();
    if (!tied) return;
    const TensorSpec* w = s_->layout.find("wte");
    Buffer<float> buf(w->size(), MemKind::kComm);
    auto overlap = [&](int64_t off, int64_t n, auto&& copy) {
      int64_t a = std::max(off, w->offset), b = std::min(off + n, w->offset + w->size());
      if (a < b) copy(a - off, a - w->offset, b - a);
    };
    Device& dev = Device::current();
    s_->engine->forEachShardGrad([&](int64_t off, int64_t n, float* g) {
      overlap(off, n, [&](int64_t gi, int64_t wi, int64_t k) { dev.copy(buf.data() + wi, g + gi, k * sizeof(float)); });
    });
    tied->allReduce(buf.data(), buf.data(), static_cast<size_t>(buf.size()), DType::kFloat32, RedOp::kSum).wait();
    s_->engine->forEachShardGrad([&](int64_t off, int64_t n, float* g) {
      overlap(off, n, [&](int64_t gi, int64_t wi, int64_t k) { dev.copy(g + gi, buf.data() + wi, k * sizeof(float)); });
    });
  }

  void trainStep(int64_t step) {
    const double wait0 = totalWait();
    const auto t0 = Clock::now();
    const float gradScale = 1.0f / static_cast<float>(globalTokens());
    s_->engine->beginStep(opt_.gradAccum);
    PipelineStats ps = s_->pipeline->train(opt_.gradAccum, gradScale, trainingData(step));
    s_->engine->finishGradients();
    syncTiedEmbedding();
    if (step == opt_.steps && !opt_.dumpGrads.empty()) dumpGradients(step);
    // The loss, the squared gradient norm and the pipeline's idle fraction of every rank in one reduction.
    double sums[3] = {reportsLoss() ? ps.lossSum : 0.0, s_->engine->shardGradSquares(s_->normMask),
                      ps.elapsedSeconds > 0 ? 1.0 - ps.computeSeconds / ps.elapsedSeconds : 0.0};
    s_->control->allReduce(sums, sums, 3, DType::kFloat64, RedOp::kSum).wait();
    const double loss = sums[0] / static_cast<double>(globalTokens());
    const double norm = std::sqrt(sums[1]);
    const float clipScale = opt_.clip > 0 && norm > opt_.clip ? static_cast<float>(opt_.clip / (norm + 1e-6)) : 1.0f;
    const float lr = learningRate(step, opt_.steps, opt_.lr, opt_.minLr, opt_.warmup, opt_.lrSchedule);
    s_->engine->step(adam_, step, lr, clipScale);
    const double dt = seconds(t0, Clock::now());

    StepRecord r;
    r.step = step;
    r.loss = loss;
    r.lr = lr;
    r.gradNorm = norm;
    r.stepMs = dt * 1e3;
    r.tokensPerSecond = static_cast<double>(globalTokens()) / dt;
    r.exposedCommMs = (totalWait() - wait0) * 1e3;
    r.mfu = opt_.model.flopsPerToken() * static_cast<double>(globalTokens()) / dt / peakFlops_;
    stepsRun_++;
    timeRun_ += dt;
    commRun_ += r.exposedCommMs / 1e3;
    tokensRun_ += globalTokens();
    bubbleRun_ += sums[2] / s_->world.size();
    peakActs_ = std::max(peakActs_, ps.peakActivations);
    if (opt_.evalEvery > 0 && (step % opt_.evalEvery == 0 || step == opt_.steps)) r.valLoss = validationLoss();
    report_.step(r, opt_.steps, step % opt_.logEvery == 0 || step == opt_.steps || r.valLoss >= 0);
    lastVal_ = r.valLoss >= 0 ? r.valLoss : lastVal_;
    lastLoss_ = loss;
    if (step == firstStep_ && !opt_.quiet) memoryTable();
    if (!opt_.save.empty() && ((opt_.saveEvery > 0 && step % opt_.saveEvery == 0) || step == opt_.steps)) save(step);
  }

  double validationLoss() {
    // Validation's traffic is not the training step's: keep it out of the communication tables.
    std::vector<Comm*> comms = allComms();
    std::vector<CommStats> kept;
    for (Comm* c : comms) kept.push_back(c->stats());
    s_->engine->beginEvaluation();
    // Batch k of the fixed validation set goes to data-parallel rank k mod dp.
    const int mine = (opt_.evalBatches - s_->grid.dpRank() + dp() - 1) / dp();
    double sum = s_->pipeline->evaluate(mine, [this](int k, int32_t* tokens, int32_t* targets) {
      val_->fillFixed(static_cast<int64_t>(k * dp() + s_->grid.dpRank()) * opt_.batch, opt_.batch, tokens, targets);
    });
    s_->engine->endEvaluation();
    if (!reportsLoss()) sum = 0;
    s_->control->allReduce(&sum, &sum, 1, DType::kFloat64, RedOp::kSum).wait();
    for (size_t i = 0; i < comms.size(); ++i) comms[i]->stats() = kept[i];
    return sum / (static_cast<double>(opt_.evalBatches) * opt_.batch * opt_.model.seqLen);
  }

  void memoryTable() {
    const MemoryLedger& ledger = MemoryLedger::current();
    const int kinds = static_cast<int>(MemKind::kCount);
    std::vector<int64_t> mine(kinds + 1), all(static_cast<size_t>(kinds + 1) * s_->world.size());
    for (int k = 0; k < kinds; ++k) mine[k] = ledger.peak(static_cast<MemKind>(k));
    mine[kinds] = s_->layout.size();
    s_->control->allGather(mine.data(), all.data(), kinds + 1, DType::kInt64).wait();
    std::vector<MemoryRow> rows;
    for (int r = 0; r < s_->world.size(); ++r) {
      const int64_t* at = all.data() + static_cast<int64_t>(r) * (kinds + 1);
      MemoryRow row;
      row.rank = r;
      row.bytes.assign(at, at + kinds);
      row.psi = at[kinds];
      row.formula = zeroFormulaBytes(opt_.zero, row.psi, dp());
      rows.push_back(row);
    }
    report_.memory(rows, opt_.zero, dp());
  }

  RunState runState(int64_t step) const {
    RunState run;
    run.step = step;
    run.seed = seed_;
    run.corpus = corpus_.name;
    run.globalBatch = opt_.globalSequences(dp());
    run.model = opt_.model;
    run.world = s_->world.size();
    run.dp = dp();
    run.tp = opt_.tp;
    run.pp = opt_.pp;
    run.zero = opt_.zero;
    return run;
  }

  void save(int64_t step) {
    std::vector<float> p, m, v;
    saveCheckpoint(opt_.save, runState(step), engineShard(*s_->engine, p, m, v), *s_->control);
    report_.line("saved checkpoint of step %lld in %s", static_cast<long long>(step), opt_.save.c_str());
  }

  // The last step's gradient (before clipping), in checkpoint form: a "checkpoint" whose parameters are the
  // gradient, so `chorus-train ckpt-diff` compares gradients of any two layouts tensor by tensor.
  void dumpGradients(int64_t step) {
    std::vector<float> p, m, v;
    ShardSource src = engineShard(*s_->engine, p, m, v);
    std::fill(p.begin(), p.end(), 0.0f);
    s_->engine->exportGradShard(p.data());
    std::fill(m.begin(), m.end(), 0.0f);
    std::fill(v.begin(), v.end(), 0.0f);
    saveCheckpoint(opt_.dumpGrads, runState(step), src, *s_->control);
  }

  void finish() {
    if (stepsRun_ == 0) {
      report_.line("nothing to do: the checkpoint is already at step %d", opt_.steps);
      return;
    }
    if (faulted_) report_.line("after the elastic recovery, on %d ranks:", s_->world.size());
    report_.line(
        "done: %lld steps, %.0f tokens/s, %.1f ms per step, exposed communication %.2f ms per step, "
        "final loss %.4f%s",
        static_cast<long long>(stepsRun_), static_cast<double>(tokensRun_) / timeRun_, 1e3 * timeRun_ / stepsRun_,
        1e3 * commRun_ / stepsRun_, lastLoss_,
        lastVal_ >= 0 ? (", validation " + std::to_string(lastVal_)).c_str() : "");
    reportPipeline();
    reportVolumes();
  }

  void reportPipeline() {
    double peak = peakActs_;
    s_->control->allReduce(&peak, &peak, 1, DType::kFloat64, RedOp::kMax).wait();
    if (opt_.pp == 1) return;
    const int M = opt_.gradAccum, P = opt_.pp, V = opt_.virtualStages;
    int bound = 0;
    for (int p = 0; p < P; ++p)
      bound = std::max(bound, peakStoredActivations(pipelineSchedule(parseSchedule(opt_.pipeSchedule), P, p, M, V)));
    report_.line(
        "pipeline: bubble %.1f %% measured (mean over ranks and steps) vs %.1f %% = (P-1)/(V*M+P-1) for "
        "P=%d, M=%d, V=%d; peak stored micro-batch activations %.0f vs %d (%s)",
        100.0 * bubbleRun_ / stepsRun_, 100.0 * idealBubbleFraction(P, M, V), P, M, V, peak, bound,
        opt_.pipeSchedule == "gpipe" ? "M for GPipe"
                                     : (V > 1 ? "the interleaved schedule's warm-up + 1" : "P for 1F1B"));
  }

  void reportVolumes() {
    VolumeInputs in;
    in.model = opt_.model;
    in.part = s_->layout.part();
    in.batch = opt_.batch;
    in.micros = opt_.gradAccum;
    in.dp = dp();
    in.zero = opt_.zero;
    in.sequenceParallel = opt_.sequenceParallel;
    in.psi = s_->layout.size();
    in.stage = s_->grid.stage();
    in.stages = opt_.pp;
    in.bf16 = opt_.gradCommDtype == "bf16";
    for (const TensorSpec& t : s_->layout.tensors())
      if (t.split == Split::kNone) in.replicated += t.size();
    std::vector<GroupVolume> groups;
    for (auto& [name, comm] : s_->grid.groups()) groups.push_back({name, &comm->stats()});
    if (s_->engine->comms().size() > 1) groups.push_back({"parameter-gather", &s_->engine->comms()[1]->stats()});
    const std::vector<ExpectedVolume> expected = expectedVolumes(in);
    report_.volumes(groups, expected, static_cast<int>(stepsRun_));
    // Every rank checks its own groups against its formulas (rank 0's table shows one rank only); the ranks
    // that differ say where, and rank 0 says how many did.
    const std::vector<std::string> problems = checkVolumes(groups, expected, static_cast<int>(stepsRun_));
    for (const std::string& p : problems)
      std::printf("communication: rank %d differs from the formula: %s\n", s_->world.rank(), p.c_str());
    std::fflush(stdout);
    double differing = problems.empty() ? 0.0 : 1.0;
    s_->control->allReduce(&differing, &differing, 1, DType::kFloat64, RedOp::kSum).wait();
    report_.line("communication: %s (%d ranks checked; ZeRO-3's parameter gathers against their bound)",
                 differing == 0 ? "every rank's volume per group and collective equals its formula"
                                : "SOME RANKS DIFFER FROM THE FORMULAS (above)",
                 s_->world.size());
  }

  TrainOptions opt_;  // a copy: an elastic run changes its data-parallel size
  const Corpus& corpus_;
  Report report_;
  std::unique_ptr<Setup> s_;
  std::unique_ptr<Comm> world_;  // the survivors' communicator after an elastic recovery
  FlashSnapshot snapshot_;
  std::optional<Clock::time_point> recoveredAt_;
  bool faulted_ = false;
  AdamWConfig adam_;
  std::optional<Sampler> train_, val_;
  int64_t firstStep_ = 1;
  uint64_t seed_ = 0;
  double peakFlops_ = 1;
  int64_t stepsRun_ = 0, tokensRun_ = 0;
  double timeRun_ = 0, commRun_ = 0, bubbleRun_ = 0, lastLoss_ = 0, lastVal_ = -1;
  int peakActs_ = 0;
};

}  // namespace

void trainRank(const TrainOptions& opt, Comm& world, const Corpus& corpus) {
  MemoryLedger ledger;
  MemoryLedger::Scope scope(&ledger);
  // The rank's device outlives everything made on it (the trainer's buffers and communicators).
  DevicePtr device = makeDevice(opt.device, world.rank());
  Device::Scope onDevice(device.get());
  RankTrainer t(opt, world, corpus);
  t.run();
}

}  // namespace chorus::train

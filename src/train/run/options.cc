#include "run/options.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "comm/comm.h"
#include "data/corpus.h"
#include "run/make_device.h"

namespace chorus::train {
namespace {

// Ranks as threads sharing a GPU: every kernel (the trainer's, cuBLAS's) is loaded when CUDA starts, not at its first
// launch. Under lazy loading, CUDA's default, a thread that launches a kernel for the first time may wait for the
// device's running kernels, among them another rank's collective waiting for this thread's rank: neither ends (the
// library loads its own kernels early, collectives/device/device_executor.h; these are the trainer's). Must run before
// the first CUDA call, which the device check below makes; a value the user set is kept.
void loadCudaKernelsEagerlyForThreads(const TrainOptions& o) {
  if (o.device == "cuda" && o.threads > 1) setenv("CUDA_MODULE_LOADING", "EAGER", 0);
}

std::string checkOptions(const TrainOptions& o) {
  try {
    o.model.validate();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  if (o.corpus != "synthetic") {
    std::string path = o.corpus == "jargon" ? kJargonPath : o.corpus;
    if (::access(path.c_str(), R_OK) != 0)
      return "--corpus: cannot read " + path +
             (o.corpus == "jargon" ? " (install Debian's jargon-text package: apt-get install jargon-text)" : "");
  }
  bool haveMpi = false;
  for (const auto& b : availableBackends()) haveMpi = haveMpi || b == "mpi";
  if (o.backend == "mpi" && !haveMpi) return "--backend mpi: this build has no MPI";
  if (o.backend == "mpi" && o.threads > 1) return "--backend mpi runs one rank per process: drop -t/--threads";
  if (o.saveEvery > 0 && o.save.empty()) return "--save-every needs --save DIR";
  if (o.device == "cuda" && o.backend != "chorus")
    return "--device cuda needs --backend chorus (the MPI backend has no communicators on a GPU)";
  if (o.device == "cuda" && o.elastic) return "--elastic runs on the host only (not with --device cuda)";
  loadCudaKernelsEagerlyForThreads(o);
  if (std::string why = deviceUnavailableReason(o.device); !why.empty()) return why;
  if (o.elastic && (o.tp != 1 || o.pp != 1)) return "--elastic is data parallelism only: --tp 1 --pp 1";
  if (o.elastic && o.backend != "chorus") return "--elastic needs --backend chorus";
  if (o.elastic && o.threads > 1) return "--elastic needs one rank per process (a lost rank is a lost process)";
  if (o.lrSchedule == "cosine" && o.minLr > o.lr) return "--min-lr must not exceed --lr";
  return "";
}

}  // namespace

ParsedCommandLine parseCommandLine(int argc, char** argv) {
  ParsedCommandLine out;
  TrainOptions& o = out.train;
  CLI::App app{
      "chorus-train: trains a GPT on bytes of text with data, tensor and pipeline parallelism and ZeRO through Chorus\n"
      "(or Open MPI).\n"
      "One rank per process under chorusrun, mpirun, Slurm or torchrun-style variables, or -t N ranks as threads."};
  app.option_defaults()->always_capture_default()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.set_version_flag("--version", "chorus-train 0.1");

  auto* model = "Model";
  app.add_option("--layers", o.model.layers, "transformer blocks")->group(model)->check(CLI::PositiveNumber);
  app.add_option("--heads", o.model.heads, "attention heads per block")->group(model)->check(CLI::PositiveNumber);
  app.add_option("--d-model", o.model.dModel, "model width (a multiple of --heads)")
      ->group(model)
      ->check(CLI::PositiveNumber);
  app.add_option("--seq-len", o.model.seqLen, "tokens (bytes) per sequence")->group(model)->check(CLI::PositiveNumber);

  auto* train = "Training";
  app.add_option("--batch", o.batch, "sequences per data-parallel rank per micro-step")
      ->group(train)
      ->check(CLI::PositiveNumber);
  auto* accum = app.add_option("--grad-accum,--micro-batches", o.gradAccum,
                               "micro-batches per step (gradient accumulation; the pipeline's micro-batches)")
                    ->group(train)
                    ->check(CLI::PositiveNumber);
  app.add_option("--global-batch", o.globalBatch,
                 "sequences per step; sets --grad-accum to this / (dp * batch), which must divide it")
      ->group(train)
      ->check(CLI::PositiveNumber)
      ->excludes(accum);
  app.add_option("--steps", o.steps, "total optimizer steps")->group(train)->check(CLI::PositiveNumber);
  app.add_option("--lr", o.lr, "peak learning rate")->group(train)->check(CLI::PositiveNumber);
  app.add_option("--min-lr", o.minLr, "final learning rate of the cosine schedule")
      ->group(train)
      ->check(CLI::NonNegativeNumber);
  app.add_option("--warmup", o.warmup, "steps of linear warm-up")->group(train)->check(CLI::NonNegativeNumber);
  app.add_option("--lr-schedule", o.lrSchedule, "constant or cosine (after warm-up)")
      ->group(train)
      ->check(CLI::IsMember({"constant", "cosine"}));
  app.add_option("--weight-decay", o.weightDecay, "AdamW's decoupled weight decay (matrices only)")
      ->group(train)
      ->check(CLI::NonNegativeNumber);
  app.add_option("--beta1", o.beta1, "AdamW beta1")->group(train)->check(CLI::Range(0.0, 1.0));
  app.add_option("--beta2", o.beta2, "AdamW beta2")->group(train)->check(CLI::Range(0.0, 1.0));
  app.add_option("--clip", o.clip, "global gradient-norm clipping threshold (0: off)")
      ->group(train)
      ->check(CLI::NonNegativeNumber);
  app.add_option("--seed", o.seed, "seed of initialisation and data sampling")->group(train);
  app.add_option("--corpus", o.corpus,
                 "training text: 'jargon' (the Jargon File, Debian package jargon-text), 'synthetic', or a path "
                 "(.gz read with zlib)")
      ->group(train);

  auto* par = "Parallelism";
  app.add_option("--dp", o.dp, "data-parallel ranks (default: all ranks)")->group(par)->check(CLI::NonNegativeNumber);
  app.add_option("--tp", o.tp, "tensor-parallel ranks")->group(par)->check(CLI::PositiveNumber);
  app.add_option("--pp", o.pp, "pipeline stages")->group(par)->check(CLI::PositiveNumber);
  app.add_flag("--sequence-parallel", o.sequenceParallel,
               "Megatron's sequence parallelism: LayerNorm regions split along the sequence (needs --tp > 1)")
      ->group(par);
  app.add_option("--schedule", o.pipeSchedule, "pipeline schedule: gpipe, 1f1b or interleaved")
      ->group(par)
      ->check(CLI::IsMember({"gpipe", "1f1b", "interleaved"}));
  app.add_option("--virtual-stages", o.virtualStages, "model chunks per pipeline stage (the interleaved schedule)")
      ->group(par)
      ->check(CLI::PositiveNumber);
  app.add_option("--zero", o.zero, "ZeRO stage: 0 (DDP), 1 (optimizer state), 2 (+ gradients), 3 (+ parameters)")
      ->group(par)
      ->check(CLI::Range(0, 3));
  app.add_option("--bucket-mb", o.bucketMb, "gradient bucket size in MiB (reduced as backward produces it)")
      ->group(par)
      ->check(CLI::PositiveNumber);
  app.add_option("--grad-comm-dtype", o.gradCommDtype, "gradient communication type: fp32 or bf16")
      ->group(par)
      ->check(CLI::IsMember({"fp32", "bf16"}));
  app.add_option("--backend", o.backend, "communication backend: chorus or mpi (Open MPI, under mpirun)")
      ->group(par)
      ->check(CLI::IsMember({"chorus", "mpi"}));
  app.add_option("--device", o.device,
                 "where tensors live and the layers run: host (OpenBLAS), cuda (a GPU: CUDA kernels and cuBLAS, "
                 "Chorus communicators on the GPU; ranks share the visible GPUs round-robin; not yet run on a GPU) "
                 "or emulated (the cuda path's kernels and GEMM calls run on the host, to test it without a GPU)")
      ->group(par)
      ->check(CLI::IsMember({"host", "cuda", "emulated"}));
  app.add_option("-t,--threads", o.threads, "ranks as threads of this process (Chorus backend)")
      ->group(par)
      ->check(CLI::PositiveNumber);

  auto* io = "Output and checkpoints";
  app.add_option("--csv", o.csv, "CSV log, one row per step (step,loss,...), written by rank 0")->group(io);
  app.add_option("--save", o.save, "checkpoint directory (written at the end, and every --save-every steps)")
      ->group(io);
  app.add_option("--save-every", o.saveEvery, "steps between checkpoints (0: only at the end)")
      ->group(io)
      ->check(CLI::NonNegativeNumber);
  app.add_option("--resume", o.resume, "resume from the latest checkpoint in this directory")->group(io);
  app.add_option("--dump-grads", o.dumpGrads,
                 "write the last step's gradient (before clipping) to this directory in checkpoint form (the gradient "
                 "in place of the parameters), for comparing layouts with ckpt-diff")
      ->group(io);
  app.add_option("--eval-every", o.evalEvery, "steps between validation losses (0: never)")
      ->group(io)
      ->check(CLI::NonNegativeNumber);
  app.add_option("--eval-batches", o.evalBatches, "validation batches of --batch sequences")
      ->group(io)
      ->check(CLI::PositiveNumber);
  app.add_option("--log-every", o.logEvery, "steps between progress lines")->group(io)->check(CLI::PositiveNumber);
  app.add_option("--blas-threads", o.blasThreads, "OpenBLAS threads per rank (ranks share the cores)")
      ->group(io)
      ->check(CLI::PositiveNumber);
  app.add_option("--peak-ms", o.peakMs, "milliseconds spent measuring the GEMM peak MFU is reported against")
      ->group(io)
      ->check(CLI::PositiveNumber);
  app.add_flag("--elastic", o.elastic,
               "elastic data parallelism: every --snapshot-every steps each rank copies its shard to its ring "
               "neighbour's memory; when a rank dies the survivors shrink the group, rebuild the state from the "
               "copies and continue (Chorus backend, --tp 1 --pp 1; launch with chorusrun --keep-going)")
      ->group(par);
  app.add_option("--snapshot-every", o.snapshotEvery, "steps between in-memory snapshots (--elastic)")
      ->group(par)
      ->check(CLI::PositiveNumber);
  app.add_option("--fault-rank", o.faultRank, "fault injection for tests: this rank SIGKILLs itself at --fault-step")
      ->group(io);
  app.add_option("--fault-step", o.faultStep, "the step at whose start --fault-rank kills itself")->group(io);
  app.add_flag("-q,--quiet", o.quiet, "print only the summary")->group(io);

  CheckpointCommand ck;
  auto* diff = app.add_subcommand("ckpt-diff", "compare the parameters of two checkpoints (any layouts)");
  diff->add_option("a", ck.a, "checkpoint directory (or step directory)")->required();
  diff->add_option("b", ck.b, "checkpoint directory (or step directory)")->required();
  diff->add_option("--rtol", ck.rtol,
                   "exit 1 when |a-b| / |a| over the whole parameter vector (Euclidean norms) exceeds this");
  auto* info = app.add_subcommand("ckpt-info", "describe a checkpoint and check every file's checksum");
  info->add_option("dir", ck.a, "checkpoint directory (or step directory)")->required();
  app.require_subcommand(0, 1);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    out.exitCode = app.exit(e);
    return out;
  } catch (const CLI::CallForVersion& e) {
    out.exitCode = app.exit(e);
    return out;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "chorus-train: %s (see --help)\n", e.what());
    out.exitCode = 2;
    return out;
  }
  if (diff->parsed()) {
    ck.name = "diff";
    out.checkpoint = ck;
    return out;
  }
  if (info->parsed()) {
    ck.name = "info";
    out.checkpoint = ck;
    return out;
  }
  std::string err = checkOptions(o);
  if (!err.empty()) {
    std::fprintf(stderr, "chorus-train: %s\n", err.c_str());
    out.exitCode = 2;
  }
  return out;
}

std::string fitToWorld(TrainOptions& o, int world) {
  if (world % (o.tp * o.pp) != 0)
    return std::to_string(world) + " ranks do not divide into --tp " + std::to_string(o.tp) + " x --pp " +
           std::to_string(o.pp);
  if (o.dp == 0) o.dp = world / (o.tp * o.pp);
  if (o.dp * o.tp * o.pp != world)
    return "--dp " + std::to_string(o.dp) + " x --tp " + std::to_string(o.tp) + " x --pp " + std::to_string(o.pp) +
           " = " + std::to_string(o.dp * o.tp * o.pp) + " is not the number of ranks (" + std::to_string(world) + ")";
  const ModelConfig& m = o.model;
  auto divides = [&](int what, const char* name, int by, const char* byName) -> std::string {
    if (what % by == 0) return "";
    return std::string(name) + " (" + std::to_string(what) + ") must divide by " + byName + " (" + std::to_string(by) +
           ")";
  };
  for (std::string e : {divides(m.heads, "--heads", o.tp, "--tp"), divides(m.vocab, "the vocabulary", o.tp, "--tp"),
                        divides(m.ffn(), "the MLP width", o.tp, "--tp"),
                        divides(m.layers, "--layers", o.pp * o.virtualStages, "--pp x --virtual-stages")})
    if (!e.empty()) return e;
  if (o.sequenceParallel && o.tp == 1) return "--sequence-parallel needs --tp above 1";
  if (o.sequenceParallel && (o.batch * m.seqLen) % o.tp != 0)
    return "--sequence-parallel needs --batch x --seq-len (" + std::to_string(o.batch * m.seqLen) +
           ") divisible by --tp (" + std::to_string(o.tp) + ")";
  if (o.virtualStages > 1 && o.pipeSchedule != "interleaved")
    return "--virtual-stages above 1 needs --schedule interleaved";
  if (o.pipeSchedule == "interleaved" && o.pp == 1) return "--schedule interleaved needs --pp above 1";
  if (o.globalBatch > 0) {
    if (o.globalBatch % (o.dp * o.batch) != 0)
      return "--global-batch " + std::to_string(o.globalBatch) +
             " is not a multiple of --dp x --batch = " + std::to_string(o.dp * o.batch);
    o.gradAccum = o.globalBatch / (o.dp * o.batch);
  }
  if (o.pipeSchedule == "interleaved" && o.gradAccum % o.pp != 0)
    return "--schedule interleaved needs --micro-batches (" + std::to_string(o.gradAccum) +
           ") to be a multiple of --pp (" + std::to_string(o.pp) + ")";
  return "";
}

}  // namespace chorus::train

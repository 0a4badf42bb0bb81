// chorus-train: parses the command line, joins the ranks (threads of this process, or one rank per process
// through Chorus or Open MPI), loads the corpus and trains; or inspects and compares checkpoints.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "ckpt/checkpoint.h"
#include "comm/chorus_comm.h"
#include "data/corpus.h"
#include "run/options.h"
#include "run/trainer.h"
#include "tensor/blas.h"
#ifdef CHORUS_TRAIN_HAVE_MPI
#include "comm/mpi_comm.h"
#endif

namespace ct = chorus::train;

namespace {

// A failure after the ranks have joined: report it and end the process at once. Unwinding would finalize
// communicators whose peers may be waiting on this rank; the launcher ends the others (fail-fast, as mpirun).
// A checkpoint that cannot be used is bad input (status 2), found before any training step.
[[noreturn]] void die(int rank, const std::exception& e) {
  bool badInput = dynamic_cast<const ct::CheckpointError*>(&e) != nullptr;
  std::fprintf(stderr, "chorus-train: rank %d: %s\n", rank, e.what());
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(badInput ? 2 : 1);
}

int checkpointCommand(const ct::CheckpointCommand& c) {
  try {
    ct::FullState a = ct::loadFullState(ct::latestCheckpoint(c.a));
    if (c.name == "info") {
      const ct::RunState& r = a.run;
      std::printf("%s: step %lld, %s, seed %llu, corpus %s, %lld sequences per step\n", c.a.c_str(),
                  static_cast<long long>(r.step), r.model.describe().c_str(), static_cast<unsigned long long>(r.seed),
                  r.corpus.c_str(), static_cast<long long>(r.globalBatch));
      std::printf("saved by %d ranks: dp %d, tp %d, pp %d, ZeRO-%d; %zu tensors, every checksum correct\n", r.world,
                  r.dp, r.tp, r.pp, r.zero, a.tensors.size());
      return 0;
    }
    ct::FullState b = ct::loadFullState(ct::latestCheckpoint(c.b));
    double worst = ct::compareCheckpoints(a, b, true);
    std::printf("parameters: |a-b| / |a| = %.3e (tolerance %.3e)\n", worst, c.rtol);
    return worst <= c.rtol ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chorus-train: %s\n", e.what());
    return 2;
  }
}

}  // namespace

int main(int argc, char** argv) {
  ct::ParsedCommandLine cl = ct::parseCommandLine(argc, argv);
  if (cl.exitCode >= 0) return cl.exitCode;
  if (cl.checkpoint) return checkpointCommand(*cl.checkpoint);
  ct::TrainOptions opt = cl.train;
  ct::setBlasThreads(opt.blasThreads);

  // Join the ranks.
  std::vector<std::unique_ptr<ct::Comm>> ranks;
  try {
    if (opt.threads > 1) {
      ranks = ct::ChorusComm::initThreads(opt.threads);
    } else if (opt.backend == "mpi") {
#ifdef CHORUS_TRAIN_HAVE_MPI
      ranks.push_back(ct::MpiComm::initWorld());
#endif
    } else {
      ranks.push_back(ct::ChorusComm::initFromEnv());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chorus-train: cannot join the ranks: %s\n", e.what());
    return 1;
  }
  const int worldSize = opt.threads > 1 ? opt.threads : ranks[0]->size();
  const int firstRank = ranks[0]->rank();
  // Every rank finds the same problem with the options or the corpus: rank 0 says it, and the others wait
  // for it to be said (a launcher ends the job when the first rank exits).
  auto refuse = [&](const std::string& why) {
    if (firstRank == 0) std::fprintf(stderr, "chorus-train: %s\n", why.c_str());
    std::fflush(stderr);
    if (ranks.size() == 1) {
      try {
        ranks[0]->barrier();
      } catch (const std::exception&) {
      }
    }
    std::_Exit(2);
  };
  std::string err = ct::fitToWorld(opt, worldSize);
  if (!err.empty()) refuse(err);
  ct::Corpus corpus;
  try {
    corpus = ct::loadCorpus(opt.corpus, opt.model.seqLen, opt.seed);
  } catch (const std::exception& e) {
    refuse(e.what());
  }

  if (ranks.size() == 1) {
    try {
      ct::trainRank(opt, *ranks[0], corpus);
    } catch (const std::exception& e) {
      die(ranks[0]->rank(), e);
    }
    ranks.clear();
    return 0;
  }
  std::vector<std::thread> threads;
  for (auto& r : ranks) {
    threads.emplace_back([&opt, &corpus, comm = r.get()] {
      try {
        ct::trainRank(opt, *comm, corpus);
      } catch (const std::exception& e) {
        die(comm->rank(), e);
      }
    });
  }
  for (auto& t : threads) t.join();
  // Communicators of thread ranks are destroyed together: finalizing them one by one from this thread would
  // wait on ranks not yet finalizing.
  std::vector<std::thread> closers;
  for (auto& r : ranks) closers.emplace_back([p = r.release()] { delete p; });
  for (auto& t : closers) t.join();
  return 0;
}

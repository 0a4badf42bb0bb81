// Command line parsing with nccl-tests' flags, long names and defaults. Every bad input ends in one line on
// stderr that names the flag, and exit status 2.
#include <getopt.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "perf_test.h"

namespace chorus::perf {
namespace {

constexpr chorusDataType_t kAllTypes[] = {chorusInt8,    chorusUint8,    chorusInt32,      chorusUint32,
                                          chorusInt64,   chorusUint64,   chorusFloat16,    chorusFloat32,
                                          chorusFloat64, chorusBfloat16, chorusFloat8e4m3, chorusFloat8e5m2};
// nccl-tests' order of operations for "-o all".
constexpr chorusRedOp_t kAllOps[] = {chorusSum, chorusProd, chorusMax, chorusMin, chorusAvg};

class UsageError {
 public:
  explicit UsageError(std::string message) : message_(std::move(message)) {}
  const std::string& message() const { return message_; }

 private:
  std::string message_;
};

std::string flagName(int c, const char* longName) {
  std::string name = "-";
  name += static_cast<char>(c);
  if (longName != nullptr) name += std::string(" (--") + longName + ")";
  return name;
}

long long parseInt(const std::string& flag, const char* text, long long lo, long long hi) {
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text, &end, 0);
  if (errno != 0 || end == text || *end != '\0') {
    throw UsageError(flag + ": '" + text + "' is not an integer");
  }
  if (v < lo || v > hi) {
    throw UsageError(flag + ": " + text + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return v;
}

// Sizes take K, M or G (binary units) as nccl-tests' parsesize does, with an optional trailing B.
size_t parseSize(const std::string& flag, const char* text) {
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(text, &end);
  double unit = 1;
  if (end != text && *end != '\0') {
    switch (*end) {
      case 'k':
      case 'K':
        unit = 1024.0;
        ++end;
        break;
      case 'm':
      case 'M':
        unit = 1024.0 * 1024;
        ++end;
        break;
      case 'g':
      case 'G':
        unit = 1024.0 * 1024 * 1024;
        ++end;
        break;
      default: break;
    }
    if (*end == 'B' || *end == 'b') ++end;
  }
  if (errno != 0 || end == text || *end != '\0' || !(v >= 0) || v * unit > 1e18) {
    throw UsageError(flag + ": '" + text + "' is not a size (bytes, with an optional K, M or G)");
  }
  return static_cast<size_t>(v * unit);
}

std::vector<chorusDataType_t> parseTypes(const std::string& flag, const char* text) {
  if (std::strcmp(text, "all") == 0) return {std::begin(kAllTypes), std::end(kAllTypes)};
  for (chorusDataType_t t : kAllTypes) {
    if (std::strcmp(text, typeName(t)) == 0) return {t};
  }
  // NCCL's other spellings of the same types.
  struct Alias {
    const char* name;
    chorusDataType_t type;
  };
  constexpr Alias kAliases[] = {{"char", chorusInt8},           {"int", chorusInt32},
                                {"float16", chorusFloat16},     {"float32", chorusFloat32},
                                {"float64", chorusFloat64},     {"bf16", chorusBfloat16},
                                {"fp8_e4m3", chorusFloat8e4m3}, {"fp8_e5m2", chorusFloat8e5m2}};
  for (const Alias& a : kAliases) {
    if (std::strcmp(text, a.name) == 0) return {a.type};
  }
  throw UsageError(flag + ": unknown data type '" + text +
                   "' (int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 f8e4m3 f8e5m2 all)");
}

std::vector<chorusRedOp_t> parseOps(const std::string& flag, const char* text) {
  if (std::strcmp(text, "all") == 0) return {std::begin(kAllOps), std::end(kAllOps)};
  for (chorusRedOp_t op : kAllOps) {
    if (std::strcmp(text, opName(op)) == 0) return {op};
  }
  if (std::strcmp(text, "mulsum") == 0) {
    throw UsageError(flag + ": mulsum (pre-multiplied sum, ncclRedOpCreatePreMulSum) is not supported by chorus");
  }
  throw UsageError(flag + ": unknown reduction operation '" + text + "' (sum prod min max avg all)");
}

void printUsage(const char* prog) {
  std::printf(
      "USAGE: %s\n"
      "\t[-t,--nthreads <num threads>]\n"
      "\t[-g,--ngpus <ranks per thread>]\n"
      "\t[-b,--minbytes <min size in bytes>]\n"
      "\t[-e,--maxbytes <max size in bytes>]\n"
      "\t[-i,--stepbytes <increment size>]\n"
      "\t[-f,--stepfactor <increment factor>]\n"
      "\t[-n,--iters <iteration count>]\n"
      "\t[-m,--agg_iters <aggregated iteration count>]\n"
      "\t[-w,--warmup_iters <warmup iteration count>]\n"
      "\t[-N,--run_cycles <cycle count> run & print each cycle (default: 1; 0=infinite)]\n"
      "\t[-p,--parallel_init <0/1>]\n"
      "\t[-c,--check <check iteration count>]\n"
      "\t[-o,--op <sum/prod/min/max/avg/all>]\n"
      "\t[-d,--datatype <int8/uint8/int32/uint32/int64/uint64/half/float/double/bfloat16/f8e4m3/f8e5m2/all>]\n"
      "\t[-r,--root <root> (-1: every root)]\n"
      "\t[-z,--blocking <0/1/2/3>]\n"
      "\t[-y,--stream_null <0/1>]\n"
      "\t[-T,--timeout <time in seconds>]\n"
      "\t[-G,--cudagraph <num graph launches>] (0 only: host communicators)\n"
      "\t[-C,--report_cputime <0/1>]\n"
      "\t[-a,--average <0/1/2/3> report average iteration time <0=RANK0/1=AVG/2=MIN/3=MAX>]\n"
      "\t[-R,--local_register <0/1> chorusMemAlloc + chorusCommRegister buffers]\n"
      "\t[-J,--output_file <file> write the results as JSON]\n"
      "\t[--backend <chorus/mpi>] run the table on Chorus (default) or on MPI alone\n"
      "\t[--compare mpi] time MPI's matching collective too, in extra columns\n"
      "\t[-h,--help]\n",
      prog);
}

void parseAll(int argc, char** argv, Options* opts) {
  enum { kBackend = 1000, kCompare };
  static const option kLongOpts[] = {{"nthreads", required_argument, nullptr, 't'},
                                     {"ngpus", required_argument, nullptr, 'g'},
                                     {"minbytes", required_argument, nullptr, 'b'},
                                     {"maxbytes", required_argument, nullptr, 'e'},
                                     {"stepbytes", required_argument, nullptr, 'i'},
                                     {"stepfactor", required_argument, nullptr, 'f'},
                                     {"iters", required_argument, nullptr, 'n'},
                                     {"agg_iters", required_argument, nullptr, 'm'},
                                     {"warmup_iters", required_argument, nullptr, 'w'},
                                     {"run_cycles", required_argument, nullptr, 'N'},
                                     {"parallel_init", required_argument, nullptr, 'p'},
                                     {"check", required_argument, nullptr, 'c'},
                                     {"op", required_argument, nullptr, 'o'},
                                     {"datatype", required_argument, nullptr, 'd'},
                                     {"root", required_argument, nullptr, 'r'},
                                     {"blocking", required_argument, nullptr, 'z'},
                                     {"stream_null", required_argument, nullptr, 'y'},
                                     {"timeout", required_argument, nullptr, 'T'},
                                     {"cudagraph", required_argument, nullptr, 'G'},
                                     {"report_cputime", required_argument, nullptr, 'C'},
                                     {"average", required_argument, nullptr, 'a'},
                                     {"local_register", required_argument, nullptr, 'R'},
                                     {"output_file", required_argument, nullptr, 'J'},
                                     {"backend", required_argument, nullptr, kBackend},
                                     {"compare", required_argument, nullptr, kCompare},
                                     {"help", no_argument, nullptr, 'h'},
                                     {nullptr, 0, nullptr, 0}};
  constexpr long long kMaxInt = 1LL << 30;
  opterr = 0;  // our own messages
  optind = 1;
  for (;;) {
    int longIndex = -1;
    int c = getopt_long(argc, argv, ":t:g:b:e:i:f:n:m:w:N:p:c:o:d:r:z:y:T:G:C:a:R:J:h", kLongOpts, &longIndex);
    if (c == -1) break;
    const char* longName = nullptr;
    for (const option& o : kLongOpts) {
      if (o.name != nullptr && o.val == c) longName = o.name;
    }
    std::string flag = c >= kBackend ? std::string("--") + longName : flagName(c, longName);
    switch (c) {
      case 't': opts->nThreads = static_cast<int>(parseInt(flag, optarg, 1, 1024)); break;
      case 'g': opts->nGpus = static_cast<int>(parseInt(flag, optarg, 1, 1024)); break;
      case 'b': opts->minBytes = parseSize(flag, optarg); break;
      case 'e': opts->maxBytes = parseSize(flag, optarg); break;
      case 'i': opts->stepBytes = parseSize(flag, optarg); break;
      case 'f': opts->stepFactor = static_cast<size_t>(parseInt(flag, optarg, 1, 1 << 20)); break;
      case 'n': opts->iters = static_cast<int>(parseInt(flag, optarg, 1, kMaxInt)); break;
      case 'm': opts->aggIters = static_cast<int>(parseInt(flag, optarg, 1, kMaxInt)); break;
      case 'w': opts->warmupIters = static_cast<int>(parseInt(flag, optarg, 0, kMaxInt)); break;
      case 'N': opts->cycles = static_cast<int>(parseInt(flag, optarg, 0, kMaxInt)); break;
      case 'p': opts->parallelInit = static_cast<int>(parseInt(flag, optarg, 0, 1)); break;
      case 'c': opts->check = static_cast<int>(parseInt(flag, optarg, 0, kMaxInt)); break;
      case 'o': opts->ops = parseOps(flag, optarg); break;
      case 'd': opts->types = parseTypes(flag, optarg); break;
      case 'r':
        // The nccl-tests README's "all" parses as 0 there; here it means every root, like -1.
        opts->root = std::strcmp(optarg, "all") == 0 ? -1 : static_cast<int>(parseInt(flag, optarg, -1, kMaxInt));
        break;
      case 'z': opts->blocking = static_cast<int>(parseInt(flag, optarg, 0, 3)); break;
      case 'y': opts->streamNull = static_cast<int>(parseInt(flag, optarg, 0, 1)); break;
      case 'T': opts->timeoutSec = static_cast<int>(parseInt(flag, optarg, 0, kMaxInt)); break;
      case 'G':
        if (parseInt(flag, optarg, 0, kMaxInt) != 0) {
          throw UsageError(flag + ": CUDA graph launches do not apply to host communicators (use 0)");
        }
        break;
      case 'C': opts->cpuTime = static_cast<int>(parseInt(flag, optarg, 0, 1)); break;
      case 'a': opts->average = static_cast<int>(parseInt(flag, optarg, 0, 3)); break;
      case 'R':
        opts->registration = static_cast<int>(parseInt(flag, optarg, 0, 2));
        if (opts->registration == 2) {
          throw UsageError(flag + ": 2 (symmetric window registration) is not available; use 0 or 1");
        }
        break;
      case 'J': opts->jsonPath = optarg; break;
      case kBackend:
        if (std::strcmp(optarg, "chorus") == 0) {
          opts->backend = Backend::kChorus;
        } else if (std::strcmp(optarg, "mpi") == 0) {
          opts->backend = Backend::kMpi;
        } else {
          throw UsageError(flag + ": unknown backend '" + optarg + "' (chorus or mpi)");
        }
        break;
      case kCompare:
        if (std::strcmp(optarg, "mpi") != 0) throw UsageError(flag + ": can only compare with 'mpi'");
        opts->compareMpi = true;
        break;
      case 'h': printUsage(argv[0]); throw 0;
      case ':': {
        std::string name = optopt != 0 ? std::string("-") + static_cast<char>(optopt) : std::string(argv[optind - 1]);
        throw UsageError(name + ": missing value");
      }
      default: {
        std::string name = optopt != 0 ? std::string("-") + static_cast<char>(optopt) : std::string(argv[optind - 1]);
        throw UsageError(name + ": unknown flag (see -h)");
      }
    }
  }
  if (optind < argc) throw UsageError(std::string(argv[optind]) + ": unexpected argument (see -h)");
  if (opts->minBytes > opts->maxBytes) {
    throw UsageError("-b: minimum size " + std::to_string(opts->minBytes) + " is larger than the -e maximum size " +
                     std::to_string(opts->maxBytes));
  }
  if (opts->stepFactor <= 1 && opts->stepBytes == 0 && opts->minBytes < opts->maxBytes) {
    throw UsageError("-i: a step of 0 bytes never reaches the maximum size (or use -f)");
  }
  if (opts->compareMpi && opts->backend == Backend::kMpi) {
    throw UsageError("--compare: --backend mpi already runs on MPI alone");
  }
}

}  // namespace

int parseOptions(int argc, char** argv, bool quiet, Options* opts) {
  opts->argv.assign(argv, argv + argc);
  opts->ops = {chorusSum};
  opts->types = {chorusFloat32};
  try {
    parseAll(argc, argv, opts);
  } catch (const UsageError& e) {
    if (!quiet) {
      const char* slash = std::strrchr(argv[0], '/');
      std::fprintf(stderr, "%s: %s\n", slash != nullptr ? slash + 1 : argv[0], e.message().c_str());
    }
    return kExitUsage;
  } catch (int) {
    return -1;
  }
  return kExitOk;
}

}  // namespace chorus::perf

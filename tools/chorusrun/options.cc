#include "options.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>

namespace chorus::launcher {
namespace {

std::optional<long> parseInt(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return std::nullopt;
  return v;
}

std::optional<double> parseSeconds(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (*end != '\0' || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

std::string usage() {
  return "usage: chorusrun -np N [--hosts K] [--timeout S] [--tag-output] [--fail-grace S] [--keep-going]\n"
         "                 [-x NAME=VALUE]... [--] PROGRAM [ARGS...]\n"
         "       chorusrun --info\n"
         "Starts N ranks of PROGRAM on this machine with CHORUS_RANK, CHORUS_WORLD_SIZE, CHORUS_LOCAL_RANK,\n"
         "CHORUS_LOCAL_SIZE, CHORUS_ADDR and CHORUS_SECRET set, and passes their output through line by line.\n"
         "  -np N, -n N      number of ranks (at least 1)\n"
         "  --hosts K        spread the ranks over K simulated hosts (distinct CHORUS_HOSTID), in blocks\n"
         "  --timeout S      kill the job after S seconds and exit with status 124\n"
         "  --tag-output     prefix every output line with \"[rank] \" (mpirun's flag)\n"
         "  -x NAME=VALUE    set an environment variable in every rank\n"
         "  --info           print the version, build features, usable transports and this machine\n"
         "  --fail-grace S   after a rank fails, give the others S seconds (default 2) to report their own\n"
         "                   errors and exit before they are stopped; 0 stops them at once\n"
         "  --keep-going     a failing rank does not stop the others (elastic jobs); chorusrun then exits with 0\n"
         "                   when any rank exited with 0\n"
         "When a rank fails, the others are stopped (after --fail-grace) and chorusrun exits with that rank's\n"
         "status (128 + signal for a signal). SIGINT and SIGTERM are forwarded to every rank; a second one kills\n"
         "them.\n";
}

CommandLine parseCommandLine(int argc, const char* const* argv) {
  CommandLine cl;
  bool haveNp = false;
  int i = 1;
  // The value of a flag: the next argument, or the part after '=' in "--flag=value".
  auto value = [&](const std::string& flag, const std::string& inline_, bool hasInline) -> std::optional<std::string> {
    if (hasInline) return inline_;
    if (i + 1 >= argc) {
      cl.error = flag + " needs a value";
      return std::nullopt;
    }
    return std::string(argv[++i]);
  };
  for (; i < argc && cl.error.empty(); ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.empty() || arg[0] != '-') break;
    size_t eq = arg.find('=');
    bool hasInline = arg.rfind("--", 0) == 0 && eq != std::string::npos;
    std::string flag = hasInline ? arg.substr(0, eq) : arg;
    std::string inline_ = hasInline ? arg.substr(eq + 1) : "";
    if (flag == "--info") {
      cl.info = true;
    } else if (flag == "--tag-output") {
      cl.job.tagOutput = true;
    } else if (flag == "-h" || flag == "--help") {
      cl.help = true;
    } else if (flag == "-np" || flag == "-n" || flag == "--np") {
      auto v = value(flag, inline_, hasInline);
      if (!v) break;
      auto n = parseInt(*v);
      if (!n || *n < 1 || *n > 65536) cl.error = flag + " must be a number of ranks of at least 1, not '" + *v + "'";
      haveNp = true;
      if (n) cl.job.nranks = static_cast<int>(*n);
    } else if (flag == "--hosts") {
      auto v = value(flag, inline_, hasInline);
      if (!v) break;
      auto n = parseInt(*v);
      if (!n || *n < 1 || *n > 65536) cl.error = "--hosts must be a number of hosts of at least 1, not '" + *v + "'";
      if (n) cl.job.nhosts = static_cast<int>(*n);
    } else if (flag == "--timeout") {
      auto v = value(flag, inline_, hasInline);
      if (!v) break;
      auto s = parseSeconds(*v);
      if (!s || *s <= 0 || *s > 1e9) cl.error = "--timeout must be a positive number of seconds, not '" + *v + "'";
      if (s && *s > 0 && *s <= 1e9)
        cl.job.timeout = std::chrono::milliseconds(std::max<int64_t>(1, std::llround(*s * 1000)));
    } else if (flag == "--fail-grace") {
      auto v = value(flag, inline_, hasInline);
      if (!v) break;
      auto s = parseSeconds(*v);
      if (!s || *s < 0 || *s > 1e9) cl.error = "--fail-grace must be a number of seconds >= 0, not '" + *v + "'";
      if (s && *s >= 0 && *s <= 1e9) cl.job.failGrace = std::chrono::milliseconds(std::llround(*s * 1000));
    } else if (flag == "--keep-going") {
      cl.job.keepGoing = true;
    } else if (flag == "-x") {
      auto v = value(flag, inline_, hasInline);
      if (!v) break;
      size_t at = v->find('=');
      if (at == 0 || at == std::string::npos) {
        cl.error = "-x needs NAME=VALUE, not '" + *v + "'";
      } else {
        cl.job.extraEnv.emplace_back(v->substr(0, at), v->substr(at + 1));
      }
    } else {
      cl.error = "unknown option " + flag;
    }
  }
  if (!cl.error.empty() || cl.info || cl.help) return cl;
  for (; i < argc; ++i) cl.job.argv.emplace_back(argv[i]);
  if (!haveNp) {
    cl.error = "missing -np (the number of ranks)";
  } else if (cl.job.argv.empty()) {
    cl.error = "no program given after the options";
  } else if (cl.job.nhosts > cl.job.nranks) {
    cl.error = "--hosts " + std::to_string(cl.job.nhosts) + " is more than -np " + std::to_string(cl.job.nranks);
  }
  return cl;
}

}  // namespace chorus::launcher

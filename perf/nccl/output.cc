// nccl-tests' output, column for column: the header lines, the device lines, the two-half table and the footer
// that scripts look for. With -J, the same content as nccl-tests' JSON file (version 2 layout).
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstring>
#include <ctime>

#include "driver.h"

namespace chorus::perf {
namespace {

constexpr const char* kNcclTestsVersion = "2.19.0";

// nccl-tests' getFloatStr: as many decimals as the width allows, then exponent notation.
std::string floatStr(double value, int width) {
  int power = 0;
  for (uint64_t v = 1; value >= static_cast<double>(v) && power < 20; v *= 10) ++power;
  char s[64];
  if (power < width - 2) {
    std::snprintf(s, sizeof s, "%*.2f", width, value);
  } else if (power < width - 1) {
    std::snprintf(s, sizeof s, "%*.1f", width, value);
  } else if (power < width + 1) {
    std::snprintf(s, sizeof s, "%*.0f", width, value);
  } else if (width >= 7) {
    std::snprintf(s, sizeof s, "%*.1e", width, value);
  } else {
    std::snprintf(s, sizeof s, "%*.0e", width, value);
  }
  return s;
}

std::string jsonString(const std::string& in) {
  std::string out = "\"";
  for (char c : in) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20) out += c;
        break;
    }
  }
  return out + "\"";
}

std::string now() {
  char buf[64];
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

}  // namespace

std::string formatDeviceLine(const DeviceLine& d) {
  char line[2048];
  std::snprintf(line, sizeof line, "#  Rank %2d Group %2d Pid %6d on %10s device %2d [host] %s\n", d.rank, d.group,
                d.pid, d.host.c_str(), d.device, d.info.c_str());
  return line;
}

bool parseDeviceLine(const std::string& line, DeviceLine* d) {
  char host[1025] = {0};
  char hex[129] = {0};
  char info[1025] = {0};
  int n = std::sscanf(line.c_str(), "#  Rank %d Group %d Pid %d on %1024s device %d [%128[^]]] %1024[^\n]", &d->rank,
                      &d->group, &d->pid, host, &d->device, hex, info);
  d->host = host;
  d->info = info;
  return n >= 6;
}

Report::Report(const Options& opts, const Collective& coll) : opts_(opts), coll_(coll) {
  if (opts.jsonPath.empty()) return;
  // As nccl-tests: never overwrite; probe path.0, path.1, ... when the file exists.
  std::string path = opts.jsonPath;
  for (int i = 0; (json_ = std::fopen(path.c_str(), "wx")) == nullptr && errno == EEXIST; ++i) {
    path = opts.jsonPath + "." + std::to_string(i);
  }
  if (json_ == nullptr) {
    std::printf("# skipping json output; %s not accessible\n", path.c_str());
    return;
  }
  std::printf("# Writing JSON output to %s\n", path.c_str());
  int version = 0;
  chorusGetVersion(&version);
  json("{\"version\":2,\"start_time\":%s,\"args\":[", jsonString(now()).c_str());
  for (size_t i = 0; i < opts.argv.size(); ++i) json("%s%s", i ? "," : "", jsonString(opts.argv[i]).c_str());
  json("],\"chorus_version\":%d,\"library\":\"%s\"", version, opts.backend == Backend::kMpi ? "mpi" : "chorus");
}

Report::~Report() {
  if (json_ == nullptr) return;
  json(",\"end_time\":%s}\n", jsonString(now()).c_str());
  std::fclose(json_);
}

void Report::json(const char* fmt, ...) {
  if (json_ == nullptr) return;
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(json_, fmt, ap);
  va_end(ap);
}

void Report::header(int nThreads, int nGpus, const std::string& backendLine) {
  int version = 0;
  chorusGetVersion(&version);
  std::printf("# nccl-tests version %s chorus-headers=%d chorus-library=%d\n", kNcclTestsVersion, CHORUS_VERSION_CODE,
              version);
  std::printf("# Collective test starting: %s\n", coll_.programName);
  const bool factor = opts_.stepFactor > 1;
  std::printf(
      "# nThread %d nGpus %d minBytes %zu maxBytes %zu step: %zu(%s) warmup iters: %d iters: %d agg iters: %d "
      "validation: %d graph: 0 unalign: 0\n",
      nThreads, nGpus, opts_.minBytes, opts_.maxBytes, factor ? opts_.stepFactor : opts_.stepBytes,
      factor ? "factor" : "bytes", opts_.warmupIters, opts_.iters, opts_.aggIters, opts_.check);
  if (opts_.blocking == 1) std::printf("# Blocking Enabled: wait for completion and barrier after each collective \n");
  if (opts_.blocking > 1) std::printf("# Blocking Enabled: wait for completion after each collective (no barrier) \n");
  if (opts_.parallelInit) std::printf("# Parallel Init Enabled: threads call into NcclInitRank concurrently \n");
  if (!backendLine.empty()) std::printf("# %s\n", backendLine.c_str());
  std::printf("#\n");
  json(",\"config\":{\"nthreads\":%d,\"ngpus\":%d,\"minimum_bytes\":%zu,\"maximum_bytes\":%zu,", nThreads, nGpus,
       opts_.minBytes, opts_.maxBytes);
  if (factor) {
    json("\"step_factor\":%zu,", opts_.stepFactor);
  } else {
    json("\"step_bytes\":%zu,", opts_.stepBytes);
  }
  json(
      "\"warmup_iters\":%d,\"iterations\":%d,\"aggregated_iterations\":%d,\"validation\":%d,\"graph\":0,"
      "\"blocking_collectives\":\"%s\",\"parallel_init\":\"%s\",\"backend\":%s",
      opts_.warmupIters, opts_.iters, opts_.aggIters, opts_.check, opts_.blocking ? "true" : "false",
      opts_.parallelInit ? "true" : "false", jsonString(backendLine).c_str());
}

void Report::devices(const std::vector<DeviceLine>& lines) {
  std::printf("# Using devices\n");
  json(",\"devices\":[");
  for (size_t i = 0; i < lines.size(); ++i) {
    const DeviceLine& d = lines[i];
    std::fputs(formatDeviceLine(d).c_str(), stdout);
    json(
        "%s{\"rank\":%d,\"group\":%d,\"pid\":%d,\"hostname\":%s,\"device\":%d,\"device_hex\":\"host\","
        "\"device_info\":%s}",
        i ? "," : "", d.rank, d.group, d.pid, jsonString(d.host).c_str(), d.device, jsonString(d.info).c_str());
  }
  json("]}");
}

void Report::tableHeader() {
  const char* t = opts_.cpuTime ? "cputime" : "time";
  std::string banner = "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          ";
  std::string names = "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s";
  std::string units = names;
  if (opts_.compareMpi) {
    // Extra columns after the standard 13, so that parsers of nccl-tests output keep working.
    banner += "   mpi out-of-place          mpi in-place       ";
    names += "  %7s  %6s  %6s  %7s  %6s  %6s";
    units += "  %7s  %6s  %6s  %7s  %6s  %6s";
  }
  std::printf("#\n");
  std::printf((banner + "\n").c_str(), "", "", "", "", "");
  std::printf((names + " \n").c_str(), "size", "count", "type", "redop", "root", t, "algbw", "busbw", "#wrong", t,
              "algbw", "busbw", "#wrong", "mpitime", "mpibus", "ratio", "mpitime", "mpibus", "ratio");
  std::printf((units + " \n").c_str(), "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)",
              "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "", "(us)", "(GB/s)", "");
  json(",\"results\":[");
}

void Report::rowStart(size_t bytes, size_t count, const char* type, const char* op, int root) {
  char rootName[32];
  std::snprintf(rootName, sizeof rootName, "%6i", root);
  std::printf("%12zu  %12zu  %8s  %6s  %6s", bytes, count, type, op, rootName);
  json("%s{\"size\":%zu,\"count\":%zu,\"type\":\"%s\",\"redop\":\"%s\",\"root\":\"%s\"", firstRow_ ? "" : ",", bytes,
       count, type, op, rootName);
  firstRow_ = false;
  hasCompare_ = false;
}

void Report::jsonHalf(const char* key, const HalfResult& r) {
  json(",\"%s\":{\"%s\":%f,\"alg_bw\":%f,\"bus_bw\":%f,\"nwrong\":", key, opts_.cpuTime ? "cpu_time" : "time", r.timeUs,
       r.algBw, r.busBw);
  if (r.wrong >= 0) {
    json("%f}", static_cast<double>(r.wrong));
  } else {
    json("null}");
  }
}

void Report::rowHalf(const HalfResult& r, bool outOfPlace) {
  const std::string time = floatStr(r.timeUs, 7);
  const std::string alg = floatStr(r.algBw, 6);
  const std::string bus = floatStr(r.busBw, 6);
  if (r.wrong >= 0) {
    std::printf("  %7s  %6s  %6s  %6g", time.c_str(), alg.c_str(), bus.c_str(), static_cast<double>(r.wrong));
  } else {
    std::printf("  %7s  %6s  %6s    N/A", time.c_str(), alg.c_str(), bus.c_str());
  }
  jsonHalf(outOfPlace ? "out_of_place" : "in_place", r);
}

void Report::rowCompare(const HalfResult& mpi, double ratio, bool outOfPlace) {
  pending_[outOfPlace ? 0 : 1] = mpi;
  pendingRatio_[outOfPlace ? 0 : 1] = ratio;
  hasCompare_ = true;
}

void Report::rowEnd() {
  if (hasCompare_) {
    for (int h = 0; h < 2; ++h) {
      std::printf("  %7s  %6s  %6s", floatStr(pending_[h].timeUs, 7).c_str(), floatStr(pending_[h].busBw, 6).c_str(),
                  floatStr(pendingRatio_[h], 6).c_str());
      jsonHalf(h == 0 ? "mpi_out_of_place" : "mpi_in_place", pending_[h]);
      json(",\"%s\":%f", h == 0 ? "ratio_out_of_place" : "ratio_in_place", pendingRatio_[h]);
    }
  }
  std::printf("\n");
  json(",\"actual_iterations\":%d,\"experiment_name\":\"%s\"}", opts_.iters, coll_.programName);
}

void Report::footer(int errors, double avgBw, double minBw) {
  json("],\"out_of_bounds\":{\"count\":%d,\"okay\":\"%s\"}", errors, errors ? "false" : "true");
  std::printf("# %-20s : %d %s\n", "Out of bounds values", errors, errors ? "FAILED" : "OK");
  const char* bwCheck = minBw < 0 ? "" : (avgBw < minBw * 0.9 ? "FAILED" : "OK");
  std::printf("# %-20s : %g %s\n", "Avg bus bandwidth", avgBw, bwCheck);
  std::printf("#\n");
  std::printf("# Collective test concluded: %s\n", coll_.programName);
  json(",\"average_bus_bandwidth\":{\"bandwidth\":%f,\"okay\":\"%s\"}", avgBw,
       minBw < 0 ? "unchecked" : (avgBw >= minBw * 0.9 ? "true" : "false"));
  std::fflush(stdout);
}

}  // namespace chorus::perf

// Issue 13 items 9 and 10 with real processes: the flight recorder's dumps (on a timeout, a remote error, an
// abort, CHORUS_FR_SIGNAL) merged by scripts/chorus_fr.py name the rank that is behind and the operation the
// others wait in; CHORUS_TRACE_FILE writes one Chrome/Perfetto trace per rank, with one event per operation
// (bytes, algorithm) and nested transport waits, merged by scripts/chorus_trace.py and drawn by
// perf/trace_timeline.sh.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "chorus/chorus.h"
#include "common/child.h"

namespace chorus::test {
namespace {

std::string readFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Runs a shell command; returns its stdout, and its exit status in *status.
std::string run(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  int rc = pclose(p);
  *status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  return out;
}

std::vector<std::string> filesIn(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  while (dirent* e = d ? readdir(d) : nullptr) {
    if (std::string(e->d_name).rfind(prefix, 0) == 0) out.push_back(dir + "/" + e->d_name);
  }
  if (d) closedir(d);
  return out;
}

std::string tempDir() {
  char tmpl[] = "/tmp/chorus-fr-XXXXXX";
  return mkdtemp(tmpl);
}

constexpr size_t kCount = 1024;

// args[0]: "behind" (the last rank skips the fourth all-reduce, the others time out), "signal" (each rank
// raises CHORUS_FR_SIGNAL after three all-reduces) or "trace" (a few collectives with tracing on).
const bool kChild = registerChild("recorder", [](int rank, int nranks, const std::vector<std::string>& args) {
  const std::string mode = args.at(0);
  chorusComm_t comm = nullptr;
  if (chorusCommInitFromEnv(&comm, nullptr) != chorusSuccess) return 2;
  std::vector<float> buf(kCount, 1.0f);
  for (int i = 0; i < 3; ++i) {
    if (chorusAllReduce(buf.data(), buf.data(), kCount, chorusFloat32, chorusSum, comm, nullptr) != chorusSuccess) {
      return 3;
    }
  }
  if (mode == "signal") {
    raise(SIGUSR1);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the dumper thread writes the log
    chorusCommDestroy(comm);
    return 0;
  }
  if (mode == "trace") {
    std::vector<float> all(kCount * nranks);
    if (chorusAllGather(buf.data(), all.data(), kCount, chorusFloat32, comm, nullptr) != chorusSuccess) return 4;
    if (chorusBroadcast(buf.data(), buf.data(), kCount, chorusFloat32, 0, comm, nullptr) != chorusSuccess) return 5;
    chorusCommFinalize(comm);
    chorusCommDestroy(comm);
    return 0;
  }
  // behind: the last rank stays behind, then leaves by abort once the others have failed.
  if (rank == nranks - 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    chorusCommAbort(comm);
    return 0;
  }
  chorusResult_t rc = chorusAllReduce(buf.data(), buf.data(), kCount, chorusFloat32, chorusSum, comm, nullptr);
  chorusCommAbort(comm);
  return rc == chorusTimeout || rc == chorusRemoteError ? 0 : 10;  // timed out, or told by the rank that did
});

TEST(FlightRecorderProcs, DumpsOnTimeoutAndTheScriptNamesTheRankBehind) {
  const std::string dir = tempDir();
  ChildOptions opt;
  opt.args = {"behind"};
  opt.env["CHORUS_TIMEOUT_MS"] = "1000";
  opt.env["CHORUS_DEBUG"] = "WARN";
  opt.env["CHORUS_DEBUG_FILE"] = dir + "/log.%p";
  for (const ChildResult& r : runChildren("recorder", 3, opt)) EXPECT_EQ(r.exitCode, 0) << "pid " << r.pid;
  std::vector<std::string> logs = filesIn(dir, "log.");
  ASSERT_EQ(logs.size(), 3u);
  std::string all;
  for (const std::string& l : logs) all += readFile(l);
  // Every rank dumped: two on their timeout (and again on their abort), the last on its abort.
  size_t dumps = 0;
  for (size_t at = all.find("FR dump "); at != std::string::npos; at = all.find("FR dump ", at + 1)) ++dumps;
  EXPECT_GE(dumps, 3u) << all;
  EXPECT_NE(all.find("reason=\"chorusCommAbort\""), std::string::npos) << all;
  EXPECT_NE(all.find("state=failed"), std::string::npos) << all;
  EXPECT_NE(all.find("op=AllReduce count=1024 dtype=float32"), std::string::npos) << all;
  int status = -1;
  std::string cmd = "python3 " CHORUS_SOURCE_DIR "/scripts/chorus_fr.py";
  for (const std::string& l : logs) cmd += " " + l;
  std::string out = run(cmd, &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("behind: rank 2 has not issued seq 3 AllReduce(count 1024, float32), where ranks 0, 1 wait"),
            std::string::npos)
      << out;
  fprintf(stderr, "%s", out.c_str());
  run("rm -rf " + dir, &status);
}

TEST(FlightRecorderProcs, DumpsOnRequestThroughCHORUS_FR_SIGNAL) {
  const std::string dir = tempDir();
  ChildOptions opt;
  opt.args = {"signal"};
  opt.env["CHORUS_FR_SIGNAL"] = "USR1";
  opt.env["CHORUS_DEBUG"] = "WARN";
  opt.env["CHORUS_DEBUG_FILE"] = dir + "/log.%p";
  for (const ChildResult& r : runChildren("recorder", 2, opt)) EXPECT_EQ(r.exitCode, 0) << "pid " << r.pid;
  std::vector<std::string> logs = filesIn(dir, "log.");
  ASSERT_EQ(logs.size(), 2u);
  for (const std::string& l : logs) {
    const std::string text = readFile(l);
    EXPECT_NE(text.find("reason=\"signal User defined signal 1 (CHORUS_FR_SIGNAL)\""), std::string::npos) << text;
    // Three all-reduces, all done, numbered 0..2.
    for (int seq = 0; seq < 3; ++seq) {
      EXPECT_NE(text.find("seq=" + std::to_string(seq) + " op=AllReduce count=1024 dtype=float32"), std::string::npos)
          << text;
    }
    EXPECT_EQ(text.find("state=running"), std::string::npos) << text;
  }
  int status = -1;
  std::string out = run("python3 " CHORUS_SOURCE_DIR "/scripts/chorus_fr.py " + logs[0] + " " + logs[1], &status);
  EXPECT_NE(out.find("every rank completed every recorded operation"), std::string::npos) << out;
  run("rm -rf " + dir, &status);
}

TEST(TraceProcs, OneTracePerRankMergedAndDrawn) {
  const std::string dir = tempDir();
  ChildOptions opt;
  opt.args = {"trace"};
  opt.env["CHORUS_TRACE_FILE"] = dir + "/trace.json";
  const int n = 3;
  for (const ChildResult& r : runChildren("recorder", n, opt)) EXPECT_EQ(r.exitCode, 0) << "pid " << r.pid;
  std::vector<std::string> traces = filesIn(dir, "trace.rank");
  ASSERT_EQ(traces.size(), static_cast<size_t>(n));
  for (const std::string& t : traces) {
    const std::string text = readFile(t);
    EXPECT_EQ(text.rfind("[", 0), 0u) << t;
    EXPECT_NE(text.find("\"name\":\"AllReduce\",\"cat\":\"op\""), std::string::npos) << text;
    EXPECT_NE(text.find("\"name\":\"AllGather\",\"cat\":\"op\""), std::string::npos) << text;
    EXPECT_NE(text.find("\"bytes\":"), std::string::npos) << text;
    EXPECT_NE(text.find("\"algo\":"), std::string::npos) << text;
  }
  int status = -1;
  std::string cmd = "python3 " CHORUS_SOURCE_DIR "/scripts/chorus_trace.py merge " + dir + "/merged.json";
  for (const std::string& t : traces) cmd += " " + t;
  std::string out = run(cmd, &status);
  ASSERT_EQ(status, 0) << out;
  // 3 all-reduces, an all-gather and a broadcast on each of 3 ranks.
  EXPECT_NE(out.find("15 operations"), std::string::npos) << out;
  EXPECT_NE(out.find("ranks [0, 1, 2]"), std::string::npos) << out;
  // Python's json reads the merged file: the events are well formed.
  out = run("python3 -c \"import json,sys; d=json.load(open('" + dir +
                "/merged.json')); print(sum(1 for e in d['traceEvents'] if e.get('cat')=='op'))\"",
            &status);
  EXPECT_EQ(out, "15\n");
  if (run("command -v gnuplot", &status).empty()) {
    GTEST_SKIP() << "gnuplot is not installed (scripts/install_deps.sh installs gnuplot-nox): no timeline drawn";
  }
  out = run(CHORUS_SOURCE_DIR "/perf/trace_timeline.sh " + dir + "/merged.json " + dir + "/timeline.png 2>&1", &status);
  EXPECT_EQ(status, 0) << out;
  const std::string png = readFile(dir + "/timeline.png");
  EXPECT_GT(png.size(), 1000u);
  EXPECT_EQ(png.compare(1, 3, "PNG"), 0);
  run("rm -rf " + dir, &status);
}

}  // namespace
}  // namespace chorus::test

CHORUS_TEST_MAIN()

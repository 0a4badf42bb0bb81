// The chorusrun executable: output tagging, exit status and messages, timeout, signal forwarding, usage.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "child_process.h"

namespace chorus::testing {
namespace {

using namespace std::chrono_literals;

std::vector<std::string> chorusrun(std::vector<std::string> args) {
  args.insert(args.begin(), CHORUSRUN_PATH);
  return args;
}

// A fresh scratch folder for pid files, removed at the end of the test.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "chorusrun_test.XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }
  pid_t readPid(const std::string& name) const {
    pid_t pid = 0;
    std::ifstream(path_ + "/" + name) >> pid;
    return pid;
  }

 private:
  std::string path_;
};

int exitCode(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(Chorusrun, TagOutputTagsEveryLineWithItsRankPerStream) {
  ChildProcess p(
      chorusrun({"-np", "3", "--tag-output", "/bin/sh", "-c", "echo out $CHORUS_RANK; echo err >&2; printf partial"}));
  ASSERT_EQ(exitCode(p.wait()), 0) << p.err();
  for (int r = 0; r < 3; ++r) {
    std::string tag = "[" + std::to_string(r) + "] ";
    EXPECT_NE(p.out().find(tag + "out " + std::to_string(r) + "\n"), std::string::npos) << p.out();
    EXPECT_NE(p.out().find(tag + "partial\n"), std::string::npos) << p.out();
    EXPECT_NE(p.err().find(tag + "err\n"), std::string::npos) << p.err();
  }
  EXPECT_EQ(p.out().find("err"), std::string::npos);
}

TEST(Chorusrun, AFailingRankStopsTheOthersAndGivesItsStatus) {
  ScratchDir dir;
  // Ranks 0 and 2 record their pid and their child's, then wait; rank 1 fails once they have.
  std::string script =
      "cd " + dir.path() +
      "; if [ $CHORUS_RANK = 1 ]; then"
      "   while [ ! -s child.0 ] || [ ! -s child.2 ]; do sleep 0.02; done; exit 3;"
      " fi;"
      " echo $$ > pid.tmp.$CHORUS_RANK; mv pid.tmp.$CHORUS_RANK pid.$CHORUS_RANK;"
      " sleep 30 & echo $! > child.tmp.$CHORUS_RANK; mv child.tmp.$CHORUS_RANK child.$CHORUS_RANK; wait";
  auto start = std::chrono::steady_clock::now();
  ChildProcess p(chorusrun({"-np", "3", "/bin/sh", "-c", script}));
  int status = p.wait();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  EXPECT_EQ(exitCode(status), 3) << p.err();
  EXPECT_NE(p.err().find("chorusrun: rank 1 (pid "), std::string::npos) << p.err();
  EXPECT_NE(p.err().find(") exited with status 3"), std::string::npos) << p.err();
  for (int r : {0, 2}) {
    pid_t shell = dir.readPid("pid." + std::to_string(r));
    pid_t child = dir.readPid("child." + std::to_string(r));
    ASSERT_GT(shell, 0);
    ASSERT_GT(child, 0);
    EXPECT_TRUE(processGone(shell)) << "rank " << r << " shell " << shell;
    EXPECT_TRUE(processGone(child)) << "rank " << r << " child " << child;
  }
}

TEST(Chorusrun, ARankKilledBySignalGives128PlusSignal) {
  ChildProcess p(chorusrun({"-np", "2", "/bin/sh", "-c", "if [ $CHORUS_RANK = 1 ]; then kill -9 $$; fi; sleep 30"}));
  int status = p.wait();
  EXPECT_EQ(exitCode(status), 137) << p.err();
  EXPECT_NE(p.err().find("chorusrun: rank 1 (pid "), std::string::npos) << p.err();
  EXPECT_NE(p.err().find("killed by signal 9 (SIGKILL)"), std::string::npos) << p.err();
}

TEST(Chorusrun, KeepGoingLetsSurvivorsFinishAndSucceed) {
  ChildProcess p(chorusrun({"--keep-going", "-np", "3", "/bin/sh", "-c",
                            "if [ $CHORUS_RANK = 1 ]; then kill -9 $$; fi; sleep 0.5; echo done $CHORUS_RANK"}));
  EXPECT_EQ(exitCode(p.wait()), 0) << p.err();
  EXPECT_NE(p.err().find("killed by signal 9 (SIGKILL); --keep-going"), std::string::npos) << p.err();
  for (int r : {0, 2}) EXPECT_NE(p.out().find("done " + std::to_string(r)), std::string::npos) << p.out();
}

TEST(Chorusrun, SurvivorsReportTheirOwnErrorWithinTheFailGrace) {
  ChildProcess p(chorusrun({"--fail-grace", "5", "-np", "2", "/bin/sh", "-c",
                            "if [ $CHORUS_RANK = 1 ]; then exit 3; fi; sleep 0.3; echo my own error >&2; exit 4"}));
  EXPECT_EQ(exitCode(p.wait()), 3) << p.err();
  EXPECT_NE(p.err().find("my own error"), std::string::npos) << p.err();
  EXPECT_EQ(p.err().find("stopping"), std::string::npos) << p.err();
}

TEST(Chorusrun, TimeoutKillsTheJobWithStatus124) {
  auto start = std::chrono::steady_clock::now();
  ChildProcess p(chorusrun({"--timeout", "0.5", "-np", "2", "/bin/sh", "-c", "sleep 30"}));
  int status = p.wait();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  EXPECT_EQ(exitCode(status), 124) << p.err();
  EXPECT_NE(p.err().find("chorusrun: timeout after 0.5"), std::string::npos) << p.err();
}

TEST(Chorusrun, ForwardsSigtermToEveryRank) {
  ChildProcess p(chorusrun({"-np", "2", "--tag-output", "--", "/bin/sh", "-c",
                            "trap 'echo got-term; exit 7' TERM; echo ready; sleep 30 & wait"}));
  ASSERT_TRUE(p.readUntil("[0] ready", 10s)) << p.out();
  ASSERT_TRUE(p.readUntil("[1] ready", 10s)) << p.out();
  kill(p.pid(), SIGTERM);
  int status = p.wait();
  EXPECT_EQ(exitCode(status), 7) << p.err();
  EXPECT_NE(p.out().find("[0] got-term"), std::string::npos) << p.out();
  EXPECT_NE(p.out().find("[1] got-term"), std::string::npos) << p.out();
  EXPECT_NE(p.err().find("forwarding SIGTERM"), std::string::npos) << p.err();
}

TEST(Chorusrun, SetsExtraVariablesAndSimulatedHosts) {
  ChildProcess p(chorusrun({"-np", "4", "--hosts", "2", "--tag-output", "-x", "GREETING=hi there", "/bin/sh", "-c",
                            "echo \"$GREETING $CHORUS_LOCAL_RANK/$CHORUS_LOCAL_SIZE ${CHORUS_HOSTID##*-}\""}));
  ASSERT_EQ(exitCode(p.wait()), 0) << p.err();
  EXPECT_NE(p.out().find("[0] hi there 0/2 simhost0\n"), std::string::npos) << p.out();
  EXPECT_NE(p.out().find("[1] hi there 1/2 simhost0\n"), std::string::npos) << p.out();
  EXPECT_NE(p.out().find("[2] hi there 0/2 simhost1\n"), std::string::npos) << p.out();
  EXPECT_NE(p.out().find("[3] hi there 1/2 simhost1\n"), std::string::npos) << p.out();
}

TEST(Chorusrun, AProgramThatCannotRunExits127) {
  ChildProcess p(chorusrun({"-np", "1", "/nonexistent/program"}));
  EXPECT_EQ(exitCode(p.wait()), 127);
  EXPECT_NE(("\n" + p.err()).find("\nchorusrun: cannot run '/nonexistent/program'"), std::string::npos) << p.err();
  EXPECT_NE(p.err().find("exited with status 127"), std::string::npos) << p.err();
}

// Without --tag-output every line passes through as the rank wrote it, as under mpirun: a parser of the
// program's output reads chorusrun's output unchanged.
TEST(Chorusrun, PassesOutputThroughUntaggedByDefault) {
  ChildProcess p(
      chorusrun({"-np", "3", "/bin/sh", "-c", "echo \"# line of $CHORUS_RANK\"; echo \"err $CHORUS_RANK\" >&2"}));
  ASSERT_EQ(exitCode(p.wait()), 0) << p.err();
  for (int r = 0; r < 3; ++r) {
    EXPECT_NE(("\n" + p.out()).find("\n# line of " + std::to_string(r) + "\n"), std::string::npos) << p.out();
    EXPECT_NE(("\n" + p.err()).find("\nerr " + std::to_string(r) + "\n"), std::string::npos) << p.err();
  }
  EXPECT_EQ(p.out().find('['), std::string::npos) << p.out();
}

struct BadUsage {
  std::vector<std::string> args;
  std::string mentions;
};

class ChorusrunUsage : public ::testing::TestWithParam<BadUsage> {};

TEST_P(ChorusrunUsage, ExitsWithStatus2AndNamesTheFlag) {
  ChildProcess p(chorusrun(GetParam().args));
  EXPECT_EQ(exitCode(p.wait()), 2);
  EXPECT_NE(p.err().find(GetParam().mentions), std::string::npos) << p.err();
  EXPECT_EQ(p.err().find('\n'), p.err().size() - 1) << "one line: " << p.err();
  EXPECT_EQ(p.out(), "");
}

INSTANTIATE_TEST_SUITE_P(Cases, ChorusrunUsage,
                         ::testing::Values(BadUsage{{"/bin/true"}, "missing -np"},
                                           BadUsage{{"-np", "0", "/bin/true"}, "-np"},
                                           BadUsage{{"-np", "x", "/bin/true"}, "-np"},
                                           BadUsage{{"-np"}, "-np needs a value"},
                                           BadUsage{{"--bogus", "-np", "1", "/bin/true"}, "unknown option --bogus"},
                                           BadUsage{{"-np", "2"}, "no program"},
                                           BadUsage{{"-np", "2", "--hosts", "3", "/bin/true"}, "--hosts"},
                                           BadUsage{{"-np", "2", "--timeout", "-1", "/bin/true"}, "--timeout"},
                                           BadUsage{{"-np", "2", "-x", "NOVALUE", "/bin/true"}, "-x"},
                                           BadUsage{{"-np", "2", "--fail-grace", "-1", "/bin/true"}, "--fail-grace"}));

TEST(Chorusrun, InfoDescribesTheBuildAndMachine) {
  ChildProcess p(chorusrun({"--info"}));
  ASSERT_EQ(exitCode(p.wait()), 0) << p.err();
  for (const char* word : {"Chorus ", "CUDA", "MPI", "hwloc", "ibverbs", "inproc", "shm", "cma", "socket", "cores",
                           "numa", "memory", "/dev/shm", "gpus"}) {
    EXPECT_NE(p.out().find(word), std::string::npos) << word << " missing in:\n" << p.out();
  }
}

}  // namespace
}  // namespace chorus::testing

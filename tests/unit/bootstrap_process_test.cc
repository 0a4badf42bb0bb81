// The bootstrap with ranks as separate processes (real sockets between endpoints, real peer death).
// Children are this test binary re-executed (posix_spawn) with --bootstrap-child, because the parent already
// runs its endpoint's service thread and must not fork() without exec.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "bootstrap/endpoint.h"
#include "bootstrap/unique_id.h"
#include "bootstrap_test_util.h"

extern char** environ;

namespace chorus::bootstrap {
namespace {

using testing::errorOf;
using testing::exerciseCollectives;
using testing::testCtx;

std::string idToHex(const UniqueId& id) {
  uint8_t bytes[kUniqueIdBytes];
  encodeUniqueId(id, bytes);
  std::string hex;
  char buf[3];
  for (uint8_t b : bytes) {
    snprintf(buf, sizeof(buf), "%02x", b);
    hex += buf;
  }
  return hex;
}

UniqueId idFromHex(const std::string& hex) {
  uint8_t bytes[kUniqueIdBytes] = {};
  for (size_t i = 0; i < kUniqueIdBytes && 2 * i + 1 < hex.size(); ++i) {
    bytes[i] = static_cast<uint8_t>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  }
  return decodeUniqueId(bytes);
}

// Child process roles; the exit code reports the result.
int childMain(int argc, char** argv) {
  std::string mode = argv[2];
  try {
    if (mode == "address") {  // prints where this process's endpoint listens
      printf("%s\n", Endpoint::get().address().toString().c_str());
      return 0;
    }
    if (mode == "root") {  // creates an id, prints it, and serves the root until killed
      printf("%s\n", idToHex(createUniqueId()).c_str());
      fflush(stdout);
      std::this_thread::sleep_for(std::chrono::seconds(60));
      return 0;
    }
    if (argc < 6) return 2;
    UniqueId id = idFromHex(argv[3]);
    int rank = atoi(argv[4]), nranks = atoi(argv[5]);
    auto b = Bootstrap::init(id, rank, nranks, testCtx());
    if (mode == "collectives") {
      std::string err = exerciseCollectives(*b, testCtx());
      if (!err.empty()) fprintf(stderr, "rank %d: %s\n", rank, err.c_str());
      return err.empty() ? 0 : 1;
    }
    if (mode == "sleeper") {  // joins, passes one barrier, then waits to be killed
      b->barrier(testCtx());
      std::this_thread::sleep_for(std::chrono::seconds(60));
      return 0;
    }
  } catch (const std::exception& e) {
    fprintf(stderr, "child %s: %s\n", mode.c_str(), e.what());
    return 1;
  }
  return 2;
}

// Starts this binary as a child; with outFd non-null, returns a pipe reading its stdout.
pid_t spawnChild(const std::vector<std::string>& args, int* outFd = nullptr,
                 const std::vector<std::string>& extraEnv = {}) {
  std::vector<std::string> all = {"/proc/self/exe", "--bootstrap-child"};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  int fds[2] = {-1, -1};
  if (outFd != nullptr) {
    EXPECT_EQ(pipe(fds), 0);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
  }
  std::vector<std::string> envStrings(extraEnv);
  std::vector<char*> env;
  for (auto& e : envStrings) env.push_back(e.data());
  for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
  env.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(rc, 0) << strerror(rc);
  if (outFd != nullptr) {
    close(fds[1]);
    *outFd = fds[0];
  }
  return pid;
}

int waitExit(pid_t pid) {
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

class BootstrapProcesses : public ::testing::TestWithParam<int> {};

TEST_P(BootstrapProcesses, RanksInSeparateProcessesCheckEveryByte) {
  const int n = GetParam();
  UniqueId id = createUniqueId();
  std::string hex = idToHex(id);
  std::vector<pid_t> pids;
  for (int r = 1; r < n; ++r) pids.push_back(spawnChild({"collectives", hex, std::to_string(r), std::to_string(n)}));
  auto b = Bootstrap::init(id, 0, n, testCtx());
  for (int p = 1; p < n; ++p) EXPECT_NE(b->peerAddress(p).toString(), b->peerAddress(0).toString());
  EXPECT_EQ(exerciseCollectives(*b, testCtx()), "");
  for (pid_t pid : pids) EXPECT_EQ(waitExit(pid), 0);
}

INSTANTIATE_TEST_SUITE_P(Ranks, BootstrapProcesses, ::testing::Values(2, 3, 5));

std::string readLine(int fd) {
  std::string line;
  char c;
  while (read(fd, &c, 1) == 1 && c != '\n') line += c;
  close(fd);
  return line;
}

TEST(BootstrapProcessRoles, EndpointListensOnTheInterfaceSocketIfnameNames) {
  int out = -1;
  pid_t pid = spawnChild({"address"}, &out, {"CHORUS_SOCKET_IFNAME=lo"});
  std::string addr = readLine(out);
  EXPECT_EQ(waitExit(pid), 0);
  ASSERT_FALSE(addr.empty());
  EXPECT_TRUE(SocketAddress::parse(addr).isLoopback()) << addr;
  EXPECT_NE(SocketAddress::parse(addr).port(), 0) << addr;
}

TEST(BootstrapProcessRoles, RootProcessNeedNotBeARank) {
  UniqueId id = createUniqueId();  // this process serves the root only
  std::string hex = idToHex(id);
  pid_t a = spawnChild({"collectives", hex, "0", "2"});
  pid_t b = spawnChild({"collectives", hex, "1", "2"});
  EXPECT_EQ(waitExit(a), 0);
  EXPECT_EQ(waitExit(b), 0);
}

TEST(BootstrapProcessRoles, KilledPeerTurnsIntoRemoteErrorForItsWaiter) {
  UniqueId id = createUniqueId();
  pid_t child = spawnChild({"sleeper", idToHex(id), "1", "2"});
  auto b = Bootstrap::init(id, 0, 2, testCtx());
  b->barrier(testCtx());
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    kill(child, SIGKILL);
  });
  auto t0 = std::chrono::steady_clock::now();
  try {
    b->recv(1, 7, testCtx());
    ADD_FAILURE() << "recv returned a message from a dead peer";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::kRemoteError) << e.what();
    EXPECT_NE(std::string(e.what()).find("rank 0: bootstrap recv from rank 1 (tag 7): connection closed by peer"),
              std::string::npos)
        << e.what();
  }
  EXPECT_LT(secondsSince(t0), 3.0);
  killer.join();
  EXPECT_EQ(waitExit(child), 128 + SIGKILL);
  try {
    b->checkPeers();
    ADD_FAILURE() << "checkPeers did not notice the dead peer";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::kRemoteError);
    EXPECT_NE(std::string(e.what()).find("rank 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(b->send(1, 7, "x", 1, testCtx()), Error);
}

TEST(BootstrapProcessRoles, RootKilledBeforeTheTableIsRemoteError) {
  int out = -1;
  pid_t root = spawnChild({"root"}, &out);
  UniqueId id = idFromHex(readLine(out));
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    kill(root, SIGKILL);
  });
  auto t0 = std::chrono::steady_clock::now();
  try {
    Bootstrap::init(id, 0, 2, testCtx());  // rank 1 never comes; the root dies instead
    ADD_FAILURE() << "init completed without rank 1";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::kRemoteError) << e.what();
    EXPECT_NE(std::string(e.what()).find("rank 0: bootstrap rendezvous with root"), std::string::npos) << e.what();
  }
  EXPECT_LT(secondsSince(t0), 3.0);
  killer.join();
  EXPECT_EQ(waitExit(root), 128 + SIGKILL);
}

TEST(BootstrapProcessRoles, RankKilledDuringRendezvousFailsTheOthers) {
  UniqueId id = createUniqueId();
  // Rank 1 joins and waits for rank 2, which never comes; it is killed, and rank 0 hears from the root.
  pid_t child = spawnChild({"collectives", idToHex(id), "1", "3"});
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    kill(child, SIGKILL);
  });
  auto t0 = std::chrono::steady_clock::now();
  try {
    Bootstrap::init(id, 0, 3, testCtx());
    ADD_FAILURE() << "init completed without rank 2";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::kRemoteError) << e.what();
    EXPECT_NE(std::string(e.what()).find("rank 1 closed its connection"), std::string::npos) << e.what();
  }
  EXPECT_LT(secondsSince(t0), 3.0);
  killer.join();
  EXPECT_EQ(waitExit(child), 128 + SIGKILL);
}

}  // namespace
}  // namespace chorus::bootstrap

int main(int argc, char** argv) {
  if (argc >= 3 && strcmp(argv[1], "--bootstrap-child") == 0) return chorus::bootstrap::childMain(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

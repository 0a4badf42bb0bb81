#include "common/child.h"

#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

extern char** environ;

namespace chorus::test {

namespace {

std::map<std::string, ChildMain>& registry() {
  static std::map<std::string, ChildMain> r;
  return r;
}

std::string randomHex(int n) {
  std::random_device rd;
  std::string s;
  for (int i = 0; i < n; ++i) s += "0123456789abcdef"[rd() % 16];
  return s;
}

}  // namespace

bool registerChild(const std::string& name, ChildMain fn) {
  registry()[name] = std::move(fn);
  return true;
}

int freePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  int port = ntohs(a.sin_port);
  close(fd);
  return port;
}

std::vector<pid_t> startChildren(const std::string& name, int n, const ChildOptions& options) {
  std::string addr = "127.0.0.1:" + std::to_string(freePort());
  std::string secret = randomHex(32);
  std::vector<pid_t> pids;
  for (int r = 0; r < n; ++r) {
    std::map<std::string, std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      const char* eq = strchr(*e, '=');
      if (eq != nullptr) env[std::string(*e, eq - *e)] = eq + 1;
    }
    env["CHORUS_TEST_CHILD"] = name;
    env["CHORUS_RANK"] = std::to_string(r);
    env["CHORUS_WORLD_SIZE"] = std::to_string(n);
    env["CHORUS_ADDR"] = addr;
    env["CHORUS_SECRET"] = secret;
    if (options.hosts > 1) {
      int perHost = (n + options.hosts - 1) / options.hosts;
      env["CHORUS_HOSTID"] = "testhost-" + std::to_string(r / perHost);
    }
    for (const auto& [k, v] : options.env) env[k] = v;
    std::vector<std::string> envStrings;
    for (const auto& [k, v] : env) envStrings.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (auto& s : envStrings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> argStrings = {"/proc/self/exe"};
    for (const auto& a : options.args) argStrings.push_back(a);
    std::vector<char*> argv;
    for (auto& s : argStrings) argv.push_back(s.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), envp.data()) != 0) {
      for (pid_t p : pids) kill(p, SIGKILL);
      return {};
    }
    pids.push_back(pid);
  }
  return pids;
}

int waitChild(pid_t pid, int timeoutSec) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSec);
  for (;;) {
    int status = 0;
    pid_t got = waitpid(pid, &status, WNOHANG);
    if (got == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    if (got < 0) return -1;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -SIGKILL;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

std::vector<ChildResult> runChildren(const std::string& name, int n, const ChildOptions& options) {
  std::vector<pid_t> pids = startChildren(name, n, options);
  std::vector<ChildResult> out;
  for (pid_t p : pids) out.push_back(ChildResult{p, waitChild(p, options.timeoutSec)});
  return out;
}

bool runChildIfRequested(int argc, char** argv, int* code) {
  const char* name = getenv("CHORUS_TEST_CHILD");
  if (name == nullptr) return false;
  auto it = registry().find(name);
  if (it == registry().end()) {
    fprintf(stderr, "unknown test child '%s'\n", name);
    *code = 99;
    return true;
  }
  std::vector<std::string> args(argv + 1, argv + argc);
  int rank = atoi(getenv("CHORUS_RANK"));
  int nranks = atoi(getenv("CHORUS_WORLD_SIZE"));
  *code = it->second(rank, nranks, args);
  return true;
}

}  // namespace chorus::test

// chorusrun: starts the ranks of a Chorus job on this machine (see options.cc's usage and launcher.h).
#include <signal.h>
#include <unistd.h>

#include <exception>
#include <iostream>

#include "info.h"
#include "launcher.h"
#include "options.h"

namespace {

chorus::launcher::Launcher* gLauncher = nullptr;

extern "C" void onSignal(int sig) {
  if (gLauncher != nullptr) gLauncher->forwardSignal(sig);
}

void installForwarding() {
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) sigaction(sig, &sa, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace chorus::launcher;
  CommandLine cl = parseCommandLine(argc, argv);
  if (!cl.error.empty()) {
    std::cerr << "chorusrun: " << cl.error << " (chorusrun --help for usage)\n";
    return 2;
  }
  if (cl.help) {
    std::cout << usage();
    return 0;
  }
  if (cl.info) {
    printInfo(std::cout);
    return 0;
  }
  try {
    Launcher launcher(std::move(cl.job));
    gLauncher = &launcher;
    installForwarding();
    launcher.start();
    JobResult result = launcher.wait();
    gLauncher = nullptr;
    return result.exitCode;
  } catch (const std::exception& e) {
    gLauncher = nullptr;
    std::cerr << "chorusrun: " << e.what() << "\n";
    return 1;
  }
}

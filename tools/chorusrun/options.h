// chorusrun's command line.
#pragma once

#include <string>

#include "launcher.h"

namespace chorus::launcher {

struct CommandLine {
  bool info = false;
  bool help = false;
  JobSpec job;        // nranks, nhosts, argv, extraEnv and timeout from the flags
  std::string error;  // one line naming the offending flag; empty when the command line is good
};

// Parses argv[1..]: options up to the first non-option (the program) or "--"; the rest is the program's.
CommandLine parseCommandLine(int argc, const char* const* argv);

// The --help text.
std::string usage();

}  // namespace chorus::launcher

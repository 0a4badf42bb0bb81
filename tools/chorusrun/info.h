// chorusrun --info: the version, what this build has, which transports can work here, and the machine.
#pragma once

#include <ostream>

namespace chorus::launcher {

void printInfo(std::ostream& os);

}  // namespace chorus::launcher

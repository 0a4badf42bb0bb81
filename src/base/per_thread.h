// Per-thread state of a hot path, reached through one call.
#pragma once

namespace chorus {

// The calling thread's T, made on its first use. Each use of a thread_local in a shared library is a call into the
// dynamic linker, and GCC folds a reference bound to one back into such calls at every use (runP2p's polling loop
// made 30 per operation): callers bind the reference this returns once, and it is not inlined so that the binding
// stays. One T per type: give each caller its own (a struct in an anonymous namespace).
template <typename T>
[[gnu::noinline]] T& perThread() {
  thread_local T value;
  return value;
}

}  // namespace chorus

// Helpers shared by the bootstrap tests: byte patterns every rank can recompute, a collective workout that
// checks every byte, and running ranks as threads.
#pragma once

#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "bootstrap/bootstrap.h"

namespace chorus::bootstrap::testing {

inline uint8_t pattern(int rank, size_t i, int salt) {
  return static_cast<uint8_t>(rank * 131 + i * 7 + (i >> 8) * 3 + salt * 17 + 1);
}

inline WaitContext testCtx(int64_t ms = 20000) {
  WaitContext c;
  c.deadline = Deadline::afterMs(ms);
  return c;
}

// Runs allgather (several sizes), broadcast from every root, all-pairs send/recv and barriers; returns the
// first mismatch or an empty string.
inline std::string exerciseCollectives(Bootstrap& b, const WaitContext& ctx) {
  const int r = b.rank(), n = b.nranks();
  for (size_t bytes : {size_t{1}, size_t{7}, size_t{4099}, size_t{70001}}) {
    std::vector<uint8_t> buf(bytes * n, 0);
    for (size_t i = 0; i < bytes; ++i) buf[r * bytes + i] = pattern(r, i, 1);
    b.allgather(buf.data(), bytes, ctx);
    for (int p = 0; p < n; ++p) {
      for (size_t i = 0; i < bytes; ++i) {
        if (buf[p * bytes + i] != pattern(p, i, 1)) {
          return "allgather " + std::to_string(bytes) + ": block " + std::to_string(p) + " byte " + std::to_string(i);
        }
      }
    }
  }
  for (int root = 0; root < n; ++root) {
    std::vector<uint8_t> buf(333, 0);
    if (r == root) {
      for (size_t i = 0; i < buf.size(); ++i) buf[i] = pattern(root, i, 2);
    }
    b.broadcast(buf.data(), buf.size(), root, ctx);
    for (size_t i = 0; i < buf.size(); ++i) {
      if (buf[i] != pattern(root, i, 2)) return "broadcast from " + std::to_string(root) + " byte " + std::to_string(i);
    }
  }
  // Every rank sends two messages to every other rank (same tag: order must hold), then receives.
  for (int p = 0; p < n; ++p) {
    if (p == r) continue;
    for (int k = 0; k < 2; ++k) {
      std::vector<uint8_t> msg(static_cast<size_t>(r * 13 + p + k * 1000));
      for (size_t i = 0; i < msg.size(); ++i) msg[i] = pattern(r, i, 3 + p + k);
      b.send(p, 100 + static_cast<uint64_t>(r), msg.data(), msg.size(), ctx);
    }
  }
  for (int p = 0; p < n; ++p) {
    if (p == r) continue;
    for (int k = 0; k < 2; ++k) {
      auto msg = b.recv(p, 100 + static_cast<uint64_t>(p), ctx);
      if (msg.size() != static_cast<size_t>(p * 13 + r + k * 1000)) return "send/recv size from " + std::to_string(p);
      for (size_t i = 0; i < msg.size(); ++i) {
        if (msg[i] != pattern(p, i, 3 + r + k))
          return "send/recv from " + std::to_string(p) + " byte " + std::to_string(i);
      }
    }
  }
  for (int k = 0; k < 3; ++k) b.barrier(ctx);
  return "";
}

// Runs fn(rank) on n threads; returns each rank's exception (null when it returned normally).
inline std::vector<std::exception_ptr> runRanks(int n, const std::function<void(int)>& fn) {
  std::vector<std::exception_ptr> errors(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      try {
        fn(r);
      } catch (...) {
        errors[r] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  return errors;
}

// The status and message of an exception_ptr holding a chorus::Error (kSuccess when null).
inline std::pair<Status, std::string> errorOf(const std::exception_ptr& e) {
  if (!e) return {Status::kSuccess, ""};
  try {
    std::rethrow_exception(e);
  } catch (const Error& err) {
    return {err.status(), err.what()};
  } catch (const std::exception& other) {
    return {Status::kInternalError, other.what()};
  }
}

}  // namespace chorus::bootstrap::testing

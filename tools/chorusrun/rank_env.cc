#include "rank_env.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <unordered_set>

#include "base/error.h"

namespace chorus::launcher {

std::vector<RankPlacement> placeRanks(int nranks, int nhosts) {
  CHORUS_CHECK_ARG(nranks >= 1 && nhosts >= 1 && nhosts <= nranks, "cannot place ", nranks, " ranks on ", nhosts,
                   " hosts");
  std::vector<RankPlacement> places;
  places.reserve(nranks);
  int base = nranks / nhosts;
  int extra = nranks % nhosts;
  for (int host = 0; host < nhosts; ++host) {
    int size = base + (host < extra ? 1 : 0);
    for (int local = 0; local < size; ++local) places.push_back({host, local, size});
  }
  return places;
}

EnvVars rankVariables(int rank, int nranks, const RankPlacement& place, const JobIdentity& job) {
  EnvVars vars = {
      {"CHORUS_RANK", std::to_string(rank)},
      {"CHORUS_WORLD_SIZE", std::to_string(nranks)},
      {"CHORUS_LOCAL_RANK", std::to_string(place.localRank)},
      {"CHORUS_LOCAL_SIZE", std::to_string(place.localSize)},
      {"CHORUS_ADDR", job.addr},
      {"CHORUS_SECRET", job.secret},
  };
  if (job.simulateHosts) vars.emplace_back("CHORUS_HOSTID", job.baseHostId + "-simhost" + std::to_string(place.host));
  return vars;
}

std::string randomHex(size_t nbytes) {
  std::string bytes(nbytes, '\0');
  size_t got = 0;
  while (got < nbytes) {
    ssize_t n = getrandom(bytes.data() + got, nbytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    CHORUS_CHECK_SYS(n, "(random bytes for the rendezvous secret)");
    got += static_cast<size_t>(n);
  }
  static const char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * nbytes);
  for (unsigned char c : bytes) {
    hex.push_back(kDigits[c >> 4]);
    hex.push_back(kDigits[c & 15]);
  }
  return hex;
}

std::vector<std::string> mergeEnvironment(char** base, const EnvVars& set) {
  std::unordered_set<std::string> names;
  for (const auto& [name, value] : set) names.insert(name);
  std::vector<std::string> env;
  for (char** e = base; e != nullptr && *e != nullptr; ++e) {
    const char* eq = std::strchr(*e, '=');
    std::string name = eq != nullptr ? std::string(*e, eq - *e) : std::string(*e);
    if (names.count(name) == 0) env.emplace_back(*e);
  }
  // Later entries of `set` win over earlier ones with the same name (-x after the defaults).
  for (size_t i = 0; i < set.size(); ++i) {
    bool overridden = false;
    for (size_t j = i + 1; j < set.size() && !overridden; ++j) overridden = set[j].first == set[i].first;
    if (!overridden) env.push_back(set[i].first + "=" + set[i].second);
  }
  return env;
}

}  // namespace chorus::launcher

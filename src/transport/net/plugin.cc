#include "transport/net/plugin.h"

#include <dlfcn.h>

#include <map>
#include <mutex>

#include "base/error.h"
#include "base/logging.h"
#include "base/params.h"
#include "base/socket.h"
#include "chorus_build_config.h"
#include "transport/net/socket_plugin.h"

namespace chorus::transport::net {
namespace {

const char* resultName(chorusNetResult_t r) {
  switch (r) {
    case chorusNetSuccess: return "success";
    case chorusNetSystemError: return "system error";
    case chorusNetInvalidArgument: return "invalid argument";
    case chorusNetRemoteError: return "remote error";
    case chorusNetProtocolError: return "protocol error";
    case chorusNetUnavailable: return "unavailable";
  }
  return "unknown error";
}

void logFromPlugin(int level, const char* message) {
  if (level <= 0) {
    CHORUS_LOG_WARN(kNet, message);
  } else if (level == 1) {
    CHORUS_LOG_INFO(kNet, message);
  } else {
    CHORUS_LOG_TRACE(kNet, message);
  }
}

// Directories to look for libchorus-net-<name>.so in, best first.
std::vector<std::string> searchDirs() {
  std::vector<std::string> dirs;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&searchDirs), &info) != 0 && info.dli_fname != nullptr) {
    std::string self = info.dli_fname;
    std::string dir = self.substr(0, self.find_last_of('/') == std::string::npos ? 0 : self.find_last_of('/'));
    if (!dir.empty()) {
      dirs.push_back(dir);
      dirs.push_back(dir + "/../lib");
    }
  }
  dirs.push_back(CHORUS_NET_PLUGIN_BUILD_DIR);
  dirs.push_back(CHORUS_NET_PLUGIN_INSTALL_DIR);
  return dirs;
}

void* openLibrary(const std::string& name, const std::string& path, std::string* tried) {
  if (!path.empty()) {
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) *tried = dlerror();
    return h;
  }
  const std::string file = "libchorus-net-" + name + ".so";
  for (const std::string& dir : searchDirs()) {
    std::string full = dir + "/" + file;
    if (void* h = dlopen(full.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
    const char* e = dlerror();
    *tried += detail::concat(tried->empty() ? "" : "; ", e == nullptr ? full : e);
  }
  void* h = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) *tried += detail::concat("; ", dlerror());
  return h;
}

}  // namespace

std::string pluginError(const chorusNet_v1_t* p, chorusNetResult_t r) {
  const char* e = p->lastError();
  return detail::concat(p->name, " (", resultName(r), "): ", e == nullptr || *e == 0 ? "no detail" : e);
}

const chorusNet_v1_t* loadPlugin(const std::string& name, const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, const chorusNet_v1_t*> loaded;  // by name or path; never unloaded
  std::lock_guard<std::mutex> lock(mu);
  const std::string key = path.empty() ? "name:" + name : "path:" + path;
  if (auto it = loaded.find(key); it != loaded.end()) return it->second;

  const chorusNet_v1_t* p = nullptr;
  if (path.empty() && (name.empty() || name == "socket")) {
    p = socketPlugin();
  } else {
    std::string tried;
    void* lib = openLibrary(name, path, &tried);
    CHORUS_CHECK_ARG(lib != nullptr, path.empty() ? "CHORUS_NET='" : "CHORUS_NET_PLUGIN='", path.empty() ? name : path,
                     "' names no loadable network plugin (", tried, ")");
    p = static_cast<const chorusNet_v1_t*>(dlsym(lib, "chorusNetPlugin_v1"));
    CHORUS_CHECK_ARG(p != nullptr, "the network plugin ", path.empty() ? name : path,
                     " does not export chorusNetPlugin_v1");
  }
  // The bootstrap's interface: the one CHORUS_SOCKET_IFNAME selects, which the other hosts reach.
  NetInterface itf = chooseBootstrapInterface();
  std::string addr = itf.addr.toString();
  if (size_t colon = addr.rfind(':'); colon != std::string::npos) addr = addr.substr(0, colon);
  if (addr.size() >= 2 && addr.front() == '[') addr = addr.substr(1, addr.size() - 2);
  if (itf.addr.family() == AF_INET6 && addr.rfind("fe80", 0) == 0) addr += "%" + itf.name;
  chorusNetResult_t r = p->init(logFromPlugin, addr.c_str());
  if (r != chorusNetSuccess) {
    CHORUS_THROW(Status::kSystemError, "the network plugin ", p->name, " cannot run here: ", pluginError(p, r));
  }
  CHORUS_LOG_INFO(kNet, "network plugin ", p->name, " on ", addr);
  loaded[key] = p;
  return p;
}

const chorusNet_v1_t* selectedPlugin() {
  return loadPlugin(param::Net(), param::NetPlugin());
}

}  // namespace chorus::transport::net

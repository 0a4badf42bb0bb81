#include "core/check_mode.h"

#include "base/error.h"
#include "base/host_id.h"
#include "collectives/host/host_executor.h"
#include "core/comm.h"

namespace chorus::core {

namespace {

struct CallSignature {
  uint64_t hash = 0;  // of every collective of the launch
  int32_t nColls = 0;
  int32_t type = -1, dtype = -1, op = -1, root = -1;  // the first collective, for the message
  uint64_t count = 0;
};

std::string describe(const CallSignature& s) {
  if (s.nColls == 0) return "no collective";
  std::string d = std::string(coll::collName(static_cast<coll::CollType>(s.type))) + "(count " +
                  std::to_string(s.count) + ", " + reduce::dtypeName(static_cast<reduce::DType>(s.dtype)) + ", op " +
                  std::to_string(s.op) + ", root " + std::to_string(s.root) + ")";
  if (s.nColls > 1) d += " and " + std::to_string(s.nColls - 1) + " more";
  return d;
}

}  // namespace

void checkMatchingCalls(Comm& comm, const std::vector<coll::CollOp>& ops, const WaitContext& ctx) {
  CallSignature mine;
  std::string text;
  for (const coll::CollOp& op : ops) {
    if (coll::isSendRecv(op.type)) continue;
    const bool rooted = coll::isRooted(op.type);
    const int opCode = coll::isReduction(op.type) ? static_cast<int>(op.op) : -1;
    if (mine.nColls == 0) {
      mine.type = static_cast<int>(op.type);
      mine.dtype = static_cast<int>(op.dtype);
      mine.op = opCode;
      mine.root = rooted ? op.root : -1;
      mine.count = op.count;
    }
    ++mine.nColls;
    text += std::to_string(static_cast<int>(op.type)) + "/" + std::to_string(op.count) + "/" +
            std::to_string(static_cast<int>(op.dtype)) + "/" + std::to_string(opCode) + "/" +
            std::to_string(rooted ? op.root : -1) + ";";
  }
  mine.hash = fnv1a64(text);
  std::vector<CallSignature> all(comm.nranks());
  all[comm.rank()] = mine;
  comm.bootstrap().allgather(all.data(), sizeof(CallSignature), ctx);
  for (int r = 0; r < comm.nranks(); ++r) {
    if (all[r].hash != mine.hash || all[r].nColls != mine.nColls) {
      CHORUS_THROW(Status::kInvalidUsage, "CHORUS_CHECK: rank ", comm.rank(), " called ", describe(mine), " but rank ",
                   r, " called ", describe(all[r]));
    }
  }
}

}  // namespace chorus::core

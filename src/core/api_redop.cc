// C API: reduction operations made at run time (chorusRedOpCreatePreMulSum, chorusRedOpDestroy).
#include "chorus/chorus.h"
#include "core/api_guard.h"
#include "core/comm.h"
#include "core/red_ops.h"
#include "core/validate.h"

using chorus::core::apiGuard;

extern "C" {

chorusResult_t chorusRedOpCreatePreMulSum(chorusRedOp_t* op, void* scalar, chorusDataType_t datatype,
                                          chorusScalarResidence_t residence, chorusComm_t comm) {
  return apiGuard("chorusRedOpCreatePreMulSum", nullptr, [&] {
    chorus::core::Comm* c = chorus::core::checkComm(comm);
    CHORUS_CHECK_ARG(op != nullptr, "op is NULL");
    CHORUS_CHECK_ARG(scalar != nullptr, "scalar is NULL");
    const chorus::reduce::DType dtype = chorus::core::toDType(chorus::core::enumBits(datatype));
    const int where = chorus::core::enumBits(residence);
    CHORUS_CHECK_ARG(where == chorusScalarDevice || where == chorusScalarHostImmediate, "residence ", where,
                     " is not a chorusScalarResidence_t (chorusScalarDevice 0, chorusScalarHostImmediate 1)");
    *op =
        static_cast<chorusRedOp_t>(chorus::core::createPreMulSum(c, scalar, dtype, where == chorusScalarHostImmediate));
    return chorusSuccess;
  });
}

chorusResult_t chorusRedOpDestroy(chorusRedOp_t op, chorusComm_t comm) {
  return apiGuard("chorusRedOpDestroy", nullptr, [&] {
    chorus::core::destroyRedOp(chorus::core::checkComm(comm), chorus::core::enumBits(op));
    return chorusSuccess;
  });
}

}  // extern "C"

// chorusCommInitFromEnv under a launcher that gives ranks but no address (plain `mpirun -np 4`, srun on one
// node): the ranks are on one host, so they meet through a file named after the job's identity. Rank 0
// creates a unique id (its endpoint listens as for chorusGetUniqueId) and publishes it in the file, readable
// only by this user; the other ranks wait for the file and join that id.
//
// The job's identity is Open MPI's job id (OMPI_MCA_ess_base_jobid, or OMPI_MCA_orte_ess_jobid), PMIx's
// namespace (PMIX_NAMESPACE) or Slurm's job and step (SLURM_JOB_ID, SLURM_STEP_ID); that the job is on one
// host comes from OMPI_COMM_WORLD_LOCAL_SIZE, SLURM_STEP_NUM_NODES / SLURM_NNODES or MPI_LOCALNRANKS.
#pragma once

#include <string>

#include "base/wait.h"
#include "bootstrap/bootstrap.h"

namespace chorus::core {

// The file through which the `size` ranks of this job meet for the process's next communicator:
// /dev/shm (else /tmp)/chorus-job-<uid>-<job id>-n<size>-c<how many this process made before>.
// Throws chorusInvalidArgument, naming the variables to set (CHORUS_ADDR, or MASTER_ADDR and MASTER_PORT),
// when the job has no identity or its ranks span several hosts.
std::string jobRendezvousFile(int size);

// Rank 0: creates a unique id and publishes it at `path` (replacing a stale file of an earlier job).
bootstrap::UniqueId publishJobId(const std::string& path);
// Other ranks: waits (until ctx's deadline) for the file of a live rank 0 and returns its id.
bootstrap::UniqueId awaitJobId(const std::string& path, const WaitContext& ctx);
// Rank 0, once every rank has joined: removes the file.
void retractJobId(const std::string& path);

}  // namespace chorus::core

/*
 * Chorus: a collective communication library with NCCL's programming model.
 *
 * This is the whole public C API. It is NCCL 2.28's API with the prefix `chorus`: every function, type, enum
 * value and macro of nccl.h has its chorus* twin, with the same arguments in the same order, the same values
 * and the same struct layouts, so that `sed s/nccl/chorus/g` ports NCCL code (and libnccl.so.2, built from
 * compat/nccl, runs programs built against nccl.h unchanged). Chorus's extensions (chorusTimeout, host
 * streams, chorusCommInitFromEnv, chorusCommDevice, the CHORUS_DEVICE_* values and chorusConfig_t's last
 * fields) are numbered and placed so that NCCL's values are unchanged. A communicator spans `nranks` ranks;
 * each rank is a CPU process or thread working on host memory, or a CUDA device.
 *
 * Thread safety: distinct communicators may be used from distinct threads at the same time. One
 * communicator must not be used from two threads at once, except chorusCommAbort and
 * chorusCommGetAsyncError, which may be called from any thread at any time.
 *
 * Errors: every call returns a chorusResult_t. chorusInvalidArgument and chorusInvalidUsage leave the
 * communicator usable; any other error means the communicator should be aborted and recreated.
 * chorusGetLastError(comm) returns a message naming the rank, peer, operation and cause of the last error.
 * A rank whose operation fails, or that aborts, revokes or destroys a communicator with work in flight, tells
 * its peers: their pending and next operations on it fail within milliseconds with chorusRemoteError naming it,
 * or with chorusTimeout where its own first error was a timeout (a dead peer is found the same way; a stopped one
 * costs the deadline, CHORUS_TIMEOUT_MS, and whichever rank reaches it first ends its peers' waits). Ranks that call
 * different collectives, or the same one with a different type, operation, root or count, get chorusRemoteError
 * on every rank that receives from a mismatched peer (each FIFO slot carries the call's sequence number and
 * signature); with checkMode (CHORUS_CHECK=1) the mismatch is found before any data moves and is
 * chorusInvalidUsage naming the differing fields.
 *
 * How the library is built (its layers, the path of a call from here to the FIFOs and the kernel, the words it
 * uses): docs/architecture.md of the source tree, installed as share/doc/Chorus/architecture.md.
 */
#ifndef CHORUS_CHORUS_H_
#define CHORUS_CHORUS_H_

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define CHORUS_API
#else
/* Only the symbols marked CHORUS_API are exported from libchorus.so (the library builds with
 * -fvisibility=hidden). */
#define CHORUS_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define CHORUS_MAJOR 0
#define CHORUS_MINOR 1
#define CHORUS_PATCH 0
#define CHORUS_SUFFIX ""
/** Encodes a version the way NCCL >= 2.9 does: major*10000 + minor*100 + patch. */
#define CHORUS_VERSION(X, Y, Z) ((X)*10000 + (Y)*100 + (Z))
#define CHORUS_VERSION_CODE CHORUS_VERSION(CHORUS_MAJOR, CHORUS_MINOR, CHORUS_PATCH)

/**
 * The NCCL release whose API this header mirrors. chorusConfig_t and chorusSimInfo_t are NCCL's structs, so
 * their `version` field holds an NCCL version code (NCCL_VERSION(2, 28, 9) = 22809), as NCCL_CONFIG_INITIALIZER
 * sets it; the library gates the fields by it exactly as NCCL does.
 */
#define CHORUS_NCCL_API_MAJOR 2
#define CHORUS_NCCL_API_MINOR 28
#define CHORUS_NCCL_API_PATCH 9
#define CHORUS_NCCL_API_VERSION CHORUS_VERSION(CHORUS_NCCL_API_MAJOR, CHORUS_NCCL_API_MINOR, CHORUS_NCCL_API_PATCH)

/** Opaque communicator handle. */
typedef struct chorusComm* chorusComm_t;
/** A registered memory window (chorusCommWindowRegister); opaque. */
typedef struct chorusWindow_vidmem* chorusWindow_t;
#define CHORUS_COMM_NULL NULL

/** Size of the opaque unique id, as NCCL_UNIQUE_ID_BYTES. */
#define CHORUS_UNIQUE_ID_BYTES 128
/** Opaque id that every rank of a new communicator passes to chorusCommInitRank. */
typedef struct {
  char internal[CHORUS_UNIQUE_ID_BYTES];
} chorusUniqueId;

/**
 * Result codes. 0..7 and chorusNumResults equal NCCL 2.28's ncclResult_t; Chorus's own codes come after
 * chorusNumResults, so that NCCL's values are unchanged (libnccl.so.2 maps them onto NCCL's codes).
 */
typedef enum {
  chorusSuccess = 0,
  chorusUnhandledCudaError = 1,
  chorusSystemError = 2,
  chorusInternalError = 3,
  chorusInvalidArgument = 4,
  chorusInvalidUsage = 5,
  chorusRemoteError = 6,
  chorusInProgress = 7,
  chorusNumResults = 8, /* as ncclNumResults: the number of NCCL's codes */
  /* Chorus extension: a wait passed its deadline (CHORUS_TIMEOUT_MS or config.timeoutMs). */
  chorusTimeout = 9
} chorusResult_t;

/** Value of chorusConfig_t fields that were not set by the user. */
#define CHORUS_CONFIG_UNDEF_INT INT_MIN
#define CHORUS_CONFIG_UNDEF_PTR NULL
/** Color that leaves the calling rank out of chorusCommSplit; it receives a NULL communicator. */
#define CHORUS_SPLIT_NOCOLOR (-1)
/** An unset float (chorusSimInfo_t.estimatedTime before the simulation), as NCCL_UNDEF_FLOAT. */
#define CHORUS_UNDEF_FLOAT (-1.0f)
/** The same value under the name NCCL's config documentation uses. */
#define CHORUS_CONFIG_UNDEF_FLOAT CHORUS_UNDEF_FLOAT

/** Flags of chorusCommWindowRegister. COLL_SYMMETRIC: every rank registers a buffer of the same size. */
#define CHORUS_WIN_DEFAULT 0x00
#define CHORUS_WIN_COLL_SYMMETRIC 0x01
/** Alignment (bytes) a window's buffer must have. */
#define CHORUS_WIN_REQUIRED_ALIGNMENT 4096

/** chorusConfig_t.CTAPolicy values (CUDA communicators; host communicators accept and ignore them). */
#define CHORUS_CTA_POLICY_DEFAULT 0x00
#define CHORUS_CTA_POLICY_EFFICIENCY 0x01
#define CHORUS_CTA_POLICY_ZERO 0x02

/** Flags of chorusCommShrink. DEFAULT assumes the excluded ranks are idle; ABORT first aborts pending work. */
#define CHORUS_SHRINK_DEFAULT 0x00
#define CHORUS_SHRINK_ABORT 0x01

/** Flags of chorusCommRevoke: reserved, must be 0. */
#define CHORUS_REVOKE_DEFAULT 0x00

/** Device value of a communicator whose ranks work on host (CPU) memory. */
#define CHORUS_DEVICE_HOST (-1)
/** Device value meaning: the current CUDA device when a GPU is visible, else host. */
#define CHORUS_DEVICE_AUTO (-2)

/**
 * A stream. On a CUDA communicator this is a cudaStream_t. On a host communicator it is a host stream made
 * by chorusStreamCreate, whose operations the library executes in issue order; NULL makes the call block
 * until the operation has completed. A host communicator runs its operations in the order they were issued
 * across all streams (the NULL stream included), one launch after another. Within a group, a host
 * communicator's operations must all use one stream (else chorusGroupEnd returns chorusInvalidUsage and
 * launches nothing).
 */
typedef void* chorusStream_t;

/**
 * Communicator options for chorusCommInitRankConfig, chorusCommInitRankScalable, chorusCommSplit and
 * chorusCommShrink. Always start from CHORUS_CONFIG_INITIALIZER: size, magic and version let the library
 * detect a config that was not initialized (rejected with chorusInvalidArgument). Fields left at their UNDEF
 * value take the environment's or the library's default.
 *
 * The first 80 bytes are NCCL 2.28's ncclConfig_t, field for field (same offsets, meanings and version
 * gating: a field newer than `version` is ignored, and only `size` bytes are read, so an ncclConfig_t, or a
 * config from an older header, is valid as it is). Chorus's own fields follow NCCL's.
 */
typedef struct chorusConfig_v22800 {
  size_t size;             /* sizeof(chorusConfig_t), set by the initializer; an ncclConfig_t's 80 is valid */
  unsigned int magic;      /* 0xcafebeef, set by the initializer */
  unsigned int version;    /* CHORUS_NCCL_API_VERSION, set by the initializer */
  int blocking;            /* 1 (default): calls block; 0: init and calls may return chorusInProgress */
  int cgaClusterSize;      /* CUDA thread-block cluster size (>= 0); no effect on host communicators */
  int minCTAs;             /* lower bound on parallel channels (rings), default 1 */
  int maxCTAs;             /* upper bound on parallel channels (default CHORUS_NCHANNELS or automatic; at most 16) */
  const char* netName;     /* force a network transport by name ("Socket"); NULL for automatic */
  int splitShare;          /* 0/1: children of chorusCommSplit share the parent's resources (Chorus never shares) */
  int trafficClass;        /* network traffic class; accepted, not used by the socket transport */
  const char* commName;    /* a name that log lines and traces carry; NULL for none */
  int collnetEnable;       /* 0/1: in-network reductions; Chorus has none, 1 is accepted and has no effect */
  int CTAPolicy;           /* CHORUS_CTA_POLICY_*; CUDA only */
  int shrinkShare;         /* 0/1: as splitShare for chorusCommShrink */
  int nvlsCTAs;            /* > 0: NVLink SHARP channels; CUDA only, no effect in Chorus */
  int nChannelsPerNetPeer; /* 1..64: channels per network peer; accepted, not used by the socket transport */
  int nvlinkCentricSched;  /* 0/1: NVLink-centric scheduling; CUDA only, no effect in Chorus */
  /* ---- Chorus's fields (read only when `size` covers them) ---- */
  int device;    /* CHORUS_DEVICE_HOST (default), CHORUS_DEVICE_AUTO, or a CUDA device index */
  int timeoutMs; /* deadline of every wait in milliseconds (default CHORUS_TIMEOUT_MS, 600000); 0: none */
  int checkMode; /* 1: verify that every rank calls the same collective with matching arguments */
} chorusConfig_t;

/** sizeof(ncclConfig_t) of NCCL 2.28: the part of chorusConfig_t that is NCCL's. */
#define CHORUS_CONFIG_NCCL_BYTES 80
#define CHORUS_CONFIG_MAGIC 0xcafebeef
#define CHORUS_CONFIG_INITIALIZER                          \
  {                                                        \
    sizeof(chorusConfig_t),      /* size */                \
        CHORUS_CONFIG_MAGIC,     /* magic */               \
        CHORUS_NCCL_API_VERSION, /* version */             \
        CHORUS_CONFIG_UNDEF_INT, /* blocking */            \
        CHORUS_CONFIG_UNDEF_INT, /* cgaClusterSize */      \
        CHORUS_CONFIG_UNDEF_INT, /* minCTAs */             \
        CHORUS_CONFIG_UNDEF_INT, /* maxCTAs */             \
        CHORUS_CONFIG_UNDEF_PTR, /* netName */             \
        CHORUS_CONFIG_UNDEF_INT, /* splitShare */          \
        CHORUS_CONFIG_UNDEF_INT, /* trafficClass */        \
        CHORUS_CONFIG_UNDEF_PTR, /* commName */            \
        CHORUS_CONFIG_UNDEF_INT, /* collnetEnable */       \
        CHORUS_CONFIG_UNDEF_INT, /* CTAPolicy */           \
        CHORUS_CONFIG_UNDEF_INT, /* shrinkShare */         \
        CHORUS_CONFIG_UNDEF_INT, /* nvlsCTAs */            \
        CHORUS_CONFIG_UNDEF_INT, /* nChannelsPerNetPeer */ \
        CHORUS_CONFIG_UNDEF_INT, /* nvlinkCentricSched */  \
        CHORUS_CONFIG_UNDEF_INT, /* device */              \
        CHORUS_CONFIG_UNDEF_INT, /* timeoutMs */           \
        CHORUS_CONFIG_UNDEF_INT  /* checkMode */           \
  }

/** What chorusGroupSimulateEnd reports; ncclSimInfo_t's layout. */
typedef struct chorusSimInfo_v22200 {
  size_t size;          /* sizeof(chorusSimInfo_t), set by the initializer */
  unsigned int magic;   /* 0x74685283, set by the initializer */
  unsigned int version; /* CHORUS_NCCL_API_VERSION, set by the initializer */
  float estimatedTime;  /* microseconds the tuner's model predicts for the group; CHORUS_UNDEF_FLOAT before */
} chorusSimInfo_t;

#define CHORUS_SIM_INFO_MAGIC 0x74685283
#define CHORUS_SIM_INFO_INITIALIZER \
  { sizeof(chorusSimInfo_t), CHORUS_SIM_INFO_MAGIC, CHORUS_NCCL_API_VERSION, CHORUS_UNDEF_FLOAT }

/** Element types; values equal NCCL's ncclDataType_t. */
typedef enum {
  chorusInt8 = 0,
  chorusChar = 0,
  chorusUint8 = 1,
  chorusInt32 = 2,
  chorusInt = 2,
  chorusUint32 = 3,
  chorusInt64 = 4,
  chorusUint64 = 5,
  chorusFloat16 = 6,
  chorusHalf = 6,
  chorusFloat32 = 7,
  chorusFloat = 7,
  chorusFloat64 = 8,
  chorusDouble = 8,
  chorusBfloat16 = 9,
  chorusFloat8e4m3 = 10,
  chorusFloat8e5m2 = 11,
  chorusNumTypes = 12
} chorusDataType_t;

/** Reduction operations; values equal NCCL's ncclRedOp_t. */
typedef enum { chorusNumOps_dummy = 5 } chorusRedOp_dummy_t;
typedef enum {
  chorusSum = 0,
  chorusProd = 1,
  chorusMax = 2,
  chorusMin = 3,
  chorusAvg = 4,
  /* The number of built-in operations, and the first value chorusRedOpCreatePreMulSum hands out. */
  chorusNumOps = 5,
  /* The largest valid value: the enum keeps the size of an int, as NCCL's. */
  chorusMaxRedOp = 0x7fffffff >> (32 - 8 * sizeof(chorusRedOp_dummy_t))
} chorusRedOp_t;

/** Where the scalar of chorusRedOpCreatePreMulSum lives, and when it is read; values equal NCCL's. */
typedef enum {
  /* The scalar is in memory the operation's executor reads (device memory on a CUDA communicator, host
   * memory on a host one); it is read while each collective runs, so it may change between collectives. */
  chorusScalarDevice = 0,
  /* The scalar is in host memory and is read before chorusRedOpCreatePreMulSum returns. */
  chorusScalarHostImmediate = 1
} chorusScalarResidence_t;

/* ---------------------------------------------------------------------------------------------------- */
/* Version and errors                                                                                   */
/* ---------------------------------------------------------------------------------------------------- */

/** Stores CHORUS_VERSION_CODE of the loaded library in *version. */
CHORUS_API chorusResult_t chorusGetVersion(int* version);

/** Returns a static human-readable string for a result code. Never returns NULL. */
CHORUS_API const char* chorusGetErrorString(chorusResult_t result);

/**
 * Returns the message of the latest error of `comm` (any call on it, from any thread, or its asynchronous
 * work), or of the calling thread when comm is NULL: it names the rank, the peer where one is involved, the
 * operation and the cause. Returns "" when there was none. The string stays valid until this thread calls
 * chorusGetLastError again with the same argument; later errors do not change it.
 */
CHORUS_API const char* chorusGetLastError(chorusComm_t comm);

/** Re-reads the CHORUS_DEBUG* variables (level, subsystems, file), as ncclResetDebugInit re-reads NCCL_DEBUG*. */
CHORUS_API void chorusResetDebugInit(void);

/* ---------------------------------------------------------------------------------------------------- */
/* Communicator life cycle                                                                              */
/* ---------------------------------------------------------------------------------------------------- */

/**
 * Creates a unique id for a new communicator. The calling process starts a rendezvous listener, bound to
 * the interface chosen by CHORUS_SOCKET_IFNAME (default: the first non-loopback interface that is up, else
 * loopback), which lives until the process exits. The id holds that address and a random 128-bit secret
 * that authenticates every bootstrap connection and never crosses the wire. Pass the id to every rank out
 * of band (MPI_Bcast, a file, ...); anyone who holds it can join the communicator.
 */
CHORUS_API chorusResult_t chorusGetUniqueId(chorusUniqueId* uniqueId);

/**
 * Creates a communicator of `nranks` ranks in which the caller is `rank`. Collective: every rank must call
 * it with the same id and nranks. Blocks until all ranks have joined or the deadline (CHORUS_TIMEOUT_MS)
 * passes. The communicator is a host communicator (use the Config variant to choose a device).
 *
 * Inside chorusGroupStart/chorusGroupEnd (as NCCL) the call returns at once and the outermost chorusGroupEnd
 * waits until the communicator is ready (and returns the first failure): one thread may create several ranks
 * that way. This holds for chorusCommInitRankConfig and chorusCommInitRankScalable too.
 */
CHORUS_API chorusResult_t chorusCommInitRank(chorusComm_t* comm, int nranks, chorusUniqueId commId, int rank);

/**
 * As chorusCommInitRank with options. With config->blocking == 0 the call returns chorusInProgress at once
 * and chorusCommGetAsyncError(*comm) reports chorusInProgress until the communicator is ready (then
 * chorusSuccess) or has failed (then the error).
 */
CHORUS_API chorusResult_t chorusCommInitRankConfig(chorusComm_t* comm, int nranks, chorusUniqueId commId, int rank,
                                                   chorusConfig_t* config);

/**
 * Creates `ndev` communicators in one call, one per rank, all in this process (each rank is then driven
 * from its own thread, or through a group from one thread). devlist[i] is the CUDA device of rank i, or
 * CHORUS_DEVICE_HOST; a NULL devlist makes every rank a host rank (NCCL's NULL means devices 0..ndev-1:
 * libnccl.so.2 does that where GPUs are visible). Host and CUDA ranks cannot be mixed. The ranks talk through
 * memory: no network listener is opened.
 */
CHORUS_API chorusResult_t chorusCommInitAll(chorusComm_t* comms, int ndev, const int* devlist);

/**
 * Creates a communicator from the environment: rank and size from CHORUS_RANK/CHORUS_WORLD_SIZE, else
 * RANK/WORLD_SIZE (torchrun), else OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/PMI_SIZE or SLURM_PROCID/SLURM_NTASKS;
 * rendezvous at CHORUS_ADDR (host:port), else MASTER_ADDR:MASTER_PORT, served by rank 0. Variables of
 * different launchers that disagree are an error that names them. config may be NULL.
 */
CHORUS_API chorusResult_t chorusCommInitFromEnv(chorusComm_t* comm, chorusConfig_t* config);

/**
 * Splits `comm` into sub-communicators: ranks that pass the same color form one, ordered by key (ties by
 * their rank in comm). A rank that passes CHORUS_SPLIT_NOCOLOR takes part in the call and gets *newcomm ==
 * NULL. Collective over comm. config NULL inherits comm's options. Inside chorusGroupStart/chorusGroupEnd (as
 * NCCL) the split is deferred: *newcomm stays NULL until the outermost chorusGroupEnd creates it (newcomm must stay
 * valid until then), so that one thread may split every rank of a communicator it drives.
 */
CHORUS_API chorusResult_t chorusCommSplit(chorusComm_t comm, int color, int key, chorusComm_t* newcomm,
                                          chorusConfig_t* config);

/**
 * Creates a communicator of the ranks of `comm` not listed in excludeRanksList. Only the surviving ranks
 * call it. With CHORUS_SHRINK_ABORT, pending work on comm is aborted first, so it may be used after a peer
 * failed. Inside a group it is deferred to the outermost chorusGroupEnd, as chorusCommSplit.
 */
CHORUS_API chorusResult_t chorusCommShrink(chorusComm_t comm, int* excludeRanksList, int excludeRanksCount,
                                           chorusComm_t* newcomm, chorusConfig_t* config, int shrinkFlags);

/**
 * As chorusCommInitRankConfig with several unique ids (nId of them, 1 <= nId <= nranks), which NCCL uses to
 * spread the rendezvous over several roots. Every rank passes the same ids in the same order. Chorus's
 * rendezvous is a single exchange of endpoint addresses, so the communicator meets at commIds[0], whose
 * creator must stay alive until the call returns; every id is checked.
 */
CHORUS_API chorusResult_t chorusCommInitRankScalable(chorusComm_t* newcomm, int nranks, int myrank, int nId,
                                                     chorusUniqueId* commIds, chorusConfig_t* config);

/**
 * Chorus extension (NCCL has no such call): the survivors of comm agree on which of its ranks have failed,
 * so that each can pass the same list to chorusCommShrink. Collective over the ranks that are alive: every
 * surviving rank must call it (typically after an operation returned chorusRemoteError or chorusTimeout, and
 * after chorusCommRevoke). A rank has failed when its process is gone (its bootstrap connections closed or
 * it refuses connections) or it did not answer before comm's deadline (a stopped process). The survivors
 * exchange what each knows over the bootstrap, in rounds, until all hold the same set: every survivor
 * returns the same ranks, in increasing order. ranks must have room for comm's size (chorusCommCount); the
 * number found is stored in *nranks (0 when every rank is alive). Cost: one round of small bootstrap messages
 * between all pairs of survivors when every survivor already knows, one more per round that teaches a
 * survivor something. Works on a revoked or failed communicator; not on an aborted (freed) one.
 */
CHORUS_API chorusResult_t chorusCommGetFailedRanks(chorusComm_t comm, int* ranks, int* nranks);

/** Waits until all work issued on comm has completed and flushes it; collective. Call before Destroy. */
CHORUS_API chorusResult_t chorusCommFinalize(chorusComm_t comm);

/**
 * Frees the communicator's resources promptly; does not wait for other ranks. Work still in flight (a host
 * stream's queued operations, sends a peer has not consumed yet) gets at most 2 s to finish (a dead peer ends
 * that at once), then it is aborted and the peers are told; call chorusCommFinalize first to wait for it and get
 * its error. Returns chorusSuccess once freed. The handle stays invalid afterwards (it is never reused by a later
 * communicator). NULL is accepted and ignored.
 */
CHORUS_API chorusResult_t chorusCommDestroy(chorusComm_t comm);

/**
 * Aborts every operation pending on comm (every waiter returns at once with an error) and frees it. May
 * be called from any thread, including while another thread is blocked in a call on comm.
 */
CHORUS_API chorusResult_t chorusCommAbort(chorusComm_t comm);

/**
 * Revokes comm: every operation pending on it stops (its waiters return an error), and every later
 * collective or point-to-point call on it fails with chorusInvalidUsage ("the communicator was revoked").
 * Does not wait for other ranks, but tells them: the peers' pending and next operations on comm fail at once
 * with chorusRemoteError naming this rank. Returns once the communicator is quiescent; then
 * chorusCommGetFailedRanks, chorusCommShrink, chorusCommDestroy and chorusCommAbort may be called
 * (chorusCommFinalize may not). revokeFlags must be CHORUS_REVOKE_DEFAULT.
 */
CHORUS_API chorusResult_t chorusCommRevoke(chorusComm_t comm, int revokeFlags);

/**
 * Stores in *asyncError chorusInProgress while a non-blocking init or operation is pending, the first
 * error that asynchronous work on comm hit, or chorusSuccess.
 */
CHORUS_API chorusResult_t chorusCommGetAsyncError(chorusComm_t comm, chorusResult_t* asyncError);

/** Stores the number of ranks of comm in *count. */
CHORUS_API chorusResult_t chorusCommCount(const chorusComm_t comm, int* count);

/** Stores the caller's CUDA device in *device, or CHORUS_DEVICE_HOST for a host communicator. */
CHORUS_API chorusResult_t chorusCommCuDevice(const chorusComm_t comm, int* device);
/** Same as chorusCommCuDevice, under a name that does not suggest CUDA (it returns CHORUS_DEVICE_HOST for host
 * communicators). */
CHORUS_API chorusResult_t chorusCommDevice(const chorusComm_t comm, int* device);

/** Stores the caller's rank in comm in *rank. */
CHORUS_API chorusResult_t chorusCommUserRank(const chorusComm_t comm, int* rank);

/* ---------------------------------------------------------------------------------------------------- */
/* Memory that peers can reach directly                                                                 */
/* ---------------------------------------------------------------------------------------------------- */

/**
 * Allocates `size` bytes that other ranks on this host can map (shared memory for host ranks, a cuMem
 * allocation with a shareable handle on CUDA). Collectives whose buffers come from here may skip copies.
 */
CHORUS_API chorusResult_t chorusMemAlloc(void** ptr, size_t size);
/** Frees memory from chorusMemAlloc. NULL is accepted. */
CHORUS_API chorusResult_t chorusMemFree(void* ptr);
/** Registers a user buffer with comm so that later collectives on it may be zero-copy; returns a handle. */
CHORUS_API chorusResult_t chorusCommRegister(const chorusComm_t comm, void* buff, size_t size, void** handle);
/** Releases a registration made by chorusCommRegister. */
CHORUS_API chorusResult_t chorusCommDeregister(const chorusComm_t comm, void* handle);

/**
 * Registers [buff, buff+size) of every rank as a window of comm, for one-sided use. Collective: every rank
 * calls it, with the same winFlags; with CHORUS_WIN_COLL_SYMMETRIC every rank passes the same size and a
 * buffer aligned to CHORUS_WIN_REQUIRED_ALIGNMENT (chorusMemAlloc's are). What Chorus does with it: on host
 * communicators the window is recorded and checked, and collectives on it run as on any buffer; Chorus has
 * no device-side one-sided API (NCCL's nccl_device.h), so a window cannot be the target of a put or get.
 * On a CUDA communicator the call fails with chorusInvalidUsage, saying so.
 */
CHORUS_API chorusResult_t chorusCommWindowRegister(chorusComm_t comm, void* buff, size_t size, chorusWindow_t* win,
                                                   int winFlags);
/** Releases a window; collective, as its registration. */
CHORUS_API chorusResult_t chorusCommWindowDeregister(chorusComm_t comm, chorusWindow_t win);

/* ---------------------------------------------------------------------------------------------------- */
/* Reduction operations made at run time                                                                */
/* ---------------------------------------------------------------------------------------------------- */

/**
 * Creates a reduction operation that multiplies every rank's input by a scalar before summing, for
 * collectives on comm with this datatype (others fail with chorusInvalidArgument). With
 * chorusScalarHostImmediate *scalar is read now; with chorusScalarDevice it is read each time a collective
 * runs (on a host communicator: host memory that must stay valid while the op exists). The op is stored in
 * *op (a value >= chorusNumOps). Host communicators only: a CUDA communicator fails with chorusInvalidUsage.
 */
CHORUS_API chorusResult_t chorusRedOpCreatePreMulSum(chorusRedOp_t* op, void* scalar, chorusDataType_t datatype,
                                                     chorusScalarResidence_t residence, chorusComm_t comm);
/** Destroys an op of chorusRedOpCreatePreMulSum; collectives already issued with it are unaffected. */
CHORUS_API chorusResult_t chorusRedOpDestroy(chorusRedOp_t op, chorusComm_t comm);

/* ---------------------------------------------------------------------------------------------------- */
/* Host streams                                                                                         */
/* ---------------------------------------------------------------------------------------------------- */

/**
 * Creates a host stream. Operations enqueued on it with a host communicator run in issue order on the
 * library's executor, and the call that enqueues them returns at once: the buffers must stay valid and
 * unmodified until chorusStreamSynchronize returns or chorusStreamQuery reports chorusSuccess.
 */
CHORUS_API chorusResult_t chorusStreamCreate(chorusStream_t* stream);
/** Blocks until every operation enqueued on stream has completed; returns the first error any of them hit. */
CHORUS_API chorusResult_t chorusStreamSynchronize(chorusStream_t stream);
/** chorusSuccess when every operation on stream is done, chorusInProgress while some are pending, else the
 * first error. */
CHORUS_API chorusResult_t chorusStreamQuery(chorusStream_t stream);
/** Waits for the stream's work, then destroys it. */
CHORUS_API chorusResult_t chorusStreamDestroy(chorusStream_t stream);

/* ---------------------------------------------------------------------------------------------------- */
/* Collectives (NCCL's signatures). Counts are in elements. In-place: sendbuff == recvbuff, except       */
/* AllGather (sendbuff == recvbuff + rank*sendcount) and ReduceScatter (recvbuff == sendbuff +          */
/* rank*recvcount). A count of 0 is a valid no-op.                                                      */
/* ---------------------------------------------------------------------------------------------------- */

/** Reduces `count` elements across ranks with `op`; every rank receives the result in recvbuff. */
CHORUS_API chorusResult_t chorusAllReduce(const void* sendbuff, void* recvbuff, size_t count, chorusDataType_t datatype,
                                          chorusRedOp_t op, chorusComm_t comm, chorusStream_t stream);
/** In-place broadcast: root's `count` elements of buff are copied into every rank's buff. */
CHORUS_API chorusResult_t chorusBcast(void* buff, size_t count, chorusDataType_t datatype, int root, chorusComm_t comm,
                                      chorusStream_t stream);
/** Copies `count` elements of root's sendbuff into every rank's recvbuff. */
CHORUS_API chorusResult_t chorusBroadcast(const void* sendbuff, void* recvbuff, size_t count, chorusDataType_t datatype,
                                          int root, chorusComm_t comm, chorusStream_t stream);
/** Reduces `count` elements across ranks into root's recvbuff; recvbuff is ignored on other ranks. */
CHORUS_API chorusResult_t chorusReduce(const void* sendbuff, void* recvbuff, size_t count, chorusDataType_t datatype,
                                       chorusRedOp_t op, int root, chorusComm_t comm, chorusStream_t stream);
/** Gathers sendcount elements from every rank into recvbuff (nranks*sendcount elements, in rank order). */
CHORUS_API chorusResult_t chorusAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                          chorusDataType_t datatype, chorusComm_t comm, chorusStream_t stream);
/** Reduces nranks*recvcount elements and leaves block `rank` of the result in each rank's recvbuff. */
CHORUS_API chorusResult_t chorusReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                              chorusDataType_t datatype, chorusRedOp_t op, chorusComm_t comm,
                                              chorusStream_t stream);
/** Sends block j (count elements) of sendbuff to rank j and receives block j of recvbuff from rank j. */
CHORUS_API chorusResult_t chorusAlltoAll(const void* sendbuff, void* recvbuff, size_t count, chorusDataType_t datatype,
                                         chorusComm_t comm, chorusStream_t stream);
/** Gathers sendcount elements of every rank into root's recvbuff, in rank order. */
CHORUS_API chorusResult_t chorusGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                       chorusDataType_t datatype, int root, chorusComm_t comm, chorusStream_t stream);
/** Sends block j (recvcount elements) of root's sendbuff to rank j's recvbuff. */
CHORUS_API chorusResult_t chorusScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                        chorusDataType_t datatype, int root, chorusComm_t comm, chorusStream_t stream);
/** Sends count elements to rank peer, which must post a matching chorusRecv. */
CHORUS_API chorusResult_t chorusSend(const void* sendbuff, size_t count, chorusDataType_t datatype, int peer,
                                     chorusComm_t comm, chorusStream_t stream);
/** Receives count elements from rank peer. */
CHORUS_API chorusResult_t chorusRecv(void* recvbuff, size_t count, chorusDataType_t datatype, int peer,
                                     chorusComm_t comm, chorusStream_t stream);

/* ---------------------------------------------------------------------------------------------------- */
/* Groups                                                                                               */
/* ---------------------------------------------------------------------------------------------------- */

/**
 * Starts a group: calls until the matching chorusGroupEnd are collected and launched together, on any
 * number of communicators. Groups nest; only the outermost End launches. Send/recv pairs inside a group
 * never deadlock, whatever their order.
 */
CHORUS_API chorusResult_t chorusGroupStart(void);
/**
 * Launches the group and returns the first error of its calls, after waiting for the communicators created in
 * it (chorusInProgress while a non-blocking one is still being created). Without a GroupStart:
 * chorusInvalidUsage.
 */
CHORUS_API chorusResult_t chorusGroupEnd(void);
/**
 * Ends the group as chorusGroupEnd does, but launches nothing: the group's calls are dropped, and
 * simInfo->estimatedTime receives the time in microseconds that the tuner's cost model predicts for them
 * (per communicator the sum of its calls; the longest communicator). simInfo must come from
 * CHORUS_SIM_INFO_INITIALIZER.
 */
CHORUS_API chorusResult_t chorusGroupSimulateEnd(chorusSimInfo_t* simInfo);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CHORUS_CHORUS_H_ */

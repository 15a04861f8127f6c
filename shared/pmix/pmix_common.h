/*
 * pmixcpp public PMIx definitions: types, constants, attribute keys, struct
 * layouts, callback signatures and convenience macros of the PMIx v4 standard.
 *
 * Binary contract: OpenPMIx 4.2.2 (x86-64).  Every numeric value, key string,
 * struct layout and function signature here must equal OpenPMIx 4.2.2's, so
 * programs compiled against either header run on our libpmix.so.2.
 * tests/abi/compare-openpmix.sh checks this against the installed OpenPMIx
 * header; tests/abi/test_abi_layout.cc pins the layouts that matter most.
 *
 * Must stay valid C99 and C++.  Append-only: never renumber or reorder.
 *
 * Some macros expand to functions exported by libpmix.so.2 (as in OpenPMIx
 * 4.2.2); shared/pmix/MACRO_FUNCTIONS.md lists them for the client library.
 */
#ifndef PMIXCPP_PMIX_COMMON_H
#define PMIXCPP_PMIX_COMMON_H

#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>  /* struct timeval */
#include <sys/types.h> /* pid_t, uid_t, gid_t */
#include <time.h>
#include <unistd.h> /* uid_t, gid_t; OpenPMIx's header includes it, and programs rely on it (sleep) */

#include <pmix_version.h>

/* Symbols of the PMIx API are the only ones libpmix.so.2 exports. */
#define PMIX_HAVE_VISIBILITY 1
#ifndef PMIX_EXPORT
#define PMIX_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* =========================================================================
 * Identifiers: namespaces, keys, ranks
 * ========================================================================= */

#define PMIX_MAX_NSLEN  255
#define PMIX_MAX_KEYLEN 511

typedef char pmix_nspace_t[PMIX_MAX_NSLEN + 1];
typedef char pmix_key_t[PMIX_MAX_KEYLEN + 1];
typedef uint32_t pmix_rank_t;

#define PMIX_RANK_UNDEF       (UINT32_MAX)      /* "no particular rank": job-level data */
#define PMIX_RANK_WILDCARD    (UINT32_MAX - 1)  /* every rank of the namespace */
#define PMIX_RANK_LOCAL_NODE  (UINT32_MAX - 2)  /* every rank on this node */
#define PMIX_RANK_INVALID     (UINT32_MAX - 3)
#define PMIX_RANK_LOCAL_PEERS (UINT32_MAX - 4)  /* ranks of my namespace on this node */
#define PMIX_RANK_VALID       (UINT32_MAX - 50) /* real ranks are below this */
#define PMIX_RANK_IS_VALID(r) ((r) < PMIX_RANK_VALID)

#define PMIX_APP_WILDCARD     (UINT32_MAX)      /* data applies to every app */

/* =========================================================================
 * Process and job states
 * ========================================================================= */

typedef uint8_t pmix_proc_state_t;
#define PMIX_PROC_STATE_UNDEF                  0
#define PMIX_PROC_STATE_PREPPED                1
#define PMIX_PROC_STATE_LAUNCH_UNDERWAY        2
#define PMIX_PROC_STATE_RESTART                3
#define PMIX_PROC_STATE_TERMINATE              4
#define PMIX_PROC_STATE_RUNNING                5
#define PMIX_PROC_STATE_CONNECTED              6
#define PMIX_PROC_STATE_UNTERMINATED          15  /* below: still alive */
#define PMIX_PROC_STATE_TERMINATED            20
#define PMIX_PROC_STATE_ERROR                 50  /* above: ended abnormally */
#define PMIX_PROC_STATE_KILLED_BY_CMD         51
#define PMIX_PROC_STATE_ABORTED               52
#define PMIX_PROC_STATE_FAILED_TO_START       53
#define PMIX_PROC_STATE_ABORTED_BY_SIG        54
#define PMIX_PROC_STATE_TERM_WO_SYNC          55  /* exited without PMIx_Finalize */
#define PMIX_PROC_STATE_COMM_FAILED           56
#define PMIX_PROC_STATE_SENSOR_BOUND_EXCEEDED 57
#define PMIX_PROC_STATE_CALLED_ABORT          58
#define PMIX_PROC_STATE_HEARTBEAT_FAILED      59
#define PMIX_PROC_STATE_MIGRATING             60
#define PMIX_PROC_STATE_CANNOT_RESTART        61
#define PMIX_PROC_STATE_TERM_NON_ZERO         62
#define PMIX_PROC_STATE_FAILED_TO_LAUNCH      63

typedef uint8_t pmix_job_state_t;
#define PMIX_JOB_STATE_UNDEF                   0
#define PMIX_JOB_STATE_AWAITING_ALLOC          1
#define PMIX_JOB_STATE_LAUNCH_UNDERWAY         2
#define PMIX_JOB_STATE_RUNNING                 3
#define PMIX_JOB_STATE_SUSPENDED               4
#define PMIX_JOB_STATE_CONNECTED               5
#define PMIX_JOB_STATE_UNTERMINATED           15  /* below: still alive */
#define PMIX_JOB_STATE_TERMINATED             20
#define PMIX_JOB_STATE_TERMINATED_WITH_ERROR  50

/* =========================================================================
 * Status codes: 0 is success, errors and events are negative.
 * ========================================================================= */

typedef int pmix_status_t;

#define PMIX_SUCCESS                             0
#define PMIX_ERROR                              -1

/* generic errors */
#define PMIX_ERR_EXISTS                        -11
#define PMIX_ERR_INVALID_CRED                  -12
#define PMIX_ERR_WOULD_BLOCK                   -15
#define PMIX_ERR_UNKNOWN_DATA_TYPE             -16
#define PMIX_ERR_TYPE_MISMATCH                 -18
#define PMIX_ERR_UNPACK_INADEQUATE_SPACE       -19
#define PMIX_ERR_UNPACK_FAILURE                -20
#define PMIX_ERR_PACK_FAILURE                  -21
#define PMIX_ERR_NO_PERMISSIONS                -23
#define PMIX_ERR_TIMEOUT                       -24
#define PMIX_ERR_UNREACH                       -25
#define PMIX_ERR_BAD_PARAM                     -27
#define PMIX_ERR_RESOURCE_BUSY                 -28
#define PMIX_ERR_OUT_OF_RESOURCE               -29
#define PMIX_ERR_INIT                          -31
#define PMIX_ERR_NOMEM                         -32
#define PMIX_ERR_NOT_FOUND                     -46
#define PMIX_ERR_NOT_SUPPORTED                 -47
#define PMIX_ERR_COMM_FAILURE                  -49
#define PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER -50
#define PMIX_ERR_CONFLICTING_CLEANUP_DIRECTIVES -51
#define PMIX_ERR_PARTIAL_SUCCESS               -52
#define PMIX_ERR_DUPLICATE_KEY                 -53
#define PMIX_ERR_PARAM_VALUE_NOT_SUPPORTED     -59
#define PMIX_ERR_EMPTY                         -60
#define PMIX_ERR_LOST_CONNECTION               -61
#define PMIX_ERR_EXISTS_OUTSIDE_SCOPE          -62
#define PMIX_ERR_EVENT_REGISTRATION           -144
#define PMIX_ERR_INVALID_OPERATION            -158
#define PMIX_ERR_REPEAT_ATTR_REGISTRATION     -171
#define PMIX_ERR_IOF_FAILURE                  -172
#define PMIX_ERR_IOF_COMPLETE                 -173

/* fault tolerance requests */
#define PMIX_ERR_PROC_RESTART                   -4
#define PMIX_ERR_PROC_CHECKPOINT                -5
#define PMIX_ERR_PROC_MIGRATE                   -6

/* process sets */
#define PMIX_PROCESS_SET_DEFINE                -55
#define PMIX_PROCESS_SET_DELETE                -56

/* debugger */
#define PMIX_DEBUGGER_RELEASE                   -3
#define PMIX_READY_FOR_DEBUG                   -58

/* query, job control, monitoring */
#define PMIX_QUERY_PARTIAL_SUCCESS            -104
#define PMIX_JCTRL_CHECKPOINT                 -106
#define PMIX_JCTRL_CHECKPOINT_COMPLETE        -107
#define PMIX_JCTRL_PREEMPT_ALERT              -108
#define PMIX_MONITOR_HEARTBEAT_ALERT          -109
#define PMIX_MONITOR_FILE_ALERT               -110
#define PMIX_PROC_TERMINATED                  -111

/* programming models and operations */
#define PMIX_MODEL_DECLARED                   -147
#define PMIX_MODEL_RESOURCES                  -151
#define PMIX_OPENMP_PARALLEL_ENTERED          -152
#define PMIX_OPENMP_PARALLEL_EXITED           -153
#define PMIX_LAUNCHER_READY                   -155
#define PMIX_OPERATION_IN_PROGRESS            -156
#define PMIX_OPERATION_SUCCEEDED              -157
#define PMIX_LAUNCH_COMPLETE                  -174

/* groups */
#define PMIX_GROUP_INVITED                    -159
#define PMIX_GROUP_LEFT                       -160
#define PMIX_GROUP_INVITE_ACCEPTED            -161
#define PMIX_GROUP_INVITE_DECLINED            -162
#define PMIX_GROUP_INVITE_FAILED              -163
#define PMIX_GROUP_MEMBERSHIP_UPDATE          -164
#define PMIX_GROUP_CONSTRUCT_ABORT            -165
#define PMIX_GROUP_CONSTRUCT_COMPLETE         -166
#define PMIX_GROUP_LEADER_SELECTED            -167
#define PMIX_GROUP_LEADER_FAILED              -168
#define PMIX_GROUP_CONTEXT_ID_ASSIGNED        -169
#define PMIX_GROUP_MEMBER_FAILED              -170

/* fabric */
#define PMIX_FABRIC_UPDATE_ENDPOINTS          -113
#define PMIX_FABRIC_UPDATED                   -175
#define PMIX_FABRIC_UPDATE_PENDING            -176

/* job failures */
#define PMIX_ERR_JOB_APP_NOT_EXECUTABLE       -177
#define PMIX_ERR_JOB_NO_EXE_SPECIFIED         -178
#define PMIX_ERR_JOB_FAILED_TO_MAP            -179
#define PMIX_ERR_JOB_CANCELED                 -180
#define PMIX_ERR_JOB_FAILED_TO_LAUNCH         -181
#define PMIX_ERR_JOB_ABORTED                  -182
#define PMIX_ERR_JOB_KILLED_BY_CMD            -183
#define PMIX_ERR_JOB_ABORTED_BY_SIG           -184
#define PMIX_ERR_JOB_TERM_WO_SYNC             -185
#define PMIX_ERR_JOB_SENSOR_BOUND_EXCEEDED    -186
#define PMIX_ERR_JOB_NON_ZERO_TERM            -187
#define PMIX_ERR_JOB_ALLOC_FAILED             -188
#define PMIX_ERR_JOB_ABORTED_BY_SYS_EVENT     -189
#define PMIX_ERR_JOB_EXE_NOT_FOUND            -190
#define PMIX_ERR_JOB_WDIR_NOT_FOUND           -233
#define PMIX_ERR_JOB_INSUFFICIENT_RESOURCES   -234
#define PMIX_ERR_JOB_SYS_OP_FAILED            -235

/* job and session lifecycle events (not errors) */
#define PMIX_EVENT_JOB_START                  -191
#define PMIX_EVENT_JOB_END                    -145
#define PMIX_EVENT_SESSION_START              -192
#define PMIX_EVENT_SESSION_END                -193

/* process events */
#define PMIX_ERR_PROC_REQUESTED_ABORT           -8
#define PMIX_ERR_PROC_TERM_WO_SYNC            -200
#define PMIX_EVENT_PROC_TERMINATED            -201
#define PMIX_ERR_PROC_KILLED_BY_CMD           -400
#define PMIX_ERR_PROC_FAILED_TO_START         -401
#define PMIX_ERR_PROC_ABORTED_BY_SIG          -402
#define PMIX_ERR_PROC_SENSOR_BOUND_EXCEEDED   -403
#define PMIX_ERR_EXIT_NONZERO_TERM            -404

/* system events occupy [PMIX_EVENT_SYS_OTHER, PMIX_EVENT_SYS_BASE] */
#define PMIX_EVENT_SYS_BASE                   -230
#define PMIX_EVENT_NODE_DOWN                  -231
#define PMIX_EVENT_NODE_OFFLINE               -232
#define PMIX_EVENT_SYS_OTHER                  -330
#define PMIX_SYSTEM_EVENT(a) ((a) <= PMIX_EVENT_SYS_BASE && (a) >= PMIX_EVENT_SYS_OTHER)

/* what an event handler reports back to the chain */
#define PMIX_EVENT_NO_ACTION_TAKEN            -331
#define PMIX_EVENT_PARTIAL_ACTION_TAKEN       -332
#define PMIX_EVENT_ACTION_DEFERRED            -333
#define PMIX_EVENT_ACTION_COMPLETE            -334

/* applications may define their own codes below this value */
#define PMIX_EXTERNAL_ERR_BASE               -3000

/* Codes kept for source compatibility with older PMIx releases. */
#define PMIX_ERR_SILENT                         -2
#define PMIX_ERR_DEBUGGER_RELEASE               -3
#define PMIX_ERR_PROC_ABORTED                   -7
#define PMIX_ERR_PROC_ABORTING                  -9
#define PMIX_ERR_SERVER_FAILED_REQUEST         -10
#define PMIX_EXISTS                            -11
#define PMIX_ERR_HANDSHAKE_FAILED              -13
#define PMIX_ERR_READY_FOR_HANDSHAKE           -14
#define PMIX_ERR_PROC_ENTRY_NOT_FOUND          -17
#define PMIX_ERR_PACK_MISMATCH                 -22
#define PMIX_ERR_IN_ERRNO                      -26
#define PMIX_ERR_DATA_VALUE_NOT_FOUND          -30
#define PMIX_ERR_INVALID_ARG                   -33
#define PMIX_ERR_INVALID_KEY                   -34
#define PMIX_ERR_INVALID_KEY_LENGTH            -35
#define PMIX_ERR_INVALID_VAL                   -36
#define PMIX_ERR_INVALID_VAL_LENGTH            -37
#define PMIX_ERR_INVALID_LENGTH                -38
#define PMIX_ERR_INVALID_NUM_ARGS              -39
#define PMIX_ERR_INVALID_ARGS                  -40
#define PMIX_ERR_INVALID_NUM_PARSED            -41
#define PMIX_ERR_INVALID_KEYVALP               -42
#define PMIX_ERR_INVALID_SIZE                  -43
#define PMIX_ERR_INVALID_NAMESPACE             -44
#define PMIX_ERR_SERVER_NOT_AVAIL              -45
#define PMIX_ERR_NOT_IMPLEMENTED               -48
#define PMIX_DEBUG_WAITING_FOR_NOTIFY          -58
#define PMIX_ERR_FATAL                         -63
#define PMIX_ERR_NOT_AVAILABLE                 -64
#define PMIX_ERR_VALUE_OUT_OF_BOUNDS           -65
#define PMIX_ERR_FILE_OPEN_FAILURE             -67
#define PMIX_ERR_FILE_READ_FAILURE             -68
#define PMIX_ERR_FILE_WRITE_FAILURE            -69
#define PMIX_ERR_SYS_LIMITS_PIPES              -70
#define PMIX_ERR_SYS_LIMITS_CHILDREN           -71
#define PMIX_ERR_PIPE_SETUP_FAILURE            -72
#define PMIX_ERR_EXE_NOT_ACCESSIBLE            -73
#define PMIX_ERR_JOB_WDIR_NOT_ACCESSIBLE       -74
#define PMIX_ERR_SYS_LIMITS_FILES              -75
#define PMIX_ERR_LOST_CONNECTION_TO_SERVER    -101
#define PMIX_ERR_LOST_PEER_CONNECTION         -102
#define PMIX_ERR_LOST_CONNECTION_TO_CLIENT    -103
#define PMIX_NOTIFY_ALLOC_COMPLETE            -105
#define PMIX_ERR_INVALID_TERMINATION          -112
#define PMIX_ERR_JOB_TERMINATED               -145
#define PMIX_ERR_UPDATE_ENDPOINTS             -146
#define PMIX_GDS_ACTION_COMPLETE              -148
#define PMIX_PROC_HAS_CONNECTED               -149
#define PMIX_CONNECT_REQUESTED                -150
#define PMIX_ERR_NODE_DOWN                    -231
#define PMIX_ERR_NODE_OFFLINE                 -232
#define PMIX_ERR_SYS_BASE                     PMIX_EVENT_SYS_BASE
#define PMIX_ERR_SYS_OTHER                    PMIX_EVENT_SYS_OTHER

/* Result of PMIx_Value_compare. */
typedef enum {
    PMIX_EQUAL,
    PMIX_VALUE1_GREATER,
    PMIX_VALUE2_GREATER,
    PMIX_VALUE_TYPE_DIFFERENT,
    PMIX_VALUE_INCOMPATIBLE_OBJECTS,
    PMIX_VALUE_COMPARISON_NOT_AVAIL
} pmix_value_cmp_t;

/* =========================================================================
 * Data type codes (pmix_value_t.type, pack/unpack).  Holes at 26, 29 and 44
 * belong to retired types and must stay unused.
 * ========================================================================= */

typedef uint16_t pmix_data_type_t;
#define PMIX_UNDEF                   0
#define PMIX_BOOL                    1
#define PMIX_BYTE                    2
#define PMIX_STRING                  3
#define PMIX_SIZE                    4
#define PMIX_PID                     5
#define PMIX_INT                     6
#define PMIX_INT8                    7
#define PMIX_INT16                   8
#define PMIX_INT32                   9
#define PMIX_INT64                  10
#define PMIX_UINT                   11
#define PMIX_UINT8                  12
#define PMIX_UINT16                 13
#define PMIX_UINT32                 14
#define PMIX_UINT64                 15
#define PMIX_FLOAT                  16
#define PMIX_DOUBLE                 17
#define PMIX_TIMEVAL                18
#define PMIX_TIME                   19
#define PMIX_STATUS                 20
#define PMIX_VALUE                  21
#define PMIX_PROC                   22
#define PMIX_APP                    23
#define PMIX_INFO                   24
#define PMIX_PDATA                  25
#define PMIX_BUFFER                 26  /* retired */
#define PMIX_BYTE_OBJECT            27
#define PMIX_KVAL                   28
#define PMIX_PERSIST                30
#define PMIX_POINTER                31
#define PMIX_SCOPE                  32
#define PMIX_DATA_RANGE             33
#define PMIX_COMMAND                34
#define PMIX_INFO_DIRECTIVES        35
#define PMIX_DATA_TYPE              36
#define PMIX_PROC_STATE             37
#define PMIX_PROC_INFO              38
#define PMIX_DATA_ARRAY             39
#define PMIX_PROC_RANK              40
#define PMIX_QUERY                  41
#define PMIX_COMPRESSED_STRING      42  /* never hand these to OpenMPI */
#define PMIX_ALLOC_DIRECTIVE        43
#define PMIX_IOF_CHANNEL            45
#define PMIX_ENVAR                  46
#define PMIX_COORD                  47
#define PMIX_REGATTR                48
#define PMIX_REGEX                  49
#define PMIX_JOB_STATE              50
#define PMIX_LINK_STATE             51
#define PMIX_PROC_CPUSET            52
#define PMIX_GEOMETRY               53
#define PMIX_DEVICE_DIST            54
#define PMIX_ENDPOINT               55
#define PMIX_TOPO                   56
#define PMIX_DEVTYPE                57
#define PMIX_LOCTYPE                58
#define PMIX_COMPRESSED_BYTE_OBJECT 59
#define PMIX_PROC_NSPACE            60
#define PMIX_PROC_STATS             61
#define PMIX_DISK_STATS             62
#define PMIX_NET_STATS              63
#define PMIX_NODE_STATS             64
#define PMIX_DATA_BUFFER            65
#define PMIX_STOR_MEDIUM            66
#define PMIX_STOR_ACCESS            67
#define PMIX_STOR_PERSIST           68
#define PMIX_STOR_ACCESS_TYPE       69
#define PMIX_DATA_TYPE_MAX         500  /* implementations extend above this */

/* =========================================================================
 * Small enumerations carried in values
 * ========================================================================= */

/* Who may see data given to PMIx_Put. */
typedef uint8_t pmix_scope_t;
#define PMIX_SCOPE_UNDEF 0
#define PMIX_LOCAL       1  /* processes on this node */
#define PMIX_REMOTE      2  /* processes on other nodes */
#define PMIX_GLOBAL      3  /* everyone */
#define PMIX_INTERNAL    4  /* this process only (PMIx_Store_internal) */

/* Who may see published data and receive events. */
typedef uint8_t pmix_data_range_t;
#define PMIX_RANGE_UNDEF      0
#define PMIX_RANGE_RM         1
#define PMIX_RANGE_LOCAL      2
#define PMIX_RANGE_NAMESPACE  3
#define PMIX_RANGE_SESSION    4
#define PMIX_RANGE_GLOBAL     5
#define PMIX_RANGE_CUSTOM     6
#define PMIX_RANGE_PROC_LOCAL 7
#define PMIX_RANGE_INVALID    UINT8_MAX

/* How long published data lives. */
typedef uint8_t pmix_persistence_t;
#define PMIX_PERSIST_INDEF      0
#define PMIX_PERSIST_FIRST_READ 1
#define PMIX_PERSIST_PROC       2
#define PMIX_PERSIST_APP        3
#define PMIX_PERSIST_SESSION    4
#define PMIX_PERSIST_INVALID    UINT8_MAX

/* Bit flags in pmix_info_t.flags; the top 16 bits are the library's. */
typedef uint32_t pmix_info_directives_t;
#define PMIX_INFO_REQD           0x00000001u
#define PMIX_INFO_ARRAY_END      0x00000002u
#define PMIX_INFO_REQD_PROCESSED 0x00000004u
#define PMIX_INFO_QUALIFIER      0x00000008u
#define PMIX_INFO_PERSISTENT     0x00000010u  /* destruct leaves the value alone */
#define PMIX_INFO_DIR_RESERVED   0xffff0000u

/* PMIx_Allocation_request directives. */
typedef uint8_t pmix_alloc_directive_t;
#define PMIX_ALLOC_NEW       1
#define PMIX_ALLOC_EXTEND    2
#define PMIX_ALLOC_RELEASE   3
#define PMIX_ALLOC_REAQUIRE  4  /* spelling is the standard's */
#define PMIX_ALLOC_REQ_CANCEL 5  /* PMIx v5: withdraw a pending allocation request */
#define PMIX_ALLOC_EXTERNAL  128

/* I/O forwarding channels (bit mask). */
typedef uint16_t pmix_iof_channel_t;
#define PMIX_FWD_NO_CHANNELS     0x0000
#define PMIX_FWD_STDIN_CHANNEL   0x0001
#define PMIX_FWD_STDOUT_CHANNEL  0x0002
#define PMIX_FWD_STDERR_CHANNEL  0x0004
#define PMIX_FWD_STDDIAG_CHANNEL 0x0008
#define PMIX_FWD_ALL_CHANNELS    0x00ff

/* Groups. */
typedef enum { PMIX_GROUP_DECLINE, PMIX_GROUP_ACCEPT } pmix_group_opt_t;
typedef enum { PMIX_GROUP_CONSTRUCT, PMIX_GROUP_DESTRUCT } pmix_group_operation_t;

/* Storage descriptions (bit masks). */
typedef uint64_t pmix_storage_medium_t;
#define PMIX_STORAGE_MEDIUM_UNKNOWN 0x0000000000000001ull
#define PMIX_STORAGE_MEDIUM_TAPE    0x0000000000000002ull
#define PMIX_STORAGE_MEDIUM_HDD     0x0000000000000004ull
#define PMIX_STORAGE_MEDIUM_SSD     0x0000000000000008ull
#define PMIX_STORAGE_MEDIUM_NVME    0x0000000000000010ull
#define PMIX_STORAGE_MEDIUM_PMEM    0x0000000000000020ull
#define PMIX_STORAGE_MEDIUM_RAM     0x0000000000000040ull

typedef uint64_t pmix_storage_accessibility_t;
#define PMIX_STORAGE_ACCESSIBILITY_NODE    0x0000000000000001ull
#define PMIX_STORAGE_ACCESSIBILITY_SESSION 0x0000000000000002ull
#define PMIX_STORAGE_ACCESSIBILITY_JOB     0x0000000000000004ull
#define PMIX_STORAGE_ACCESSIBILITY_RACK    0x0000000000000008ull
#define PMIX_STORAGE_ACCESSIBILITY_CLUSTER 0x0000000000000010ull
#define PMIX_STORAGE_ACCESSIBILITY_REMOTE  0x0000000000000020ull

typedef uint64_t pmix_storage_persistence_t;
#define PMIX_STORAGE_PERSISTENCE_TEMPORARY 0x0000000000000001ull
#define PMIX_STORAGE_PERSISTENCE_NODE      0x0000000000000002ull
#define PMIX_STORAGE_PERSISTENCE_SESSION   0x0000000000000004ull
#define PMIX_STORAGE_PERSISTENCE_JOB       0x0000000000000008ull
#define PMIX_STORAGE_PERSISTENCE_SCRATCH   0x0000000000000010ull
#define PMIX_STORAGE_PERSISTENCE_PROJECT   0x0000000000000020ull
#define PMIX_STORAGE_PERSISTENCE_ARCHIVE   0x0000000000000040ull

typedef uint16_t pmix_storage_access_type_t;
#define PMIX_STORAGE_ACCESS_RD   0x0001
#define PMIX_STORAGE_ACCESS_WR   0x0002
#define PMIX_STORAGE_ACCESS_RDWR 0x0003

/* Coordinates, links, binding, locality, devices. */
typedef uint8_t pmix_coord_view_t;
#define PMIX_COORD_VIEW_UNDEF    0x00
#define PMIX_COORD_LOGICAL_VIEW  0x01
#define PMIX_COORD_PHYSICAL_VIEW 0x02

typedef uint8_t pmix_link_state_t;
#define PMIX_LINK_STATE_UNKNOWN 0
#define PMIX_LINK_DOWN          1
#define PMIX_LINK_UP            2

typedef uint8_t pmix_bind_envelope_t;
#define PMIX_CPUBIND_PROCESS 0
#define PMIX_CPUBIND_THREAD  1

typedef uint16_t pmix_locality_t;
#define PMIX_LOCALITY_UNKNOWN        0x0000
#define PMIX_LOCALITY_SHARE_HWTHREAD 0x0001
#define PMIX_LOCALITY_SHARE_CORE     0x0002
#define PMIX_LOCALITY_SHARE_L1CACHE  0x0004
#define PMIX_LOCALITY_SHARE_L2CACHE  0x0008
#define PMIX_LOCALITY_SHARE_L3CACHE  0x0010
#define PMIX_LOCALITY_SHARE_PACKAGE  0x0020
#define PMIX_LOCALITY_SHARE_NUMA     0x0040
#define PMIX_LOCALITY_SHARE_NODE     0x4000
#define PMIX_LOCALITY_NONLOCAL       0x8000

typedef uint64_t pmix_device_type_t;
#define PMIX_DEVTYPE_UNKNOWN     0x00
#define PMIX_DEVTYPE_BLOCK       0x01
#define PMIX_DEVTYPE_GPU         0x02
#define PMIX_DEVTYPE_NETWORK     0x04
#define PMIX_DEVTYPE_OPENFABRICS 0x08
#define PMIX_DEVTYPE_DMA         0x10
#define PMIX_DEVTYPE_COPROC      0x20

/* Legacy job state, kept for source compatibility. */
#define PMIX_JOB_STATE_PREPPED 1

/* =========================================================================
 * Names of environment variables (not keys)
 * ========================================================================= */

#define PMIX_LAUNCHER_RNDZ_URI  "PMIX_LAUNCHER_RNDZ_URI"   /* tool awaiting the launcher */
#define PMIX_LAUNCHER_RNDZ_FILE "PMIX_LAUNCHER_RNDZ_FILE"  /* launcher writes its contact here */
#define PMIX_KEEPALIVE_PIPE     "PMIX_KEEPALIVE_PIPE"      /* closes when the parent tool dies */

/* =========================================================================
 * Attribute keys.  The comment gives the value type; for query keys it is
 * the type of the answer.  Keys beginning "pmix" are reserved.
 * ========================================================================= */

#define PMIX_ATTR_UNDEF                         "pmix.undef"

/* ---- Library and server initialization ---- */
#define PMIX_EXTERNAL_PROGRESS                  "pmix.evext"                /* bool */
#define PMIX_SERVER_TOOL_SUPPORT                "pmix.srvr.tool"            /* bool */
#define PMIX_SERVER_REMOTE_CONNECTIONS          "pmix.srvr.remote"          /* bool */
#define PMIX_SERVER_SYSTEM_SUPPORT              "pmix.srvr.sys"             /* bool */
#define PMIX_SERVER_SESSION_SUPPORT             "pmix.srvr.sess"            /* bool */
#define PMIX_SERVER_TMPDIR                      "pmix.srvr.tmpdir"          /* char* */
#define PMIX_SYSTEM_TMPDIR                      "pmix.sys.tmpdir"           /* char* */
#define PMIX_SERVER_SHARE_TOPOLOGY              "pmix.srvr.share"           /* bool */
#define PMIX_SERVER_ENABLE_MONITORING           "pmix.srv.monitor"          /* bool */
#define PMIX_SERVER_NSPACE                      "pmix.srv.nspace"           /* char* */
#define PMIX_SERVER_RANK                        "pmix.srv.rank"             /* pmix_rank_t */
#define PMIX_SERVER_GATEWAY                     "pmix.srv.gway"             /* bool */
#define PMIX_SERVER_SCHEDULER                   "pmix.srv.sched"            /* bool */
#define PMIX_SERVER_START_TIME                  "pmix.srv.strtime"          /* char* */
#define PMIX_HOMOGENEOUS_SYSTEM                 "pmix.homo"                 /* bool */
#define PMIX_SINGLETON                          "pmix.singleton"            /* char* */
#define PMIX_BIND_PROGRESS_THREAD               "pmix.bind.pt"              /* char* */
#define PMIX_BIND_REQUIRED                      "pmix.bind.reqd"            /* bool */

/* ---- Tools and rendezvous ---- */
#define PMIX_TOOL_NSPACE                        "pmix.tool.nspace"          /* char* */
#define PMIX_TOOL_RANK                          "pmix.tool.rank"            /* uint32_t */
#define PMIX_SERVER_PIDINFO                     "pmix.srvr.pidinfo"         /* pid_t */
#define PMIX_CONNECT_TO_SYSTEM                  "pmix.cnct.sys"             /* bool */
#define PMIX_CONNECT_SYSTEM_FIRST               "pmix.cnct.sys.first"       /* bool */
#define PMIX_SERVER_URI                         "pmix.srvr.uri"             /* char* */
#define PMIX_MYSERVER_URI                       "pmix.mysrvr.uri"           /* char* */
#define PMIX_SERVER_HOSTNAME                    "pmix.srvr.host"            /* char* */
#define PMIX_CONNECT_MAX_RETRIES                "pmix.tool.mretries"        /* uint32_t */
#define PMIX_CONNECT_RETRY_DELAY                "pmix.tool.retry"           /* uint32_t */
#define PMIX_TOOL_DO_NOT_CONNECT                "pmix.tool.nocon"           /* bool */
#define PMIX_TOOL_CONNECT_OPTIONAL              "pmix.tool.conopt"          /* bool */
#define PMIX_LAUNCHER                           "pmix.tool.launcher"        /* bool */
#define PMIX_LAUNCHER_RENDEZVOUS_FILE           "pmix.tool.lncrnd"          /* char* */
#define PMIX_TOOL_ATTACHMENT_FILE               "pmix.tool.attach"          /* char* */
#define PMIX_PRIMARY_SERVER                     "pmix.pri.srvr"             /* bool */
#define PMIX_NOHUP                              "pmix.nohup"                /* bool */
#define PMIX_LAUNCHER_DAEMON                    "pmix.lnch.dmn"             /* char* */
#define PMIX_EXEC_AGENT                         "pmix.exec.agnt"            /* char* */
#define PMIX_LAUNCH_DIRECTIVES                  "pmix.lnch.dirs"            /* pmix_data_array_t* */

/* ---- Process identity ---- */
#define PMIX_USERID                             "pmix.euid"                 /* uint32_t */
#define PMIX_GRPID                              "pmix.egid"                 /* uint32_t */
#define PMIX_VERSION_INFO                       "pmix.version"              /* char* */
#define PMIX_REQUESTOR_IS_TOOL                  "pmix.req.tool"             /* bool */
#define PMIX_REQUESTOR_IS_CLIENT                "pmix.req.client"           /* bool */
#define PMIX_PSET_NAME                          "pmix.pset.nm"              /* char* */
#define PMIX_PSET_NAMES                         "pmix.pset.nms"             /* pmix_data_array_t* */
#define PMIX_PSET_MEMBERS                       "pmix.pset.mems"            /* pmix_data_array_t* */
#define PMIX_REINCARNATION                      "pmix.reinc"                /* uint32_t */

/* ---- Programming models ---- */
#define PMIX_PROGRAMMING_MODEL                  "pmix.pgm.model"            /* char* */
#define PMIX_MODEL_LIBRARY_NAME                 "pmix.mdl.name"             /* char* */
#define PMIX_MODEL_LIBRARY_VERSION              "pmix.mld.vrs"              /* char* */
#define PMIX_THREADING_MODEL                    "pmix.threads"              /* char* */
#define PMIX_MODEL_NUM_THREADS                  "pmix.mdl.nthrds"           /* uint64_t */
#define PMIX_MODEL_NUM_CPUS                     "pmix.mdl.ncpu"             /* uint64_t */
#define PMIX_MODEL_CPU_TYPE                     "pmix.mdl.cputype"          /* char* */
#define PMIX_MODEL_PHASE_NAME                   "pmix.mdl.phase"            /* char* */
#define PMIX_MODEL_PHASE_TYPE                   "pmix.mdl.ptype"            /* char* */
#define PMIX_MODEL_AFFINITY_POLICY              "pmix.mdl.tap"              /* char* */

/* ---- Server listeners (TCP) ---- */
#define PMIX_TCP_REPORT_URI                     "pmix.tcp.repuri"           /* char* */
#define PMIX_TCP_URI                            "pmix.tcp.uri"              /* char* */
#define PMIX_TCP_IF_INCLUDE                     "pmix.tcp.ifinclude"        /* char* */
#define PMIX_TCP_IF_EXCLUDE                     "pmix.tcp.ifexclude"        /* char* */
#define PMIX_TCP_IPV4_PORT                      "pmix.tcp.ipv4"             /* int */
#define PMIX_TCP_IPV6_PORT                      "pmix.tcp.ipv6"             /* int */
#define PMIX_TCP_DISABLE_IPV4                   "pmix.tcp.disipv4"          /* bool */
#define PMIX_TCP_DISABLE_IPV6                   "pmix.tcp.disipv6"          /* bool */

/* ---- Per-process facts ---- */
#define PMIX_CPUSET                             "pmix.cpuset"               /* char* */
#define PMIX_CPUSET_BITMAP                      "pmix.bitmap"               /* pmix_cpuset_t* */
#define PMIX_CREDENTIAL                         "pmix.cred"                 /* char* */
#define PMIX_SPAWNED                            "pmix.spawned"              /* bool */
#define PMIX_NODE_OVERSUBSCRIBED                "pmix.ndosub"               /* bool */

/* ---- Scratch and temporary directories ---- */
#define PMIX_TMPDIR                             "pmix.tmpdir"               /* char* */
#define PMIX_NSDIR                              "pmix.nsdir"                /* char* */
#define PMIX_PROCDIR                            "pmix.pdir"                 /* char* */
#define PMIX_TDIR_RMCLEAN                       "pmix.tdir.rmclean"         /* bool */

/* ---- Ranks and placement ---- */
#define PMIX_CLUSTER_ID                         "pmix.clid"                 /* char* */
#define PMIX_PROCID                             "pmix.procid"               /* pmix_proc_t* */
#define PMIX_NSPACE                             "pmix.nspace"               /* char* */
#define PMIX_JOBID                              "pmix.jobid"                /* char* */
#define PMIX_APPNUM                             "pmix.appnum"               /* uint32_t */
#define PMIX_RANK                               "pmix.rank"                 /* pmix_rank_t */
#define PMIX_GLOBAL_RANK                        "pmix.grank"                /* pmix_rank_t */
#define PMIX_APP_RANK                           "pmix.apprank"              /* pmix_rank_t */
#define PMIX_NPROC_OFFSET                       "pmix.offset"               /* pmix_rank_t */
#define PMIX_LOCAL_RANK                         "pmix.lrank"                /* uint16_t */
#define PMIX_NODE_RANK                          "pmix.nrank"                /* uint16_t */
#define PMIX_PACKAGE_RANK                       "pmix.pkgrank"              /* uint16_t */
#define PMIX_LOCALLDR                           "pmix.lldr"                 /* pmix_rank_t */
#define PMIX_APPLDR                             "pmix.aldr"                 /* pmix_rank_t */
#define PMIX_PROC_PID                           "pmix.ppid"                 /* pid_t */
#define PMIX_SESSION_ID                         "pmix.session.id"           /* uint32_t */
#define PMIX_NODE_LIST                          "pmix.nlist"                /* char* */
#define PMIX_ALLOCATED_NODELIST                 "pmix.alist"                /* char* */
#define PMIX_HOSTNAME                           "pmix.hname"                /* char* */
#define PMIX_HOSTNAME_ALIASES                   "pmix.alias"                /* char* */
#define PMIX_HOSTNAME_KEEP_FQDN                 "pmix.fqdn"                 /* bool */
#define PMIX_NODEID                             "pmix.nodeid"               /* uint32_t */
#define PMIX_LOCAL_PEERS                        "pmix.lpeers"               /* char* */
#define PMIX_LOCAL_PROCS                        "pmix.lprocs"               /* pmix_data_array_t* */
#define PMIX_LOCAL_CPUSETS                      "pmix.lcpus"                /* char* */
#define PMIX_PARENT_ID                          "pmix.parent"               /* pmix_proc_t* */
#define PMIX_EXIT_CODE                          "pmix.exit.code"            /* int */

/* ---- Sizes and counts ---- */
#define PMIX_UNIV_SIZE                          "pmix.univ.size"            /* uint32_t */
#define PMIX_JOB_SIZE                           "pmix.job.size"             /* uint32_t */
#define PMIX_JOB_NUM_APPS                       "pmix.job.napps"            /* uint32_t */
#define PMIX_APP_SIZE                           "pmix.app.size"             /* uint32_t */
#define PMIX_LOCAL_SIZE                         "pmix.local.size"           /* uint32_t */
#define PMIX_NODE_SIZE                          "pmix.node.size"            /* uint32_t */
#define PMIX_MAX_PROCS                          "pmix.max.size"             /* uint32_t */
#define PMIX_NUM_SLOTS                          "pmix.num.slots"            /* uint32_t */
#define PMIX_NUM_NODES                          "pmix.num.nodes"            /* uint32_t */
#define PMIX_NUM_ALLOCATED_NODES                "pmix.num.anodes"           /* uint32_t */

/* ---- Memory ---- */
#define PMIX_AVAIL_PHYS_MEMORY                  "pmix.pmem"                 /* uint64_t */
#define PMIX_DAEMON_MEMORY                      "pmix.dmn.mem"              /* float */
#define PMIX_CLIENT_AVG_MEMORY                  "pmix.cl.mem.avg"           /* float */

/* ---- Topology ---- */
#define PMIX_TOPOLOGY2                          "pmix.topo2"                /* pmix_topology_t* */
#define PMIX_LOCALITY_STRING                    "pmix.locstr"               /* char* */

/* ---- Request modifiers (fence, get, publish, ...) ---- */
#define PMIX_COLLECT_DATA                       "pmix.collect"              /* bool */
#define PMIX_ALL_CLONES_PARTICIPATE             "pmix.clone.part"           /* bool */
#define PMIX_COLLECT_GENERATED_JOB_INFO         "pmix.collect.gen"          /* bool */
#define PMIX_TIMEOUT                            "pmix.timeout"              /* int */
#define PMIX_IMMEDIATE                          "pmix.immediate"            /* bool */
#define PMIX_WAIT                               "pmix.wait"                 /* int */
#define PMIX_NOTIFY_COMPLETION                  "pmix.notecomp"             /* bool */
#define PMIX_RANGE                              "pmix.range"                /* pmix_data_range_t */
#define PMIX_PERSISTENCE                        "pmix.persist"              /* pmix_persistence_t */
#define PMIX_DATA_SCOPE                         "pmix.scope"                /* pmix_scope_t */
#define PMIX_OPTIONAL                           "pmix.optional"             /* bool */
#define PMIX_GET_STATIC_VALUES                  "pmix.get.static"           /* bool */
#define PMIX_GET_POINTER_VALUES                 "pmix.get.pntrs"            /* bool */
#define PMIX_EMBED_BARRIER                      "pmix.embed.barrier"        /* bool */
#define PMIX_JOB_TERM_STATUS                    "pmix.job.term.status"      /* pmix_status_t */
#define PMIX_PROC_TERM_STATUS                   "pmix.proc.term.status"     /* pmix_status_t */
#define PMIX_PROC_STATE_STATUS                  "pmix.proc.state"           /* pmix_proc_state_t */
#define PMIX_GET_REFRESH_CACHE                  "pmix.get.refresh"          /* bool */
#define PMIX_ACCESS_PERMISSIONS                 "pmix.aperms"               /* pmix_data_array_t* */
#define PMIX_ACCESS_USERIDS                     "pmix.auids"                /* pmix_data_array_t* */
#define PMIX_ACCESS_GRPIDS                      "pmix.agids"                /* pmix_data_array_t* */
#define PMIX_WAIT_FOR_CONNECTION                "pmix.wait.conn"            /* bool */
#define PMIX_QUALIFIED_VALUE                    "pmix.qual.val"             /* pmix_data_array_t* */

/* ---- Registration arrays passed by the host server ---- */
#define PMIX_REGISTER_NODATA                    "pmix.reg.nodata"           /* bool */
#define PMIX_NODE_MAP                           "pmix.nmap"                 /* char* */
#define PMIX_NODE_MAP_RAW                       "pmix.nmap.raw"             /* char* */
#define PMIX_PROC_MAP                           "pmix.pmap"                 /* char* */
#define PMIX_PROC_MAP_RAW                       "pmix.pmap.raw"             /* char* */
#define PMIX_ANL_MAP                            "pmix.anlmap"               /* char* */
#define PMIX_APP_MAP_TYPE                       "pmix.apmap.type"           /* char* */
#define PMIX_APP_MAP_REGEX                      "pmix.apmap.regex"          /* char* */
#define PMIX_REQUIRED_KEY                       "pmix.req.key"              /* char* */
#define PMIX_LOCAL_COLLECTIVE_STATUS            "pmix.loc.col.st"           /* pmix_status_t */
#define PMIX_SORTED_PROC_ARRAY                  "pmix.sorted.parr"          /* bool */

/* ---- Event handlers and notification ---- */
#define PMIX_EVENT_HDLR_NAME                    "pmix.evname"               /* char* */
#define PMIX_EVENT_HDLR_FIRST                   "pmix.evfirst"              /* bool */
#define PMIX_EVENT_HDLR_LAST                    "pmix.evlast"               /* bool */
#define PMIX_EVENT_HDLR_FIRST_IN_CATEGORY       "pmix.evfirstcat"           /* bool */
#define PMIX_EVENT_HDLR_LAST_IN_CATEGORY        "pmix.evlastcat"            /* bool */
#define PMIX_EVENT_HDLR_BEFORE                  "pmix.evbefore"             /* char* */
#define PMIX_EVENT_HDLR_AFTER                   "pmix.evafter"              /* char* */
#define PMIX_EVENT_HDLR_PREPEND                 "pmix.evprepend"            /* bool */
#define PMIX_EVENT_HDLR_APPEND                  "pmix.evappend"             /* bool */
#define PMIX_EVENT_CUSTOM_RANGE                 "pmix.evrange"              /* pmix_data_array_t* */
#define PMIX_EVENT_AFFECTED_PROC                "pmix.evproc"               /* pmix_proc_t* */
#define PMIX_EVENT_AFFECTED_PROCS               "pmix.evaffected"           /* pmix_data_array_t* */
#define PMIX_EVENT_NON_DEFAULT                  "pmix.evnondef"             /* bool */
#define PMIX_EVENT_RETURN_OBJECT                "pmix.evobject"             /* void* */
#define PMIX_EVENT_DO_NOT_CACHE                 "pmix.evnocache"            /* bool */
#define PMIX_EVENT_SILENT_TERMINATION           "pmix.evsilentterm"         /* bool */
#define PMIX_EVENT_PROXY                        "pmix.evproxy"              /* pmix_proc_t* */
#define PMIX_EVENT_TEXT_MESSAGE                 "pmix.evtext"               /* char* */
#define PMIX_EVENT_TIMESTAMP                    "pmix.evtstamp"             /* time_t */
#define PMIX_EVENT_ONESHOT                      "pmix.evone"                /* bool */

/* ---- Fault tolerance ---- */
#define PMIX_EVENT_TERMINATE_SESSION            "pmix.evterm.sess"          /* bool */
#define PMIX_EVENT_TERMINATE_JOB                "pmix.evterm.job"           /* bool */
#define PMIX_EVENT_TERMINATE_NODE               "pmix.evterm.node"          /* bool */
#define PMIX_EVENT_TERMINATE_PROC               "pmix.evterm.proc"          /* bool */
#define PMIX_EVENT_ACTION_TIMEOUT               "pmix.evtimeout"            /* int */

/* ---- Spawn directives ---- */
#define PMIX_PERSONALITY                        "pmix.pers"                 /* char* */
#define PMIX_HOST                               "pmix.host"                 /* char* */
#define PMIX_HOSTFILE                           "pmix.hostfile"             /* char* */
#define PMIX_ADD_HOST                           "pmix.addhost"              /* char* */
#define PMIX_ADD_HOSTFILE                       "pmix.addhostfile"          /* char* */
#define PMIX_PREFIX                             "pmix.prefix"               /* char* */
#define PMIX_WDIR                               "pmix.wdir"                 /* char* */
#define PMIX_WDIR_USER_SPECIFIED                "pmix.wdir.user"            /* bool */
#define PMIX_DISPLAY_MAP                        "pmix.dispmap"              /* bool */
#define PMIX_DISPLAY_MAP_DETAILED               "pmix.dispmapdet"           /* bool */
#define PMIX_DISPLAY_ALLOCATION                 "pmix.dispalloc"            /* bool */
#define PMIX_DISPLAY_TOPOLOGY                   "pmix.disptopo"             /* char* */
#define PMIX_PPR                                "pmix.ppr"                  /* char* */
#define PMIX_MAPBY                              "pmix.mapby"                /* char* */
#define PMIX_RANKBY                             "pmix.rankby"               /* char* */
#define PMIX_BINDTO                             "pmix.bindto"               /* char* */
#define PMIX_PRELOAD_BIN                        "pmix.preloadbin"           /* bool */
#define PMIX_PRELOAD_FILES                      "pmix.preloadfiles"         /* char* */
#define PMIX_STDIN_TGT                          "pmix.stdin"                /* pmix_proc_t* */
#define PMIX_DEBUGGER_DAEMONS                   "pmix.debugger"             /* bool */
#define PMIX_COSPAWN_APP                        "pmix.cospawn"              /* bool */
#define PMIX_COLOCATE_PROCS                     "pmix.colproc"              /* pmix_data_array_t* */
#define PMIX_COLOCATE_NPERPROC                  "pmix.colnum.proc"          /* uint16_t */
#define PMIX_COLOCATE_NPERNODE                  "pmix.colnum.node"          /* uint16_t */
#define PMIX_SET_SESSION_CWD                    "pmix.ssncwd"               /* bool */
#define PMIX_INDEX_ARGV                         "pmix.indxargv"             /* bool */
#define PMIX_CPUS_PER_PROC                      "pmix.cpuperproc"           /* uint32_t */
#define PMIX_NO_PROCS_ON_HEAD                   "pmix.nolocal"              /* bool */
#define PMIX_NO_OVERSUBSCRIBE                   "pmix.noover"               /* bool */
#define PMIX_REPORT_BINDINGS                    "pmix.repbind"              /* bool */
#define PMIX_CPU_LIST                           "pmix.cpulist"              /* char* */
#define PMIX_JOB_RECOVERABLE                    "pmix.recover"              /* bool */
#define PMIX_JOB_CONTINUOUS                     "pmix.continuous"           /* bool */
#define PMIX_MAX_RESTARTS                       "pmix.maxrestarts"          /* uint32_t */
#define PMIX_FWD_STDIN                          "pmix.fwd.stdin"            /* bool */
#define PMIX_FWD_STDOUT                         "pmix.fwd.stdout"           /* bool */
#define PMIX_FWD_STDERR                         "pmix.fwd.stderr"           /* bool */
#define PMIX_FWD_STDDIAG                        "pmix.fwd.stddiag"          /* bool */
#define PMIX_SPAWN_TOOL                         "pmix.spwn.tool"            /* bool */
#define PMIX_CMD_LINE                           "pmix.cmd.line"             /* char* */
#define PMIX_FORKEXEC_AGENT                     "pmix.fe.agnt"              /* char* */
#define PMIX_JOB_TIMEOUT                        "pmix.job.time"             /* int */
#define PMIX_SPAWN_TIMEOUT                      "pmix.sp.time"              /* int */
#define PMIX_TIMEOUT_STACKTRACES                "pmix.tim.stack"            /* bool */
#define PMIX_TIMEOUT_REPORT_STATE               "pmix.tim.state"            /* bool */
#define PMIX_APP_ARGV                           "pmix.app.argv"             /* char* */
#define PMIX_NOTIFY_JOB_EVENTS                  "pmix.note.jev"             /* bool */
#define PMIX_NOTIFY_PROC_TERMINATION            "pmix.noteproc"             /* bool */
#define PMIX_NOTIFY_PROC_ABNORMAL_TERMINATION   "pmix.noteabproc"           /* bool */
#define PMIX_ENVARS_HARVESTED                   "pmix.evar.hvstd"           /* bool */
#define PMIX_RUNTIME_OPTIONS                    "pmix.runopt"               /* char* */
#define PMIX_ABORT_NON_ZERO_TERM                "pmix.abnz"                 /* bool */
#define PMIX_DO_NOT_LAUNCH                      "pmix.dnl"                  /* bool */
#define PMIX_SHOW_LAUNCH_PROGRESS               "pmix.showprog"             /* bool */
#define PMIX_AGGREGATE_HELP                     "pmix.agg.help"             /* bool */
#define PMIX_REPORT_CHILD_SEP                   "pmix.rptchildsep"          /* bool */
/* Later than OpenPMIx 4.2.2 (PMIx v5 standard, OpenPMIx master): */
#define PMIX_SPAWN_CHILD_SEP                    "pmix.spchildsep"           /* bool */
#define PMIX_SPAWN_TARGET                       "pmix.spwn.tgt"             /* char* PMIX_ALLOC_ID, or data array of them */

/* ---- Query keys (type is that of the answer) ---- */
#define PMIX_QUERY_SUPPORTED_KEYS               "pmix.qry.keys"             /* char* */
#define PMIX_QUERY_NAMESPACES                   "pmix.qry.ns"               /* char* */
#define PMIX_QUERY_NAMESPACE_INFO               "pmix.qry.nsinfo"           /* pmix_data_array_t* */
#define PMIX_QUERY_JOB_STATUS                   "pmix.qry.jst"              /* pmix_status_t */
#define PMIX_QUERY_QUEUE_LIST                   "pmix.qry.qlst"             /* char* */
#define PMIX_QUERY_QUEUE_STATUS                 "pmix.qry.qst"              /* pmix_data_array_t* */
#define PMIX_QUERY_PROC_TABLE                   "pmix.qry.ptable"           /* pmix_data_array_t* */
#define PMIX_QUERY_LOCAL_PROC_TABLE             "pmix.qry.lptable"          /* pmix_data_array_t* */
#define PMIX_QUERY_AUTHORIZATIONS               "pmix.qry.auths"            /* pmix_data_array_t* */
#define PMIX_QUERY_SPAWN_SUPPORT                "pmix.qry.spawn"            /* char* */
#define PMIX_QUERY_DEBUG_SUPPORT                "pmix.qry.debug"            /* char* */
#define PMIX_QUERY_MEMORY_USAGE                 "pmix.qry.mem"              /* pmix_data_array_t* */
#define PMIX_QUERY_ALLOC_STATUS                 "pmix.query.alloc"          /* char* */
#define PMIX_TIME_REMAINING                     "pmix.time.remaining"       /* uint32_t */
#define PMIX_QUERY_NUM_PSETS                    "pmix.qry.psetnum"          /* size_t */
#define PMIX_QUERY_PSET_NAMES                   "pmix.qry.psets"            /* char* */
#define PMIX_QUERY_PSET_MEMBERSHIP              "pmix.qry.pmems"            /* pmix_data_array_t* */
#define PMIX_QUERY_NUM_GROUPS                   "pmix.qry.pgrpnum"          /* size_t */
#define PMIX_QUERY_GROUP_NAMES                  "pmix.qry.pgrp"             /* pmix_data_array_t* */
#define PMIX_QUERY_GROUP_MEMBERSHIP             "pmix.qry.pgrpmems"         /* pmix_data_array_t* */
#define PMIX_QUERY_ATTRIBUTE_SUPPORT            "pmix.qry.attrs"            /* pmix_data_array_t* */
#define PMIX_CLIENT_FUNCTIONS                   "pmix.client.fns"           /* char* */
#define PMIX_SERVER_FUNCTIONS                   "pmix.srvr.fns"             /* char* */
#define PMIX_TOOL_FUNCTIONS                     "pmix.tool.fns"             /* char* */
#define PMIX_HOST_FUNCTIONS                     "pmix.host.fns"             /* char* */
#define PMIX_QUERY_AVAIL_SERVERS                "pmix.qry.asrvrs"           /* pmix_data_array_t* */
#define PMIX_QUERY_QUALIFIERS                   "pmix.qry.quals"            /* pmix_data_array_t* */
#define PMIX_QUERY_RESULTS                      "pmix.qry.res"              /* pmix_data_array_t* */

/* ---- Query qualifiers ---- */
#define PMIX_QUERY_REFRESH_CACHE                "pmix.qry.rfsh"             /* bool */
#define PMIX_QUERY_LOCAL_ONLY                   "pmix.qry.local"            /* bool */
#define PMIX_QUERY_REPORT_AVG                   "pmix.qry.avg"              /* bool */
#define PMIX_QUERY_REPORT_MINMAX                "pmix.qry.minmax"           /* bool */
#define PMIX_CLIENT_ATTRIBUTES                  "pmix.client.attrs"         /* char* */
#define PMIX_SERVER_ATTRIBUTES                  "pmix.srvr.attrs"           /* char* */
#define PMIX_HOST_ATTRIBUTES                    "pmix.host.attrs"           /* char* */
#define PMIX_TOOL_ATTRIBUTES                    "pmix.tool.attrs"           /* char* */
#define PMIX_QUERY_SUPPORTED_QUALIFIERS         "pmix.qry.quals"            /* bool */

/* ---- Get: retrieval realms ---- */
#define PMIX_SESSION_INFO                       "pmix.ssn.info"             /* bool */
#define PMIX_JOB_INFO                           "pmix.job.info"             /* bool */
#define PMIX_APP_INFO                           "pmix.app.info"             /* bool */
#define PMIX_NODE_INFO                          "pmix.node.info"            /* bool */

/* ---- Information storage ---- */
#define PMIX_SESSION_INFO_ARRAY                 "pmix.ssn.arr"              /* pmix_data_array_t* */
#define PMIX_JOB_INFO_ARRAY                     "pmix.job.arr"              /* pmix_data_array_t* */
#define PMIX_APP_INFO_ARRAY                     "pmix.app.arr"              /* pmix_data_array_t* */
#define PMIX_PROC_INFO_ARRAY                    "pmix.pdata"                /* pmix_data_array_t* */
#define PMIX_NODE_INFO_ARRAY                    "pmix.node.arr"             /* pmix_data_array_t* */
#define PMIX_SERVER_INFO_ARRAY                  "pmix.srv.arr"              /* pmix_data_array_t* */

/* ---- Logging ---- */
#define PMIX_LOG_SOURCE                         "pmix.log.source"           /* pmix_proc_t* */
#define PMIX_LOG_STDERR                         "pmix.log.stderr"           /* char* */
#define PMIX_LOG_STDOUT                         "pmix.log.stdout"           /* char* */
#define PMIX_LOG_SYSLOG                         "pmix.log.syslog"           /* char* */
#define PMIX_LOG_LOCAL_SYSLOG                   "pmix.log.lsys"             /* char* */
#define PMIX_LOG_GLOBAL_SYSLOG                  "pmix.log.gsys"             /* char* */
#define PMIX_LOG_SYSLOG_PRI                     "pmix.log.syspri"           /* int */
#define PMIX_LOG_TIMESTAMP                      "pmix.log.tstmp"            /* time_t */
#define PMIX_LOG_GENERATE_TIMESTAMP             "pmix.log.gtstmp"           /* bool */
#define PMIX_LOG_TAG_OUTPUT                     "pmix.log.tag"              /* bool */
#define PMIX_LOG_TIMESTAMP_OUTPUT               "pmix.log.tsout"            /* bool */
#define PMIX_LOG_XML_OUTPUT                     "pmix.log.xml"              /* bool */
#define PMIX_LOG_ONCE                           "pmix.log.once"             /* bool */
#define PMIX_LOG_MSG                            "pmix.log.msg"              /* pmix_byte_object_t */
#define PMIX_LOG_KEY                            "pmix.log.key"              /* char* */
#define PMIX_LOG_VAL                            "pmix.log.val"              /* char* */
#define PMIX_LOG_AGG                            "pmix.log.agg"              /* bool */
#define PMIX_LOG_EMAIL                          "pmix.log.email"            /* pmix_data_array_t* */
#define PMIX_LOG_EMAIL_ADDR                     "pmix.log.emaddr"           /* char* */
#define PMIX_LOG_EMAIL_SENDER_ADDR              "pmix.log.emfaddr"          /* char* */
#define PMIX_LOG_EMAIL_SUBJECT                  "pmix.log.emsub"            /* char* */
#define PMIX_LOG_EMAIL_MSG                      "pmix.log.emmsg"            /* char* */
#define PMIX_LOG_EMAIL_SERVER                   "pmix.log.esrvr"            /* char* */
#define PMIX_LOG_EMAIL_SRVR_PORT                "pmix.log.esrvrprt"         /* int32_t */
#define PMIX_LOG_GLOBAL_DATASTORE               "pmix.log.gstore"           /* bool */
#define PMIX_LOG_JOB_RECORD                     "pmix.log.jrec"             /* bool */
#define PMIX_LOG_PROC_TERMINATION               "pmix.logproc"              /* bool */
#define PMIX_LOG_PROC_ABNORMAL_TERMINATION      "pmix.logabproc"            /* bool */
#define PMIX_LOG_JOB_EVENTS                     "pmix.log.jev"              /* bool */
#define PMIX_LOG_COMPLETION                     "pmix.logcomp"              /* bool */

/* ---- Debugger support ---- */
#define PMIX_DEBUG_STOP_ON_EXEC                 "pmix.dbg.exec"             /* varies */
#define PMIX_DEBUG_STOP_IN_INIT                 "pmix.dbg.init"             /* varies */
#define PMIX_DEBUG_STOP_IN_APP                  "pmix.dbg.notify"           /* varies */
#define PMIX_BREAKPOINT                         "pmix.brkpnt"               /* char* */
#define PMIX_DEBUG_TARGET                       "pmix.dbg.tgt"              /* pmix_proc_t* */
#define PMIX_DEBUG_DAEMONS_PER_PROC             "pmix.dbg.dpproc"           /* uint16_t */
#define PMIX_DEBUG_DAEMONS_PER_NODE             "pmix.dbg.dpnd"             /* uint16_t */

/* ---- Resource manager identity ---- */
#define PMIX_RM_NAME                            "pmix.rm.name"              /* char* */
#define PMIX_RM_VERSION                         "pmix.rm.version"           /* char* */

/* ---- Environment variable directives ---- */
#define PMIX_SET_ENVAR                          "pmix.envar.set"            /* pmix_envar_t* */
#define PMIX_ADD_ENVAR                          "pmix.envar.add"            /* pmix_envar_t* */
#define PMIX_UNSET_ENVAR                        "pmix.envar.unset"          /* char* */
#define PMIX_PREPEND_ENVAR                      "pmix.envar.prepnd"         /* pmix_envar_t* */
#define PMIX_APPEND_ENVAR                       "pmix.envar.appnd"          /* pmix_envar_t* */
#define PMIX_FIRST_ENVAR                        "pmix.envar.first"          /* pmix_envar_t* */

/* ---- Allocation requests ---- */
#define PMIX_ALLOC_REQ_ID                       "pmix.alloc.reqid"          /* char* */
#define PMIX_ALLOC_ID                           "pmix.alloc.id"             /* char* */
#define PMIX_ALLOC_NUM_NODES                    "pmix.alloc.nnodes"         /* uint64_t */
#define PMIX_ALLOC_NODE_LIST                    "pmix.alloc.nlist"          /* char* */
#define PMIX_ALLOC_NUM_CPUS                     "pmix.alloc.ncpus"          /* uint64_t */
#define PMIX_ALLOC_NUM_CPU_LIST                 "pmix.alloc.ncpulist"       /* char* */
#define PMIX_ALLOC_CPU_LIST                     "pmix.alloc.cpulist"        /* char* */
#define PMIX_ALLOC_MEM_SIZE                     "pmix.alloc.msize"          /* float */
#define PMIX_ALLOC_FABRIC                       "pmix.alloc.net"            /* pmix_data_array_t* */
#define PMIX_ALLOC_FABRIC_ID                    "pmix.alloc.netid"          /* char* */
#define PMIX_ALLOC_BANDWIDTH                    "pmix.alloc.bw"             /* float */
#define PMIX_ALLOC_FABRIC_QOS                   "pmix.alloc.netqos"         /* char* */
#define PMIX_ALLOC_TIME                         "pmix.alloc.time"           /* uint32_t */
#define PMIX_ALLOC_FABRIC_TYPE                  "pmix.alloc.nettype"        /* char* */
#define PMIX_ALLOC_FABRIC_PLANE                 "pmix.alloc.netplane"       /* char* */
#define PMIX_ALLOC_FABRIC_ENDPTS                "pmix.alloc.endpts"         /* size_t */
#define PMIX_ALLOC_FABRIC_ENDPTS_NODE           "pmix.alloc.endpts.nd"      /* size_t */
#define PMIX_ALLOC_FABRIC_SEC_KEY               "pmix.alloc.nsec"           /* pmix_byte_object_t */
#define PMIX_ALLOC_QUEUE                        "pmix.alloc.queue"          /* char* */

/* ---- Job control ---- */
#define PMIX_JOB_CTRL_ID                        "pmix.jctrl.id"             /* char* */
#define PMIX_JOB_CTRL_PAUSE                     "pmix.jctrl.pause"          /* bool */
#define PMIX_JOB_CTRL_RESUME                    "pmix.jctrl.resume"         /* bool */
#define PMIX_JOB_CTRL_CANCEL                    "pmix.jctrl.cancel"         /* char* */
#define PMIX_JOB_CTRL_KILL                      "pmix.jctrl.kill"           /* bool */
#define PMIX_JOB_CTRL_RESTART                   "pmix.jctrl.restart"        /* char* */
#define PMIX_JOB_CTRL_CHECKPOINT                "pmix.jctrl.ckpt"           /* char* */
#define PMIX_JOB_CTRL_CHECKPOINT_EVENT          "pmix.jctrl.ckptev"         /* bool */
#define PMIX_JOB_CTRL_CHECKPOINT_SIGNAL         "pmix.jctrl.ckptsig"        /* int */
#define PMIX_JOB_CTRL_CHECKPOINT_TIMEOUT        "pmix.jctrl.ckptsig"        /* int */
#define PMIX_JOB_CTRL_CHECKPOINT_METHOD         "pmix.jctrl.ckmethod"       /* pmix_data_array_t* */
#define PMIX_JOB_CTRL_SIGNAL                    "pmix.jctrl.sig"            /* int */
#define PMIX_JOB_CTRL_PROVISION                 "pmix.jctrl.pvn"            /* char* */
#define PMIX_JOB_CTRL_PROVISION_IMAGE           "pmix.jctrl.pvnimg"         /* char* */
#define PMIX_JOB_CTRL_PREEMPTIBLE               "pmix.jctrl.preempt"        /* bool */
#define PMIX_JOB_CTRL_TERMINATE                 "pmix.jctrl.term"           /* bool */
#define PMIX_REGISTER_CLEANUP                   "pmix.reg.cleanup"          /* char* */
#define PMIX_REGISTER_CLEANUP_DIR               "pmix.reg.cleanupdir"       /* char* */
#define PMIX_CLEANUP_RECURSIVE                  "pmix.clnup.recurse"        /* bool */
#define PMIX_CLEANUP_EMPTY                      "pmix.clnup.empty"          /* bool */
#define PMIX_CLEANUP_IGNORE                     "pmix.clnup.ignore"         /* char* */
#define PMIX_CLEANUP_LEAVE_TOPDIR               "pmix.clnup.lvtop"          /* bool */

/* ---- Monitoring ---- */
#define PMIX_MONITOR_ID                         "pmix.monitor.id"           /* char* */
#define PMIX_MONITOR_CANCEL                     "pmix.monitor.cancel"       /* char* */
#define PMIX_MONITOR_APP_CONTROL                "pmix.monitor.appctrl"      /* bool */
#define PMIX_MONITOR_HEARTBEAT                  "pmix.monitor.mbeat"        /* bool */
#define PMIX_SEND_HEARTBEAT                     "pmix.monitor.beat"         /* bool */
#define PMIX_MONITOR_HEARTBEAT_TIME             "pmix.monitor.btime"        /* uint32_t */
#define PMIX_MONITOR_HEARTBEAT_DROPS            "pmix.monitor.bdrop"        /* uint32_t */
#define PMIX_MONITOR_FILE                       "pmix.monitor.fmon"         /* char* */
#define PMIX_MONITOR_FILE_SIZE                  "pmix.monitor.fsize"        /* bool */
#define PMIX_MONITOR_FILE_ACCESS                "pmix.monitor.faccess"      /* char* */
#define PMIX_MONITOR_FILE_MODIFY                "pmix.monitor.fmod"         /* char* */
#define PMIX_MONITOR_FILE_CHECK_TIME            "pmix.monitor.ftime"        /* uint32_t */
#define PMIX_MONITOR_FILE_DROPS                 "pmix.monitor.fdrop"        /* uint32_t */

/* ---- Security and credentials ---- */
#define PMIX_CRED_TYPE                          "pmix.sec.ctype"            /* char* */
#define PMIX_CRYPTO_KEY                         "pmix.sec.key"              /* pmix_byte_object_t */

/* ---- I/O forwarding ---- */
#define PMIX_IOF_CACHE_SIZE                     "pmix.iof.csize"            /* uint32_t */
#define PMIX_IOF_DROP_OLDEST                    "pmix.iof.old"              /* bool */
#define PMIX_IOF_DROP_NEWEST                    "pmix.iof.new"              /* bool */
#define PMIX_IOF_BUFFERING_SIZE                 "pmix.iof.bsize"            /* uint32_t */
#define PMIX_IOF_BUFFERING_TIME                 "pmix.iof.btime"            /* uint32_t */
#define PMIX_IOF_COMPLETE                       "pmix.iof.cmp"              /* bool */
#define PMIX_IOF_PUSH_STDIN                     "pmix.iof.stdin"            /* bool */
#define PMIX_IOF_TAG_OUTPUT                     "pmix.iof.tag"              /* bool */
#define PMIX_IOF_TAG_DETAILED_OUTPUT            "pmix.iof.tagdet"           /* bool */
#define PMIX_IOF_TAG_FULLNAME_OUTPUT            "pmix.iof.tagfull"          /* bool */
#define PMIX_IOF_RANK_OUTPUT                    "pmix.iof.rank"             /* bool */
#define PMIX_IOF_TIMESTAMP_OUTPUT               "pmix.iof.ts"               /* bool */
#define PMIX_IOF_MERGE_STDERR_STDOUT            "pmix.iof.mrg"              /* bool */
#define PMIX_IOF_XML_OUTPUT                     "pmix.iof.xml"              /* bool */
#define PMIX_IOF_OUTPUT_TO_FILE                 "pmix.iof.file"             /* char* */
#define PMIX_IOF_FILE_PATTERN                   "pmix.iof.fpt"              /* bool */
#define PMIX_IOF_OUTPUT_TO_DIRECTORY            "pmix.iof.dir"              /* char* */
#define PMIX_IOF_FILE_ONLY                      "pmix.iof.fonly"            /* bool */
#define PMIX_IOF_COPY                           "pmix.iof.cpy"              /* bool */
#define PMIX_IOF_REDIRECT                       "pmix.iof.redir"            /* bool */
#define PMIX_IOF_LOCAL_OUTPUT                   "pmix.iof.local"            /* bool */
#define PMIX_IOF_OUTPUT_RAW                     "pmix.iof.raw"              /* bool */

/* ---- Application setup ---- */
#define PMIX_SETUP_APP_ENVARS                   "pmix.setup.env"            /* bool */
#define PMIX_SETUP_APP_NONENVARS                "pmix.setup.nenv"           /* bool */
#define PMIX_SETUP_APP_ALL                      "pmix.setup.all"            /* bool */

/* ---- Process groups ---- */
#define PMIX_GROUP_ID                           "pmix.grp.id"               /* char* */
#define PMIX_GROUP_LEADER                       "pmix.grp.ldr"              /* bool */
#define PMIX_GROUP_OPTIONAL                     "pmix.grp.opt"              /* bool */
#define PMIX_GROUP_NOTIFY_TERMINATION           "pmix.grp.notterm"          /* bool */
#define PMIX_GROUP_FT_COLLECTIVE                "pmix.grp.ftcoll"           /* bool */
#define PMIX_GROUP_MEMBERSHIP                   "pmix.grp.mbrs"             /* pmix_data_array_t* */
#define PMIX_GROUP_ASSIGN_CONTEXT_ID            "pmix.grp.actxid"           /* bool */
#define PMIX_GROUP_CONTEXT_ID                   "pmix.grp.ctxid"            /* size_t */
#define PMIX_GROUP_LOCAL_ONLY                   "pmix.grp.lcl"              /* bool */
#define PMIX_GROUP_ENDPT_DATA                   "pmix.grp.endpt"            /* pmix_byte_object_t */
#define PMIX_GROUP_NAMES                        "pmix.pgrp.nm"              /* pmix_data_array_t* */
#define PMIX_GROUP_INFO                         "pmix.grp.info"             /* pmix_data_array_t* */
#define PMIX_GROUP_LOCAL_CID                    "pmix.grp.lclid"            /* size_t */
#define PMIX_GROUP_ADD_MEMBERS                  "pmix.grp.add"              /* pmix_data_array_t* */
#define PMIX_GROUP_BOOTSTRAP                    "pmix.grp.btstrp"           /* size_t: number of leaders (OpenPMIx 5) */

/* ---- Storage systems ---- */
#define PMIX_QUERY_STORAGE_LIST                 "pmix.strg.list"            /* char* */
#define PMIX_STORAGE_CAPACITY_LIMIT             "pmix.strg.cap"             /* uint64_t */
#define PMIX_STORAGE_OBJECT_LIMIT               "pmix.strg.obj"             /* uint64_t */
#define PMIX_STORAGE_ID                         "pmix.strg.id"              /* char* */
#define PMIX_STORAGE_PATH                       "pmix.strg.path"            /* char* */
#define PMIX_STORAGE_TYPE                       "pmix.strg.type"            /* char* */
#define PMIX_STORAGE_ACCESSIBILITY              "pmix.strg.access"          /* pmix_storage_accessibility_t */
#define PMIX_STORAGE_ACCESS_TYPE                "pmix.strg.atype"           /* pmix_storage_access_type_t */
#define PMIX_STORAGE_BW_CUR                     "pmix.strg.bwcur"           /* double */
#define PMIX_STORAGE_BW_MAX                     "pmix.strg.bwmax"           /* double */
#define PMIX_STORAGE_CAPACITY_USED              "pmix.strg.capuse"          /* double */
#define PMIX_STORAGE_IOPS_CUR                   "pmix.strg.iopscur"         /* double */
#define PMIX_STORAGE_IOPS_MAX                   "pmix.strg.iopsmax"         /* double */
#define PMIX_STORAGE_MEDIUM                     "pmix.strg.medium"          /* pmix_storage_medium_t */
#define PMIX_STORAGE_MINIMAL_XFER_SIZE          "pmix.strg.minxfer"         /* double */
#define PMIX_STORAGE_OBJECTS_USED               "pmix.strg.objuse"          /* uint64_t */
#define PMIX_STORAGE_PERSISTENCE                "pmix.strg.persist"         /* pmix_storage_persistence_t */
#define PMIX_STORAGE_SUGGESTED_XFER_SIZE        "pmix.strg.sxfer"           /* double */
#define PMIX_STORAGE_VERSION                    "pmix.strg.ver"             /* char* */

/* ---- Fabrics and devices ---- */
#define PMIX_FABRIC_COST_MATRIX                 "pmix.fab.cm"               /* pointer */
#define PMIX_FABRIC_GROUPS                      "pmix.fab.grps"             /* char* */
#define PMIX_FABRIC_VENDOR                      "pmix.fab.vndr"             /* char* */
#define PMIX_FABRIC_IDENTIFIER                  "pmix.fab.id"               /* char* */
#define PMIX_FABRIC_INDEX                       "pmix.fab.idx"              /* size_t */
#define PMIX_FABRIC_COORDINATES                 "pmix.fab.coord"            /* pmix_data_array_t* */
#define PMIX_FABRIC_DEVICE_VENDORID             "pmix.fabdev.vendid"        /* char* */
#define PMIX_FABRIC_NUM_DEVICES                 "pmix.fab.nverts"           /* size_t */
#define PMIX_FABRIC_DIMS                        "pmix.fab.dims"             /* uint32_t */
#define PMIX_FABRIC_PLANE                       "pmix.fab.plane"            /* char* */
#define PMIX_FABRIC_SWITCH                      "pmix.fab.switch"           /* char* */
#define PMIX_FABRIC_ENDPT                       "pmix.fab.endpt"            /* pmix_data_array_t* */
#define PMIX_FABRIC_SHAPE                       "pmix.fab.shape"            /* pmix_data_array_t* */
#define PMIX_FABRIC_SHAPE_STRING                "pmix.fab.shapestr"         /* char* */
#define PMIX_SWITCH_PEERS                       "pmix.speers"               /* char* */
#define PMIX_FABRIC_DEVICE                      "pmix.fabdev"               /* pmix_data_array_t* */
#define PMIX_FABRIC_DEVICES                     "pmix.fab.devs"             /* pmix_data_array_t* */
#define PMIX_FABRIC_DEVICE_NAME                 "pmix.fabdev.nm"            /* char* */
#define PMIX_FABRIC_DEVICE_INDEX                "pmix.fabdev.idx"           /* uint32_t */
#define PMIX_FABRIC_DEVICE_VENDOR               "pmix.fabdev.vndr"          /* char* */
#define PMIX_FABRIC_DEVICE_BUS_TYPE             "pmix.fabdev.btyp"          /* char* */
#define PMIX_FABRIC_DEVICE_DRIVER               "pmix.fabdev.driver"        /* char* */
#define PMIX_FABRIC_DEVICE_FIRMWARE             "pmix.fabdev.fmwr"          /* char* */
#define PMIX_FABRIC_DEVICE_ADDRESS              "pmix.fabdev.addr"          /* char* */
#define PMIX_FABRIC_DEVICE_COORDINATES          "pmix.fab.coord"            /* pmix_geometry_t */
#define PMIX_FABRIC_DEVICE_MTU                  "pmix.fabdev.mtu"           /* size_t */
#define PMIX_FABRIC_DEVICE_SPEED                "pmix.fabdev.speed"         /* size_t */
#define PMIX_FABRIC_DEVICE_STATE                "pmix.fabdev.state"         /* pmix_link_state_t */
#define PMIX_FABRIC_DEVICE_TYPE                 "pmix.fabdev.type"          /* char* */
#define PMIX_FABRIC_DEVICE_PCI_DEVID            "pmix.fabdev.pcidevid"      /* char* */

/* ---- Device distances ---- */
#define PMIX_DEVICE_DISTANCES                   "pmix.dev.dist"             /* pmix_data_array_t* */
#define PMIX_DEVICE_TYPE                        "pmix.dev.type"             /* pmix_device_type_t */
#define PMIX_DEVICE_ID                          "pmix.dev.id"               /* char* */

/* ---- Attribute self-description ---- */
#define PMIX_MAX_VALUE                          "pmix.descr.maxval"         /* varies */
#define PMIX_MIN_VALUE                          "pmix.descr.minval"         /* varies */
#define PMIX_ENUM_VALUE                         "pmix.descr.enum"           /* char* */
#define PMIX_QUERY_STABLE_ABI_VERSION           "pmix.qry.stabiver"         /* char* */
#define PMIX_QUERY_PROVISIONAL_ABI_VERSION      "pmix.qry.prabiver"         /* char* */

/* ---- Legacy keys: retired from the standard but still read by older
 *      clients (OpenMPI 4.1 reads pmix.loc, pmix.ltopo, pmix.hwloc*). ---- */
#define PMIX_EVENT_BASE                         "pmix.evbase"               /* struct event_base * */
#define PMIX_TOPOLOGY                           "pmix.topo"                 /* hwloc_topology_t */
#define PMIX_DEBUG_JOB                          "pmix.dbg.job"              /* char* */
#define PMIX_RECONNECT_SERVER                   "pmix.cnct.recon"           /* bool */
#define PMIX_USOCK_DISABLE                      "pmix.usock.disable"        /* bool */
#define PMIX_SOCKET_MODE                        "pmix.sockmode"             /* uint32_t */
#define PMIX_SINGLE_LISTENER                    "pmix.sing.listnr"          /* bool */
#define PMIX_ALLOC_NETWORK                      "pmix.alloc.net"            /* pmix_data_array_t* */
#define PMIX_ALLOC_NETWORK_ID                   "pmix.alloc.netid"          /* char* */
#define PMIX_ALLOC_NETWORK_QOS                  "pmix.alloc.netqos"         /* char* */
#define PMIX_ALLOC_NETWORK_TYPE                 "pmix.alloc.nettype"        /* char* */
#define PMIX_ALLOC_NETWORK_PLANE                "pmix.alloc.netplane"       /* char* */
#define PMIX_ALLOC_NETWORK_ENDPTS               "pmix.alloc.endpts"         /* size_t */
#define PMIX_ALLOC_NETWORK_ENDPTS_NODE          "pmix.alloc.endpts.nd"      /* size_t */
#define PMIX_ALLOC_NETWORK_SEC_KEY              "pmix.alloc.nsec"           /* pmix_byte_object_t */
#define PMIX_PROC_DATA                          "pmix.pdata"                /* pmix_data_array_t* */
#define PMIX_LOCALITY                           "pmix.loc"                  /* uint16_t */
#define PMIX_LOCAL_TOPO                         "pmix.ltopo"                /* char* */
#define PMIX_TOPOLOGY_XML                       "pmix.topo.xml"             /* char* */
#define PMIX_TOPOLOGY_FILE                      "pmix.topo.file"            /* char* */
#define PMIX_TOPOLOGY_SIGNATURE                 "pmix.toposig"              /* char* */
#define PMIX_HWLOC_SHMEM_ADDR                   "pmix.hwlocaddr"            /* size_t */
#define PMIX_HWLOC_SHMEM_SIZE                   "pmix.hwlocsize"            /* size_t */
#define PMIX_HWLOC_SHMEM_FILE                   "pmix.hwlocfile"            /* char* */
#define PMIX_HWLOC_XML_V1                       "pmix.hwlocxml1"            /* char* */
#define PMIX_HWLOC_XML_V2                       "pmix.hwlocxml2"            /* char* */
#define PMIX_HWLOC_SHARE_TOPO                   "pmix.hwlocsh"              /* bool */
#define PMIX_HWLOC_HOLE_KIND                    "pmix.hwlocholek"           /* char* */
#define PMIX_DSTPATH                            "pmix.dstpath"              /* char* */
#define PMIX_COLLECTIVE_ALGO                    "pmix.calgo"                /* char* */
#define PMIX_COLLECTIVE_ALGO_REQD               "pmix.calreqd"              /* bool */
#define PMIX_PROC_BLOB                          "pmix.pblob"                /* pmix_byte_object_t */
#define PMIX_MAP_BLOB                           "pmix.mblob"                /* pmix_byte_object_t */
#define PMIX_MAPPER                             "pmix.mapper"               /* char* */
#define PMIX_NON_PMI                            "pmix.nonpmi"               /* bool */
#define PMIX_PROC_URI                           "pmix.puri"                 /* char* */
#define PMIX_ARCH                               "pmix.arch"                 /* uint32_t */
#define PMIX_DEBUG_JOB_DIRECTIVES               "pmix.dbg.jdirs"            /* pmix_data_array_t* */
#define PMIX_DEBUG_APP_DIRECTIVES               "pmix.dbg.adirs"            /* pmix_data_array_t* */
#define PMIX_EVENT_NO_TERMINATION               "pmix.evnoterm"             /* bool */
#define PMIX_EVENT_WANT_TERMINATION             "pmix.evterm"               /* bool */
#define PMIX_TAG_OUTPUT                         "pmix.tagout"               /* bool */
#define PMIX_TIMESTAMP_OUTPUT                   "pmix.tsout"                /* bool */
#define PMIX_MERGE_STDERR_STDOUT                "pmix.mergeerrout"          /* bool */
#define PMIX_OUTPUT_TO_FILE                     "pmix.outfile"              /* char* */
#define PMIX_OUTPUT_TO_DIRECTORY                "pmix.outdir"               /* char* */
#define PMIX_OUTPUT_NOCOPY                      "pmix.nocopy"               /* bool */
#define PMIX_GDS_MODULE                         "pmix.gds.mod"              /* char* */
#define PMIX_BFROPS_MODULE                      "pmix.bfrops.mod"           /* char* */
#define PMIX_PNET_SETUP_APP                     "pmix.pnet.setapp"          /* pmix_byte_object_t */
#define PMIX_IOF_STOP                           "pmix.iof.stop"             /* bool */
#define PMIX_NOTIFY_LAUNCH                      "pmix.note.lnch"            /* bool */


/* =========================================================================
 * Structures.  Layouts are ABI: sizes and offsets are pinned by tests/abi.
 * ========================================================================= */

typedef struct pmix_byte_object {
    char *bytes;
    size_t size;
} pmix_byte_object_t;

typedef struct pmix_proc {
    pmix_nspace_t nspace;
    pmix_rank_t rank;
} pmix_proc_t;

typedef struct pmix_proc_info {
    pmix_proc_t proc;
    char *hostname;
    char *executable_name;
    pid_t pid;
    int exit_code;
    pmix_proc_state_t state;
} pmix_proc_info_t;

/* A typed array: 'array' holds 'size' elements of 'type'. */
typedef struct pmix_data_array {
    pmix_data_type_t type;
    size_t size;
    void *array;
} pmix_data_array_t;

/* Buffer for PMIx_Data_pack/unpack; treat the members as opaque. */
typedef struct pmix_data_buffer {
    char *base_ptr;
    char *pack_ptr;
    char *unpack_ptr;
    size_t bytes_allocated;
    size_t bytes_used;
} pmix_data_buffer_t;

typedef struct pmix_coord {
    pmix_coord_view_t view;
    uint32_t *coord;
    size_t dims;
} pmix_coord_t;

/* 'source' names the provider (e.g. "hwloc"); the pointer belongs to it. */
typedef struct pmix_cpuset {
    char *source;
    void *bitmap;
} pmix_cpuset_t;

typedef struct pmix_topology {
    char *source;
    void *topology;
} pmix_topology_t;

typedef struct pmix_geometry {
    size_t fabric;
    char *uuid;
    char *osname;
    pmix_coord_t *coordinates;
    size_t ncoords;
} pmix_geometry_t;

typedef struct pmix_device_distance {
    char *uuid;
    char *osname;
    pmix_device_type_t type;
    uint16_t mindist;
    uint16_t maxdist;
} pmix_device_distance_t;

typedef struct pmix_endpoint {
    char *uuid;
    char *osname;
    pmix_byte_object_t endpt;
} pmix_endpoint_t;

/* An environment variable directive (set/add/prepend/append). */
typedef struct pmix_envar {
    char *envar;
    char *value;
    char separator;
} pmix_envar_t;

/* Statistics samples. */
typedef struct pmix_proc_stats {
    char *node;
    pmix_proc_t proc;
    pid_t pid;
    char *cmd;
    char state;
    struct timeval time;
    float percent_cpu;
    int32_t priority;
    uint16_t num_threads;
    float pss;          /* MBytes */
    float vsize;        /* MBytes */
    float rss;          /* MBytes */
    float peak_vsize;   /* MBytes */
    uint16_t processor;
    struct timeval sample_time;
} pmix_proc_stats_t;

typedef struct pmix_disk_stats {
    char *disk;
    uint64_t num_reads_completed;
    uint64_t num_reads_merged;
    uint64_t num_sectors_read;
    uint64_t milliseconds_reading;
    uint64_t num_writes_completed;
    uint64_t num_writes_merged;
    uint64_t num_sectors_written;
    uint64_t milliseconds_writing;
    uint64_t num_ios_in_progress;
    uint64_t milliseconds_io;
    uint64_t weighted_milliseconds_io;
} pmix_disk_stats_t;

typedef struct pmix_net_stats {
    char *net_interface;
    uint64_t num_bytes_recvd;
    uint64_t num_packets_recvd;
    uint64_t num_recv_errs;
    uint64_t num_bytes_sent;
    uint64_t num_packets_sent;
    uint64_t num_send_errs;
} pmix_net_stats_t;

typedef struct pmix_node_stats {
    char *node;
    float la;           /* load averages: 1, 5, 15 minutes */
    float la5;
    float la15;
    float total_mem;    /* memory figures in MBytes */
    float free_mem;
    float buffers;
    float cached;
    float swap_cached;
    float swap_total;
    float swap_free;
    float mapped;
    struct timeval sample_time;
    pmix_disk_stats_t *diskstats;
    size_t ndiskstats;
    pmix_net_stats_t *netstats;
    size_t nnetstats;
} pmix_node_stats_t;

/* A typed value.  Member order of 'data' is ABI; pointers are owned by
 * the value (PMIx_Value_destruct frees them). */
typedef struct pmix_value {
    pmix_data_type_t type;
    union {
        bool flag;
        uint8_t byte;
        char *string;
        size_t size;
        pid_t pid;
        int integer;
        int8_t int8;
        int16_t int16;
        int32_t int32;
        int64_t int64;
        unsigned int uint;
        uint8_t uint8;
        uint16_t uint16;
        uint32_t uint32;
        uint64_t uint64;
        float fval;
        double dval;
        struct timeval tv;
        time_t time;
        pmix_status_t status;
        pmix_rank_t rank;
        pmix_nspace_t *nspace;
        pmix_proc_t *proc;
        pmix_byte_object_t bo;
        pmix_persistence_t persist;
        pmix_scope_t scope;
        pmix_data_range_t range;
        pmix_proc_state_t state;
        pmix_proc_info_t *pinfo;
        pmix_data_array_t *darray;
        void *ptr;
        pmix_alloc_directive_t adir;
        pmix_envar_t envar;
        pmix_coord_t *coord;
        pmix_link_state_t linkstate;
        pmix_job_state_t jstate;
        pmix_topology_t *topo;
        pmix_cpuset_t *cpuset;
        pmix_locality_t locality;
        pmix_geometry_t *geometry;
        pmix_device_type_t devtype;
        pmix_device_distance_t *devdist;
        pmix_endpoint_t *endpoint;
        pmix_data_buffer_t *dbuf;
        pmix_proc_stats_t *pstats;
        pmix_disk_stats_t *dkstats;
        pmix_net_stats_t *netstats;
        pmix_node_stats_t *ndstats;
    } data;
} pmix_value_t;

/* A key/value pair with directive flags. */
typedef struct pmix_info {
    pmix_key_t key;
    pmix_info_directives_t flags;
    pmix_value_t value;
} pmix_info_t;

/* One answer of PMIx_Lookup. */
typedef struct pmix_pdata {
    pmix_proc_t proc;
    pmix_key_t key;
    pmix_value_t value;
} pmix_pdata_t;

/* One application of a PMIx_Spawn request. */
typedef struct pmix_app {
    char *cmd;
    char **argv;
    char **env;
    char *cwd;
    int maxprocs;
    pmix_info_t *info;
    size_t ninfo;
} pmix_app_t;

/* One PMIx_Query_info request: NULL-terminated keys plus qualifiers. */
typedef struct pmix_query {
    char **keys;
    pmix_info_t *qualifiers;
    size_t nqual;
} pmix_query_t;

/* Attribute registration record (PMIX_REGATTR values). */
typedef struct pmix_regattr_t {
    char *name;
    pmix_key_t string;
    pmix_data_type_t type;
    char **description;
} pmix_regattr_t;

/* Handle of a fabric registration (PMIx_Fabric_register, PMIx_server_register_fabric).
 *
 * Two layouts of the same size, chosen when the program is compiled:
 *  - by default OpenPMIx 4.2.2's: the cost matrix and the vertex count are in info/ninfo
 *    (PMIX_FABRIC_COST_MATRIX, PMIX_FABRIC_NUM_VERTICES, PMIX_FABRIC_PLANE, PMIX_FABRIC_INDEX);
 *  - with PMIXCPP_FABRIC_SEED_LAYOUT defined before the first PMIx header is included (e.g.
 *    -DPMIXCPP_FABRIC_SEED_LAYOUT), the PMIx standard v4.0 scheduler chapter's: `commcost`
 *    (commcost[i][j], the cost from vertex i to vertex j) and `nverts`. The fabric functions are
 *    then mapped to distinct symbols (PMIx_..._seed) so the library knows which layout it fills;
 *    both kinds of program link against the same libpmix.so.2.
 * name, index and module are at the same places in both. */
#ifdef PMIXCPP_FABRIC_SEED_LAYOUT
typedef struct pmix_fabric_s {
    char *name;
    size_t index;
    uint16_t **commcost;
    uint32_t nverts;
    void *module;   /* the library's private state */
} pmix_fabric_t;
#define PMIx_Fabric_register            PMIx_Fabric_register_seed
#define PMIx_Fabric_register_nb         PMIx_Fabric_register_nb_seed
#define PMIx_Fabric_update              PMIx_Fabric_update_seed
#define PMIx_Fabric_update_nb           PMIx_Fabric_update_nb_seed
#define PMIx_Fabric_deregister          PMIx_Fabric_deregister_seed
#define PMIx_Fabric_deregister_nb       PMIx_Fabric_deregister_nb_seed
#define PMIx_server_register_fabric     PMIx_server_register_fabric_seed
#define PMIx_server_deregister_fabric   PMIx_server_deregister_fabric_seed
#define PMIx_server_get_vertex_info     PMIx_server_get_vertex_info_seed
#define PMIx_server_get_index           PMIx_server_get_index_seed
#else
typedef struct pmix_fabric_s {
    char *name;
    size_t index;
    pmix_info_t *info;
    size_t ninfo;
    void *module;   /* the library's private state */
} pmix_fabric_t;
#endif

typedef enum {
    PMIX_FABRIC_REQUEST_INFO,
    PMIX_FABRIC_UPDATE_INFO
} pmix_fabric_operation_t;

/* Result of pmix_check_true. */
typedef enum {
    PMIX_BOOL_TRUE,
    PMIX_BOOL_FALSE,
    PMIX_NON_BOOL
} pmix_boolean_t;

/* =========================================================================
 * Callback signatures of the non-blocking API
 * ========================================================================= */

/* Release a buffer handed to a callback once the callee is done with it. */
typedef void (*pmix_release_cbfunc_t)(void *cbdata);

/* Completion with only a status. */
typedef void (*pmix_op_cbfunc_t)(pmix_status_t status, void *cbdata);

/* Server side: collective or direct-modex data is ready. */
typedef void (*pmix_modex_cbfunc_t)(pmix_status_t status,
                                    const char *data, size_t ndata,
                                    void *cbdata,
                                    pmix_release_cbfunc_t release_fn,
                                    void *release_cbdata);

/* PMIx_Spawn_nb finished; nspace names the new job. */
typedef void (*pmix_spawn_cbfunc_t)(pmix_status_t status,
                                    pmix_nspace_t nspace, void *cbdata);

/* PMIx_Lookup_nb finished. */
typedef void (*pmix_lookup_cbfunc_t)(pmix_status_t status,
                                     pmix_pdata_t data[], size_t ndata,
                                     void *cbdata);

/* Called by an event handler to pass the event on down the chain. */
typedef void (*pmix_event_notification_cbfunc_fn_t)(pmix_status_t status,
                                                    pmix_info_t *results, size_t nresults,
                                                    pmix_op_cbfunc_t cbfunc, void *thiscbdata,
                                                    void *notification_cbdata);

/* An event handler. */
typedef void (*pmix_notification_fn_t)(size_t evhdlr_registration_id,
                                       pmix_status_t status,
                                       const pmix_proc_t *source,
                                       pmix_info_t info[], size_t ninfo,
                                       pmix_info_t *results, size_t nresults,
                                       pmix_event_notification_cbfunc_fn_t cbfunc,
                                       void *cbdata);

/* Handler registration finished; refid identifies the handler. */
typedef void (*pmix_hdlr_reg_cbfunc_t)(pmix_status_t status,
                                       size_t refid,
                                       void *cbdata);
typedef void (*pmix_evhdlr_reg_cbfunc_t)(pmix_status_t status,
                                         size_t refid,
                                         void *cbdata);  /* older name */

/* PMIx_Get_nb finished. */
typedef void (*pmix_value_cbfunc_t)(pmix_status_t status,
                                    pmix_value_t *kv, void *cbdata);

/* Completion that returns an info array (query, allocation, job control...). */
typedef void (*pmix_info_cbfunc_t)(pmix_status_t status,
                                   pmix_info_t *info, size_t ninfo,
                                   void *cbdata,
                                   pmix_release_cbfunc_t release_fn,
                                   void *release_cbdata);

/* PMIx_Get_credential_nb finished. */
typedef void (*pmix_credential_cbfunc_t)(pmix_status_t status,
                                         pmix_byte_object_t *credential,
                                         pmix_info_t info[], size_t ninfo,
                                         void *cbdata);

/* PMIx_Validate_credential_nb finished. */
typedef void (*pmix_validation_cbfunc_t)(pmix_status_t status,
                                         pmix_info_t info[], size_t ninfo,
                                         void *cbdata);

/* PMIx_Compute_distances_nb finished. */
typedef void (*pmix_device_dist_cbfunc_t)(pmix_status_t status,
                                          pmix_device_distance_t *dist,
                                          size_t ndist,
                                          void *cbdata,
                                          pmix_release_cbfunc_t release_fn,
                                          void *release_cbdata);

/* Forwarded output arrives (PMIx_IOF_pull). */
typedef void (*pmix_iof_cbfunc_t)(size_t iofhdlr, pmix_iof_channel_t channel,
                                  pmix_proc_t *source, pmix_byte_object_t *payload,
                                  pmix_info_t info[], size_t ninfo);

/* =========================================================================
 * Exported helpers that the macros below expand to.  Programs compiled
 * against OpenPMIx 4.2.2 import exactly these names from libpmix.so.2.
 * ========================================================================= */

PMIX_EXPORT pmix_status_t PMIx_Value_load(pmix_value_t *val, const void *data,
                                          pmix_data_type_t type);
PMIX_EXPORT pmix_status_t PMIx_Value_unload(pmix_value_t *val, void **data, size_t *sz);
PMIX_EXPORT void PMIx_Value_destruct(pmix_value_t *val);
PMIX_EXPORT pmix_status_t PMIx_Value_xfer(pmix_value_t *dest, const pmix_value_t *src);
PMIX_EXPORT pmix_value_cmp_t PMIx_Value_compare(pmix_value_t *v1, pmix_value_t *v2);
PMIX_EXPORT void PMIx_Data_array_destruct(pmix_data_array_t *d);
PMIX_EXPORT pmix_status_t PMIx_Info_load(pmix_info_t *info, const char *key,
                                         const void *data, pmix_data_type_t type);
PMIX_EXPORT pmix_status_t PMIx_Info_xfer(pmix_info_t *dest, const pmix_info_t *src);
PMIX_EXPORT void *PMIx_Info_list_start(void);
PMIX_EXPORT pmix_status_t PMIx_Info_list_add(void *ptr, const char *key,
                                             const void *value, pmix_data_type_t type);
PMIX_EXPORT pmix_status_t PMIx_Info_list_insert(void *ptr, pmix_info_t *info);
PMIX_EXPORT pmix_status_t PMIx_Info_list_xfer(void *ptr, const pmix_info_t *info);
PMIX_EXPORT pmix_status_t PMIx_Info_list_convert(void *ptr, pmix_data_array_t *par);
PMIX_EXPORT void PMIx_Info_list_release(void *ptr);
PMIX_EXPORT pmix_status_t PMIx_Data_load(pmix_data_buffer_t *buffer,
                                         pmix_byte_object_t *payload);
PMIX_EXPORT pmix_status_t PMIx_Data_unload(pmix_data_buffer_t *buffer,
                                           pmix_byte_object_t *payload);
PMIX_EXPORT void PMIx_Topology_destruct(pmix_topology_t *topo);
PMIX_EXPORT void PMIx_Cpuset_destruct(pmix_cpuset_t *cpuset);

/* =========================================================================
 * Inline helpers.  These never cross the library boundary; they use the C
 * heap so that memory can be freed by either side.
 * ========================================================================= */

static inline void *pmix_malloc(size_t n) { return malloc(n); }
static inline void *pmix_calloc(size_t n, size_t m) { return calloc(n, m); }
static inline void pmix_free(void *m) { free(m); }

/* Copy at most len characters and always terminate (dest holds len+1). */
static inline void pmix_strncpy(char *dest, const char *src, size_t len)
{
    size_t i = 0;
    if (src != NULL) {
        for (; i < len && src[i] != '\0'; ++i) dest[i] = src[i];
    }
    dest[i] = '\0';
}

static inline size_t pmix_bounded_len(const char *s, size_t max)
{
    size_t n = 0;
    if (s == NULL) return 0;
    while (n < max && s[n] != '\0') ++n;
    return n;
}
static inline size_t pmix_keylen(const char *src) { return pmix_bounded_len(src, PMIX_MAX_KEYLEN); }
static inline size_t pmix_nslen(const char *src) { return pmix_bounded_len(src, PMIX_MAX_NSLEN); }

/* strdup is not C99; keep the header strictly conforming. */
static inline char *pmix_hdr_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *copy = (char *)malloc(n);
    if (copy != NULL) memcpy(copy, s, n);
    return copy;
}

/* --- NULL-terminated string arrays ("argv") --- */

static inline int pmix_argv_count(char **argv)
{
    int n = 0;
    if (argv != NULL) {
        while (argv[n] != NULL) ++n;
    }
    return n;
}

static inline void pmix_argv_free(char **argv)
{
    int i;
    if (argv == NULL) return;
    for (i = 0; argv[i] != NULL; ++i) free(argv[i]);
    free(argv);
}

/* Insert a copy of arg at position pos (0 = front, count = back). */
static inline pmix_status_t pmix_hdr_argv_insert(char ***argv, int pos, const char *arg)
{
    int n = pmix_argv_count(*argv), i;
    char *copy = pmix_hdr_strdup(arg);
    char **grown;
    if (copy == NULL) return PMIX_ERR_NOMEM;
    grown = (char **)realloc(*argv, (size_t)(n + 2) * sizeof(char *));
    if (grown == NULL) {
        free(copy);
        return PMIX_ERR_NOMEM;
    }
    for (i = n; i > pos; --i) grown[i] = grown[i - 1];
    grown[pos] = copy;
    grown[n + 1] = NULL;
    *argv = grown;
    return PMIX_SUCCESS;
}

static inline pmix_status_t pmix_argv_append_nosize(char ***argv, const char *arg)
{
    return pmix_hdr_argv_insert(argv, pmix_argv_count(*argv), arg);
}

static inline pmix_status_t pmix_argv_prepend_nosize(char ***argv, const char *arg)
{
    return pmix_hdr_argv_insert(argv, 0, arg);
}

static inline pmix_status_t pmix_argv_append_unique_nosize(char ***argv, const char *arg)
{
    int i;
    if (*argv != NULL) {
        for (i = 0; (*argv)[i] != NULL; ++i) {
            if (strcmp((*argv)[i], arg) == 0) return PMIX_SUCCESS;
        }
    }
    return pmix_argv_append_nosize(argv, arg);
}

/* Split at delimiter, dropping empty fields. */
static inline char **pmix_argv_split(const char *src, int delimiter)
{
    char **out = NULL;
    const char *start = src;
    if (src == NULL) return NULL;
    for (;;) {
        const char *end = start;
        while (*end != '\0' && *end != (char)delimiter) ++end;
        if (end > start) {
            size_t len = (size_t)(end - start);
            char *field = (char *)malloc(len + 1);
            pmix_status_t rc;
            if (field == NULL) break;
            memcpy(field, start, len);
            field[len] = '\0';
            rc = pmix_argv_append_nosize(&out, field);
            free(field);
            if (rc != PMIX_SUCCESS) break;
        }
        if (*end == '\0') break;
        start = end + 1;
    }
    return out;
}

static inline char *pmix_argv_join(char **argv, int delimiter)
{
    size_t total = 1, pos = 0;
    int i;
    char *out;
    if (argv == NULL || argv[0] == NULL) return pmix_hdr_strdup("");
    for (i = 0; argv[i] != NULL; ++i) total += strlen(argv[i]) + 1;
    out = (char *)malloc(total);
    if (out == NULL) return NULL;
    for (i = 0; argv[i] != NULL; ++i) {
        size_t len = strlen(argv[i]);
        if (i > 0) out[pos++] = (char)delimiter;
        memcpy(out + pos, argv[i], len);
        pos += len;
    }
    out[pos] = '\0';
    return out;
}

static inline char **pmix_argv_copy(char **argv)
{
    char **out = NULL;
    int i;
    if (argv == NULL) return NULL;
    for (i = 0; argv[i] != NULL; ++i) {
        if (pmix_argv_append_nosize(&out, argv[i]) != PMIX_SUCCESS) {
            pmix_argv_free(out);
            return NULL;
        }
    }
    return out;
}

/* Set NAME=VALUE in an environment array (not the process environment). */
static inline pmix_status_t pmix_setenv(const char *name, const char *value,
                                        bool overwrite, char ***env)
{
    size_t nlen, vlen;
    char *entry;
    int i;
    if (name == NULL || env == NULL) return PMIX_ERR_BAD_PARAM;
    nlen = strlen(name);
    vlen = value != NULL ? strlen(value) : 0;
    entry = (char *)malloc(nlen + vlen + 2);
    if (entry == NULL) return PMIX_ERR_NOMEM;
    memcpy(entry, name, nlen);
    entry[nlen] = '=';
    if (vlen > 0) memcpy(entry + nlen + 1, value, vlen);
    entry[nlen + 1 + vlen] = '\0';
    if (*env != NULL) {
        for (i = 0; (*env)[i] != NULL; ++i) {
            if (strncmp((*env)[i], name, nlen) == 0 && (*env)[i][nlen] == '=') {
                if (!overwrite) {
                    free(entry);
                    return PMIX_ERR_EXISTS;
                }
                free((*env)[i]);
                (*env)[i] = entry;
                return PMIX_SUCCESS;
            }
        }
    }
    i = pmix_argv_count(*env);
    {
        char **grown = (char **)realloc(*env, (size_t)(i + 2) * sizeof(char *));
        if (grown == NULL) {
            free(entry);
            return PMIX_ERR_NOMEM;
        }
        grown[i] = entry;
        grown[i + 1] = NULL;
        *env = grown;
    }
    return PMIX_SUCCESS;
}

#define PMIX_ARGV_COUNT(r, a)            (r) = pmix_argv_count(a)
#define PMIX_ARGV_APPEND(r, a, b)        (r) = pmix_argv_append_nosize(&(a), (b))
#define PMIX_ARGV_PREPEND(r, a, b)       (r) = pmix_argv_prepend_nosize(&(a), (b))
#define PMIX_ARGV_APPEND_UNIQUE(r, a, b) (r) = pmix_argv_append_unique_nosize((a), (b))
#define PMIX_ARGV_FREE(a)                pmix_argv_free(a)
#define PMIX_ARGV_SPLIT(a, b, c)         (a) = pmix_argv_split((b), (c))
#define PMIX_ARGV_JOIN(a, b, c)          (a) = pmix_argv_join((b), (c))
#define PMIX_ARGV_COPY(a, b)             (a) = pmix_argv_copy(b)
#define PMIX_SETENV(r, a, b, c)          (r) = pmix_setenv((a), (b), true, (c))

/* Is a value "true"?  An absent value (PMIX_UNDEF) counts as true; strings
 * "yes"/"true"/non-zero numbers are true, "no"/"false"/"0" false. */
static inline int pmix_hdr_word_is(const char *s, const char *word)
{
    size_t i;
    for (i = 0; word[i] != '\0'; ++i) {
        if (tolower((unsigned char)s[i]) != word[i]) return 0;
    }
    return 1;
}

static inline pmix_boolean_t pmix_check_true(const pmix_value_t *value)
{
    const char *s;
    if (value->type == PMIX_UNDEF) return PMIX_BOOL_TRUE;
    if (value->type == PMIX_BOOL) return value->data.flag ? PMIX_BOOL_TRUE : PMIX_BOOL_FALSE;
    if (value->type != PMIX_STRING) return PMIX_NON_BOOL;
    s = value->data.string;
    if (s == NULL) return PMIX_BOOL_TRUE;
    while (isspace((unsigned char)*s)) ++s;
    if (*s == '\0') return PMIX_BOOL_TRUE;
    if (isdigit((unsigned char)*s)) return atoi(s) != 0 ? PMIX_BOOL_TRUE : PMIX_BOOL_FALSE;
    if (pmix_hdr_word_is(s, "yes") || pmix_hdr_word_is(s, "true")) return PMIX_BOOL_TRUE;
    if (pmix_hdr_word_is(s, "no") || pmix_hdr_word_is(s, "false")) return PMIX_BOOL_FALSE;
    return PMIX_NON_BOOL;
}

#define PMIX_CHECK_TRUE(a) (pmix_check_true(a) == PMIX_BOOL_TRUE)
#define PMIX_CHECK_BOOL(a) (pmix_check_true(a) != PMIX_NON_BOOL)

/* Allocate n zeroed elements of size sz; NULL when n is 0. */
static inline void *pmix_hdr_zalloc(size_t n, size_t sz)
{
    return n == 0 ? NULL : calloc(n, sz);
}

/* =========================================================================
 * Keys, namespaces and process ids
 * ========================================================================= */

#define PMIX_CHECK_KEY(a, b)       (strncmp((a)->key, (b), PMIX_MAX_KEYLEN) == 0)
#define PMIX_CHECK_RESERVED_KEY(a) (strncmp((a), "pmix", 4) == 0)

#define PMIX_LOAD_KEY(a, b)                                   \
    do {                                                      \
        memset((a), 0, PMIX_MAX_KEYLEN + 1);                  \
        if ((b) != NULL)                                      \
            pmix_strncpy((char *)(a), (const char *)(b), PMIX_MAX_KEYLEN); \
    } while (0)

#define PMIX_LOAD_NSPACE(a, b)                                \
    do {                                                      \
        memset((a), 0, PMIX_MAX_NSLEN + 1);                   \
        if ((b) != NULL)                                      \
            pmix_strncpy((char *)(a), (const char *)(b), PMIX_MAX_NSLEN); \
    } while (0)

/* An empty namespace matches anything (as does a wildcard rank). */
#define PMIX_NSPACE_INVALID(a) ((a) == NULL || pmix_nslen(a) == 0)
#define PMIX_CHECK_NSPACE(a, b)                                         \
    (PMIX_NSPACE_INVALID(a) || PMIX_NSPACE_INVALID(b) ||                \
     strncmp((a), (b), PMIX_MAX_NSLEN) == 0)
#define PMIX_CHECK_RANK(a, b) \
    ((a) == (b) || (a) == PMIX_RANK_WILDCARD || (b) == PMIX_RANK_WILDCARD)
#define PMIX_CHECK_PROCID(a, b) \
    (PMIX_CHECK_NSPACE((a)->nspace, (b)->nspace) && PMIX_CHECK_RANK((a)->rank, (b)->rank))
#define PMIX_PROCID_INVALID(a) \
    (PMIX_NSPACE_INVALID((a)->nspace) || (a)->rank == PMIX_RANK_INVALID)

#define PMIX_LOAD_PROCID(a, b, c)            \
    do {                                     \
        PMIX_LOAD_NSPACE((a)->nspace, (b));  \
        (a)->rank = (c);                     \
    } while (0)
#define PMIX_XFER_PROCID(a, b) memcpy((a), (b), sizeof(pmix_proc_t))
#define PMIX_PROCID_XFER(a, b) PMIX_XFER_PROCID(a, b)

/* "cluster:nspace" names for multi-cluster setups. */
#define PMIX_MULTICLUSTER_NSPACE_CONSTRUCT(t, c, n)                          \
    do {                                                                     \
        size_t _clen = pmix_nslen(c);                                        \
        memset((t), 0, PMIX_MAX_NSLEN + 1);                                  \
        if (_clen + pmix_nslen(n) < PMIX_MAX_NSLEN) {                        \
            memcpy((char *)(t), (c), _clen);                                 \
            ((char *)(t))[_clen] = ':';                                      \
            pmix_strncpy((char *)(t) + _clen + 1, (n), PMIX_MAX_NSLEN - _clen - 1); \
        }                                                                    \
    } while (0)
#define PMIX_MULTICLUSTER_NSPACE_PARSE(t, c, n)                              \
    do {                                                                     \
        const char *_colon = strchr((const char *)(t), ':');                 \
        if (_colon != NULL) {                                                \
            size_t _clen = (size_t)(_colon - (const char *)(t));             \
            memcpy((c), (t), _clen);                                         \
            (c)[_clen] = '\0';                                               \
            pmix_strncpy((char *)(n), _colon + 1, PMIX_MAX_NSLEN);           \
        }                                                                    \
    } while (0)

/* =========================================================================
 * pmix_proc_t
 * ========================================================================= */

#define PMIX_PROC_STATIC_INIT      { {0}, PMIX_RANK_UNDEF }
#define PMIX_PROC_CONSTRUCT(m)     memset((m), 0, sizeof(pmix_proc_t))
#define PMIX_PROC_DESTRUCT(m)
#define PMIX_PROC_CREATE(m, n)     (m) = (pmix_proc_t *)pmix_hdr_zalloc((n), sizeof(pmix_proc_t))
#define PMIX_PROC_RELEASE(m)       do { free(m); (m) = NULL; } while (0)
#define PMIX_PROC_FREE(m, n)       do { free(m); (m) = NULL; } while (0)
#define PMIX_PROC_LOAD(m, n, r)                                 \
    do {                                                        \
        PMIX_PROC_CONSTRUCT(m);                                 \
        pmix_strncpy((char *)(m)->nspace, (n), PMIX_MAX_NSLEN); \
        (m)->rank = (r);                                        \
    } while (0)

/* =========================================================================
 * pmix_value_t (destruct/load/xfer live in the library)
 * ========================================================================= */

#define PMIX_VALUE_STATIC_INIT   { PMIX_UNDEF, { false } }
#define PMIX_VALUE_CONSTRUCT(m)  do { memset((m), 0, sizeof(pmix_value_t)); (m)->type = PMIX_UNDEF; } while (0)
#define PMIX_VALUE_CREATE(m, n)  (m) = (pmix_value_t *)pmix_hdr_zalloc((n), sizeof(pmix_value_t))
#define PMIX_VALUE_DESTRUCT(m)   PMIx_Value_destruct(m)
#define PMIX_VALUE_RELEASE(m)    do { PMIx_Value_destruct(m); free(m); (m) = NULL; } while (0)
#define PMIX_VALUE_FREE(m, n)                                        \
    do {                                                             \
        if ((m) != NULL) {                                           \
            size_t _k;                                               \
            for (_k = 0; _k < (size_t)(n); ++_k) PMIx_Value_destruct(&(m)[_k]); \
            free(m);                                                 \
            (m) = NULL;                                              \
        }                                                            \
    } while (0)
#define PMIX_VALUE_LOAD(v, d, t)           PMIx_Value_load((v), (d), (t))
#define PMIX_VALUE_UNLOAD(r, k, d, s)      (r) = PMIx_Value_unload((k), (d), (s))
#define PMIX_VALUE_XFER_DIRECT(r, v, s)    (r) = PMIx_Value_xfer((v), (s))
/* Copy s into v, allocating v when it is NULL. */
#define PMIX_VALUE_XFER(r, v, s)                                          \
    do {                                                                  \
        if ((v) == NULL) (v) = (pmix_value_t *)calloc(1, sizeof(pmix_value_t)); \
        (r) = (v) == NULL ? PMIX_ERR_NOMEM : PMIx_Value_xfer((v), (s));   \
    } while (0)

/* Read any numeric value into n (of type t); s = PMIX_ERR_BAD_PARAM if not numeric. */
#define PMIX_VALUE_GET_NUMBER(s, m, n, t)                                \
    do {                                                                 \
        (s) = PMIX_SUCCESS;                                              \
        switch ((m)->type) {                                             \
        case PMIX_SIZE:      (n) = (t)((m)->data.size); break;           \
        case PMIX_INT:       (n) = (t)((m)->data.integer); break;        \
        case PMIX_INT8:      (n) = (t)((m)->data.int8); break;           \
        case PMIX_INT16:     (n) = (t)((m)->data.int16); break;          \
        case PMIX_INT32:     (n) = (t)((m)->data.int32); break;          \
        case PMIX_INT64:     (n) = (t)((m)->data.int64); break;          \
        case PMIX_UINT:      (n) = (t)((m)->data.uint); break;           \
        case PMIX_UINT8:     (n) = (t)((m)->data.uint8); break;          \
        case PMIX_UINT16:    (n) = (t)((m)->data.uint16); break;         \
        case PMIX_UINT32:    (n) = (t)((m)->data.uint32); break;         \
        case PMIX_UINT64:    (n) = (t)((m)->data.uint64); break;         \
        case PMIX_FLOAT:     (n) = (t)((m)->data.fval); break;           \
        case PMIX_DOUBLE:    (n) = (t)((m)->data.dval); break;           \
        case PMIX_PID:       (n) = (t)((m)->data.pid); break;            \
        case PMIX_PROC_RANK: (n) = (t)((m)->data.rank); break;           \
        default:             (s) = PMIX_ERR_BAD_PARAM; break;            \
        }                                                                \
    } while (0)

/* =========================================================================
 * pmix_info_t
 * ========================================================================= */

#define PMIX_INFO_STATIC_INIT { {0}, 0, PMIX_VALUE_STATIC_INIT }

static inline pmix_info_t *pmix_hdr_info_new(size_t n)
{
    pmix_info_t *info = (pmix_info_t *)pmix_hdr_zalloc(n, sizeof(pmix_info_t));
    if (info != NULL) info[n - 1].flags = PMIX_INFO_ARRAY_END;
    return info;
}

#define PMIX_INFO_CONSTRUCT(m)  do { memset((m), 0, sizeof(pmix_info_t)); (m)->value.type = PMIX_UNDEF; } while (0)
#define PMIX_INFO_CREATE(m, n)  (m) = pmix_hdr_info_new(n)
#define PMIX_INFO_DESTRUCT(m)                                          \
    do {                                                               \
        if (!PMIX_INFO_IS_PERSISTENT(m)) PMIx_Value_destruct(&(m)->value); \
    } while (0)
#define PMIX_INFO_FREE(m, n)                                           \
    do {                                                               \
        if ((m) != NULL) {                                             \
            size_t _k;                                                 \
            for (_k = 0; _k < (size_t)(n); ++_k) PMIX_INFO_DESTRUCT(&(m)[_k]); \
            free(m);                                                   \
            (m) = NULL;                                                \
        }                                                              \
    } while (0)
#define PMIX_INFO_LOAD(i, k, d, t)  (void)PMIx_Info_load((i), (k), (d), (t))
#define PMIX_INFO_XFER(d, s)        (void)PMIx_Info_xfer((d), (s))

#define PMIX_INFO_REQUIRED(m)       ((m)->flags |= PMIX_INFO_REQD)
#define PMIX_INFO_OPTIONAL(m)       ((m)->flags &= ~PMIX_INFO_REQD)
#define PMIX_INFO_IS_REQUIRED(m)    (((m)->flags & PMIX_INFO_REQD) != 0)
#define PMIX_INFO_IS_OPTIONAL(m)    (((m)->flags & PMIX_INFO_REQD) == 0)
#define PMIX_INFO_PROCESSED(m)      ((m)->flags |= PMIX_INFO_REQD_PROCESSED)
#define PMIX_INFO_WAS_PROCESSED(m)  (((m)->flags & PMIX_INFO_REQD_PROCESSED) != 0)
#define PMIX_INFO_SET_END(m)        ((m)->flags |= PMIX_INFO_ARRAY_END)
#define PMIX_INFO_IS_END(m)         (((m)->flags & PMIX_INFO_ARRAY_END) != 0)
#define PMIX_INFO_SET_QUALIFIER(m)  ((m)->flags |= PMIX_INFO_QUALIFIER)
#define PMIX_INFO_IS_QUALIFIER(m)   (((m)->flags & PMIX_INFO_QUALIFIER) != 0)
#define PMIX_INFO_SET_PERSISTENT(m) ((m)->flags |= PMIX_INFO_PERSISTENT)
#define PMIX_INFO_IS_PERSISTENT(m)  (((m)->flags & PMIX_INFO_PERSISTENT) != 0)
/* A flag-style info: absent value or a true-ish value. */
#define PMIX_INFO_TRUE(m)           (pmix_check_true(&(m)->value) == PMIX_BOOL_TRUE)

/* Growable info lists (opaque handle owned by the library). */
#define PMIX_INFO_LIST_START(p)             (p) = PMIx_Info_list_start()
#define PMIX_INFO_LIST_ADD(r, p, a, v, t)   (r) = PMIx_Info_list_add((p), (a), (v), (t))
#define PMIX_INFO_LIST_INSERT(r, p, i)      (r) = PMIx_Info_list_insert((p), (i))
#define PMIX_INFO_LIST_XFER(r, p, a)        (r) = PMIx_Info_list_xfer((p), (a))
#define PMIX_INFO_LIST_CONVERT(r, p, m)     (r) = PMIx_Info_list_convert((p), (m))
#define PMIX_INFO_LIST_RELEASE(p)           PMIx_Info_list_release(p)

/* =========================================================================
 * pmix_pdata_t
 * ========================================================================= */

#define PMIX_LOOKUP_STATIC_INIT { PMIX_PROC_STATIC_INIT, {0}, PMIX_VALUE_STATIC_INIT }
#define PMIX_PDATA_CONSTRUCT(m) do { memset((m), 0, sizeof(pmix_pdata_t)); (m)->value.type = PMIX_UNDEF; } while (0)
#define PMIX_PDATA_CREATE(m, n) (m) = (pmix_pdata_t *)pmix_hdr_zalloc((n), sizeof(pmix_pdata_t))
#define PMIX_PDATA_DESTRUCT(m)  PMIx_Value_destruct(&(m)->value)
#define PMIX_PDATA_RELEASE(m)   do { PMIx_Value_destruct(&(m)->value); free(m); (m) = NULL; } while (0)

static inline void pmix_pdata_free(pmix_pdata_t *pd, size_t n)
{
    size_t k;
    if (pd == NULL) return;
    for (k = 0; k < n; ++k) PMIx_Value_destruct(&pd[k].value);
}
#define PMIX_PDATA_FREE(m, n)   do { pmix_pdata_free((m), (n)); free(m); (m) = NULL; } while (0)

#define PMIX_PDATA_LOAD(m, p, k, v, t)                         \
    do {                                                       \
        if ((m) != NULL) {                                     \
            memset((m), 0, sizeof(pmix_pdata_t));              \
            PMIX_LOAD_PROCID(&(m)->proc, (p)->nspace, (p)->rank); \
            PMIX_LOAD_KEY((m)->key, (k));                      \
            PMIx_Value_load(&(m)->value, (v), (t));            \
        }                                                      \
    } while (0)
#define PMIX_PDATA_XFER(d, s)                                  \
    do {                                                       \
        if ((d) != NULL) {                                     \
            memset((d), 0, sizeof(pmix_pdata_t));              \
            PMIX_LOAD_PROCID(&(d)->proc, (s)->proc.nspace, (s)->proc.rank); \
            PMIX_LOAD_KEY((d)->key, (s)->key);                 \
            PMIx_Value_xfer(&(d)->value, &(s)->value);         \
        }                                                      \
    } while (0)

/* =========================================================================
 * pmix_app_t
 * ========================================================================= */

#define PMIX_APP_STATIC_INIT    { NULL, NULL, NULL, NULL, 0, NULL, 0 }
#define PMIX_APP_CONSTRUCT(m)   memset((m), 0, sizeof(pmix_app_t))
#define PMIX_APP_CREATE(m, n)   (m) = (pmix_app_t *)pmix_hdr_zalloc((n), sizeof(pmix_app_t))
#define PMIX_APP_INFO_CREATE(m, n)                 \
    do {                                           \
        (m)->ninfo = (n);                          \
        PMIX_INFO_CREATE((m)->info, (m)->ninfo);   \
    } while (0)
#define PMIX_APP_DESTRUCT(m)                                     \
    do {                                                         \
        free((m)->cmd);  (m)->cmd = NULL;                        \
        pmix_argv_free((m)->argv);  (m)->argv = NULL;            \
        pmix_argv_free((m)->env);  (m)->env = NULL;              \
        free((m)->cwd);  (m)->cwd = NULL;                        \
        PMIX_INFO_FREE((m)->info, (m)->ninfo);                   \
        (m)->ninfo = 0;                                          \
    } while (0)

static inline void pmix_app_free(pmix_app_t *ap, size_t n)
{
    size_t k;
    if (ap == NULL) return;
    for (k = 0; k < n; ++k) PMIX_APP_DESTRUCT(&ap[k]);
}
#define PMIX_APP_RELEASE(m)     do { PMIX_APP_DESTRUCT(m); free(m); (m) = NULL; } while (0)
#define PMIX_APP_FREE(m, n)     do { pmix_app_free((m), (n)); free(m); (m) = NULL; } while (0)

/* =========================================================================
 * pmix_query_t
 * ========================================================================= */

#define PMIX_QUERY_STATIC_INIT  { NULL, NULL, 0 }
#define PMIX_QUERY_CONSTRUCT(m) memset((m), 0, sizeof(pmix_query_t))
#define PMIX_QUERY_CREATE(m, n) (m) = (pmix_query_t *)pmix_hdr_zalloc((n), sizeof(pmix_query_t))
#define PMIX_QUERY_QUALIFIERS_CREATE(m, n)          \
    do {                                            \
        (m)->nqual = (n);                           \
        PMIX_INFO_CREATE((m)->qualifiers, (m)->nqual); \
    } while (0)
#define PMIX_QUERY_DESTRUCT(m)                                   \
    do {                                                         \
        pmix_argv_free((m)->keys);  (m)->keys = NULL;            \
        PMIX_INFO_FREE((m)->qualifiers, (m)->nqual);             \
        (m)->nqual = 0;                                          \
    } while (0)

static inline void pmix_hdr_query_free(pmix_query_t *q, size_t n)
{
    size_t k;
    if (q == NULL) return;
    for (k = 0; k < n; ++k) PMIX_QUERY_DESTRUCT(&q[k]);
}
#define PMIX_QUERY_RELEASE(m)   do { PMIX_QUERY_DESTRUCT(m); free(m); (m) = NULL; } while (0)
#define PMIX_QUERY_FREE(m, n)   do { pmix_hdr_query_free((m), (n)); free(m); (m) = NULL; } while (0)

/* =========================================================================
 * pmix_byte_object_t, pmix_envar_t, pmix_data_buffer_t
 * ========================================================================= */

#define PMIX_BYTE_OBJECT_STATIC_INIT  { NULL, 0 }
#define PMIX_BYTE_OBJECT_CONSTRUCT(m) do { (m)->bytes = NULL; (m)->size = 0; } while (0)
#define PMIX_BYTE_OBJECT_DESTRUCT(m)  do { free((m)->bytes); (m)->bytes = NULL; (m)->size = 0; } while (0)
#define PMIX_BYTE_OBJECT_CREATE(m, n) (m) = (pmix_byte_object_t *)pmix_hdr_zalloc((n), sizeof(pmix_byte_object_t))
#define PMIX_BYTE_OBJECT_FREE(m, n)                                      \
    do {                                                                 \
        if ((m) != NULL) {                                               \
            size_t _k;                                                   \
            for (_k = 0; _k < (size_t)(n); ++_k) PMIX_BYTE_OBJECT_DESTRUCT(&(m)[_k]); \
            free(m);                                                     \
            (m) = NULL;                                                  \
        }                                                                \
    } while (0)
/* Take ownership of d (s bytes). */
#define PMIX_BYTE_OBJECT_LOAD(b, d, s)  do { (b)->bytes = (char *)(d); (d) = NULL; (b)->size = (s); (s) = 0; } while (0)

#define PMIX_ENVAR_STATIC_INIT  { NULL, NULL, '\0' }
#define PMIX_ENVAR_CONSTRUCT(m) do { (m)->envar = NULL; (m)->value = NULL; (m)->separator = '\0'; } while (0)
#define PMIX_ENVAR_DESTRUCT(m)                                  \
    do {                                                        \
        free((m)->envar);  (m)->envar = NULL;                   \
        free((m)->value);  (m)->value = NULL;                   \
    } while (0)
#define PMIX_ENVAR_CREATE(m, n) (m) = (pmix_envar_t *)pmix_hdr_zalloc((n), sizeof(pmix_envar_t))
#define PMIX_ENVAR_FREE(m, n)                                            \
    do {                                                                 \
        if ((m) != NULL) {                                               \
            size_t _k;                                                   \
            for (_k = 0; _k < (size_t)(n); ++_k) PMIX_ENVAR_DESTRUCT(&(m)[_k]); \
            free(m);                                                     \
            (m) = NULL;                                                  \
        }                                                                \
    } while (0)
#define PMIX_ENVAR_LOAD(m, e, v, s)                                  \
    do {                                                             \
        (m)->envar = (e) != NULL ? pmix_hdr_strdup(e) : NULL;        \
        (m)->value = (v) != NULL ? pmix_hdr_strdup(v) : NULL;        \
        (m)->separator = (s);                                        \
    } while (0)

#define PMIX_DATA_BUFFER_STATIC_INIT  { NULL, NULL, NULL, 0, 0 }
#define PMIX_DATA_BUFFER_CONSTRUCT(m) memset((m), 0, sizeof(pmix_data_buffer_t))
#define PMIX_DATA_BUFFER_CREATE(m)    (m) = (pmix_data_buffer_t *)calloc(1, sizeof(pmix_data_buffer_t))
#define PMIX_DATA_BUFFER_DESTRUCT(m)  do { free((m)->base_ptr); memset((m), 0, sizeof(pmix_data_buffer_t)); } while (0)
#define PMIX_DATA_BUFFER_RELEASE(m)   do { free((m)->base_ptr); free(m); (m) = NULL; } while (0)
/* Hand d (s bytes) to the buffer / take the unread payload out of it. */
#define PMIX_DATA_BUFFER_LOAD(b, d, s)                   \
    do {                                                 \
        pmix_byte_object_t _payload;                     \
        _payload.bytes = (char *)(d);                    \
        _payload.size = (s);                             \
        PMIx_Data_load((b), &_payload);                  \
    } while (0)
#define PMIX_DATA_BUFFER_UNLOAD(b, d, s)                             \
    do {                                                             \
        pmix_byte_object_t _payload;                                 \
        if (PMIx_Data_unload((b), &_payload) == PMIX_SUCCESS) {      \
            (d) = _payload.bytes;                                    \
            (s) = _payload.size;                                     \
        } else {                                                     \
            (d) = NULL;                                              \
            (s) = 0;                                                 \
        }                                                            \
    } while (0)

/* =========================================================================
 * pmix_proc_info_t
 * ========================================================================= */

#define PMIX_PROC_INFO_STATIC_INIT  { PMIX_PROC_STATIC_INIT, NULL, NULL, 0, 0, PMIX_PROC_STATE_UNDEF }
#define PMIX_PROC_INFO_CONSTRUCT(m) memset((m), 0, sizeof(pmix_proc_info_t))
#define PMIX_PROC_INFO_CREATE(m, n) (m) = (pmix_proc_info_t *)pmix_hdr_zalloc((n), sizeof(pmix_proc_info_t))
#define PMIX_PROC_INFO_DESTRUCT(m)                                  \
    do {                                                            \
        free((m)->hostname);  (m)->hostname = NULL;                 \
        free((m)->executable_name);  (m)->executable_name = NULL;   \
    } while (0)
#define PMIX_PROC_INFO_RELEASE(m)   do { PMIX_PROC_INFO_DESTRUCT(m); free(m); (m) = NULL; } while (0)
#define PMIX_PROC_INFO_FREE(m, n)                                        \
    do {                                                                 \
        if ((m) != NULL) {                                               \
            size_t _k;                                                   \
            for (_k = 0; _k < (size_t)(n); ++_k) PMIX_PROC_INFO_DESTRUCT(&(m)[_k]); \
            free(m);                                                     \
            (m) = NULL;                                                  \
        }                                                                \
    } while (0)

/* =========================================================================
 * Coordinates, cpusets, topologies, geometry, distances, endpoints
 * ========================================================================= */

#define PMIX_COORD_STATIC_INIT     { PMIX_COORD_VIEW_UNDEF, NULL, 0 }
#define PMIX_COORD_CONSTRUCT(m)    memset((m), 0, sizeof(pmix_coord_t))
#define PMIX_COORD_DESTRUCT(m)     do { free((m)->coord); (m)->coord = NULL; (m)->dims = 0; } while (0)
/* Create one coordinate with d dimensions. */
#define PMIX_COORD_CREATE(m, d, n)                                       \
    do {                                                                 \
        (m) = (pmix_coord_t *)calloc(1, sizeof(pmix_coord_t));           \
        if ((m) != NULL && (d) > 0) {                                    \
            (m)->coord = (uint32_t *)calloc((d), sizeof(uint32_t));      \
            (m)->dims = (m)->coord != NULL ? (size_t)(d) : 0;            \
        }                                                                \
    } while (0)
#define PMIX_COORD_FREE(m, n)                                            \
    do {                                                                 \
        if ((m) != NULL) {                                               \
            size_t _k;                                                   \
            for (_k = 0; _k < (size_t)(n); ++_k) PMIX_COORD_DESTRUCT(&(m)[_k]); \
            free(m);                                                     \
            (m) = NULL;                                                  \
        }                                                                \
    } while (0)

#define PMIX_CPUSET_STATIC_INIT    { NULL, NULL }
#define PMIX_CPUSET_CONSTRUCT(m)   memset((m), 0, sizeof(pmix_cpuset_t))
#define PMIX_CPUSET_CREATE(m, n)   (m) = (pmix_cpuset_t *)pmix_hdr_zalloc((n), sizeof(pmix_cpuset_t))
#define PMIX_CPUSET_DESTRUCT(m)    PMIx_Cpuset_destruct(m)

#define PMIX_TOPOLOGY_STATIC_INIT  { NULL, NULL }
#define PMIX_TOPOLOGY_CONSTRUCT(m) memset((m), 0, sizeof(pmix_topology_t))
#define PMIX_TOPOLOGY_CREATE(m, n) (m) = (pmix_topology_t *)pmix_hdr_zalloc((n), sizeof(pmix_topology_t))
#define PMIX_TOPOLOGY_DESTRUCT(m)  PMIx_Topology_destruct(m)

#define PMIX_GEOMETRY_STATIC_INIT  { 0, NULL, NULL, NULL, 0 }
#define PMIX_GEOMETRY_CONSTRUCT(m) memset((m), 0, sizeof(pmix_geometry_t))
#define PMIX_GEOMETRY_DESTRUCT(m)                                   \
    do {                                                            \
        free((m)->uuid);  (m)->uuid = NULL;                         \
        free((m)->osname);  (m)->osname = NULL;                     \
        PMIX_COORD_FREE((m)->coordinates, (m)->ncoords);            \
        (m)->ncoords = 0;                                           \
    } while (0)
#define PMIX_GEOMETRY_CREATE(m, n) (m) = (pmix_geometry_t *)pmix_hdr_zalloc((n), sizeof(pmix_geometry_t))
#define PMIX_GEOMETRY_FREE(m, n)                                         \
    do {                                                                 \
        if ((m) != NULL) {                                               \
            size_t _k;                                                   \
            for (_k = 0; _k < (size_t)(n); ++_k) PMIX_GEOMETRY_DESTRUCT(&(m)[_k]); \
            free(m);                                                     \
            (m) = NULL;                                                  \
        }                                                                \
    } while (0)

#define PMIX_DEVICE_DIST_STATIC_INIT  { NULL, NULL, PMIX_DEVTYPE_UNKNOWN, 0, 0 }
#define PMIX_DEVICE_DIST_CONSTRUCT(m)                                   \
    do {                                                                \
        memset((m), 0, sizeof(pmix_device_distance_t));                 \
        (m)->mindist = UINT16_MAX;                                      \
        (m)->maxdist = UINT16_MAX;                                      \
    } while (0)
#define PMIX_DEVICE_DIST_DESTRUCT(m)                                    \
    do {                                                                \
        free((m)->uuid);  (m)->uuid = NULL;                             \
        free((m)->osname);  (m)->osname = NULL;                         \
    } while (0)
#define PMIX_DEVICE_DIST_CREATE(m, n)                                    \
    do {                                                                 \
        size_t _k;                                                       \
        (m) = (pmix_device_distance_t *)pmix_hdr_zalloc((n), sizeof(pmix_device_distance_t)); \
        for (_k = 0; (m) != NULL && _k < (size_t)(n); ++_k) PMIX_DEVICE_DIST_CONSTRUCT(&(m)[_k]); \
    } while (0)
#define PMIX_DEVICE_DIST_FREE(m, n)                                      \
    do {                                                                 \
        if ((m) != NULL) {                                               \
            size_t _k;                                                   \
            for (_k = 0; _k < (size_t)(n); ++_k) PMIX_DEVICE_DIST_DESTRUCT(&(m)[_k]); \
            free(m);                                                     \
            (m) = NULL;                                                  \
        }                                                                \
    } while (0)

#define PMIX_ENDPOINT_STATIC_INIT  { NULL, NULL, PMIX_BYTE_OBJECT_STATIC_INIT }
#define PMIX_ENDPOINT_CONSTRUCT(m) memset((m), 0, sizeof(pmix_endpoint_t))
#define PMIX_ENDPOINT_DESTRUCT(m)                                   \
    do {                                                            \
        free((m)->uuid);  (m)->uuid = NULL;                         \
        free((m)->osname);  (m)->osname = NULL;                     \
        PMIX_BYTE_OBJECT_DESTRUCT(&(m)->endpt);                     \
    } while (0)
#define PMIX_ENDPOINT_CREATE(m, n) (m) = (pmix_endpoint_t *)pmix_hdr_zalloc((n), sizeof(pmix_endpoint_t))
#define PMIX_ENDPOINT_FREE(m, n)                                         \
    do {                                                                 \
        if ((m) != NULL) {                                               \
            size_t _k;                                                   \
            for (_k = 0; _k < (size_t)(n); ++_k) PMIX_ENDPOINT_DESTRUCT(&(m)[_k]); \
            free(m);                                                     \
            (m) = NULL;                                                  \
        }                                                                \
    } while (0)

/* =========================================================================
 * Attribute registration records, fabrics
 * ========================================================================= */

#define PMIX_REGATTR_STATIC_INIT  { NULL, {0}, PMIX_UNDEF, NULL }
#define PMIX_REGATTR_CONSTRUCT(a) memset((a), 0, sizeof(pmix_regattr_t))
#define PMIX_REGATTR_DESTRUCT(a)                                    \
    do {                                                            \
        free((a)->name);  (a)->name = NULL;                         \
        pmix_argv_free((a)->description);  (a)->description = NULL; \
    } while (0)
/* n: name, k: key string, t: type, v: one description line. */
#define PMIX_REGATTR_LOAD(a, n, k, t, v)                                 \
    do {                                                                 \
        pmix_status_t _rc;                                               \
        (a)->name = (n) != NULL ? pmix_hdr_strdup(n) : NULL;             \
        PMIX_LOAD_KEY((a)->string, (k));                                 \
        (a)->type = (t);                                                 \
        if ((v) != NULL) _rc = pmix_argv_append_nosize(&(a)->description, (v)); \
        (void)_rc;                                                       \
    } while (0)
#define PMIX_REGATTR_XFER(a, b)                                          \
    do {                                                                 \
        PMIX_REGATTR_CONSTRUCT(a);                                       \
        (a)->name = (b)->name != NULL ? pmix_hdr_strdup((b)->name) : NULL; \
        PMIX_LOAD_KEY((a)->string, (b)->string);                         \
        (a)->type = (b)->type;                                           \
        (a)->description = pmix_argv_copy((b)->description);             \
    } while (0)
#define PMIX_REGATTR_CREATE(m, n) (m) = (pmix_regattr_t *)pmix_hdr_zalloc((n), sizeof(pmix_regattr_t))
#define PMIX_REGATTR_FREE(m, n)                                          \
    do {                                                                 \
        if ((m) != NULL) {                                               \
            size_t _k;                                                   \
            for (_k = 0; _k < (size_t)(n); ++_k) PMIX_REGATTR_DESTRUCT(&(m)[_k]); \
            free(m);                                                     \
            (m) = NULL;                                                  \
        }                                                                \
    } while (0)

#define PMIX_FABRIC_STATIC_INIT   { NULL, 0, NULL, 0, NULL }
#define PMIX_FABRIC_CONSTRUCT(x)  memset((x), 0, sizeof(pmix_fabric_t))

/* =========================================================================
 * Statistics samples
 * ========================================================================= */

#define PMIX_PROC_STATS_STATIC_INIT \
    { NULL, PMIX_PROC_STATIC_INIT, 0, NULL, 0, {0, 0}, 0, 0, 0, 0, 0, 0, 0, 0, {0, 0} }
#define PMIX_PROC_STATS_CONSTRUCT(m) memset((m), 0, sizeof(pmix_proc_stats_t))
#define PMIX_PROC_STATS_DESTRUCT(m)                                  \
    do {                                                             \
        free((m)->node);  (m)->node = NULL;                          \
        free((m)->cmd);  (m)->cmd = NULL;                            \
    } while (0)
#define PMIX_PROC_STATS_CREATE(m, n) (m) = (pmix_proc_stats_t *)pmix_hdr_zalloc((n), sizeof(pmix_proc_stats_t))
static inline void pmix_proc_stats_free(pmix_proc_stats_t *ps, size_t n)
{
    size_t k;
    for (k = 0; ps != NULL && k < n; ++k) PMIX_PROC_STATS_DESTRUCT(&ps[k]);
}
#define PMIX_PROC_STATS_RELEASE(m) do { PMIX_PROC_STATS_DESTRUCT(m); free(m); (m) = NULL; } while (0)
#define PMIX_PROC_STATS_FREE(m, n) do { pmix_proc_stats_free((m), (n)); free(m); (m) = NULL; } while (0)

#define PMIX_DISK_STATS_STATIC_INIT  { NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }
#define PMIX_DISK_STATS_CONSTRUCT(m) memset((m), 0, sizeof(pmix_disk_stats_t))
#define PMIX_DISK_STATS_DESTRUCT(m)  do { free((m)->disk); (m)->disk = NULL; } while (0)
#define PMIX_DISK_STATS_CREATE(m, n) (m) = (pmix_disk_stats_t *)pmix_hdr_zalloc((n), sizeof(pmix_disk_stats_t))
static inline void pmix_disk_stats_free(pmix_disk_stats_t *d, size_t n)
{
    size_t k;
    for (k = 0; d != NULL && k < n; ++k) PMIX_DISK_STATS_DESTRUCT(&d[k]);
}
#define PMIX_DISK_STATS_RELEASE(m) do { PMIX_DISK_STATS_DESTRUCT(m); free(m); (m) = NULL; } while (0)
#define PMIX_DISK_STATS_FREE(m, n) do { pmix_disk_stats_free((m), (n)); free(m); (m) = NULL; } while (0)

#define PMIX_NET_STATS_STATIC_INIT  { NULL, 0, 0, 0, 0, 0, 0 }
#define PMIX_NET_STATS_CONSTRUCT(m) memset((m), 0, sizeof(pmix_net_stats_t))
#define PMIX_NET_STATS_DESTRUCT(m)  do { free((m)->net_interface); (m)->net_interface = NULL; } while (0)
#define PMIX_NET_STATS_CREATE(m, n) (m) = (pmix_net_stats_t *)pmix_hdr_zalloc((n), sizeof(pmix_net_stats_t))
static inline void pmix_net_stats_free(pmix_net_stats_t *nst, size_t n)
{
    size_t k;
    for (k = 0; nst != NULL && k < n; ++k) PMIX_NET_STATS_DESTRUCT(&nst[k]);
}
#define PMIX_NET_STATS_RELEASE(m) do { PMIX_NET_STATS_DESTRUCT(m); free(m); (m) = NULL; } while (0)
#define PMIX_NET_STATS_FREE(m, n) do { pmix_net_stats_free((m), (n)); free(m); (m) = NULL; } while (0)

#define PMIX_NODE_STATS_STATIC_INIT \
    { NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, {0, 0}, NULL, 0, NULL, 0 }
#define PMIX_NODE_STATS_CONSTRUCT(m) memset((m), 0, sizeof(pmix_node_stats_t))
#define PMIX_NODE_STATS_DESTRUCT(m)                                      \
    do {                                                                 \
        free((m)->node);  (m)->node = NULL;                              \
        PMIX_DISK_STATS_FREE((m)->diskstats, (m)->ndiskstats);           \
        (m)->ndiskstats = 0;                                             \
        PMIX_NET_STATS_FREE((m)->netstats, (m)->nnetstats);              \
        (m)->nnetstats = 0;                                              \
    } while (0)
#define PMIX_NODE_STATS_CREATE(m, n) (m) = (pmix_node_stats_t *)pmix_hdr_zalloc((n), sizeof(pmix_node_stats_t))
static inline void pmix_node_stats_free(pmix_node_stats_t *nd, size_t n)
{
    size_t k;
    for (k = 0; nd != NULL && k < n; ++k) PMIX_NODE_STATS_DESTRUCT(&nd[k]);
}
#define PMIX_NODE_STATS_RELEASE(m) do { PMIX_NODE_STATS_DESTRUCT(m); free(m); (m) = NULL; } while (0)
#define PMIX_NODE_STATS_FREE(m, n) do { pmix_node_stats_free((m), (n)); free(m); (m) = NULL; } while (0)

/* =========================================================================
 * pmix_data_array_t
 * ========================================================================= */

#define PMIX_DATA_ARRAY_STATIC_INIT { PMIX_UNDEF, 0, NULL }
#define PMIX_DATA_ARRAY_INIT(m, t)  do { (m)->array = NULL; (m)->type = (t); (m)->size = 0; } while (0)

/* Size in bytes of one element of type t, or 0 if t cannot be an array
 * element allocated here. */
static inline size_t pmix_hdr_element_size(pmix_data_type_t t)
{
    switch (t) {
    case PMIX_BOOL: return sizeof(bool);
    case PMIX_BYTE: case PMIX_INT8: case PMIX_UINT8: return 1;
    case PMIX_INT16: case PMIX_UINT16: return 2;
    case PMIX_INT32: case PMIX_UINT32: return 4;
    case PMIX_INT64: case PMIX_UINT64: return 8;
    case PMIX_STRING: return sizeof(char *);
    case PMIX_SIZE: return sizeof(size_t);
    case PMIX_PID: return sizeof(pid_t);
    case PMIX_INT: case PMIX_UINT: return sizeof(int);
    case PMIX_FLOAT: return sizeof(float);
    case PMIX_DOUBLE: return sizeof(double);
    case PMIX_TIMEVAL: return sizeof(struct timeval);
    case PMIX_TIME: return sizeof(time_t);
    case PMIX_STATUS: return sizeof(pmix_status_t);
    case PMIX_PROC_RANK: return sizeof(pmix_rank_t);
    case PMIX_PROC_NSPACE: return sizeof(pmix_nspace_t);
    case PMIX_VALUE: return sizeof(pmix_value_t);
    case PMIX_PROC: return sizeof(pmix_proc_t);
    case PMIX_APP: return sizeof(pmix_app_t);
    case PMIX_INFO: return sizeof(pmix_info_t);
    case PMIX_PDATA: return sizeof(pmix_pdata_t);
    case PMIX_BYTE_OBJECT: case PMIX_COMPRESSED_BYTE_OBJECT: return sizeof(pmix_byte_object_t);
    case PMIX_PERSIST: return sizeof(pmix_persistence_t);
    case PMIX_POINTER: return sizeof(void *);
    case PMIX_SCOPE: return sizeof(pmix_scope_t);
    case PMIX_DATA_RANGE: return sizeof(pmix_data_range_t);
    case PMIX_INFO_DIRECTIVES: return sizeof(pmix_info_directives_t);
    case PMIX_DATA_TYPE: return sizeof(pmix_data_type_t);
    case PMIX_PROC_STATE: return sizeof(pmix_proc_state_t);
    case PMIX_PROC_INFO: return sizeof(pmix_proc_info_t);
    case PMIX_QUERY: return sizeof(pmix_query_t);
    case PMIX_ALLOC_DIRECTIVE: return sizeof(pmix_alloc_directive_t);
    case PMIX_IOF_CHANNEL: return sizeof(pmix_iof_channel_t);
    case PMIX_ENVAR: return sizeof(pmix_envar_t);
    case PMIX_COORD: return sizeof(pmix_coord_t);
    case PMIX_REGATTR: return sizeof(pmix_regattr_t);
    case PMIX_JOB_STATE: return sizeof(pmix_job_state_t);
    case PMIX_LINK_STATE: return sizeof(pmix_link_state_t);
    case PMIX_PROC_CPUSET: return sizeof(pmix_cpuset_t);
    case PMIX_GEOMETRY: return sizeof(pmix_geometry_t);
    case PMIX_DEVICE_DIST: return sizeof(pmix_device_distance_t);
    case PMIX_ENDPOINT: return sizeof(pmix_endpoint_t);
    case PMIX_TOPO: return sizeof(pmix_topology_t);
    case PMIX_DEVTYPE: return sizeof(pmix_device_type_t);
    case PMIX_LOCTYPE: return sizeof(pmix_locality_t);
    case PMIX_PROC_STATS: return sizeof(pmix_proc_stats_t);
    case PMIX_DISK_STATS: return sizeof(pmix_disk_stats_t);
    case PMIX_NET_STATS: return sizeof(pmix_net_stats_t);
    case PMIX_NODE_STATS: return sizeof(pmix_node_stats_t);
    case PMIX_DATA_BUFFER: return sizeof(pmix_data_buffer_t);
    case PMIX_STOR_MEDIUM: return sizeof(pmix_storage_medium_t);
    case PMIX_STOR_ACCESS: return sizeof(pmix_storage_accessibility_t);
    case PMIX_STOR_PERSIST: return sizeof(pmix_storage_persistence_t);
    case PMIX_STOR_ACCESS_TYPE: return sizeof(pmix_storage_access_type_t);
    default: return 0;
    }
}

/* Allocate n zeroed elements of type t; info arrays get their end marker
 * and device distances their "unknown" distances. */
static inline void pmix_hdr_darray_alloc(pmix_data_array_t *m, size_t n, pmix_data_type_t t)
{
    size_t k, sz = pmix_hdr_element_size(t);
    m->type = t;
    m->size = 0;
    m->array = NULL;
    if (n == 0 || sz == 0) return;
    m->array = calloc(n, sz);
    if (m->array == NULL) return;
    m->size = n;
    if (t == PMIX_INFO) {
        ((pmix_info_t *)m->array)[n - 1].flags = PMIX_INFO_ARRAY_END;
    } else if (t == PMIX_DEVICE_DIST) {
        for (k = 0; k < n; ++k) PMIX_DEVICE_DIST_CONSTRUCT(&((pmix_device_distance_t *)m->array)[k]);
    }
}

#define PMIX_DATA_ARRAY_CONSTRUCT(m, n, t) pmix_hdr_darray_alloc((m), (n), (t))
#define PMIX_DATA_ARRAY_CREATE(m, n, t)                                  \
    do {                                                                 \
        (m) = (pmix_data_array_t *)calloc(1, sizeof(pmix_data_array_t)); \
        if ((m) != NULL) pmix_hdr_darray_alloc((m), (n), (t));           \
    } while (0)
#define PMIX_DATA_ARRAY_DESTRUCT(m) PMIx_Data_array_destruct(m)
#define PMIX_DATA_ARRAY_FREE(m)                                          \
    do {                                                                 \
        if ((m) != NULL) {                                               \
            PMIx_Data_array_destruct(m);                                 \
            free(m);                                                     \
            (m) = NULL;                                                  \
        }                                                                \
    } while (0)


/* ---- Functions behind the convenience macros (PMIx v5 ABI) ----------------------------------
 * Programs built against PMIx v5 headers call these where v4 headers expanded the macros inline;
 * libpmix.so.2 exports them so both kinds of binaries run on it. */
PMIX_EXPORT pmix_status_t PMIx_Error_code(const char *errname);
PMIX_EXPORT char *PMIx_App_string(const pmix_app_t *app);
PMIX_EXPORT char *PMIx_Proc_string(const pmix_proc_t *proc);
PMIX_EXPORT pmix_status_t PMIx_Value_get_size(const pmix_value_t *val, size_t *size);
PMIX_EXPORT pmix_status_t PMIx_Info_get_size(const pmix_info_t *val, size_t *size);
PMIX_EXPORT void PMIx_Load_key(pmix_key_t key, const char *src);
PMIX_EXPORT bool PMIx_Check_key(const char *key, const char *str);
PMIX_EXPORT bool PMIx_Check_reserved_key(const char *key);
PMIX_EXPORT void PMIx_Load_nspace(pmix_nspace_t nspace, const char *str);
PMIX_EXPORT bool PMIx_Check_nspace(const char *key1, const char *key2);
PMIX_EXPORT bool PMIx_Nspace_invalid(const char *nspace);
PMIX_EXPORT void PMIx_Load_procid(pmix_proc_t *p, const char *ns, pmix_rank_t rk);
PMIX_EXPORT void PMIx_Xfer_procid(pmix_proc_t *dst, const pmix_proc_t *src);
PMIX_EXPORT bool PMIx_Check_procid(const pmix_proc_t *a, const pmix_proc_t *b);
PMIX_EXPORT bool PMIx_Check_rank(pmix_rank_t a, pmix_rank_t b);
PMIX_EXPORT bool PMIx_Procid_invalid(const pmix_proc_t *p);
PMIX_EXPORT int PMIx_Argv_count(char **a);
PMIX_EXPORT pmix_status_t PMIx_Argv_append_nosize(char ***argv, const char *arg);
PMIX_EXPORT pmix_status_t PMIx_Argv_prepend_nosize(char ***argv, const char *arg);
PMIX_EXPORT pmix_status_t PMIx_Argv_append_unique_nosize(char ***argv, const char *arg);
PMIX_EXPORT void PMIx_Argv_free(char **argv);
PMIX_EXPORT char **PMIx_Argv_split_inter(const char *src_string, int delimiter, bool include_empty);
PMIX_EXPORT char **PMIx_Argv_split_with_empty(const char *src_string, int delimiter);
PMIX_EXPORT char **PMIx_Argv_split(const char *src_string, int delimiter);
PMIX_EXPORT char *PMIx_Argv_join(char **argv, int delimiter);
PMIX_EXPORT char **PMIx_Argv_copy(char **argv);
PMIX_EXPORT pmix_status_t PMIx_Setenv(const char *name, const char *value, bool overwrite, char ***env);
PMIX_EXPORT void PMIx_Value_construct(pmix_value_t *val);
PMIX_EXPORT pmix_value_t *PMIx_Value_create(size_t n);
PMIX_EXPORT void PMIx_Value_free(pmix_value_t *v, size_t n);
PMIX_EXPORT pmix_boolean_t PMIx_Value_true(const pmix_value_t *v);
PMIX_EXPORT void PMIx_Data_array_init(pmix_data_array_t *p, pmix_data_type_t type);
PMIX_EXPORT void PMIx_Data_array_construct(pmix_data_array_t *p, size_t num, pmix_data_type_t type);
PMIX_EXPORT pmix_data_array_t *PMIx_Data_array_create(size_t n, pmix_data_type_t type);
PMIX_EXPORT void PMIx_Data_array_free(pmix_data_array_t *p);
PMIX_EXPORT void PMIx_Info_construct(pmix_info_t *p);
PMIX_EXPORT void PMIx_Info_destruct(pmix_info_t *p);
PMIX_EXPORT pmix_info_t *PMIx_Info_create(size_t n);
PMIX_EXPORT void PMIx_Info_free(pmix_info_t *p, size_t n);
PMIX_EXPORT pmix_boolean_t PMIx_Info_true(const pmix_info_t *p);
PMIX_EXPORT void PMIx_Info_required(pmix_info_t *p);
PMIX_EXPORT void PMIx_Info_optional(pmix_info_t *p);
PMIX_EXPORT bool PMIx_Info_is_required(const pmix_info_t *p);
PMIX_EXPORT bool PMIx_Info_is_optional(const pmix_info_t *p);
PMIX_EXPORT void PMIx_Info_processed(pmix_info_t *p);
PMIX_EXPORT bool PMIx_Info_was_processed(const pmix_info_t *p);
PMIX_EXPORT void PMIx_Info_set_end(pmix_info_t *p);
PMIX_EXPORT bool PMIx_Info_is_end(const pmix_info_t *p);
PMIX_EXPORT void PMIx_Info_qualifier(pmix_info_t *p);
PMIX_EXPORT bool PMIx_Info_is_qualifier(const pmix_info_t *p);
PMIX_EXPORT void PMIx_Info_persistent(pmix_info_t *p);
PMIX_EXPORT bool PMIx_Info_is_persistent(const pmix_info_t *p);
PMIX_EXPORT void PMIx_Coord_construct(pmix_coord_t *m);
PMIX_EXPORT void PMIx_Coord_destruct(pmix_coord_t *m);
PMIX_EXPORT pmix_coord_t *PMIx_Coord_create(size_t dims, size_t number);
PMIX_EXPORT void PMIx_Coord_free(pmix_coord_t *m, size_t number);
PMIX_EXPORT void PMIx_Topology_construct(pmix_topology_t *t);
PMIX_EXPORT pmix_topology_t *PMIx_Topology_create(size_t n);
PMIX_EXPORT void PMIx_Topology_free(pmix_topology_t *t, size_t n);
PMIX_EXPORT void PMIx_Cpuset_construct(pmix_cpuset_t *cpuset);
PMIX_EXPORT pmix_cpuset_t *PMIx_Cpuset_create(size_t n);
PMIX_EXPORT void PMIx_Cpuset_free(pmix_cpuset_t *c, size_t n);
PMIX_EXPORT void PMIx_Geometry_construct(pmix_geometry_t *g);
PMIX_EXPORT void PMIx_Geometry_destruct(pmix_geometry_t *g);
PMIX_EXPORT pmix_geometry_t *PMIx_Geometry_create(size_t n);
PMIX_EXPORT void PMIx_Geometry_free(pmix_geometry_t *g, size_t n);
PMIX_EXPORT void PMIx_Device_distance_construct(pmix_device_distance_t *d);
PMIX_EXPORT void PMIx_Device_distance_destruct(pmix_device_distance_t *d);
PMIX_EXPORT pmix_device_distance_t *PMIx_Device_distance_create(size_t n);
PMIX_EXPORT void PMIx_Device_distance_free(pmix_device_distance_t *d, size_t n);
PMIX_EXPORT void PMIx_Byte_object_construct(pmix_byte_object_t *b);
PMIX_EXPORT void PMIx_Byte_object_destruct(pmix_byte_object_t *g);
PMIX_EXPORT pmix_byte_object_t *PMIx_Byte_object_create(size_t n);
PMIX_EXPORT void PMIx_Byte_object_free(pmix_byte_object_t *g, size_t n);
PMIX_EXPORT void PMIx_Byte_object_load(pmix_byte_object_t *b, char *d, size_t sz);
PMIX_EXPORT void PMIx_Endpoint_construct(pmix_endpoint_t *e);
PMIX_EXPORT void PMIx_Endpoint_destruct(pmix_endpoint_t *e);
PMIX_EXPORT pmix_endpoint_t *PMIx_Endpoint_create(size_t n);
PMIX_EXPORT void PMIx_Endpoint_free(pmix_endpoint_t *e, size_t n);
PMIX_EXPORT void PMIx_Envar_construct(pmix_envar_t *e);
PMIX_EXPORT void PMIx_Envar_destruct(pmix_envar_t *e);
PMIX_EXPORT pmix_envar_t *PMIx_Envar_create(size_t n);
PMIX_EXPORT void PMIx_Envar_free(pmix_envar_t *e, size_t n);
PMIX_EXPORT void PMIx_Envar_load(pmix_envar_t *e, char *var, char *value, char separator);
PMIX_EXPORT void PMIx_Data_buffer_construct(pmix_data_buffer_t *b);
PMIX_EXPORT void PMIx_Data_buffer_destruct(pmix_data_buffer_t *b);
PMIX_EXPORT pmix_data_buffer_t *PMIx_Data_buffer_create(void);
PMIX_EXPORT void PMIx_Data_buffer_release(pmix_data_buffer_t *b);
PMIX_EXPORT void PMIx_Data_buffer_load(pmix_data_buffer_t *b, char *bytes, size_t sz);
PMIX_EXPORT void PMIx_Data_buffer_unload(pmix_data_buffer_t *b, char **bytes, size_t *sz);
PMIX_EXPORT void PMIx_Proc_construct(pmix_proc_t *p);
PMIX_EXPORT void PMIx_Proc_destruct(pmix_proc_t *p);
PMIX_EXPORT pmix_proc_t *PMIx_Proc_create(size_t n);
PMIX_EXPORT void PMIx_Proc_free(pmix_proc_t *p, size_t n);
PMIX_EXPORT void PMIx_Proc_load(pmix_proc_t *p, const char *nspace, pmix_rank_t rank);
PMIX_EXPORT void PMIx_Multicluster_nspace_construct(pmix_nspace_t target, pmix_nspace_t cluster, pmix_nspace_t nspace);
PMIX_EXPORT void PMIx_Multicluster_nspace_parse(pmix_nspace_t target, pmix_nspace_t cluster, pmix_nspace_t nspace);
PMIX_EXPORT void PMIx_Proc_info_construct(pmix_proc_info_t *p);
PMIX_EXPORT void PMIx_Proc_info_destruct(pmix_proc_info_t *p);
PMIX_EXPORT pmix_proc_info_t *PMIx_Proc_info_create(size_t n);
PMIX_EXPORT void PMIx_Proc_info_free(pmix_proc_info_t *p, size_t n);
PMIX_EXPORT void PMIx_Proc_stats_construct(pmix_proc_stats_t *p);
PMIX_EXPORT void PMIx_Proc_stats_destruct(pmix_proc_stats_t *p);
PMIX_EXPORT pmix_proc_stats_t *PMIx_Proc_stats_create(size_t n);
PMIX_EXPORT void PMIx_Proc_stats_free(pmix_proc_stats_t *p, size_t n);
PMIX_EXPORT void PMIx_Disk_stats_construct(pmix_disk_stats_t *p);
PMIX_EXPORT void PMIx_Disk_stats_destruct(pmix_disk_stats_t *p);
PMIX_EXPORT pmix_disk_stats_t *PMIx_Disk_stats_create(size_t n);
PMIX_EXPORT void PMIx_Disk_stats_free(pmix_disk_stats_t *p, size_t n);
PMIX_EXPORT void PMIx_Net_stats_construct(pmix_net_stats_t *p);
PMIX_EXPORT void PMIx_Net_stats_destruct(pmix_net_stats_t *p);
PMIX_EXPORT pmix_net_stats_t *PMIx_Net_stats_create(size_t n);
PMIX_EXPORT void PMIx_Net_stats_free(pmix_net_stats_t *p, size_t n);
PMIX_EXPORT void PMIx_Pdata_construct(pmix_pdata_t *p);
PMIX_EXPORT void PMIx_Pdata_destruct(pmix_pdata_t *p);
PMIX_EXPORT pmix_pdata_t *PMIx_Pdata_create(size_t n);
PMIX_EXPORT void PMIx_Pdata_free(pmix_pdata_t *p, size_t n);
PMIX_EXPORT void PMIx_App_construct(pmix_app_t *p);
PMIX_EXPORT void PMIx_App_destruct(pmix_app_t *p);
PMIX_EXPORT pmix_app_t *PMIx_App_create(size_t n);
PMIX_EXPORT void PMIx_App_info_create(pmix_app_t *p, size_t n);
PMIX_EXPORT void PMIx_App_free(pmix_app_t *p, size_t n);
PMIX_EXPORT void PMIx_App_release(pmix_app_t *p);
PMIX_EXPORT pmix_status_t PMIx_Info_list_prepend(void *ptr, const char *key, const void *value, pmix_data_type_t type);
PMIX_EXPORT pmix_info_t *PMIx_Info_list_get_info(void *ptr, void *prev, void **next);
PMIX_EXPORT void PMIx_Node_stats_construct(pmix_node_stats_t *p);
PMIX_EXPORT void PMIx_Node_stats_destruct(pmix_node_stats_t *p);
PMIX_EXPORT pmix_node_stats_t *PMIx_Node_stats_create(size_t n);
PMIX_EXPORT void PMIx_Node_stats_free(pmix_node_stats_t *p, size_t n);
PMIX_EXPORT void PMIx_Query_construct(pmix_query_t *p);
PMIX_EXPORT void PMIx_Query_destruct(pmix_query_t *p);
PMIX_EXPORT pmix_query_t *PMIx_Query_create(size_t n);
PMIX_EXPORT void PMIx_Query_qualifiers_create(pmix_query_t *p, size_t n);
PMIX_EXPORT void PMIx_Query_free(pmix_query_t *p, size_t n);
PMIX_EXPORT void PMIx_Query_release(pmix_query_t *p);
PMIX_EXPORT void PMIx_Regattr_construct(pmix_regattr_t *p);
PMIX_EXPORT void PMIx_Regattr_destruct(pmix_regattr_t *p);
PMIX_EXPORT pmix_regattr_t *PMIx_Regattr_create(size_t n);
PMIX_EXPORT void PMIx_Regattr_free(pmix_regattr_t *p, size_t n);
PMIX_EXPORT void PMIx_Regattr_load(pmix_regattr_t *info, const char *name, const char *key, pmix_data_type_t type, const char *description);
PMIX_EXPORT void PMIx_Regattr_xfer(pmix_regattr_t *dest, const pmix_regattr_t *src);
PMIX_EXPORT void PMIx_Fabric_construct(pmix_regattr_t *p);

#ifdef __cplusplus
}
#endif

#endif /* PMIXCPP_PMIX_COMMON_H */

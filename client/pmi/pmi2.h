/* PMI-2: the second-generation Process Management Interface, as pmixcpp's libpmi2.so.0 provides
 * it over the PMIx client library (libpmix.so.2). Signatures and constants are those shared by
 * MPICH's and Slurm's pmi2.h, so programs built against either run on this library.
 * client/pmi/README.md says how each call maps to PMIx. */
#ifndef PMI2_H_INCLUDED
#define PMI2_H_INCLUDED

#define PMI2_MAX_KEYLEN 64
#define PMI2_MAX_VALLEN 1024
#define PMI2_MAX_ATTRVALUE 1024
#define PMI2_ID_NULL -1

#if defined(__cplusplus)
extern "C" {
#endif

#define PMI2_SUCCESS 0
#define PMI2_FAIL -1
#define PMI2_ERR_INIT 1
#define PMI2_ERR_NOMEM 2
#define PMI2_ERR_INVALID_ARG 3
#define PMI2_ERR_INVALID_KEY 4
#define PMI2_ERR_INVALID_KEY_LENGTH 5
#define PMI2_ERR_INVALID_VAL 6
#define PMI2_ERR_INVALID_VAL_LENGTH 7
#define PMI2_ERR_INVALID_LENGTH 8
#define PMI2_ERR_INVALID_NUM_ARGS 9
#define PMI2_ERR_INVALID_ARGS 10
#define PMI2_ERR_INVALID_NUM_PARSED 11
#define PMI2_ERR_INVALID_KEYVALP 12
#define PMI2_ERR_INVALID_SIZE 13
#define PMI2_ERR_OTHER 14

#ifndef PMI_KEYVAL_T_DEFINED
#define PMI_KEYVAL_T_DEFINED
typedef struct PMI_keyval_t {
    char *key;
    char *val;
} PMI_keyval_t;
#endif

typedef struct PMI2_Connect_comm {
    int (*read)(void *buf, int maxlen, void *ctx);
    int (*write)(const void *buf, int len, void *ctx);
    void *ctx;
    int isMaster;
} PMI2_Connect_comm_t;

/* MPICH names the info argument of the name service calls `struct MPIR_Info`, Slurm `struct
 * MPID_Info`; it is an opaque pointer here (NULL is what callers pass). */
int PMI2_Init(int *spawned, int *size, int *rank, int *appnum);
int PMI2_Finalize(void);
int PMI2_Initialized(void);
int PMI2_Abort(int flag, const char msg[]);
int PMI2_Job_Spawn(int count, const char *cmds[], int argcs[], const char **argvs[], const int maxprocs[],
                   const int info_keyval_sizes[], const PMI_keyval_t *info_keyval_vectors[],
                   int preput_keyval_size, const PMI_keyval_t *preput_keyval_vector[], char jobId[],
                   int jobIdSize, int errors[]);
int PMI2_Job_GetId(char jobid[], int jobid_size);
int PMI2_Job_GetRank(int *rank);
int PMI2_Info_GetSize(int *size);
int PMI2_Job_Connect(const char jobid[], PMI2_Connect_comm_t *conn);
int PMI2_Job_Disconnect(const char jobid[]);
int PMI2_KVS_Put(const char key[], const char value[]);
int PMI2_KVS_Fence(void);
int PMI2_KVS_Get(const char *jobid, int src_pmi_id, const char key[], char value[], int maxvalue, int *vallen);
int PMI2_Info_GetNodeAttr(const char name[], char value[], int valuelen, int *found, int waitfor);
int PMI2_Info_GetNodeAttrIntArray(const char name[], int array[], int arraylen, int *outlen, int *found);
int PMI2_Info_PutNodeAttr(const char name[], const char value[]);
int PMI2_Info_GetJobAttr(const char name[], char value[], int valuelen, int *found);
int PMI2_Info_GetJobAttrIntArray(const char name[], int array[], int arraylen, int *outlen, int *found);
int PMI2_Nameserv_publish(const char service_name[], const void *info_ptr, const char port[]);
int PMI2_Nameserv_lookup(const char service_name[], const void *info_ptr, char port[], int portLen);
int PMI2_Nameserv_unpublish(const char service_name[], const void *info_ptr);

#if defined(__cplusplus)
}
#endif
#endif /* PMI2_H_INCLUDED */

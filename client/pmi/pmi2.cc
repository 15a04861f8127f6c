// libpmi2.so.0: the PMI-2 API (pmi2.h) over session.h. Each function checks its arguments, runs the
// session call inside `guarded` (no C++ exception leaves), and maps the PMIx status to PMI-2's.
#include "pmi2.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "session.h"

#define PMI2_API extern "C" __attribute__((visibility("default")))

using pmixcpp::pmi::copy_out;
using pmixcpp::pmi::debug;
using pmixcpp::pmi::guarded;
using pmixcpp::pmi::session;

namespace {

int to_pmi2(pmix_status_t rc) {
    switch (rc) {
    case PMIX_SUCCESS: return PMI2_SUCCESS;
    case PMIX_ERR_INIT: return PMI2_ERR_INIT;
    case PMIX_ERR_NOMEM: return PMI2_ERR_NOMEM;
    case PMIX_ERR_BAD_PARAM: return PMI2_ERR_INVALID_ARG;
    default: return PMI2_FAIL;
    }
}

session &S() { return session::instance(); }

int check_key(const char key[]) {
    if (key == nullptr || key[0] == '\0') return PMI2_ERR_INVALID_KEY;
    if (strnlen(key, pmixcpp::pmi::kMaxKeyLen + 1) > pmixcpp::pmi::kMaxKeyLen) return PMI2_ERR_INVALID_KEY_LENGTH;
    if (!pmixcpp::pmi::valid_key(key)) return PMI2_ERR_INVALID_KEY;
    return PMI2_SUCCESS;
}

// "found" lookups (node and job attributes): not found is success with *found = 0.
int found_out(pmix_status_t rc, const std::string &v, char value[], int valuelen, int *found) {
    if (rc == PMIX_ERR_NOT_FOUND) {
        *found = 0;
        return PMI2_SUCCESS;
    }
    if (rc != PMIX_SUCCESS) return to_pmi2(rc);
    if (!copy_out(v, value, valuelen)) return PMI2_ERR_INVALID_VAL_LENGTH;
    *found = 1;
    return PMI2_SUCCESS;
}

// "1,2,3" into array[arraylen]; false when a member is not a number.
bool int_array(const std::string &v, int array[], int arraylen, int *outlen) {
    int n = 0;
    const char *p = v.c_str();
    while (*p && n < arraylen) {
        char *end = nullptr;
        long x = strtol(p, &end, 10);
        if (end == p || (*end != ',' && *end != '\0')) return false;
        array[n++] = static_cast<int>(x);
        p = *end == ',' ? end + 1 : end;
    }
    *outlen = n;
    return true;
}

}  // namespace

PMI2_API int PMI2_Init(int *spawned, int *size, int *rank, int *appnum) {
    return to_pmi2(guarded([&] {
        pmix_status_t rc = S().init();
        if (rc != PMIX_SUCCESS) return rc;
        if (spawned) *spawned = S().spawned() ? 1 : 0;
        if (size) *size = static_cast<int>(S().size());
        if (rank) *rank = static_cast<int>(S().self().rank);
        if (appnum) *appnum = static_cast<int>(S().appnum());
        return rc;
    }));
}

PMI2_API int PMI2_Finalize(void) {
    return to_pmi2(guarded([] { return S().finalize(); }));
}

PMI2_API int PMI2_Initialized(void) { return S().initialized() ? 1 : 0; }

PMI2_API int PMI2_Abort(int flag, const char msg[]) {
    pmix_status_t rc = guarded([&] { return S().abort(1, msg, flag != 0); });
    // PMI2_Abort does not return: flag 0 ends this process only, and so does a failed abort.
    if (rc != PMIX_SUCCESS) fprintf(stderr, "PMI2_Abort: %s\n", msg ? msg : "");
    fflush(nullptr);
    _exit(1);
}

// PMIx_Spawn of the commands as one new job, whose namespace is the job id; preput keys reach
// its KVS (session.h). argvs[i] has argcs[i] arguments, without the command; info key "wdir" is
// the working directory.
PMI2_API int PMI2_Job_Spawn(int count, const char *cmds[], int argcs[], const char **argvs[], const int maxprocs[],
                            const int info_keyval_sizes[], const PMI_keyval_t *info_keyval_vectors[],
                            int preput_keyval_size, const PMI_keyval_t *preput_keyval_vector[], char jobId[],
                            int jobIdSize, int errors[]) {
    if (count <= 0 || cmds == nullptr || maxprocs == nullptr || preput_keyval_size < 0 ||
        (preput_keyval_size > 0 && preput_keyval_vector == nullptr))
        return PMI2_ERR_INVALID_ARG;
    int err = PMI2_SUCCESS;
    pmix_status_t rc = guarded([&] {
        std::vector<session::spawn_app> apps(static_cast<size_t>(count));
        for (int i = 0; i < count; ++i) {
            if (cmds[i] == nullptr) return PMIX_ERR_BAD_PARAM;
            apps[i].cmd = cmds[i];
            apps[i].maxprocs = maxprocs[i];
            int argc = argcs ? argcs[i] : 0;
            for (int k = 0; k < argc && argvs && argvs[i] && argvs[i][k]; ++k) apps[i].args.emplace_back(argvs[i][k]);
            int n = info_keyval_sizes ? info_keyval_sizes[i] : 0;
            for (int k = 0; k < n && info_keyval_vectors && info_keyval_vectors[i]; ++k) {
                const PMI_keyval_t &kv = info_keyval_vectors[i][k];
                if (kv.key && kv.val && strcmp(kv.key, "wdir") == 0) apps[i].cwd = kv.val;
                else if (kv.key) debug("spawn: info key %s is not used", kv.key);
            }
        }
        // preput_keyval_vector[k] points to the k-th pair, as this header declares it. (MPICH and
        // Slurm pass their MPI_Info objects there, whose layouts differ from each other's.)
        std::vector<std::pair<std::string, std::string>> preput;
        for (int k = 0; k < preput_keyval_size; ++k) {
            const PMI_keyval_t *kv = preput_keyval_vector[k];
            if (kv == nullptr || !kv->key || !kv->val) return PMIX_ERR_BAD_PARAM;
            preput.emplace_back(kv->key, kv->val);
        }
        std::string child;
        pmix_status_t st = S().spawn(apps, preput, &child);
        if (st == PMIX_SUCCESS && jobId != nullptr && !copy_out(child, jobId, jobIdSize)) err = PMI2_ERR_INVALID_LENGTH;
        return st;
    });
    if (errors != nullptr)
        for (int i = 0; i < count; ++i) errors[i] = to_pmi2(rc);
    return rc != PMIX_SUCCESS ? to_pmi2(rc) : err;
}

PMI2_API int PMI2_Job_GetId(char jobid[], int jobid_size) {
    if (jobid == nullptr || jobid_size <= 0) return PMI2_ERR_INVALID_ARG;
    if (!S().initialized()) return PMI2_ERR_INIT;
    return copy_out(S().self().nspace, jobid, jobid_size) ? PMI2_SUCCESS : PMI2_ERR_INVALID_LENGTH;
}

PMI2_API int PMI2_Job_GetRank(int *rank) {
    if (rank == nullptr) return PMI2_ERR_INVALID_ARG;
    if (!S().initialized()) return PMI2_ERR_INIT;
    *rank = static_cast<int>(S().self().rank);
    return PMI2_SUCCESS;
}

// The job's size, as Slurm's libpmi2 answers.
PMI2_API int PMI2_Info_GetSize(int *size) {
    if (size == nullptr) return PMI2_ERR_INVALID_ARG;
    if (!S().initialized()) return PMI2_ERR_INIT;
    *size = static_cast<int>(S().size());
    return PMI2_SUCCESS;
}

// Connecting jobs through PMI-2 is not offered (PMIx_Connect is, to PMIx programs).
PMI2_API int PMI2_Job_Connect(const char jobid[], PMI2_Connect_comm_t *conn) {
    debug("PMI2_Job_Connect is not supported");
    return PMI2_FAIL;
}
PMI2_API int PMI2_Job_Disconnect(const char jobid[]) {
    debug("PMI2_Job_Disconnect is not supported");
    return PMI2_FAIL;
}

PMI2_API int PMI2_KVS_Put(const char key[], const char value[]) {
    if (!S().initialized()) return PMI2_ERR_INIT;
    int e = check_key(key);
    if (e != PMI2_SUCCESS) return e;
    if (value == nullptr) return PMI2_ERR_INVALID_VAL;
    if (strnlen(value, pmixcpp::pmi::kMaxValueLen + 1) > pmixcpp::pmi::kMaxValueLen) return PMI2_ERR_INVALID_VAL_LENGTH;
    return to_pmi2(guarded([&] { return S().put(key, value); }));
}

PMI2_API int PMI2_KVS_Fence(void) {
    return to_pmi2(guarded([] { return S().fence(); }));
}

// src_pmi_id is a hint PMI-2 allows; the key directory knows who put a key (session.h).
// A value longer than maxvalue is cut, and *vallen is minus its length (the PMI-2 convention).
PMI2_API int PMI2_KVS_Get(const char *jobid, int src_pmi_id, const char key[], char value[], int maxvalue,
                          int *vallen) {
    if (!S().initialized()) return PMI2_ERR_INIT;
    int e = check_key(key);
    if (e != PMI2_SUCCESS) return e;
    if (value == nullptr || maxvalue <= 0) return PMI2_ERR_INVALID_ARG;
    return to_pmi2(guarded([&] {
        std::string v;
        pmix_status_t rc = S().get(jobid, key, &v);
        if (rc != PMIX_SUCCESS) return rc;
        size_t n = std::min(v.size(), static_cast<size_t>(maxvalue) - 1);
        memcpy(value, v.data(), n);
        value[n] = '\0';
        if (vallen) *vallen = n == v.size() ? static_cast<int>(n) : -static_cast<int>(v.size());
        return PMIX_SUCCESS;
    }));
}

PMI2_API int PMI2_Info_GetNodeAttr(const char name[], char value[], int valuelen, int *found, int waitfor) {
    if (!S().initialized()) return PMI2_ERR_INIT;
    int e = check_key(name);
    if (e != PMI2_SUCCESS) return e;
    if (value == nullptr || valuelen <= 0 || found == nullptr) return PMI2_ERR_INVALID_ARG;
    *found = 0;
    int out = PMI2_SUCCESS;
    pmix_status_t rc = guarded([&] {
        std::string v;
        pmix_status_t st = S().get_node_attr(name, waitfor != 0, &v);
        out = found_out(st, v, value, valuelen, found);
        return PMIX_SUCCESS;
    });
    return rc != PMIX_SUCCESS ? to_pmi2(rc) : out;
}

PMI2_API int PMI2_Info_GetNodeAttrIntArray(const char name[], int array[], int arraylen, int *outlen, int *found) {
    if (!S().initialized()) return PMI2_ERR_INIT;
    int e = check_key(name);
    if (e != PMI2_SUCCESS) return e;
    if (array == nullptr || arraylen < 0 || outlen == nullptr || found == nullptr) return PMI2_ERR_INVALID_ARG;
    *found = 0;
    int out = PMI2_SUCCESS;
    pmix_status_t rc = guarded([&] {
        std::string v;
        pmix_status_t st = S().get_node_attr(name, false, &v);
        if (st == PMIX_ERR_NOT_FOUND) return PMIX_SUCCESS;
        if (st != PMIX_SUCCESS) return st;
        if (!int_array(v, array, arraylen, outlen)) out = PMI2_ERR_INVALID_VAL;
        else *found = 1;
        return PMIX_SUCCESS;
    });
    return rc != PMIX_SUCCESS ? to_pmi2(rc) : out;
}

PMI2_API int PMI2_Info_PutNodeAttr(const char name[], const char value[]) {
    if (!S().initialized()) return PMI2_ERR_INIT;
    int e = check_key(name);
    if (e != PMI2_SUCCESS) return e;
    if (value == nullptr) return PMI2_ERR_INVALID_VAL;
    return to_pmi2(guarded([&] { return S().put_node_attr(name, value); }));
}

PMI2_API int PMI2_Info_GetJobAttr(const char name[], char value[], int valuelen, int *found) {
    if (!S().initialized()) return PMI2_ERR_INIT;
    int e = check_key(name);
    if (e != PMI2_SUCCESS) return e;
    if (value == nullptr || valuelen <= 0 || found == nullptr) return PMI2_ERR_INVALID_ARG;
    *found = 0;
    int out = PMI2_SUCCESS;
    pmix_status_t rc = guarded([&] {
        std::string v;
        pmix_status_t st = S().job_attr(name, &v);
        out = found_out(st, v, value, valuelen, found);
        return PMIX_SUCCESS;
    });
    return rc != PMIX_SUCCESS ? to_pmi2(rc) : out;
}

PMI2_API int PMI2_Info_GetJobAttrIntArray(const char name[], int array[], int arraylen, int *outlen, int *found) {
    if (!S().initialized()) return PMI2_ERR_INIT;
    int e = check_key(name);
    if (e != PMI2_SUCCESS) return e;
    if (array == nullptr || arraylen < 0 || outlen == nullptr || found == nullptr) return PMI2_ERR_INVALID_ARG;
    *found = 0;
    int out = PMI2_SUCCESS;
    pmix_status_t rc = guarded([&] {
        std::string v;
        pmix_status_t st = S().job_attr(name, &v);
        if (st == PMIX_ERR_NOT_FOUND) return PMIX_SUCCESS;
        if (st != PMIX_SUCCESS) return st;
        if (!int_array(v, array, arraylen, outlen)) out = PMI2_ERR_INVALID_VAL;
        else *found = 1;
        return PMIX_SUCCESS;
    });
    return rc != PMIX_SUCCESS ? to_pmi2(rc) : out;
}

PMI2_API int PMI2_Nameserv_publish(const char service_name[], const void *info_ptr, const char port[]) {
    if (service_name == nullptr || port == nullptr) return PMI2_ERR_INVALID_ARG;
    return to_pmi2(guarded([&] { return S().publish(service_name, port); }));
}

PMI2_API int PMI2_Nameserv_lookup(const char service_name[], const void *info_ptr, char port[], int portLen) {
    if (service_name == nullptr || port == nullptr || portLen <= 0) return PMI2_ERR_INVALID_ARG;
    int err = PMI2_SUCCESS;
    pmix_status_t rc = guarded([&] {
        std::string p;
        pmix_status_t st = S().lookup(service_name, &p);
        if (st == PMIX_SUCCESS && !copy_out(p, port, portLen)) err = PMI2_ERR_INVALID_LENGTH;
        return st;
    });
    return rc != PMIX_SUCCESS ? to_pmi2(rc) : err;
}

PMI2_API int PMI2_Nameserv_unpublish(const char service_name[], const void *info_ptr) {
    if (service_name == nullptr) return PMI2_ERR_INVALID_ARG;
    return to_pmi2(guarded([&] { return S().unpublish(service_name); }));
}

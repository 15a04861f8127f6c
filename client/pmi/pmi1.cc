// libpmi.so.0: the PMI-1 API (pmi.h) over session.h. Each function checks its arguments, runs the
// session call inside `guarded` (no C++ exception leaves), and maps the PMIx status to PMI's.
#include "pmi.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "session.h"

#define PMI_API extern "C" __attribute__((visibility("default")))

using pmixcpp::pmi::copy_out;
using pmixcpp::pmi::debug;
using pmixcpp::pmi::guarded;
using pmixcpp::pmi::session;

namespace {

int to_pmi(pmix_status_t rc) {
    switch (rc) {
    case PMIX_SUCCESS: return PMI_SUCCESS;
    case PMIX_ERR_INIT: return PMI_ERR_INIT;
    case PMIX_ERR_NOMEM: return PMI_ERR_NOMEM;
    case PMIX_ERR_BAD_PARAM: return PMI_ERR_INVALID_ARG;
    case PMIX_ERR_INVALID_NAMESPACE: return PMI_ERR_INVALID_KVS;
    default: return PMI_FAIL;
    }
}

session &S() { return session::instance(); }

// PMI-1 has no buffer length for PMI_Lookup_name's port: MPI's MPI_MAX_PORT_NAME (256) it is.
constexpr int kPortBuf = 256;

// The KVS calls name the KVS: ours (PMI_KVS_Get_my_name) is the only one.
int check_kvs(const char kvsname[]) {
    if (!S().initialized()) return PMI_ERR_INIT;
    if (kvsname == nullptr) return PMI_ERR_INVALID_ARG;
    if (strncmp(kvsname, S().self().nspace, PMIX_MAX_NSLEN + 1) != 0) {
        debug("KVS %s is not this job's (%s)", kvsname, S().self().nspace);
        return PMI_ERR_INVALID_KVS;
    }
    return PMI_SUCCESS;
}

int check_key(const char key[]) {
    if (key == nullptr || key[0] == '\0') return PMI_ERR_INVALID_KEY;
    if (strnlen(key, pmixcpp::pmi::kMaxKeyLen + 1) > pmixcpp::pmi::kMaxKeyLen) return PMI_ERR_INVALID_KEY_LENGTH;
    if (!pmixcpp::pmi::valid_key(key)) return PMI_ERR_INVALID_KEY;
    return PMI_SUCCESS;
}

int get_u32(int *out, uint32_t (session::*what)() const) {
    if (out == nullptr) return PMI_ERR_INVALID_ARG;
    if (!S().initialized()) return PMI_ERR_INIT;
    *out = static_cast<int>((S().*what)());
    return PMI_SUCCESS;
}

int copy_id(char id[], int length) {
    if (id == nullptr || length <= 0) return PMI_ERR_INVALID_ARG;
    if (!S().initialized()) return PMI_ERR_INIT;
    return copy_out(S().self().nspace, id, length) ? PMI_SUCCESS : PMI_ERR_INVALID_LENGTH;
}

}  // namespace

PMI_API int PMI_Init(int *spawned) {
    if (spawned == nullptr) return PMI_ERR_INVALID_ARG;
    return to_pmi(guarded([&] {
        pmix_status_t rc = S().init();
        if (rc == PMIX_SUCCESS) *spawned = S().spawned() ? PMI_TRUE : PMI_FALSE;
        return rc;
    }));
}

PMI_API int PMI_Initialized(PMI_BOOL *initialized) {
    if (initialized == nullptr) return PMI_ERR_INVALID_ARG;
    *initialized = S().initialized() ? PMI_TRUE : PMI_FALSE;
    return PMI_SUCCESS;
}

PMI_API int PMI_Finalize(void) {
    return to_pmi(guarded([] { return S().finalize(); }));
}

PMI_API int PMI_Abort(int exit_code, const char error_msg[]) {
    pmix_status_t rc = guarded([&] { return S().abort(exit_code, error_msg, true); });
    // PMI_Abort does not return: if the job was not ended for us, end this process.
    if (rc != PMIX_SUCCESS) fprintf(stderr, "PMI_Abort: %s\n", error_msg ? error_msg : "");
    fflush(nullptr);
    _exit(exit_code != 0 ? exit_code : 1);
}

PMI_API int PMI_Get_size(int *size) { return get_u32(size, &session::size); }
PMI_API int PMI_Get_universe_size(int *size) { return get_u32(size, &session::universe_size); }
PMI_API int PMI_Get_appnum(int *appnum) { return get_u32(appnum, &session::appnum); }

PMI_API int PMI_Get_rank(int *rank) {
    if (rank == nullptr) return PMI_ERR_INVALID_ARG;
    if (!S().initialized()) return PMI_ERR_INIT;
    *rank = static_cast<int>(S().self().rank);
    return PMI_SUCCESS;
}

PMI_API int PMI_Get_id(char id_str[], int length) { return copy_id(id_str, length); }
PMI_API int PMI_Get_kvs_domain_id(char id_str[], int length) { return copy_id(id_str, length); }
PMI_API int PMI_KVS_Get_my_name(char kvsname[], int length) { return copy_id(kvsname, length); }

PMI_API int PMI_Get_id_length_max(int *length) {
    if (length == nullptr) return PMI_ERR_INVALID_ARG;
    *length = PMIX_MAX_NSLEN + 1;
    return PMI_SUCCESS;
}
PMI_API int PMI_KVS_Get_name_length_max(int *length) { return PMI_Get_id_length_max(length); }

PMI_API int PMI_KVS_Get_key_length_max(int *length) {
    if (length == nullptr) return PMI_ERR_INVALID_ARG;
    *length = static_cast<int>(pmixcpp::pmi::kMaxKeyLen);
    return PMI_SUCCESS;
}

PMI_API int PMI_KVS_Get_value_length_max(int *length) {
    if (length == nullptr) return PMI_ERR_INVALID_ARG;
    *length = 1024;  // what MPICH and Slurm say; longer values are taken too
    return PMI_SUCCESS;
}

PMI_API int PMI_Get_clique_size(int *size) {
    if (size == nullptr) return PMI_ERR_INVALID_ARG;
    return to_pmi(guarded([&] {
        std::vector<uint32_t> ranks;
        pmix_status_t rc = S().local_ranks(&ranks);
        if (rc == PMIX_SUCCESS) *size = static_cast<int>(ranks.size());
        return rc;
    }));
}

PMI_API int PMI_Get_clique_ranks(int ranks[], int length) {
    if (ranks == nullptr || length < 0) return PMI_ERR_INVALID_ARG;
    int err = PMI_SUCCESS;
    pmix_status_t rc = guarded([&] {
        std::vector<uint32_t> local;
        pmix_status_t st = S().local_ranks(&local);
        if (st != PMIX_SUCCESS) return st;
        if (local.size() > static_cast<size_t>(length)) {
            err = PMI_ERR_INVALID_LENGTH;
            return PMIX_SUCCESS;
        }
        for (size_t i = 0; i < local.size(); ++i) ranks[i] = static_cast<int>(local[i]);
        return PMIX_SUCCESS;
    });
    return rc != PMIX_SUCCESS ? to_pmi(rc) : err;
}

PMI_API int PMI_Barrier(void) {
    return to_pmi(guarded([] { return S().fence(); }));
}

PMI_API int PMI_KVS_Put(const char kvsname[], const char key[], const char value[]) {
    int e = check_kvs(kvsname);
    if (e == PMI_SUCCESS) e = check_key(key);
    if (e != PMI_SUCCESS) return e;
    if (value == nullptr) return PMI_ERR_INVALID_VAL;
    if (strnlen(value, pmixcpp::pmi::kMaxValueLen + 1) > pmixcpp::pmi::kMaxValueLen) return PMI_ERR_INVALID_VAL_LENGTH;
    return to_pmi(guarded([&] { return S().put(key, value); }));
}

PMI_API int PMI_KVS_Commit(const char kvsname[]) {
    int e = check_kvs(kvsname);
    if (e != PMI_SUCCESS) return e;
    return to_pmi(guarded([] { return S().commit(); }));
}

PMI_API int PMI_KVS_Get(const char kvsname[], const char key[], char value[], int length) {
    int e = check_kvs(kvsname);
    if (e == PMI_SUCCESS) e = check_key(key);
    if (e != PMI_SUCCESS) return e;
    if (value == nullptr || length <= 0) return PMI_ERR_INVALID_ARG;
    int err = PMI_SUCCESS;
    pmix_status_t rc = guarded([&] {
        std::string v;
        pmix_status_t st = S().get(kvsname, key, &v);
        if (st == PMIX_SUCCESS && !copy_out(v, value, length)) err = PMI_ERR_INVALID_LENGTH;
        return st;
    });
    return rc != PMIX_SUCCESS ? to_pmi(rc) : err;
}

// One KVS per job, made by the resource manager: no others, no iteration (as Slurm's libpmi).
PMI_API int PMI_KVS_Create(char kvsname[], int length) { return PMI_FAIL; }
PMI_API int PMI_KVS_Destroy(const char kvsname[]) { return PMI_FAIL; }
PMI_API int PMI_KVS_Iter_first(const char kvsname[], char key[], int key_len, char val[], int val_len) {
    return PMI_FAIL;
}
PMI_API int PMI_KVS_Iter_next(const char kvsname[], char key[], int key_len, char val[], int val_len) {
    return PMI_FAIL;
}

PMI_API int PMI_Publish_name(const char service_name[], const char port[]) {
    if (service_name == nullptr || port == nullptr) return PMI_ERR_INVALID_ARG;
    if (strnlen(port, kPortBuf) >= static_cast<size_t>(kPortBuf)) return PMI_ERR_INVALID_LENGTH;
    return to_pmi(guarded([&] { return S().publish(service_name, port); }));
}

PMI_API int PMI_Unpublish_name(const char service_name[]) {
    if (service_name == nullptr) return PMI_ERR_INVALID_ARG;
    return to_pmi(guarded([&] { return S().unpublish(service_name); }));
}

PMI_API int PMI_Lookup_name(const char service_name[], char port[]) {
    if (service_name == nullptr || port == nullptr) return PMI_ERR_INVALID_ARG;
    int err = PMI_SUCCESS;
    pmix_status_t rc = guarded([&] {
        std::string p;
        pmix_status_t st = S().lookup(service_name, &p);
        if (st == PMIX_SUCCESS && !copy_out(p, port, kPortBuf)) err = PMI_ERR_INVALID_LENGTH;
        return st;
    });
    return rc != PMIX_SUCCESS ? to_pmi(rc) : err;
}

// PMIx_Spawn of the commands as one new job; preput keys reach its KVS (session.h). PMI-1 argv
// arrays are NULL-terminated and exclude the command; info key "wdir" is the working directory.
PMI_API int PMI_Spawn_multiple(int count, const char *cmds[], const char **argvs[], const int maxprocs[],
                               const int info_keyval_sizesp[], const PMI_keyval_t *info_keyval_vectors[],
                               int preput_keyval_size, const PMI_keyval_t preput_keyval_vector[], int errors[]) {
    if (count <= 0 || cmds == nullptr || maxprocs == nullptr || preput_keyval_size < 0 ||
        (preput_keyval_size > 0 && preput_keyval_vector == nullptr))
        return PMI_ERR_INVALID_ARG;
    pmix_status_t rc = guarded([&] {
        std::vector<session::spawn_app> apps(static_cast<size_t>(count));
        for (int i = 0; i < count; ++i) {
            if (cmds[i] == nullptr) return PMIX_ERR_BAD_PARAM;
            apps[i].cmd = cmds[i];
            apps[i].maxprocs = maxprocs[i];
            for (const char **a = argvs ? argvs[i] : nullptr; a && *a; ++a) apps[i].args.emplace_back(*a);
            int n = info_keyval_sizesp ? info_keyval_sizesp[i] : 0;
            for (int k = 0; k < n && info_keyval_vectors && info_keyval_vectors[i]; ++k) {
                const PMI_keyval_t &kv = info_keyval_vectors[i][k];
                if (kv.key && kv.val && strcmp(kv.key, "wdir") == 0) apps[i].cwd = kv.val;
                else if (kv.key) debug("spawn: info key %s is not used", kv.key);
            }
        }
        std::vector<std::pair<std::string, std::string>> preput;
        for (int k = 0; k < preput_keyval_size; ++k) {
            if (!preput_keyval_vector[k].key || !preput_keyval_vector[k].val) return PMIX_ERR_BAD_PARAM;
            preput.emplace_back(preput_keyval_vector[k].key, preput_keyval_vector[k].val);
        }
        std::string child;
        return S().spawn(apps, preput, &child);
    });
    if (errors != nullptr)
        for (int i = 0; i < count; ++i) errors[i] = to_pmi(rc);
    return to_pmi(rc);
}

// Argument parsing for process managers: not ours to do.
PMI_API int PMI_Parse_option(int num_args, char *args[], int *num_parsed, PMI_keyval_t **keyvalp, int *size) {
    return PMI_FAIL;
}
PMI_API int PMI_Args_to_keyval(int *argcp, char *((*argvp)[]), PMI_keyval_t **keyvalp, int *size) {
    return PMI_FAIL;
}
PMI_API int PMI_Free_keyvals(PMI_keyval_t keyvalp[], int size) { return PMI_FAIL; }
PMI_API int PMI_Get_options(char *str, int *length) { return PMI_FAIL; }

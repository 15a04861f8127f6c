#include "step_env.h"

#include "log.h"
#include "sys.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace pmixcpp {

namespace {


}  // namespace

Status prepare_step_dir(step_info &step, const std::string &base) {
    const std::string prefix = "pmixcpp." + std::to_string(step.job_id) + "." + std::to_string(step.step_id) + ".";
    // <base>/<prefix>XXXXXX/server.sock must fit a socket address.
    const size_t sock_len = base.size() + 1 + prefix.size() + 6 + std::string("/server.sock").size();
    if (sock_len >= sizeof(sockaddr_un::sun_path))
        return Status(PMIX_ERR_BAD_PARAM, "server socket path below " + base + " would be " + std::to_string(sock_len) +
                                              " bytes, longer than " +
                                              std::to_string(sizeof(sockaddr_un::sun_path) - 1) +
                                              "; set PMIxCppTmpDirBase to a shorter directory");
    auto base_dir = safe_fs::dir::open_trusted(base);
    PMIXCPP_RETURN_IF_ERROR(base_dir, "step directory base");

    auto root = base_dir->make_unique_subdir(prefix, 0711);
    PMIXCPP_RETURN_IF_ERROR(root);
    const std::string root_name = root->path().substr(base_dir->path().size() + 1);
    auto fail = [&](Status s) {
        (void)base_dir->remove(root_name);  // best effort: `s` is what the caller must hear
        return s;
    };
    // The user's directory is root's until complete: nothing of the user can be in it while root
    // works there. The process directories in it (PMIX_PROCDIR, rank.<r>) are made by each task,
    // as the user, before its exec (make_proc_dir): root never makes anything in a directory the
    // user can write, and slurmstepd does not make them one after the other.
    auto user = root->make_subdir("user", 0700);
    if (!user.ok()) return fail(user.status());
    if (Status s = user->chown_self(step.uid, step.gid, 0700); !s.ok()) return fail(s);

    auto dirs = std::make_shared<step_dirs>();
    dirs->root_name = root_name;
    step.step_root = root->path();
    step.step_dir = user->path();
    step.server_socket = step.step_root + "/server.sock";
    dirs->base = std::move(base_dir.value());
    dirs->root = std::move(root.value());
    dirs->user = std::move(user.value());
    step.dirs = std::move(dirs);
    return Status::success();
}

void remove_step_dir(const step_info &step) {
    if (!step.dirs) return;
    // Only what the job's user owns goes (and the step root itself, root's): another user's entry
    // that the job moved into its directory stays, with a warning.
    if (Status st = step.dirs->base.remove(step.dirs->root_name, step.uid); !st.ok()) {
        if (st.code() == PMIX_ERR_NO_PERMISSIONS)  // another user's data: the administrator decides
            PMIXCPP_LOG_ERROR("step directory %s not removed: %s", step.dirs->root_name.c_str(), st.message().c_str());
        else
            PMIXCPP_LOG_WARNING("step directory %s not removed: %s", step.dirs->root_name.c_str(), st.message().c_str());
    }
}

std::string proc_dir_name(uint32_t rank) { return "rank." + std::to_string(rank); }

std::string proc_dir(const step_info &step, uint32_t rank) { return step.step_dir + "/" + proc_dir_name(rank); }

Status make_proc_dir(const step_info &step, uint32_t rank) {
    const std::string path = proc_dir(step, rank);
    // Only the task, as the job's user, makes it (step_env.h): never root, in the user's directory.
    if (geteuid() != step.uid)
        return Status(PMIX_ERR_NO_PERMISSIONS, "process directory " + path + ": running as uid " +
                                                   std::to_string(geteuid()) + ", not the job's user (uid " +
                                                   std::to_string(step.uid) + "): not made");
    if (!step.dirs || !step.dirs->user.valid())
        return Status(PMIX_ERR_INIT, "process directory " + path + ": the step directory is not open");
    const int parent = step.dirs->user.fd();
    const std::string name = proc_dir_name(rank);
    // 0700 whatever the task's umask (the task is single-threaded here: between fork and exec).
    const mode_t mask = umask(077);
    const int made = mkdirat(parent, name.c_str(), 0700);
    const int err = errno;
    umask(mask);
    // Made now: new, the user's (this process's euid), 0700. Nothing more to check.
    if (made == 0) return Status::success();
    if (err != EEXIST) return sys_error("process directory: mkdir " + path, err);
    // There before (the user's own doing): what the name holds is opened without following a
    // link and checked on the descriptor.
    auto refused = [&](const struct stat &st) -> Status {
        if (!S_ISDIR(st.st_mode))
            return Status(PMIX_ERR_NO_PERMISSIONS,
                          "process directory " + path + " exists and is not a directory (" +
                              (S_ISLNK(st.st_mode) ? "a symbolic link" : "a file or other entry") + "): not used");
        if (st.st_uid != step.uid)
            return Status(PMIX_ERR_NO_PERMISSIONS, "process directory " + path + " exists and is owned by uid " +
                                                       std::to_string(st.st_uid) + ", not the job's user (uid " +
                                                       std::to_string(step.uid) + "): not used");
        return Status::success();
    };
    safe_fs::unique_fd fd(openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (fd.get() < 0) {
        const int open_err = errno;
        struct stat st {};
        if (fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) PMIXCPP_RETURN_IF_ERROR(refused(st));
        return sys_error("process directory: open " + path, open_err);
    }
    struct stat st {};
    if (fstat(fd.get(), &st) != 0) return sys_error("process directory: stat " + path);
    PMIXCPP_RETURN_IF_ERROR(refused(st));
    if ((st.st_mode & 07777) != 0700 && fchmod(fd.get(), 0700) != 0)
        return sys_error("process directory: chmod " + path);
    return Status::success();
}

Result<std::string> random_token(size_t bytes) {
    std::string raw(bytes, '\0');
    PMIXCPP_RETURN_IF_ERROR(random_bytes(raw.data(), bytes));
    static const char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(bytes * 2);
    for (unsigned char c : raw) {
        out.push_back(hex[c >> 4]);
        out.push_back(hex[c & 15]);
    }
    return out;
}

env_list step_task_env(const step_info &step, const plugin_config &cfg, const std::string &client_libdir,
                       const std::string &current_ld_library_path) {
    env_list env;
    env.emplace_back("PMIX_NAMESPACE", step.nspace);
    env.emplace_back("PMIXCPP_SERVER_URI", "unix:" + step.server_socket);
    env.emplace_back("PMIXCPP_CLIENT_TOKEN", step.client_token);
    env.emplace_back("PMIXCPP_STEP_DIR", step.step_dir);
    if (cfg.debug > 0) env.emplace_back("PMIXCPP_DEBUG", to_string(static_cast<log_level>(cfg.debug)));
    if (includes(cfg.client_lib, client_lib_mode::ours) && !client_libdir.empty()) {
        std::string path = client_libdir;
        if (!current_ld_library_path.empty()) path += ":" + current_ld_library_path;
        env.emplace_back("LD_LIBRARY_PATH", path);
    }
    if (cfg.ompi_vader_dir) {
        env.emplace_back("OMPI_MCA_btl_vader_backing_directory", step.step_dir);  // OpenMPI 4
        env.emplace_back("OMPI_MCA_btl_sm_backing_directory", step.step_dir);     // OpenMPI 5 (vader became sm)
    }
    env.emplace_back("PMIXCPP_SIGNAL_EVENTS", cfg.signal_events);  // client/events_signals.cc
    return env;
}

env_list native_task_env(const step_info &step, uint16_t port) {
    std::string server = step.nspace;
    for (char &c : server)
        if (c == '.') c = '-';
    const std::string uri = server + "-server.0;tcp4://127.0.0.1:" + std::to_string(port);
    env_list env;
    for (const char *v : {"PMIX_SERVER_URI41", "PMIX_SERVER_URI4", "PMIX_SERVER_URI3", "PMIX_SERVER_URI21",
                          "PMIX_SERVER_URI2"})
        env.emplace_back(v, uri);
    env.emplace_back("PMIX_GDS_MODULE", "hash");
    env.emplace_back("PMIX_SECURITY_MODE", "native");
    env.emplace_back("PMIX_BFROP_BUFFER_TYPE", "PMIX_BFROP_BUFFER_NON_DESC");
    env.emplace_back("PMIX_PTL_MODULE", "tcp");
    env.emplace_back("PMIX_VERSION", "5.0.7");
    env.emplace_back("PMIX_HOSTNAME", step.node_name());
    env.emplace_back("PMIX_SERVER_TMPDIR", step.step_dir);
    env.emplace_back("PMIX_SYSTEM_TMPDIR", step.step_dir);
    return env;
}

env_list task_env(const step_info &step, uint32_t global_rank, uint32_t local_rank) {
    return {
        {"PMIX_RANK", std::to_string(global_rank)},
        {"PMIXCPP_LOCAL_RANK", std::to_string(local_rank)},
    };
}

}  // namespace pmixcpp

#include "step_env.h"

#include "log.h"

#include <sys/random.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace pmixcpp {

namespace {

Status sys_error(const std::string &what) {
    return Status(PMIX_ERROR, what + ": " + std::strerror(errno));
}

}  // namespace

Status prepare_step_dir(step_info &step, const std::string &base) {
    struct stat st {};
    if (base.empty() || base[0] != '/')
        return Status(PMIX_ERR_BAD_PARAM, "step directory base '" + base + "' is not an absolute path");
    std::string dir = base + "/pmixcpp." + std::to_string(step.uid) + "." + std::to_string(step.job_id) + "." +
                      std::to_string(step.step_id);
    std::string sock = dir + "/server.sock";
    if (sock.size() >= sizeof(sockaddr_un::sun_path))
        return Status(PMIX_ERR_BAD_PARAM, "server socket path " + sock + " is longer than " +
                                              std::to_string(sizeof(sockaddr_un::sun_path) - 1) +
                                              " bytes; set PMIxCppTmpDirBase to a shorter directory");

    if (stat(base.c_str(), &st) != 0) return sys_error("step directory base " + base);
    if (!S_ISDIR(st.st_mode)) return Status(PMIX_ERR_BAD_PARAM, "step directory base " + base + " is not a directory");

    std::error_code ec;
    std::filesystem::remove_all(dir, ec);  // a leftover of an earlier step with the same ids
    if (mkdir(dir.c_str(), 0700) != 0) return sys_error("mkdir " + dir);
    if (chown(dir.c_str(), step.uid, step.gid) != 0) {
        Status s = sys_error("chown " + dir);
        rmdir(dir.c_str());
        return s;
    }
    step.step_dir = dir;
    step.server_socket = sock;
    return Status::success();
}

void remove_step_dir(const step_info &step) {
    if (step.step_dir.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(step.step_dir, ec);
}

Result<std::string> random_token(size_t bytes) {
    std::string raw(bytes, '\0');
    size_t got = 0;
    while (got < bytes) {
        ssize_t n = getrandom(raw.data() + got, bytes - got, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            return sys_error("getrandom");
        }
        got += static_cast<size_t>(n);
    }
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
    if (cfg.client_lib && !client_libdir.empty()) {
        std::string path = client_libdir;
        if (!current_ld_library_path.empty()) path += ":" + current_ld_library_path;
        env.emplace_back("LD_LIBRARY_PATH", path);
    }
    if (cfg.ompi_vader_dir) env.emplace_back("OMPI_MCA_btl_vader_backing_directory", step.step_dir);
    env.emplace_back("PMIXCPP_SIGNAL_EVENTS", cfg.signal_events);  // client/events_signals.cc
    return env;
}

env_list task_env(const step_info &step, uint32_t global_rank, uint32_t local_rank) {
    return {
        {"PMIX_RANK", std::to_string(global_rank)},
        {"PMIXCPP_LOCAL_RANK", std::to_string(local_rank)},
    };
}

}  // namespace pmixcpp

#include "process_ref.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <csignal>
#include <cstring>

#include "sys.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

namespace pmixcpp {

process_ref::~process_ref() {
    if (_fd >= 0) close(_fd);
}

Result<std::shared_ptr<const process_ref>> process_ref::of_socket_peer(int sock) {
    ucred cred{};
    socklen_t len = sizeof(cred);
    if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
        return sys_error("SO_PEERCRED");
    int fd = -1;
    len = sizeof(fd);
    if (getsockopt(sock, SOL_SOCKET, SO_PEERPIDFD, &fd, &len) != 0 || fd < 0) {
        if (errno != ENOPROTOOPT && errno != EINVAL)
            return Status(errno == ESRCH ? PMIX_ERR_NOT_FOUND : PMIX_ERROR,
                          std::string("SO_PEERPIDFD: ") + strerror(errno));
        fd = static_cast<int>(syscall(SYS_pidfd_open, cred.pid, 0));
        if (fd < 0)
            return Status(errno == ESRCH ? PMIX_ERR_NOT_FOUND : PMIX_ERROR,
                          "pidfd_open(" + std::to_string(cred.pid) + "): " + strerror(errno));
    }
    return std::make_shared<const process_ref>(fd, cred.pid);
}

namespace {

// Does process `pid` (its /proc directory open as `procfd`) hold a descriptor that is `link`?
bool holds(int procfd, const std::string &link) {
    int fdd = openat(procfd, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fdd < 0) return false;
    DIR *d = fdopendir(fdd);
    if (!d) {
        close(fdd);
        return false;
    }
    bool found = false;
    char buf[64];
    while (dirent *e = readdir(d)) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        ssize_t n = readlinkat(dirfd(d), e->d_name, buf, sizeof(buf) - 1);
        if (n <= 0) continue;
        buf[n] = '\0';
        if (link == buf) {
            found = true;
            break;
        }
    }
    closedir(d);
    return found;
}

}  // namespace

namespace {

// The children of every thread of `pid` (/proc/<pid>/task/<tid>/children), appended to `out`.
void children_of(pid_t pid, std::vector<pid_t> &out, size_t cap) {
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", static_cast<int>(pid));
    DIR *tasks = opendir(path);
    if (!tasks) return;
    while (dirent *t = readdir(tasks)) {
        if (t->d_name[0] < '1' || t->d_name[0] > '9') continue;
        char cpath[128];
        snprintf(cpath, sizeof(cpath), "/proc/%d/task/%s/children", static_cast<int>(pid), t->d_name);
        FILE *f = fopen(cpath, "re");
        if (!f) continue;
        long child = 0;
        while (out.size() < cap && fscanf(f, "%ld", &child) == 1)
            if (child > 1) out.push_back(static_cast<pid_t>(child));
        fclose(f);
    }
    closedir(tasks);
}

}  // namespace

Result<std::shared_ptr<const process_ref>> process_ref::holding_socket(uint64_t inode, uid_t uid, pid_t ancestor) {
    const std::string link = "socket:[" + std::to_string(inode) + "]";
    constexpr size_t kMaxVisited = 65536;
    std::vector<pid_t> queue;
    children_of(ancestor, queue, kMaxVisited);
    for (size_t i = 0; i < queue.size(); ++i) {
        const pid_t pid = queue[i];
        char path[32];
        snprintf(path, sizeof(path), "/proc/%d", static_cast<int>(pid));
        int pd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (pd < 0) continue;
        struct stat st {};
        if (fstat(pd, &st) == 0 && st.st_uid == uid && holds(pd, link)) {
            int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
            // Seen again once the pidfd pins the pid: the same process still holds it.
            if (pidfd >= 0 && holds(pd, link)) {
                close(pd);
                return std::make_shared<const process_ref>(pidfd, pid);
            }
            if (pidfd >= 0) close(pidfd);
        }
        close(pd);
        children_of(pid, queue, kMaxVisited);
    }
    return holding_socket(inode, uid);
}

Result<std::shared_ptr<const process_ref>> process_ref::holding_socket(uint64_t inode, uid_t uid) {
    const std::string link = "socket:[" + std::to_string(inode) + "]";
    DIR *proc = opendir("/proc");
    if (!proc) return sys_error("/proc");
    std::shared_ptr<const process_ref> out;
    while (dirent *e = readdir(proc)) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
        int pd = openat(dirfd(proc), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (pd < 0) continue;
        struct stat st {};
        // Only the user's own processes (a process of another user holding a copy of the
        // descriptor is not what connected).
        if (fstat(pd, &st) != 0 || st.st_uid != uid || !holds(pd, link)) {
            close(pd);
            continue;
        }
        pid_t pid = static_cast<pid_t>(std::strtol(e->d_name, nullptr, 10));
        int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
        // Seen again once the pidfd pins the pid: the same process still holds it.
        if (pidfd >= 0 && holds(pd, link)) {
            close(pd);
            out = std::make_shared<const process_ref>(pidfd, pid);
            break;
        }
        if (pidfd >= 0) close(pidfd);
        close(pd);
    }
    closedir(proc);
    if (!out) return Status(PMIX_ERR_NOT_FOUND, "no process of uid " + std::to_string(uid) + " holds " + link);
    return out;
}

namespace {

pid_t parent_of(pid_t pid) {
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
    FILE *f = fopen(path, "re");
    if (!f) return -1;
    char buf[512];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses; the last ')' ends it.
    const char *close = strrchr(buf, ')');
    int ppid = -1;
    char state = 0;
    if (!close || sscanf(close + 1, " %c %d", &state, &ppid) != 2) return -1;
    return ppid;
}

}  // namespace

bool process_ref::descends_from(pid_t ancestor) const {
    pid_t p = _pid;
    for (int depth = 0; depth < 256 && p > 1; ++depth) {
        if (p == ancestor) return send_signal(0) == 0;
        p = parent_of(p);
    }
    return false;
}

int process_ref::send_signal(int sig) const {
    if (_fd < 0) {
        errno = ESRCH;
        return -1;
    }
    return static_cast<int>(syscall(SYS_pidfd_send_signal, _fd, sig, nullptr, 0));
}

}  // namespace pmixcpp

// A handle on one process that stays bound to it: a pidfd. Signals go through
// pidfd_send_signal, so a process that exited and whose pid was reused is never hit
// (the call fails with ESRCH instead). Taken from a Unix socket's peer at accept time:
// SO_PEERPIDFD names exactly the process that called connect() (Linux >= 6.5); on older
// kernels, pidfd_open of the SO_PEERCRED pid right at accept.
#pragma once

#include <cerrno>

#include <sys/types.h>

#include <memory>

#include "status.h"

namespace pmixcpp {

class process_ref {
public:
    // `fd` is owned (closed on destruction); -1 makes a handle that signals nothing (tests).
    process_ref(int fd, pid_t pid) : _fd(fd), _pid(pid) {}
    ~process_ref();
    process_ref(const process_ref &) = delete;
    process_ref &operator=(const process_ref &) = delete;

    // The process at the other end of a connected Unix socket.
    static Result<std::shared_ptr<const process_ref>> of_socket_peer(int sock);

    // A process of user `uid` that holds the socket with inode `inode` (a TCP peer on this host:
    // plugin/net's local_peer_uid names the socket): found in /proc/<pid>/fd, its pidfd opened and
    // the descriptor seen again after that (a pid reused meanwhile does not pass).
    // PMIX_ERR_NOT_FOUND if no process of that user holds it (it exited, or /proc hides it).
    static Result<std::shared_ptr<const process_ref>> holding_socket(uint64_t inode, uid_t uid);
    // The same, looking first among the descendants of `ancestor` (the children files of
    // /proc/<pid>/task/<tid>, breadth first, bounded): a step's own client is found without
    // reading the descriptors of every process of the user on the host. Falls back to the whole
    // scan above when no descendant holds it (the children files may miss a process that forked
    // meanwhile), so the answer is the one holding_socket(inode, uid) gives.
    static Result<std::shared_ptr<const process_ref>> holding_socket(uint64_t inode, uid_t uid, pid_t ancestor);

    // True if the process is `ancestor` or descends from it (the parent chain in /proc), checked
    // while the process provably lives (its pidfd answers afterwards), so a reused pid cannot pass.
    bool descends_from(pid_t ancestor) const;

    // pidfd_send_signal; -1 with errno on failure (ESRCH: the process is gone).
    int send_signal(int sig) const;
    // The process has exited (it may still be a zombie): nothing can be learned of it any more.
    bool gone() const { return send_signal(0) != 0 && errno == ESRCH; }

    pid_t pid() const { return _pid; }
    int fd() const { return _fd; }

private:
    int _fd;
    pid_t _pid;
};

using process_handle = std::shared_ptr<const process_ref>;

}  // namespace pmixcpp

// The receiving end of the directory route (plugin/net/directory.h) on one node: a Unix socket of the step,
// to which slurmd connects when another node's slurmstepd calls slurm_forward_data (slurmd's
// _rpc_forward_data: it connects as the sending user and writes u32 uid, u32 length, the data, in
// network order, then closes).
//
// Root only: the socket is made in a directory that must be a real directory owned by root (or
// our euid) and writable by nobody else (safe_fs::dir::open_trusted), created under a name that
// must not exist, and given mode 0600 before it listens; it is removed when this object goes.
// Each connection is taken only if the kernel's SO_PEERCRED says its process runs as a trusted
// uid (root or SlurmUser: slurmd connecting for a slurmstepd, which runs as root) and the uid
// slurmd writes in the message is that same uid; anything else is refused with a log line. A
// connection has 2 s to deliver its message; messages longer than max_message are refused. One
// thread accepts and reads; the message goes to `deliver`, which must not block.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "status.h"

namespace pmixcpp {

struct directory_socket_stats {
    uint64_t taken = 0, refused = 0;
};

class directory_socket {
public:
    // `dir`/`name`: where the socket is made (the name must not exist).
    static Result<std::unique_ptr<directory_socket>> open(const std::string &dir, const std::string &name,
                                                          std::vector<uid_t> trusted_uids, size_t max_message,
                                                          std::function<void(std::vector<uint8_t>)> deliver);
    ~directory_socket();  // stops the thread, closes and removes the socket
    directory_socket(const directory_socket &) = delete;
    directory_socket &operator=(const directory_socket &) = delete;
    const std::string &path() const { return _path; }
    directory_socket_stats stats() const { return {_taken.load(), _refused.load()}; }

private:
    directory_socket() = default;
    void run();
    void serve(int fd);
    std::string _dir, _name, _path;
    int _dir_fd = -1, _fd = -1, _wake[2] = {-1, -1};
    bool _made = false;  // we bound the socket's name: removed when we go
    ino_t _ino = 0;      // (if it is still ours)
    std::vector<uid_t> _trusted;
    size_t _max = 0;
    std::function<void(std::vector<uint8_t>)> _deliver;
    std::atomic<uint64_t> _taken{0}, _refused{0};
    std::thread _thread;
};

}  // namespace pmixcpp

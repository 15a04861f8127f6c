// The directory route's Unix socket (directory_socket.h).
#include "directory_socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "safe_fs.h"
#include "log.h"

namespace pmixcpp {

namespace {
constexpr auto kMessageDeadline = std::chrono::seconds(2);

// Read exactly n bytes before `deadline`; false on EOF, error or time out.
bool read_fully(int fd, uint8_t *p, size_t n, std::chrono::steady_clock::time_point deadline) {
    while (n > 0) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return false;
        pollfd pf{fd, POLLIN, 0};
        int r = poll(&pf, 1, static_cast<int>(left.count()));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        ssize_t got = read(fd, p, n);
        if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (got <= 0) return false;
        p += got;
        n -= static_cast<size_t>(got);
    }
    return true;
}
}  // namespace

Result<std::unique_ptr<directory_socket>> directory_socket::open(const std::string &dir, const std::string &name,
                                                                 std::vector<uid_t> trusted_uids, size_t max_message,
                                                                 std::function<void(std::vector<uint8_t>)> deliver) {
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
        return Status(PMIX_ERR_BAD_PARAM, "directory socket: bad name " + name);
    auto d = safe_fs::dir::open_trusted(dir);
    PMIXCPP_RETURN_IF_ERROR(d, "directory socket in " + dir);
    std::unique_ptr<directory_socket> s(new directory_socket());
    s->_dir = dir;
    s->_name = name;
    s->_path = dir + "/" + name;
    s->_trusted = std::move(trusted_uids);
    s->_max = max_message;
    s->_deliver = std::move(deliver);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    if (s->_path.size() >= sizeof(a.sun_path)) return Status(PMIX_ERR_BAD_PARAM, "directory socket: path too long: " + s->_path);
    s->_dir_fd = fcntl(d->fd(), F_DUPFD_CLOEXEC, 0);
    if (s->_dir_fd < 0) return Status(PMIX_ERROR, std::string("directory socket: dup: ") + strerror(errno));
    s->_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s->_fd < 0) return Status(PMIX_ERROR, std::string("directory socket: socket: ") + strerror(errno));
    // A socket of that name is one a slurmstepd of an earlier step with the same job and step
    // ids left when it was killed (only root makes entries here; live steps' names differ):
    // removed. Anything else of that name is refused.
    struct stat old_sb {};
    if (fstatat(s->_dir_fd, name.c_str(), &old_sb, AT_SYMLINK_NOFOLLOW) == 0) {
        if (!S_ISSOCK(old_sb.st_mode) || old_sb.st_uid != geteuid())
            return Status(PMIX_ERR_EXISTS, "directory socket: " + s->_path + " exists and is not a socket of ours");
        PMIXCPP_LOG_VERBOSE("directory socket %s: removing a stale one (a killed step's)", s->_path.c_str());
        unlinkat(s->_dir_fd, name.c_str(), 0);
    }
    // bind() creates the file with the mode the umask leaves; nobody may connect before the
    // fchmod below: the socket is bound with umask 0177 (the file is 0600 from the start).
    std::strncpy(a.sun_path, s->_path.c_str(), sizeof(a.sun_path) - 1);
    mode_t old = umask(0177);
    int rc = bind(s->_fd, reinterpret_cast<sockaddr *>(&a), sizeof(a));
    int err = errno;
    umask(old);
    if (rc != 0) return Status(PMIX_ERROR, "directory socket: bind " + s->_path + ": " + strerror(err));
    s->_made = true;  // ours to remove from here on (never a file we did not make)
    struct stat sb {};
    if (fstatat(s->_dir_fd, name.c_str(), &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISSOCK(sb.st_mode) ||
        (s->_ino = sb.st_ino, fchmodat(s->_dir_fd, name.c_str(), 0600, 0) != 0)) {
        err = errno;
        return Status(PMIX_ERROR, "directory socket: mode of " + s->_path + ": " + strerror(err));
    }
    if (listen(s->_fd, 128) != 0 || pipe2(s->_wake, O_CLOEXEC | O_NONBLOCK) != 0) {
        err = errno;
        return Status(PMIX_ERROR, "directory socket: listen " + s->_path + ": " + strerror(err));
    }
    try {
        s->_thread = std::thread([p = s.get()] { p->run(); });
    } catch (const std::exception &e) {
        return Status(PMIX_ERR_OUT_OF_RESOURCE, std::string("directory socket: no thread: ") + e.what());
    }
    PMIXCPP_LOG_DEBUG("directory socket %s: listening (mode 0600)", s->_path.c_str());
    return s;
}

directory_socket::~directory_socket() {
    if (_wake[1] >= 0) {
        char c = 1;
        (void)!write(_wake[1], &c, 1);
    }
    if (_thread.joinable()) _thread.join();
    if (_fd >= 0) close(_fd);
    if (_dir_fd >= 0) {
        struct stat sb {};  // ours only: not one a later socket of the same name replaced
        if (_made && fstatat(_dir_fd, _name.c_str(), &sb, AT_SYMLINK_NOFOLLOW) == 0 && sb.st_ino == _ino)
            unlinkat(_dir_fd, _name.c_str(), 0);
        close(_dir_fd);
    }
    for (int w : _wake)
        if (w >= 0) close(w);
}

void directory_socket::run() {
    for (;;) {
        pollfd p[2] = {{_fd, POLLIN, 0}, {_wake[0], POLLIN, 0}};
        int r = poll(p, 2, -1);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 || p[1].revents) return;
        if (!(p[0].revents & POLLIN)) continue;
        int c = accept4(_fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) {
            if (errno == EMFILE || errno == ENFILE) std::this_thread::sleep_for(std::chrono::milliseconds(50));
            continue;
        }
        serve(c);
        close(c);
    }
}

void directory_socket::serve(int fd) {
    ucred cred{};
    socklen_t len = sizeof(cred);
    auto refuse = [&](const std::string &why) {
        ++_refused;
        PMIXCPP_LOG_ERROR("directory socket %s: connection of pid %d uid %u refused: %s", _path.c_str(),
                          static_cast<int>(cred.pid), static_cast<unsigned>(cred.uid), why.c_str());
    };
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
        cred.uid = static_cast<uid_t>(-1);
        return refuse(std::string("no peer credentials: ") + strerror(errno));
    }
    if (std::find(_trusted.begin(), _trusted.end(), cred.uid) == _trusted.end())
        return refuse("not root or SlurmUser");
    auto deadline = std::chrono::steady_clock::now() + kMessageDeadline;
    uint32_t head[2];
    if (!read_fully(fd, reinterpret_cast<uint8_t *>(head), sizeof(head), deadline))
        return refuse("no message header within 2 s");
    uint32_t uid = ntohl(head[0]), size = ntohl(head[1]);
    if (uid != cred.uid) return refuse("the message names uid " + std::to_string(uid));
    if (size == 0 || size > _max) return refuse("a message of " + std::to_string(size) + " bytes");
    std::vector<uint8_t> msg(size);
    if (!read_fully(fd, msg.data(), size, deadline)) return refuse("the message did not arrive within 2 s");
    ++_taken;
    _deliver(std::move(msg));
}

}  // namespace pmixcpp

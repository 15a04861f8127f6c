// process_ref: a signal reaches the process that connected, never a pid reused or a child that
// inherited the connection.
#include "plugin/common/process_ref.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

using namespace pmixcpp;

namespace {

struct listener {
    int fd = -1;
    std::string path;
    listener() {
        char tmpl[] = "/tmp/pmixcpp-pref-XXXXXX";
        if (!mkdtemp(tmpl)) return;
        path = std::string(tmpl) + "/s";
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        strcpy(a.sun_path, path.c_str());
        if (bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)) != 0 || listen(fd, 8) != 0) fd = -1;
    }
    ~listener() {
        if (fd >= 0) close(fd);
        unlink(path.c_str());
        rmdir(path.substr(0, path.size() - 2).c_str());
    }
    // In a child: connect, then (optionally) fork a grandchild that keeps the connection and
    // lives on, then exit.
    pid_t spawn_client(bool grandchild_keeps_it, int report_fd) {
        pid_t pid = fork();
        if (pid != 0) return pid;
        int c = socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        strcpy(a.sun_path, path.c_str());
        if (connect(c, reinterpret_cast<sockaddr *>(&a), sizeof(a)) != 0) _exit(1);
        if (grandchild_keeps_it) {
            pid_t g = fork();
            if (g == 0) {
                signal(SIGUSR1, SIG_DFL);
                sleep(5);
                _exit(0);
            }
            if (write(report_fd, &g, sizeof(g)) != sizeof(g)) _exit(1);
        }
        char b;
        if (read(c, &b, 1) < 0) _exit(1);  // until the test lets it go
        _exit(0);
    }
};

TEST(ProcessRef, SignalsOnlyTheConnectingProcess) {
    listener l;
    ASSERT_GE(l.fd, 0);
    int p[2];
    ASSERT_EQ(pipe(p), 0);
    pid_t child = l.spawn_client(/*grandchild_keeps_it=*/true, p[1]);
    pid_t grandchild = 0;
    ASSERT_EQ(read(p[0], &grandchild, sizeof(grandchild)), static_cast<ssize_t>(sizeof(grandchild)));
    int conn = accept(l.fd, nullptr, nullptr);
    ASSERT_GE(conn, 0);
    auto proc = process_ref::of_socket_peer(conn);
    ASSERT_TRUE(proc.ok()) << proc.status().message();
    EXPECT_EQ(proc.value()->pid(), child);
    EXPECT_TRUE(proc.value()->descends_from(getpid()));
    EXPECT_FALSE(proc.value()->descends_from(1 == getpid() ? 2 : 1)) << "init is no ancestor that counts";

    // The connecting process ends; its grandchild still holds the connection.
    ASSERT_EQ(write(conn, "x", 1), 1);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    errno = 0;
    EXPECT_EQ(proc.value()->send_signal(SIGUSR1), -1);
    EXPECT_EQ(errno, ESRCH) << "an exited process is never signalled, whatever holds its pid or its socket";
    EXPECT_FALSE(proc.value()->descends_from(getpid()));
    // The grandchild that inherited the connection was not hit.
    EXPECT_EQ(kill(grandchild, 0), 0);
    kill(grandchild, SIGKILL);
    close(conn);
    close(p[0]);
    close(p[1]);
}

TEST(ProcessRef, SignalReachesALiveProcess) {
    listener l;
    ASSERT_GE(l.fd, 0);
    pid_t child = l.spawn_client(false, -1);
    int conn = accept(l.fd, nullptr, nullptr);
    ASSERT_GE(conn, 0);
    auto proc = process_ref::of_socket_peer(conn);
    ASSERT_TRUE(proc.ok());
    EXPECT_EQ(proc.value()->send_signal(SIGTERM), 0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
    close(conn);
}

}  // namespace

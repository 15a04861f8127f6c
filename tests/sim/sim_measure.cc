// The simulator's loopback inputs, measured on this host: a TCP ping-pong between two processes
// (one-way latency = half the median round trip of a 32-byte message, TCP_NODELAY, blocking
// sockets) and a bulk send (64 MiB in 1 MiB writes: the per-byte cost of the kernel's TCP path).
// With a munged socket as the first argument, also the credential costs a node record pays:
// munge_encode and munge_decode of a 160-byte payload (the size of a node record), one after
// the other as slurmstepd does (median of 2000), and the credential's length.
// Also slurmd's part of forwarding one message to a step's socket (measure_forward).
// Prints "rtt_us <median> oneway_us <half> bw_MBps <rate>", "forward_us ..", and "cred_make_us ..
// cred_open_us .. cred_bytes .. cred_overhead .."; tests/sim/run.sh feeds them to the simulator.
// With `--netns FROM TO ADDR` (root, contrib/cluster.sh's PMIXCPP_NETNS=1 bed) the ping-pong and
// the bulk send go from network namespace FROM to a listener in namespace TO on its address
// ADDR (names under /run/netns): the kernel's veth and bridge path between two nodes.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <munge.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using clk = std::chrono::steady_clock;

bool full_io(int fd, char *buf, size_t n, bool rd) {
    size_t done = 0;
    while (done < n) {
        ssize_t r = rd ? read(fd, buf + done, n - done) : write(fd, buf + done, n - done);
        if (r <= 0) return false;
        done += size_t(r);
    }
    return true;
}

// where the listener is and the client connects to (loopback unless --netns)
in_addr g_target{htonl(INADDR_LOOPBACK)};

// this thread (the process: it has one) into the network namespace /run/netns/<name>
bool enter_netns(const char *name) {
    const std::string path = std::string("/run/netns/") + name;
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
        perror(path.c_str());
        if (fd >= 0) close(fd);
        return false;
    }
    close(fd);
    return true;
}

int listener(uint16_t *port) {
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr = g_target;
    if (ls < 0 || bind(ls, reinterpret_cast<sockaddr *>(&a), sizeof(a)) != 0 || listen(ls, 1) != 0) return -1;
    socklen_t len = sizeof(a);
    getsockname(ls, reinterpret_cast<sockaddr *>(&a), &len);
    *port = ntohs(a.sin_port);
    return ls;
}

int connect_to(uint16_t port) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr = g_target;
    a.sin_port = htons(port);
    if (s < 0 || connect(s, reinterpret_cast<sockaddr *>(&a), sizeof(a)) != 0) return -1;
    int one = 1;
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return s;
}

int measure_munge(const char *socket) {
    munge_ctx_t ctx = munge_ctx_create();
    if (!ctx || munge_ctx_set(ctx, MUNGE_OPT_SOCKET, socket) != EMUNGE_SUCCESS) return 1;
    const size_t payload = 160;
    std::vector<char> data(payload, 'r');
    std::vector<double> enc, dec;
    size_t len = 0;
    for (int i = 0; i < 2000; ++i) {
        char *cred = nullptr;
        auto t0 = clk::now();
        if (munge_encode(&cred, ctx, data.data(), int(payload)) != EMUNGE_SUCCESS) {
            fprintf(stderr, "munge_encode: %s\n", munge_ctx_strerror(ctx));
            return 1;
        }
        auto t1 = clk::now();
        void *out = nullptr;
        int olen = 0;
        uid_t uid;
        gid_t gid;
        if (munge_decode(cred, ctx, &out, &olen, &uid, &gid) != EMUNGE_SUCCESS) {
            fprintf(stderr, "munge_decode: %s\n", munge_ctx_strerror(ctx));
            return 1;
        }
        auto t2 = clk::now();
        enc.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        dec.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count());
        len = strlen(cred);
        free(out);
        free(cred);
    }
    std::sort(enc.begin(), enc.end());
    std::sort(dec.begin(), dec.end());
    // length = 6 ("MUNGE:") + base64(payload + overhead) + ":" ; solve for the overhead
    const size_t b64 = len - 7;
    printf("cred_make_us %.1f cred_open_us %.1f cred_bytes %zu cred_overhead %zu\n", enc[enc.size() / 2], dec[dec.size() / 2],
           len, b64 / 4 * 3 - payload);
    munge_ctx_destroy(ctx);
    return 0;
}

// One byte and room for one descriptor (SCM_RIGHTS), to send or to receive.
struct fd_message {
    char byte = 0;
    iovec iov{&byte, 1};
    alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int))] = {};
    msghdr mh{};
    fd_message() {
        mh.msg_iov = &iov;
        mh.msg_iovlen = 1;
        mh.msg_control = ctl;
        mh.msg_controllen = sizeof(ctl);
    }
    fd_message(const fd_message &) = delete;
    fd_message &operator=(const fd_message &) = delete;
};

// slurmd's part of one slurm_forward_data (req.c, _connect_as_other): from a process of slurmd's
// size (9 MB touched), fork; the child drops to another uid, connects to a Unix socket and passes
// the descriptor back over a socketpair; the parent takes it and reaps the child. The median of
// 500, without the write of the payload (a few hundred bytes on a Unix socket).
double measure_forward() {
    std::vector<char> heap(9 << 20);
    for (size_t i = 0; i < heap.size(); i += 4096) heap[i] = char(i);
    char dir[] = "/tmp/sim-forward-XXXXXX";
    if (!mkdtemp(dir)) return -1;
    const std::string path = std::string(dir) + "/s";
    int ls = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", path.c_str());
    if (ls < 0 || bind(ls, reinterpret_cast<sockaddr *>(&a), sizeof(a)) != 0 || listen(ls, 64) != 0) return -1;
    chmod(dir, 0755);
    chmod(path.c_str(), 0777);
    std::vector<double> t;
    for (int i = 0; i < 500; ++i) {
        int sp[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0) return -1;
        auto t0 = clk::now();
        pid_t pid = fork();
        if (pid == 0) {
            close(sp[0]);
            if (getuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(1);
            int c = socket(AF_UNIX, SOCK_STREAM, 0);
            if (c < 0 || connect(c, reinterpret_cast<sockaddr *>(&a), sizeof(a)) != 0) _exit(1);
            fd_message m;
            cmsghdr *cm = CMSG_FIRSTHDR(&m.mh);
            cm->cmsg_level = SOL_SOCKET;
            cm->cmsg_type = SCM_RIGHTS;
            cm->cmsg_len = CMSG_LEN(sizeof(int));
            memcpy(CMSG_DATA(cm), &c, sizeof(int));
            _exit(sendmsg(sp[1], &m.mh, 0) == 1 ? 0 : 1);
        }
        close(sp[1]);
        fd_message m;
        const bool got = recvmsg(sp[0], &m.mh, 0) == 1;
        int status = 0;
        waitpid(pid, &status, 0);
        const double us = std::chrono::duration<double, std::micro>(clk::now() - t0).count();
        close(sp[0]);
        cmsghdr *cm = CMSG_FIRSTHDR(&m.mh);
        if (!got || !cm || cm->cmsg_type != SCM_RIGHTS) return -1;
        int fd;
        memcpy(&fd, CMSG_DATA(cm), sizeof(int));
        close(fd);
        int peer = accept(ls, nullptr, nullptr);
        if (peer >= 0) close(peer);
        t.push_back(us);
    }
    close(ls);
    unlink(path.c_str());
    rmdir(dir);
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

}  // namespace

int main(int argc, char **argv) {
    const char *from_ns = nullptr, *to_ns = nullptr;
    if (argc > 1 && std::strcmp(argv[1], "--netns") == 0) {
        if (argc != 5 || inet_pton(AF_INET, argv[4], &g_target) != 1) {
            fprintf(stderr, "usage: sim_measure [munged-socket | --netns FROM TO ADDR]\n");
            return 2;
        }
        from_ns = argv[2];
        to_ns = argv[3];
    } else if (argc > 1 && measure_munge(argv[1]) != 0) {
        return 1;
    }
    if (!from_ns) printf("forward_us %.1f\n", measure_forward());
    const int rounds = 20000;
    uint16_t port = 0;
    // a socket stays in the namespace it was made in: the listener in TO, the client in FROM
    if (to_ns && !enter_netns(to_ns)) return 1;
    int ls = listener(&port);
    if (ls < 0) {
        perror("listen");
        return 1;
    }
    if (from_ns && !enter_netns(from_ns)) return 1;
    pid_t child = fork();
    if (child == 0) {  // echo, then sink
        int c = accept(ls, nullptr, nullptr);
        int one = 1;
        setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        char b[32];
        while (full_io(c, b, sizeof(b), true) && full_io(c, b, sizeof(b), false)) {
        }
        close(c);
        c = accept(ls, nullptr, nullptr);
        std::vector<char> big(1 << 20);
        while (read(c, big.data(), big.size()) > 0) {
        }
        char ok = 1;
        (void)!write(c, &ok, 1);
        _exit(0);
    }
    int s = connect_to(port);
    char b[32] = {};
    std::vector<double> rtt;
    rtt.reserve(size_t(rounds));
    for (int i = 0; i < rounds + 1000; ++i) {
        auto t0 = clk::now();
        if (!full_io(s, b, sizeof(b), false) || !full_io(s, b, sizeof(b), true)) return 1;
        if (i >= 1000) rtt.push_back(std::chrono::duration<double, std::micro>(clk::now() - t0).count());
    }
    close(s);
    std::sort(rtt.begin(), rtt.end());
    const double med = rtt[rtt.size() / 2];

    s = connect_to(port);
    std::vector<char> big(1 << 20, 'y');
    auto t0 = clk::now();
    for (int i = 0; i < 64; ++i)
        if (!full_io(s, big.data(), big.size(), false)) return 1;
    shutdown(s, SHUT_WR);
    char ok = 0;
    (void)!read(s, &ok, 1);
    const double sec = std::chrono::duration<double>(clk::now() - t0).count();
    close(s);
    waitpid(child, nullptr, 0);
    printf("rtt_us %.1f oneway_us %.1f bw_MBps %.0f\n", med, med / 2, 64.0 * (1 << 20) / sec / 1e6);
    return 0;
}

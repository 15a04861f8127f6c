/* A hostile client of the step's server, for tests/integration/t-attack-client.sh.
 *
 *   pmix_attack flood    rank 0 speaks the wire protocol itself (shared/PROTOCOL.md: frames of
 *                        shared/wire/frame.h on the Unix socket of PMIXCPP_SERVER_URI,
 *                        authenticated by PMIXCPP_CLIENT_TOKEN): it connects, then sends Gets of
 *                        all job-level data as fast as it can and never reads a reply. It must be
 *                        disconnected by the server ("DISCONNECTED" line).
 *   pmix_attack hostile  rank 0 opens one connection per hostile input (garbage, oversized
 *                        frames, huge counts, huge lengths, deep nesting, a legitimately shaped
 *                        message whose decoded form exceeds the decode budget, unknown types) and
 *                        checks that each is closed or answered with an error ("HOSTILE ... ok");
 *                        then sends the server descriptors (SCM_RIGHTS) with a request: it must
 *                        answer and keep none of them ("DESCRIPTORS ... ok"); then asks for the
 *                        node's modex snapshot and tries to change the memory file whose
 *                        descriptor comes with the reply: every way must fail ("SNAPSHOT-FILE").
 *   pmix_attack logflood MiB  rank 0 (an ordinary client) sends PMIx_Log messages to Slurm's log
 *                        (PMIX_LOG_GLOBAL_SYSLOG): first lines that pretend to be slurmstepd's own
 *                        ("...\nslurmstepd: error: FORGED-BY-THE-JOB ...", with newlines, a carriage
 *                        return and an escape sequence), then MiB MiB of 64 KiB messages as fast
 *                        as it can (PMIx_Log does not wait for the server); prints "LOGFLOOD <bytes>
 *                        bytes in <n> messages, <s> s"; 11 s later one more message.
 *   pmix_attack srunthreads N  every rank asks srun's session store N lookups at once, each
 *                        waiting (PMIX_WAIT, PMIX_TIMEOUT 6 s) for a key nobody publishes, so each
 *                        holds a thread of srun while it waits; prints "SRUNTHREADS rank R: N asked,
 *                        <a> refused (out of resource), <b> timed out, <c> other"; then all ranks
 *                        fence and exchange a value (the step still works).
 * In the other modes the other ranks are ordinary PMIx clients: they fence among themselves (rank 0
 * excluded) in rounds, exchange data with Put/Commit/Get, and finalize; they must all pass while
 * rank 0 attacks. Every rank prints RESULT-PASS or RESULT-FAIL (ptest.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

#include "ptest.h"

enum { T_CONNECT = 1, T_FINALIZE = 2, T_COMMIT = 4, T_FENCE = 5, T_GET = 6, T_LOG = 8, T_SNAPSHOT = 28 };

/* --- a byte buffer with the wire encodings (little-endian, codec.h) ----------------------- */
typedef struct {
    uint8_t *p;
    size_t n, cap;
} buf_t;

static void put(buf_t *b, const void *data, size_t n) {
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n) cap *= 2;
        b->p = realloc(b->p, cap);
        if (!b->p) abort();
        b->cap = cap;
    }
    memcpy(b->p + b->n, data, n);
    b->n += n;
}
static void put_u8(buf_t *b, uint8_t v) { put(b, &v, 1); }
static void put_u16(buf_t *b, uint16_t v) {
    uint8_t x[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    put(b, x, 2);
}
static void put_u32(buf_t *b, uint32_t v) {
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    put(b, x, 4);
}
static void put_str(buf_t *b, const char *s) {
    put_u32(b, (uint32_t)strlen(s));
    put(b, s, strlen(s));
}
/* A frame: 16-byte header (magic PMXC, version 1, flags, type, id, length) + payload. */
static void frame(buf_t *out, uint16_t type, uint32_t id, const buf_t *payload, uint32_t claimed_len) {
    put(out, "PMXC", 4);
    put_u8(out, 1);
    put_u8(out, 0);
    put_u16(out, type);
    put_u32(out, id);
    put_u32(out, claimed_len);
    if (payload && payload->n) put(out, payload->p, payload->n);
}

/* A frame with header flags. */
static void frame_flags(buf_t *out, uint16_t type, uint8_t flags, uint32_t id, const buf_t *payload) {
    size_t at = out->n;
    frame(out, type, id, payload, payload ? (uint32_t)payload->n : 0);
    out->p[at + 5] = flags;
}

/* --- the connection ------------------------------------------------------------------------ */
static int open_server(void) {
    const char *uri = getenv("PMIXCPP_SERVER_URI");
    if (!uri || strncmp(uri, "unix:", 5) != 0) return -1;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", uri + 5);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        if (fd >= 0) close(fd);
        return -1;
    }
    return fd;
}

static int send_all(int fd, const uint8_t *p, size_t n) {
    while (n > 0) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* The connect request of this rank (valid token). */
static void connect_frame(buf_t *out) {
    buf_t c = {0};
    put_u32(&c, 1); /* protocol */
    put_str(&c, getenv("PMIX_NAMESPACE"));
    put_u32(&c, (uint32_t)atoi(getenv("PMIX_RANK")));
    put_str(&c, getenv("PMIXCPP_CLIENT_TOKEN"));
    put_u32(&c, (uint32_t)getpid());
    frame(out, T_CONNECT, 1, &c, (uint32_t)c.n);
    free(c.p);
}

/* Read until the server closes (0 / ECONNRESET) within `seconds`: 1 if closed, 0 if still open.
 * Replies read on the way are counted in *replies (bytes). */
static int closed_within(int fd, int seconds, size_t *bytes) {
    time_t end = time(NULL) + seconds;
    uint8_t b[65536];
    while (time(NULL) < end) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 200) <= 0) continue;
        ssize_t k = recv(fd, b, sizeof(b), 0);
        if (k == 0) return 1;
        if (k < 0) return errno == ECONNRESET ? 1 : 0;
        if (bytes) *bytes += (size_t)k;
    }
    return 0;
}

/* Leave as a client does (finalize, no infos; request `id`), so the server has nothing to log,
 * and wait for it to close the connection. */
static void finalize_and_wait(int fd, uint32_t id) {
    buf_t f = {0}, fp = {0};
    put_u32(&fp, 0);
    frame(&f, T_FINALIZE, id, &fp, (uint32_t)fp.n);
    if (send_all(fd, f.p, f.n) == 0) closed_within(fd, 5, NULL);
    free(f.p);
    free(fp.p);
}

/* Connect as this rank and wait for the connect reply (so what follows is past authentication). */
static int connected(void) {
    for (int attempt = 0; attempt < 50; ++attempt) {
        int fd = open_server();
        if (fd < 0) return -1;
        buf_t b = {0};
        connect_frame(&b);
        int ok = send_all(fd, b.p, b.n) == 0;
        free(b.p);
        uint8_t hdr[20];
        size_t got = 0;
        while (ok && got < sizeof(hdr)) {
            struct pollfd p = {fd, POLLIN, 0};
            if (poll(&p, 1, 5000) <= 0) break;
            ssize_t k = recv(fd, hdr + got, sizeof(hdr) - got, 0);
            if (k <= 0) break;
            got += (size_t)k;
        }
        /* reply header: type 9, then i32 status at payload offset 0 */
        if (got == sizeof(hdr) && hdr[6] == 9 && hdr[16] == 0 && hdr[17] == 0 && hdr[18] == 0 && hdr[19] == 0) {
            /* drain the rest of the connect reply */
            uint8_t rest[8192];
            struct pollfd p = {fd, POLLIN, 0};
            while (poll(&p, 1, 100) > 0 && recv(fd, rest, sizeof(rest), MSG_DONTWAIT) > 0) {
            }
            return fd;
        }
        /* refused: typically "rank is already connected" while the server still closes the
         * previous connection; try again */
        close(fd);
        usleep(100000);
    }
    return -1;
}

/* --- rank 0: flood -------------------------------------------------------------------------- */
static void flood(void) {
    int fd = connected();
    CHECK(fd >= 0, "flood: connected with the step's token");
    if (fd < 0) return;
    /* Get of all job-level data (rank WILDCARD, empty key): answered at once with every job
     * key, a few KiB per reply. */
    buf_t g = {0};
    put_str(&g, getenv("PMIX_NAMESPACE"));
    put_u32(&g, PMIX_RANK_WILDCARD);
    put_str(&g, "");
    put_u32(&g, 0); /* infos */
    buf_t batch = {0};
    for (uint32_t id = 2; id < 2 + 256; ++id) frame(&batch, T_GET, id, &g, (uint32_t)g.n);
    size_t sent = 0, requests = 0;
    time_t end = time(NULL) + 120;
    int disconnected = 0;
    while (time(NULL) < end) {
        if (send_all(fd, batch.p, batch.n) != 0) {
            disconnected = 1;
            break;
        }
        sent += batch.n;
        requests += 256;
    }
    printf("%s after %zu requests (%zu bytes sent, no reply read)\n",
           disconnected ? "DISCONNECTED" : "STILL-CONNECTED", requests, sent);
    CHECK(disconnected, "flood: the server closed the connection of a client that does not read");
    close(fd);
    free(g.p);
    free(batch.p);
}

/* --- rank 0: hostile inputs ------------------------------------------------------------------ */
static void hostile_one(const char *name, int authenticate, const buf_t *bytes) {
    int fd = authenticate ? connected() : open_server();
    if (fd < 0) {
        CHECK(0, "HOSTILE %s: cannot connect", name);
        return;
    }
    int sent = send_all(fd, bytes->p, bytes->n) == 0;
    size_t answered = 0;
    int closed = closed_within(fd, 10, &answered);
    close(fd);
    printf("HOSTILE %s: %s%s (%zu reply bytes)\n", name, sent ? "sent" : "send failed",
           closed ? ", connection closed" : ", still open", answered);
    CHECK(closed, "HOSTILE %s ok: refused", name);
}

static void hostile(void) {
    const char *ns = getenv("PMIX_NAMESPACE");
    buf_t b = {0}, p = {0};

    /* Before connect: garbage, a 1 GiB frame announced, a message other than connect. */
    put(&b, "GET / HTTP/1.0\r\n\r\n", 18);
    hostile_one("garbage-before-connect", 0, &b);
    b.n = 0;
    frame(&b, T_CONNECT, 1, NULL, 1u << 30);
    hostile_one("1GiB-frame-before-connect", 0, &b);
    b.n = 0;
    p.n = 0;
    put_u32(&p, 0);
    frame(&b, T_COMMIT, 1, &p, (uint32_t)p.n);
    hostile_one("commit-before-connect", 0, &b);
    b.n = 0;
    p.n = 0;
    for (int i = 0; i < 1000; ++i) put(&p, "xxxxxxxx", 8); /* 8000 bytes: beyond a connect's size */
    frame(&b, T_CONNECT, 1, &p, (uint32_t)p.n);
    hostile_one("oversized-connect", 0, &b);

    /* After connect: counts that the bytes cannot hold. */
    b.n = 0;
    p.n = 0;
    put_u32(&p, 0xffffffffu); /* 2^32-1 infos in a 40-byte commit */
    for (int i = 0; i < 36; ++i) put_u8(&p, 0);
    frame(&b, T_COMMIT, 2, &p, (uint32_t)p.n);
    hostile_one("commit-2^32-infos", 1, &b);
    b.n = 0;
    p.n = 0;
    put_u32(&p, 0xfffffff0u); /* fence over 2^32 procs */
    put_str(&p, ns);
    put_u32(&p, 0);
    frame(&b, T_FENCE, 2, &p, (uint32_t)p.n);
    hostile_one("fence-2^32-procs", 1, &b);
    b.n = 0;
    p.n = 0;
    put_str(&p, ns);
    put_u32(&p, 1);
    put_str(&p, "k");
    put_u32(&p, 0x7fffffffu); /* a Get with 2^31 infos */
    frame(&b, T_GET, 2, &p, (uint32_t)p.n);
    hostile_one("get-2^31-infos", 1, &b);
    /* Lengths past the end. */
    b.n = 0;
    p.n = 0;
    put_u32(&p, 1);
    put_u8(&p, PMIX_GLOBAL);
    put_u32(&p, 0xfffffff0u); /* key length */
    put(&p, "k", 1);
    frame(&b, T_COMMIT, 2, &p, (uint32_t)p.n);
    hostile_one("commit-4GiB-key-length", 1, &b);
    b.n = 0;
    p.n = 0;
    put_u32(&p, 1);
    put_u8(&p, PMIX_GLOBAL);
    put_str(&p, "k");
    put_u32(&p, 0);
    put_u16(&p, PMIX_BYTE_OBJECT);
    put_u32(&p, 0xfffffff0u); /* byte object length */
    frame(&b, T_COMMIT, 2, &p, (uint32_t)p.n);
    hostile_one("commit-4GiB-byte-object", 1, &b);
    /* A data array of 2^24 elements of a 260-byte type announced in 30 bytes. */
    b.n = 0;
    p.n = 0;
    put_u32(&p, 1);
    put_str(&p, "k");
    put_u32(&p, 0);
    put_u16(&p, PMIX_DATA_ARRAY);
    put_u16(&p, PMIX_PROC);
    put_u32(&p, 1u << 24);
    frame(&b, T_FINALIZE, 2, &p, (uint32_t)p.n);
    hostile_one("finalize-darray-2^24-procs", 1, &b);
    /* Nesting: data arrays of values 200 deep. */
    b.n = 0;
    p.n = 0;
    put_u32(&p, 1);
    put_str(&p, "k");
    put_u32(&p, 0);
    for (int i = 0; i < 200; ++i) {
        put_u16(&p, PMIX_DATA_ARRAY);
        put_u16(&p, PMIX_VALUE);
        put_u32(&p, 1);
    }
    put_u16(&p, PMIX_UNDEF);
    frame(&b, T_LOG, 2, &p, (uint32_t)p.n);
    hostile_one("log-nested-200-deep", 1, &b);
    /* Well formed, but its decoded form (1M infos of 552 bytes) exceeds the decode budget. */
    b.n = 0;
    p.n = 0;
    put_u32(&p, 1u << 20);
    for (uint32_t i = 0; i < (1u << 20); ++i) {
        put_u32(&p, 0); /* empty key */
        put_u32(&p, 0); /* flags */
        put_u16(&p, PMIX_UNDEF);
    }
    frame(&b, T_FINALIZE, 2, &p, (uint32_t)p.n);
    hostile_one("finalize-1M-infos-over-budget", 1, &b);
    /* A snapshot request carries nothing: one with a payload is refused. */
    b.n = 0;
    p.n = 0;
    put_str(&p, "/etc/shadow");
    frame(&b, T_SNAPSHOT, 2, &p, (uint32_t)p.n);
    hostile_one("snapshot-with-payload", 1, &b);
    /* Unknown message type, and a frame announcing more than the server's frame limit. */
    b.n = 0;
    p.n = 0;
    put_u32(&p, 0);
    frame(&b, 999, 2, &p, (uint32_t)p.n);
    hostile_one("unknown-type", 1, &b);
    b.n = 0;
    frame(&b, T_COMMIT, 2, NULL, 0xfffffff0u);
    hostile_one("4GiB-frame-after-connect", 1, &b);
    b.n = 0;
    for (int i = 0; i < 4096; ++i) put_u8(&b, (uint8_t)(i * 7 + 3));
    hostile_one("garbage-after-connect", 1, &b);
    free(b.p);
    free(p.p);
}

/* Descriptors sent to the server (the clients' side of the socket may carry them): a snapshot
 * request flagged as carrying one, sent with the write end of a pipe and the client's own socket.
 * The server answers it, and keeps neither: once the client closes its copy of the pipe's write
 * end, the read end sees end of file (no other holder, root's server included). */
static void descriptors(void) {
    int fd = connected();
    CHECK(fd >= 0, "DESCRIPTORS: connected with the step's token");
    if (fd < 0) return;
    int pipefd[2];
    if (pipe(pipefd) != 0) {
        CHECK(0, "DESCRIPTORS: pipe: %s", strerror(errno));
        close(fd);
        return;
    }
    buf_t b = {0};
    frame_flags(&b, T_SNAPSHOT, 0x01, 2, NULL);
    int pass[2] = {pipefd[1], fd};
    struct iovec iov = {b.p, b.n};
    char control[CMSG_SPACE(sizeof(pass))];
    memset(control, 0, sizeof(control));
    struct msghdr msg = {0};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(pass));
    memcpy(CMSG_DATA(cm), pass, sizeof(pass));
    ssize_t sent = sendmsg(fd, &msg, MSG_NOSIGNAL);
    close(pipefd[1]);
    CHECK(sent == (ssize_t)b.n, "DESCRIPTORS: request sent with two descriptors");
    /* the reply: header (type 9, id 2) then i32 status */
    uint8_t hdr[20];
    size_t got = 0;
    while (got < sizeof(hdr)) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 10000) <= 0) break;
        ssize_t k = recv(fd, hdr + got, sizeof(hdr) - got, 0);
        if (k <= 0) break;
        got += (size_t)k;
    }
    CHECK(got == sizeof(hdr) && hdr[6] == 9 && hdr[8] == 2, "DESCRIPTORS ok: the server answered the request");
    struct pollfd p = {pipefd[0], POLLIN, 0};
    char c;
    int eof = poll(&p, 1, 10000) > 0 && read(pipefd[0], &c, 1) == 0;
    printf("DESCRIPTORS: reply %s, pipe %s\n", got == sizeof(hdr) ? "read" : "missing",
           eof ? "at end of file" : "still held open");
    CHECK(eof, "DESCRIPTORS ok: the server kept none of the descriptors");
    finalize_and_wait(fd, 3);
    close(pipefd[0]);
    close(fd);
    free(b.p);
}

/* The modex snapshot's memory file, as any client receives it: the server writes it through its
 * own mapping and the clients of the node (the same job) map it. Asked for with a snapshot request
 * (whose reply always carries the descriptor), then attacked: writing it, mapping it writable
 * (directly, by mprotect, or reopened through /proc), growing, shrinking or punching a hole in
 * it, and sealing it against the server's writes must all fail. */
static void snapshot_file(void) {
    int fd = connected();
    CHECK(fd >= 0, "SNAPSHOT-FILE: connected with the step's token");
    if (fd < 0) return;
    buf_t b = {0};
    frame(&b, T_SNAPSHOT, 2, NULL, 0);
    CHECK(send_all(fd, b.p, b.n) == 0, "SNAPSHOT-FILE: snapshot request sent");
    int mfd = -1;
    for (int i = 0; i < 100 && mfd < 0; ++i) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 10000) <= 0) break;
        uint8_t data[4096];
        struct iovec iov = {data, sizeof(data)};
        char control[CMSG_SPACE(sizeof(int))];
        struct msghdr msg = {0};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control;
        msg.msg_controllen = sizeof(control);
        ssize_t k = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
        if (k <= 0) break;
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
            if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) memcpy(&mfd, CMSG_DATA(cm), sizeof(int));
    }
    CHECK(mfd >= 0, "SNAPSHOT-FILE: the reply carried the snapshot's descriptor");
    if (mfd >= 0) {
        off_t size = lseek(mfd, 0, SEEK_END);
        int refused = 0, tries = 0;
#define TRY_REFUSED(what, expr)                                                    \
    do {                                                                           \
        int bad = (expr);                                                          \
        ++tries;                                                                   \
        if (!bad) ++refused;                                                       \
        printf("SNAPSHOT-FILE: %s %s\n", what, bad ? "SUCCEEDED" : "refused");     \
    } while (0)
        TRY_REFUSED("write", pwrite(mfd, "x", 1, 0) == 1);
        void *w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
        TRY_REFUSED("shared writable mapping", w != MAP_FAILED);
        if (w != MAP_FAILED) munmap(w, 4096);
        void *r = mmap(NULL, 4096, PROT_READ, MAP_SHARED, mfd, 0);
        CHECK(r != MAP_FAILED, "SNAPSHOT-FILE: a read-only mapping works");
        if (r != MAP_FAILED) {
            TRY_REFUSED("mprotect of a read-only mapping to writable", mprotect(r, 4096, PROT_READ | PROT_WRITE) == 0);
            munmap(r, 4096);
        }
        TRY_REFUSED("shrink", ftruncate(mfd, 0) == 0);
        TRY_REFUSED("grow", ftruncate(mfd, size + (1 << 20)) == 0);
        TRY_REFUSED("punch a hole", fallocate(mfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096) == 0);
        TRY_REFUSED("seal against the server's writes", fcntl(mfd, F_ADD_SEALS, F_SEAL_WRITE) == 0);
        char path[64];
        snprintf(path, sizeof(path), "/proc/self/fd/%d", mfd);
        int again = open(path, O_RDWR);
        if (again >= 0) {
            TRY_REFUSED("write through a reopened descriptor", pwrite(again, "x", 1, 0) == 1);
            void *w2 = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, again, 0);
            TRY_REFUSED("writable mapping of a reopened descriptor", w2 != MAP_FAILED);
            if (w2 != MAP_FAILED) munmap(w2, 4096);
            close(again);
        }
#undef TRY_REFUSED
        CHECK(refused == tries, "SNAPSHOT-FILE ok: %d of %d ways to change the file refused", refused, tries);
        close(mfd);
    }
    finalize_and_wait(fd, 3);
    close(fd);
    free(b.p);
}

/* --- rank 0: Gets of the node's topology before it is made ---------------------------------- *
 * The first Get of PMIX_LOCAL_TOPO makes the server start a discovery; 64 more in the same batch
 * must not queue without bound: each is answered, with the topology or PMIX_ERR_OUT_OF_RESOURCE
 * (at most 16 wait per connection), and the connection stays usable. */
static void topology(void) {
    int fd = connected();
    CHECK(fd >= 0, "TOPOLOGY: connected with the step's token");
    if (fd < 0) return;
    enum { N = 64 };
    buf_t g = {0}, batch = {0};
    put_str(&g, getenv("PMIX_NAMESPACE"));
    put_u32(&g, PMIX_RANK_WILDCARD);
    put_str(&g, PMIX_LOCAL_TOPO);
    put_u32(&g, 0); /* infos */
    for (uint32_t id = 2; id < 2 + N + 1; ++id) frame(&batch, T_GET, id, &g, (uint32_t)g.n);
    CHECK(send_all(fd, batch.p, batch.n) == 0, "TOPOLOGY: %d Gets sent at once", N + 1);
    /* read the N + 1 replies: 16-byte frame header (u32 payload length at 12), status first */
    size_t cap = 1 << 20, have = 0;
    uint8_t *in = malloc(cap);
    int replies = 0, found = 0, refused = 0, other = 0;
    time_t end = time(NULL) + 60;
    while (replies < N + 1 && time(NULL) < end) {
        while (have >= 16) {
            uint32_t len;
            memcpy(&len, in + 12, 4);
            if (have < 16 + (size_t)len) break;
            int32_t st = 1;
            if (len >= 4) memcpy(&st, in + 16, 4);
            if (st == PMIX_SUCCESS && len > 1000) found++;
            else if (st == PMIX_ERR_OUT_OF_RESOURCE) refused++;
            else other++;
            replies++;
            memmove(in, in + 16 + len, have - 16 - len);
            have -= 16 + len;
        }
        if (replies == N + 1) break;
        if (have == cap) in = realloc(in, cap *= 2);
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 5000) <= 0) break;
        ssize_t k = recv(fd, in + have, cap - have, 0);
        if (k <= 0) break;
        have += (size_t)k;
    }
    printf("TOPOLOGY: %d replies: %d with the topology, %d refused, %d other\n", replies, found, refused, other);
    CHECK(replies == N + 1 && other == 0 && found >= 1 && found + refused == N + 1,
          "TOPOLOGY ok: each Get answered, with the topology or refused");
    finalize_and_wait(fd, 100);
    free(in);
    free(g.p);
    free(batch.p);
    close(fd);
}

/* --- ranks 1..n-1: ordinary clients ----------------------------------------------------------- */
static void well_behaved(int rounds) {
    pmix_proc_t me;
    if (ptest_init(&me) != 0) {
        ptest_failures++;
        return;
    }
    uint32_t size = ptest_job_size(&me);
    pmix_proc_t *peers = calloc(size, sizeof(pmix_proc_t));
    for (uint32_t r = 1; r < size; ++r) {
        PMIX_LOAD_PROCID(&peers[r - 1], me.nspace, r);
    }
    int ok = 1;
    for (int round = 0; round < rounds && ok; ++round) {
        char key[64];
        pmix_value_t v;
        snprintf(key, sizeof(key), "attack.round.%d", round);
        PMIX_VALUE_LOAD(&v, &round, PMIX_INT);
        ok = PMIx_Put(PMIX_GLOBAL, key, &v) == PMIX_SUCCESS && PMIx_Commit() == PMIX_SUCCESS;
        if (ok) ok = PMIx_Fence(peers, size - 1, NULL, 0) == PMIX_SUCCESS;
        if (ok) {
            pmix_proc_t next;
            pmix_value_t *got = NULL;
            PMIX_LOAD_PROCID(&next, me.nspace, me.rank % (size - 1) + 1);
            ok = PMIx_Get(&next, key, NULL, 0, &got) == PMIX_SUCCESS && got && got->data.integer == round;
            if (got) PMIX_VALUE_RELEASE(got);
        }
        usleep(100000);
    }
    CHECK(ok, "%d rounds of put/commit/fence/get among ranks 1..%u while rank 0 attacks", rounds, size - 1);
    CHECK_RC(PMIX_SUCCESS, PMIx_Finalize(NULL, 0));
    free(peers);
}

static void log_one(const char *text, int *ok, int *dropped) {
    pmix_info_t data;
    PMIX_INFO_LOAD(&data, PMIX_LOG_GLOBAL_SYSLOG, text, PMIX_STRING);
    pmix_status_t rc = PMIx_Log(&data, 1, NULL, 0);
    PMIX_INFO_DESTRUCT(&data);
    if (rc == PMIX_SUCCESS) ++*ok;
    else if (rc == PMIX_ERR_OUT_OF_RESOURCE) ++*dropped;
    else CHECK(0, "PMIx_Log: %s", PMIx_Error_string(rc));
}

static void logflood(long mib) {
    pmix_proc_t me;
    if (ptest_init(&me) != 0) return;
    int ok = 0, dropped = 0;
    for (int i = 0; i < 3; ++i)
        log_one("innocent\nslurmstepd: error: FORGED-BY-THE-JOB step ended\r\x1b[2Kslurmd: FORGED-BY-THE-JOB\n", &ok, &dropped);
    const size_t chunk = 64 * 1024;
    char *big = malloc(chunk + 1);
    for (size_t i = 0; i < chunk; ++i) big[i] = (i % 80 == 79) ? '\n' : 'A' + (char)(i % 26);
    big[chunk] = '\0';
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long n = mib * 1024 * 1024 / (long)chunk;
    for (long i = 0; i < n; ++i) log_one(big, &ok, &dropped);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    free(big);
    sleep(11); /* past the server's rate window: its next log line says how many it dropped */
    log_one("after the flood", &ok, &dropped);
    printf("LOGFLOOD %ld bytes in %ld messages, %.1f s\n", n * (long)chunk, n + 3,
           (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    fflush(stdout);
    CHECK(ok + dropped == n + 4, "every log request was taken (%d of %ld)", ok + dropped, n + 4);
    CHECK_RC(PMIX_SUCCESS, PMIx_Finalize(NULL, 0));
}

struct lookup_count {
    pthread_mutex_t lock;
    int done, refused, timed_out, other;
};

static void lookup_cb(pmix_status_t status, pmix_pdata_t data[], size_t ndata, void *cbdata) {
    struct lookup_count *c = cbdata;
    pthread_mutex_lock(&c->lock);
    if (status == PMIX_ERR_OUT_OF_RESOURCE) ++c->refused;
    else if (status == PMIX_ERR_TIMEOUT) ++c->timed_out;
    else ++c->other;
    ++c->done;
    pthread_mutex_unlock(&c->lock);
}

static void srunthreads(int n) {
    pmix_proc_t me;
    if (ptest_init(&me) != 0) return;
    static struct lookup_count c = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, 0};
    pmix_info_t info[3];
    bool yes = true;
    int timeout = 6;
    pmix_data_range_t range = PMIX_RANGE_SESSION;
    PMIX_INFO_LOAD(&info[0], PMIX_WAIT, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &timeout, PMIX_INT);
    PMIX_INFO_LOAD(&info[2], PMIX_RANGE, &range, PMIX_DATA_RANGE);
    int sent = 0;
    for (int i = 0; i < n; ++i) {
        char key[64];
        snprintf(key, sizeof(key), "never.%u.%d", me.rank, i);
        char *keys[2] = {key, NULL};
        if (PMIx_Lookup_nb(keys, info, 3, lookup_cb, &c) == PMIX_SUCCESS) ++sent;
    }
    for (int i = 0; i < 400 && c.done < sent; ++i) usleep(50000);
    printf("SRUNTHREADS rank %u: %d asked, %d refused (out of resource), %d timed out, %d other\n", me.rank, sent,
           c.refused, c.timed_out, c.other);
    fflush(stdout);
    CHECK(c.done == sent, "every lookup was answered (%d of %d)", c.done, sent);
    /* the step still works */
    pmix_value_t v;
    PMIX_VALUE_LOAD(&v, &me.rank, PMIX_PROC_RANK);
    CHECK_RC(PMIX_SUCCESS, PMIx_Put(PMIX_GLOBAL, "after.threads", &v));
    CHECK_RC(PMIX_SUCCESS, PMIx_Commit());
    CHECK_RC(PMIX_SUCCESS, PMIx_Fence(NULL, 0, ptest_bool_info(PMIX_COLLECT_DATA, 1), 1));
    CHECK_RC(PMIX_SUCCESS, PMIx_Finalize(NULL, 0));
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "flood";
    const char *r = getenv("PMIX_RANK");
    int rank = r ? atoi(r) : -1;
    int rounds = argc > 2 ? atoi(argv[2]) : 50;
    signal(SIGPIPE, SIG_IGN);
    if (strcmp(mode, "logflood") == 0) rounds = 40;
    if (strcmp(mode, "srunthreads") == 0) {
        ptest_rank = rank;
        srunthreads(argc > 2 ? atoi(argv[2]) : 200);
        return ptest_exit();
    }
    if (rank == 0) {
        ptest_rank = 0;
        if (strcmp(mode, "flood") == 0) flood();
        else if (strcmp(mode, "logflood") == 0) logflood(argc > 2 ? atol(argv[2]) : 1024);
        else {
            hostile();
            descriptors();
            snapshot_file();
            topology();
        }
    } else {
        well_behaved(rounds);
    }
    return ptest_exit();
}

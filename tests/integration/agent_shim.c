/* LD_PRELOAD shim for t-attack-agent.sh, built by the test as the job's user and loaded into the
 * user's own srun: every reply srun's agent sends to a slurmstepd (root) passes through send()
 * here, and the user bends it. By PMIXCPP_SHIM_MODE:
 *   badid    the reply names a call the slurmstepd never made (id + 1000000)
 *   type     the reply's frame type becomes a request's (4, spawn)
 *   garbage  the frame's magic is overwritten
 *   huge     the header claims a payload of 1 GiB
 *   dup      every reply is sent twice (the second is a late answer to a call already answered)
 * Only the services' replies are touched: a frame of type 0x100 whose bytes carry no "MUNGE:"
 * credential (the address table of the rendezvous is t-attack-trust.sh's). Each bent frame is
 * counted on stderr ("agent-shim: <mode>"). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

static ssize_t (*real_send)(int, const void *, size_t, int);

static int is_service_reply(const unsigned char *b, size_t n) {
    if (n < 16 || memcmp(b, "PMXC", 4) != 0 || b[4] != 1) return 0;
    if ((b[6] | (b[7] << 8)) != 0x100) return 0;
    for (size_t i = 0; i + 6 <= n; ++i)
        if (memcmp(b + i, "MUNGE:", 6) == 0) return 0;
    return 1;
}

ssize_t send(int fd, const void *buf, size_t len, int flags) {
    if (!real_send) real_send = (ssize_t(*)(int, const void *, size_t, int))dlsym(RTLD_NEXT, "send");
    const char *mode = getenv("PMIXCPP_SHIM_MODE");
    if (!mode || !is_service_reply(buf, len)) return real_send(fd, buf, len, flags);
    unsigned char *copy = malloc(len);
    if (!copy) return real_send(fd, buf, len, flags);
    memcpy(copy, buf, len);
    if (strcmp(mode, "badid") == 0) {
        uint32_t id = copy[8] | (copy[9] << 8) | (copy[10] << 16) | ((uint32_t)copy[11] << 24);
        id += 1000000;
        copy[8] = id & 0xff; copy[9] = (id >> 8) & 0xff; copy[10] = (id >> 16) & 0xff; copy[11] = id >> 24;
    } else if (strcmp(mode, "type") == 0) {
        copy[6] = 4;
        copy[7] = 0;
    } else if (strcmp(mode, "garbage") == 0) {
        memcpy(copy, "XXXX", 4);
    } else if (strcmp(mode, "huge") == 0) {
        copy[12] = 0; copy[13] = 0; copy[14] = 0; copy[15] = 0x40;
    } else if (strcmp(mode, "dup") == 0) {
        ssize_t first = real_send(fd, buf, len, flags);
        if (first == (ssize_t)len) (void)real_send(fd, buf, len, flags);
        fprintf(stderr, "agent-shim: dup\n");
        free(copy);
        return first;
    }
    fprintf(stderr, "agent-shim: %s\n", mode);
    ssize_t n = real_send(fd, copy, len, flags);
    free(copy);
    return n;
}

/* LD_PRELOAD shim for t-attack-trust.sh, built by the test as the job's user and loaded into the
 * user's own srun: everything srun's agent sends passes through send() here. What the user can
 * do to it, by PMIXCPP_SHIM_MODE:
 *   dump      pass everything through; append each frame carrying node records to PMIXCPP_SHIM_DUMP
 *   flip      change one character inside the first node record (a munge credential)
 *   swap      exchange the first two node records of the address table (equal lengths), else flip
 *   truncate  send half of the address table's frame and close (a broken agent reply)
 * Only frames that carry "MUNGE:" credentials are touched (the address table). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

static ssize_t (*real_send)(int, const void *, size_t, int);

static const char *find(const char *hay, size_t n, const char *needle, size_t from) {
    size_t k = strlen(needle);
    for (size_t i = from; i + k <= n; ++i)
        if (memcmp(hay + i, needle, k) == 0) return hay + i;
    return NULL;
}

/* The extent of the credential starting at p: "MUNGE:" base64 ":" */
static size_t cred_len(const char *p, const char *end) {
    const char *q = p + 6;
    while (q < end && *q != ':') ++q;
    return q < end ? (size_t)(q - p + 1) : 0;
}

ssize_t send(int fd, const void *buf, size_t len, int flags) {
    if (!real_send) real_send = (ssize_t(*)(int, const void *, size_t, int))dlsym(RTLD_NEXT, "send");
    const char *mode = getenv("PMIXCPP_SHIM_MODE");
    const char *b = (const char *)buf;
    const char *first = (len > 4 && memcmp(b, "PMXC", 4) == 0) ? find(b, len, "MUNGE:", 0) : NULL;
    if (!mode || !first) return real_send(fd, buf, len, flags);
    const char *dump = getenv("PMIXCPP_SHIM_DUMP");
    if (dump) {
        FILE *f = fopen(dump, "a");
        if (f) {
            fwrite(buf, 1, len, f);
            fclose(f);
        }
    }
    if (strcmp(mode, "dump") == 0) return real_send(fd, buf, len, flags);
    char *copy = malloc(len);
    if (!copy) return real_send(fd, buf, len, flags);
    memcpy(copy, buf, len);
    size_t at = (size_t)(first - b);
    size_t l1 = cred_len(copy + at, copy + len);
    ssize_t rc;
    if (strcmp(mode, "truncate") == 0) {
        fprintf(stderr, "trust-shim: cut the address table's frame short\n");
        rc = real_send(fd, copy, len / 2, flags);
        free(copy);
        return rc < 0 ? rc : (ssize_t)len;
    }
    const char *second = l1 ? find(copy, len, "MUNGE:", at + l1) : NULL;
    size_t l2 = second ? cred_len(second, copy + len) : 0;
    if (strcmp(mode, "swap") == 0 && second && l1 == l2) {
        char *tmp = malloc(l1);
        size_t at2 = (size_t)(second - copy);
        memcpy(tmp, copy + at, l1);
        memcpy(copy + at, copy + at2, l1);
        memcpy(copy + at2, tmp, l1);
        free(tmp);
        fprintf(stderr, "trust-shim: swapped two node records\n");
    } else if (l1 > 40) {
        char *c = copy + at + 30; /* inside the base64 text */
        *c = (*c == 'A') ? 'B' : 'A';
        fprintf(stderr, "trust-shim: changed one character of a node record\n");
    }
    rc = real_send(fd, copy, len, flags);
    free(copy);
    return rc;
}

// pmixcpp-test-client: speaks the raw client protocol to the node's server, to prove the server
// works inside slurmstepd before the real client library exists.
//   srun --mpi=pmixcpp -N1 -n4 pmixcpp-test-client [basic|abort|die|badtoken]
// Prints one line per check; exits 0 if every check passed.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "client_util.h"

using namespace pmixcpp;
using namespace pmixcpp::testing;

namespace {

int failures = 0;
uint32_t my_rank = 0;

void check(bool ok, const std::string &what) {
    printf("rank %u: %s: %s\n", my_rank, ok ? "ok" : "FAILED", what.c_str());
    if (!ok) ++failures;
}

const pmix_info_t *find(const InfoArray &a, const char *key) {
    for (size_t i = 0; i < a.size(); ++i)
        if (strcmp(a[i].key, key) == 0) return &a[i];
    return nullptr;
}

std::string env(const char *name) {
    const char *v = getenv(name);
    return v ? v : "";
}

}  // namespace

int main(int argc, char **argv) {
    setvbuf(stdout, nullptr, _IOLBF, 0);
    const std::string mode = argc > 1 ? argv[1] : "basic";
    const std::string uri = env("PMIXCPP_SERVER_URI");
    const std::string nspace = env("PMIX_NAMESPACE");
    std::string token = env("PMIXCPP_CLIENT_TOKEN");
    my_rank = static_cast<uint32_t>(strtoul(env("PMIX_RANK").c_str(), nullptr, 10));
    if (uri.rfind("unix:", 0) != 0) {
        fprintf(stderr, "no PMIXCPP_SERVER_URI (run under srun --mpi=pmixcpp)\n");
        return 2;
    }
    if (mode == "badtoken") token = "not-the-token";

    auto t0 = std::chrono::steady_clock::now();
    raw_client c;
    if (!c.open(uri.substr(5))) {
        check(false, "connect to " + uri + ": " + strerror(errno));
        return 1;
    }
    wire::connect_reply cr;
    pmix_status_t st = c.do_connect(nspace, my_rank, token, &cr);
    if (mode == "badtoken") {
        check(st == PMIX_ERR_NO_PERMISSIONS, "bad token refused (status " + std::to_string(st) + ")");
        return failures ? 1 : 0;
    }
    check(st == PMIX_SUCCESS, "connect (status " + std::to_string(st) + ")");
    if (st != PMIX_SUCCESS) return 1;
    auto t1 = std::chrono::steady_clock::now();

    // The job data, mapped read-only as the client library will.
    int fd = open(cr.jobdata_path.c_str(), O_RDONLY | O_CLOEXEC);
    check(fd >= 0, "open " + cr.jobdata_path);
    std::vector<wire::jobdata_entry> entries;
    if (fd >= 0) {
        void *p = mmap(nullptr, cr.jobdata_size, PROT_READ, MAP_SHARED, fd, 0);
        close(fd);
        check(p != MAP_FAILED, "mmap job data");
        if (p != MAP_FAILED) {
            Status ds = wire::decode_jobdata({static_cast<const uint8_t *>(p), cr.jobdata_size}, &entries);
            check(ds.ok(), "decode job data " + ds.message());
            munmap(p, cr.jobdata_size);
        }
    }
    uint32_t job_size = 0;
    std::string lpeers, myhost, locstr;
    uint16_t lrank = UINT16_MAX;
    for (const auto &e : entries) {
        if (e.rank == PMIX_RANK_WILDCARD) {
            if (auto *i = find(e.infos, PMIX_JOB_SIZE); i && i->value.type == PMIX_UINT32) job_size = i->value.data.uint32;
            if (auto *i = find(e.infos, PMIX_LOCAL_PEERS); i && i->value.type == PMIX_STRING) lpeers = i->value.data.string;
        } else if (e.rank == my_rank) {
            if (auto *i = find(e.infos, PMIX_LOCAL_RANK); i && i->value.type == PMIX_UINT16) lrank = i->value.data.uint16;
            if (auto *i = find(e.infos, PMIX_HOSTNAME); i && i->value.type == PMIX_STRING) myhost = i->value.data.string;
            if (auto *i = find(e.infos, PMIX_LOCALITY_STRING); i && i->value.type == PMIX_STRING)
                locstr = i->value.data.string;
        }
    }
    check(job_size > 0 && entries.size() == job_size + 1,
          "job data: job.size " + std::to_string(job_size) + ", " + std::to_string(entries.size()) + " entries");
    check(lrank == cr.local_rank, "pmix.lrank " + std::to_string(lrank) + " = connect local rank");
    printf("rank %u: host %s lpeers %s locstr %s (connect %.2f ms)\n", my_rank, myhost.c_str(), lpeers.c_str(),
           locstr.c_str(), std::chrono::duration<double, std::milli>(t1 - t0).count());

    if (mode == "abort" && my_rank == 0) {
        wire::abort_request ab;
        ab.status = 7;
        ab.message = "test client aborts on purpose";
        c.send_msg(wire::msg_type::abort, 2, ab);
        auto r = c.recv_reply(10000);
        check(r && r->status == PMIX_SUCCESS, "abort accepted");
        fprintf(stderr, "rank 0: aborting: %s\n", ab.message.c_str());
        _exit(7);
    }
    if (mode == "die" && my_rank == 1) {
        printf("rank 1: dying without finalize\n");
        _exit(3);
    }

    // Put + commit, then a collecting fence over everyone, then Gets of every local peer's key.
    wire::commit_request cm;
    cm.infos = make_infos(1);
    std::string key = "test.key." + std::to_string(my_rank);
    std::string val = "value of rank " + std::to_string(my_rank);
    set_info(cm.infos[0], key.c_str(), val.c_str(), PMIX_STRING);
    cm.scopes = {PMIX_GLOBAL};
    c.send_msg(wire::msg_type::commit, 3, cm);
    auto r = c.recv_reply();
    check(r && r->status == PMIX_SUCCESS, "commit");

    wire::fence_request fr;
    fr.infos = make_infos(1);
    bool yes = true;
    set_info(fr.infos[0], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    auto f0 = std::chrono::steady_clock::now();
    c.send_msg(wire::msg_type::fence, 4, fr);
    r = c.recv_reply(mode == "die" ? 20000 : 60000);
    auto f1 = std::chrono::steady_clock::now();
    if (mode == "die") {
        check(r && (r->status == PMIX_ERR_PROC_ABORTED || r->status == PMIX_ERR_LOST_CONNECTION),
              "fence fails after rank 1 died (status " + std::to_string(r ? r->status : 0) + ": " +
                  (r ? r->message : "no reply") + ")");
        return failures ? 1 : 0;
    }
    check(r && r->status == PMIX_SUCCESS,
          "fence (status " + std::to_string(r ? r->status : 0) + (r ? " " + r->message : "") + ", " +
              std::to_string(std::chrono::duration<double, std::milli>(f1 - f0).count()) + " ms)");

    uint32_t id = 10;
    size_t start = 0;
    while (start <= lpeers.size() && !lpeers.empty()) {
        size_t end = lpeers.find(',', start);
        uint32_t peer = static_cast<uint32_t>(strtoul(lpeers.substr(start, end - start).c_str(), nullptr, 10));
        wire::get_request g;
        g.proc = make_proc(nspace, peer);
        g.key = "test.key." + std::to_string(peer);
        c.send_msg(wire::msg_type::get, id, g);
        auto gr = c.recv_reply();
        wire::get_reply body;
        bool ok = gr && gr->status == PMIX_SUCCESS && raw_client::body(*gr, &body);
        const pmix_info_t *v = ok ? find(body.data, g.key.c_str()) : nullptr;
        check(v && v->value.type == PMIX_STRING && std::string(v->value.data.string) == "value of rank " + std::to_string(peer),
              "get " + g.key + " of rank " + std::to_string(peer));
        ++id;
        if (end == std::string::npos) break;
        start = end + 1;
    }

    wire::fence_request empty;
    c.send_msg(wire::msg_type::fence, 50, empty);
    r = c.recv_reply();
    check(r && r->status == PMIX_SUCCESS, "empty fence");
    c.send_msg(wire::msg_type::finalize, 51, wire::finalize_request{});
    r = c.recv_reply();
    check(r && r->status == PMIX_SUCCESS, "finalize");
    return failures ? 1 : 0;
}

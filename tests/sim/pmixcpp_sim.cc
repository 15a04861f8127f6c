// The step simulator's command line (tests/sim/sim.h says what is real and what is modelled).
//
//   pmixcpp_sim scale    [options]   wire-up, fences, direct modex, memory, connections at the
//                                    node counts of --nodes (default 1024,4096,16384,65536)
//   pmixcpp_sim codec                the real fence codec's cost per byte here (byte_ns)
//   pmixcpp_sim width    [options]   the tree fence (empty and 1 KiB per rank) at each fan-out of
//                                    --widths (default 2,4,8,16,32,64) at the --nodes counts: the
//                                    table behind PMIxCppTreeWidth=auto (coll::default_tree_width)
//   pmixcpp_sim barrier  [options]   the empty fence by the tree (PMIxCppTreeWidth=auto) and by
//                                    the dissemination barrier at the --nodes counts: the table
//                                    behind PMIxCppFence=auto's choice (coll::kDisseminationMinNodes)
//   pmixcpp_sim conns    [options]   connections per node server: a tree fence, the watched ring
//                                    neighbour and direct-modex fetches from --peers other nodes
//                                    each (default 1024), without a cap and with --cap (default
//                                    PMIxCppNodeConnections' 128)
//   pmixcpp_sim loss     [options]   a lost node told to every live node (the real liveness
//                                    engines, receivers' handling modelled above --real-max,
//                                    default 4096) at the --nodes counts, alone
//   pmixcpp_sim validate [options]   the empty and the 1 KiB collecting fence at N x 1 on the
//                                    host preset (2 shared CPUs), for the local cluster's figures
//   pmixcpp_sim wireup   [options]   the wire-up routes alone at --nodes (default 4,8,16,32, host
//                                    preset): the static and the directory route, the directory
//                                    route's messages through slurmd and their CPU
// options:
//   --preset host|fabric   the network and CPU costs (default: fabric for scale, host for validate)
//   --nodes a,b,c  --ppn P  --bytes S (per rank, collecting fence)  --width k (tree fan-out)
//   --ring-max N   largest node count the ring runs at for real (default 4096; above: from the
//                  largest real run, scaled by (N-1): the ring is N-1 identical steps)
//   --real-max N   largest node count the tree fences run the real engines at (default 16384:
//                  their per-node state is O(N), 65k nodes' would need 34 GB); above, the tree's
//                  message pattern (run_tree_pattern, checked equal to the engines by test_sim)
//   --jobdata-max-ranks R   largest job the real job-data writer builds (default 524288)
//   --fences F     fences in a row (validate: 20, scale: 1; the figure is the last one's; the
//                  node connections are open before, as in a benchmark's loop)
//   --set name=value   override one cost (lat_us, bw_Bps, send_us, recv_us, byte_ns, client_us,
//                  proc_us, client_cpu_us, store_ns, cpus, cpu_share, cred_make_us, cred_open_us, cred_overhead, connect_us,
//                  forward_us, dir_msg_cpu_us, start_gap_us, dir_window_share)
// Output: a table for people, and one "SIM key=value ..." line per row for scripts.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "sim.h"

using namespace pmixcpp;
using namespace pmixcpp::sim;

namespace {

std::vector<uint32_t> parse_list(const char *s) {
    std::vector<uint32_t> out;
    for (const char *p = s; *p;) {
        out.push_back(uint32_t(strtoul(p, const_cast<char **>(&p), 10)));
        if (*p == ',') ++p;
        else if (*p) break;
    }
    return out;
}

bool set_param(net_params &p, const std::string &kv) {
    auto eq = kv.find('=');
    if (eq == std::string::npos) return false;
    const std::string k = kv.substr(0, eq);
    const double v = atof(kv.c_str() + eq + 1);
    if (k == "lat_us") p.lat_us = v;
    else if (k == "bw_Bps") p.bw_Bps = v;
    else if (k == "send_us") p.send_us = v;
    else if (k == "recv_us") p.recv_us = v;
    else if (k == "byte_ns") p.byte_ns = v;
    else if (k == "store_ns") p.store_ns = v;
    else if (k == "client_us") p.client_us = v;
    else if (k == "proc_us") p.proc_us = v;
    else if (k == "client_cpu_us") p.client_cpu_us = v;
    else if (k == "cpus") p.cpus = unsigned(v);
    else if (k == "cpu_share") p.cpu_share = v > 0 && v <= 1 ? v : 1;
    else if (k == "cred_make_us") p.cred_make_us = v;
    else if (k == "cred_open_us") p.cred_open_us = v;
    else if (k == "cred_overhead") p.cred_overhead = size_t(v);
    else if (k == "connect_us") p.connect_us = v;
    else if (k == "forward_us") p.forward_us = v;
    else if (k == "dir_msg_cpu_us") p.dir_msg_cpu_us = v;
    else if (k == "start_gap_us") p.start_gap_us = v;
    else if (k == "dir_window_share") p.dir_window_share = v > 0 && v <= 1 ? v : 1;
    else return false;
    return true;
}

void print_params(const net_params &p) {
    printf("# costs (%s): lat_us=%.2f bw_Bps=%.3g send_us=%.2f recv_us=%.2f byte_ns=%.2f store_ns=%.1f client_us=%.2f proc_us=%.2f "
           "client_cpu_us=%.1f cpus=%u cpu_share=%.2f cred_make_us=%.1f cred_open_us=%.1f cred_overhead=%zu connect_us=%.1f forward_us=%.1f "
           "dir_msg_cpu_us=%.1f start_gap_us=%.1f dir_window_share=%.2f\n",
           p.name.c_str(), p.lat_us, p.bw_Bps, p.send_us, p.recv_us, p.byte_ns, p.store_ns, p.client_us, p.proc_us, p.client_cpu_us, p.cpus, p.cpu_share,
           p.cred_make_us, p.cred_open_us, p.cred_overhead, p.connect_us, p.forward_us, p.dir_msg_cpu_us, p.start_gap_us,
           p.dir_window_share);
}

std::string human_bytes(double b) {
    char buf[32];
    if (b >= 1e9) snprintf(buf, sizeof(buf), "%.2f GB", b / 1e9);
    else if (b >= 1e6) snprintf(buf, sizeof(buf), "%.1f MB", b / 1e6);
    else if (b >= 1e3) snprintf(buf, sizeof(buf), "%.1f KB", b / 1e3);
    else snprintf(buf, sizeof(buf), "%.0f B", b);
    return buf;
}

std::string human_us(double us) {
    char buf[32];
    if (us >= 1e6) snprintf(buf, sizeof(buf), "%.2f s", us / 1e6);
    else if (us >= 1e3) snprintf(buf, sizeof(buf), "%.2f ms", us / 1e3);
    else snprintf(buf, sizeof(buf), "%.0f us", us);
    return buf;
}

int fail(const char *what, const std::string &why) {
    fprintf(stderr, "pmixcpp_sim: %s: %s\n", what, why.c_str());
    return 1;
}

void print_node_loss(const node_loss_result &nl) {
    printf("  a node lost (REAL node_liveness on the noticing node%s; told through the lost node's tree): every node "
           "told after %s  [%llu node-down messages; the noticer sends %u and opens %u connections; at most %u "
           "messages and %u new connections from one node] %s\n",
           nl.receivers_real ? " and every receiver" : "; receivers' handling modelled", human_us(nl.all_told_us).c_str(),
           static_cast<unsigned long long>(nl.messages), nl.noticer_sends, nl.noticer_connections, nl.max_sends,
           nl.max_new_connections, nl.ok ? "ok" : nl.error.c_str());
}

// loss (see the top): the lost-node run alone.
int loss_mode(int argc, char **argv) {
    net_params p = fabric_preset();
    std::vector<uint32_t> nodes{1024, 4096, 16384, 65536};
    uint32_t width = 0, real_max = 4096;
    for (int i = 2; i < argc; ++i) {
        std::string a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : "";
        if (a == "--preset") p = strcmp(v, "host") == 0 ? host_preset() : fabric_preset(), ++i;
        else if (a == "--nodes") nodes = parse_list(v), ++i;
        else if (a == "--width") width = uint32_t(atoi(v)), ++i;
        else if (a == "--real-max") real_max = uint32_t(atoi(v)), ++i;
        else if (a == "--set") {
            if (!set_param(p, v)) return fail("bad --set", v);
            ++i;
        } else return fail("unknown option", a);
    }
    print_params(p);
    bool all_ok = true;
    for (uint32_t n : nodes) {
        const uint32_t k = width ? width : coll::default_tree_width(n);
        printf("\n== %u nodes, tree width %u\n", n, k);
        node_loss_result nl = run_node_loss(p, n, k, real_max);
        print_node_loss(nl);
        printf("SIM mode=loss nodes=%u width=%u real=%d node_loss_us=%.1f messages=%llu noticer_sends=%u "
               "noticer_conns=%u max_sends=%u max_conns=%u ok=%d\n",
               n, k, nl.receivers_real ? 1 : 0, nl.all_told_us, static_cast<unsigned long long>(nl.messages),
               nl.noticer_sends, nl.noticer_connections, nl.max_sends, nl.max_new_connections, nl.ok ? 1 : 0);
        fflush(stdout);
        all_ok = all_ok && nl.ok;
    }
    return all_ok ? 0 : 1;
}

// barrier (see the top): the empty fence by the tree (auto's width) and by the barrier.
int barrier_mode(const net_params &p, const std::vector<uint32_t> &nodes, uint32_t ppn, uint32_t real_max) {
    print_params(p);
    printf("%6s %5s | %12s %12s | %12s %12s | %9s %9s | %s\n", "nodes", "width", "tree", "barrier", "tree cold",
           "barrier cold", "tree msgs", "barr msgs", "how");
    bool all_ok = true;
    for (uint32_t n : nodes) {
        fence_setup s;
        s.nodes = n;
        s.ppn = ppn;
        s.real_blob_bytes = 0;
        s.width = coll::default_tree_width(n);
        const bool engines = n <= real_max;
        s.algo = coll::algorithm::tree;
        fence_result t = engines ? run_fence(p, s) : run_tree_pattern(p, s);
        s.algo = coll::algorithm::dissemination;
        fence_result d = engines ? run_fence(p, s) : run_dissemination_pattern(p, s);
        // The first fence of a step, its node connections not open yet (real engines only): the
        // tree opens one to the parent and each child, the barrier one per round.
        fence_result tc, dc;
        if (engines) {
            s.cold = true;
            dc = run_fence(p, s);
            s.algo = coll::algorithm::tree;
            tc = run_fence(p, s);
        }
        const bool ok = t.ok && d.ok && (!engines || (tc.ok && dc.ok));
        all_ok = all_ok && ok;
        printf("%6u %5u | %12s %12s | %12s %12s | %9llu %9llu | %s%s\n", n, s.width, human_us(t.max_us).c_str(),
               human_us(d.max_us).c_str(), engines ? human_us(tc.max_us).c_str() : "-",
               engines ? human_us(dc.max_us).c_str() : "-", static_cast<unsigned long long>(t.messages),
               static_cast<unsigned long long>(d.messages), engines ? "real engines" : "patterns",
               ok ? "" : (" FAILED: " + (t.ok ? d.error : t.error)).c_str());
        printf("SIM mode=barrier preset=%s nodes=%u ppn=%u width=%u tree_us=%.1f barrier_us=%.1f tree_cold_us=%.1f "
               "barrier_cold_us=%.1f tree_msgs=%llu barrier_msgs=%llu real=%d ok=%d\n",
               p.name.c_str(), n, ppn, s.width, t.max_us, d.max_us, tc.max_us, dc.max_us,
               static_cast<unsigned long long>(t.messages),
               static_cast<unsigned long long>(d.messages), engines ? 1 : 0, ok ? 1 : 0);
        fflush(stdout);
    }
    return all_ok ? 0 : 1;
}

// width, conns and barrier (see the top).
int other_modes(int argc, char **argv) {
    const bool width_mode = strcmp(argv[1], "width") == 0;
    net_params p = fabric_preset();
    std::vector<uint32_t> nodes{1024, 4096, 16384, 65536}, widths{2, 4, 8, 16, 32, 64};
    uint32_t ppn = 128, peers = 1024, cap = 128, real_max = 16384;
    uint64_t bytes = 1024;
    std::vector<std::string> sets;
    for (int i = 2; i < argc; ++i) {
        std::string a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : "";
        if (a == "--preset") p = strcmp(v, "host") == 0 ? host_preset() : fabric_preset(), ++i;
        else if (a == "--nodes") nodes = parse_list(v), ++i;
        else if (a == "--widths") widths = parse_list(v), ++i;
        else if (a == "--ppn") ppn = uint32_t(atoi(v)), ++i;
        else if (a == "--bytes") bytes = uint64_t(atoll(v)), ++i;
        else if (a == "--peers") peers = uint32_t(atoi(v)), ++i;
        else if (a == "--cap") cap = uint32_t(atoi(v)), ++i;
        else if (a == "--real-max") real_max = uint32_t(atoi(v)), ++i;
        else if (a == "--set") sets.push_back(v), ++i;
        else return fail("unknown option", a);
    }
    for (const auto &kv : sets)
        if (!set_param(p, kv)) return fail("bad --set", kv);
    if (strcmp(argv[1], "barrier") == 0) return barrier_mode(p, nodes, ppn, real_max);
    if (!width_mode) {
        printf("%6s %6s %5s | %8s %8s %8s %9s | %9s %9s %8s | %s\n", "nodes", "peers", "cap", "out max", "in max",
               "total", "opened", "closes", "out mean", "host s", "");
        for (uint32_t n : nodes) {
            for (uint32_t c : {0u, cap}) {
                conn_result r = run_connections(n, coll::default_tree_width(n), peers, c);
                printf("%6u %6u %5s | %8u %8u %8u %9llu | %9llu %9.1f %8.1f |\n", n, std::min(peers, n - 1),
                       c ? std::to_string(c).c_str() : "none", r.max_out, r.max_in, r.max_total,
                       static_cast<unsigned long long>(r.opened), static_cast<unsigned long long>(r.idle_closes), r.mean_out,
                       r.host_seconds);
                printf("SIM mode=conns nodes=%u peers=%u cap=%u width=%u max_out=%u max_in=%u max_total=%u opened=%llu "
                       "idle_closes=%llu mean_out=%.1f\n",
                       n, std::min(peers, n - 1), c, coll::default_tree_width(n), r.max_out, r.max_in, r.max_total,
                       static_cast<unsigned long long>(r.opened), static_cast<unsigned long long>(r.idle_closes), r.mean_out);
                fflush(stdout);
            }
        }
        return 0;
    }
    print_params(p);
    printf("%6s %5s %5s | %12s %12s | %s\n", "nodes", "width", "depth", "empty fence", "1KiB/rank", "how");
    bool all_ok = true;
    for (uint32_t n : nodes) {
        for (uint32_t k : widths) {
            fence_setup s;
            s.nodes = n;
            s.ppn = ppn;
            s.width = k;
            s.algo = coll::algorithm::tree;
            const bool engines = n <= real_max;
            fence_result e = engines ? run_fence(p, s) : run_tree_pattern(p, s);
            s.collect = true;
            s.bytes_per_rank = bytes;
            s.real_blob_bytes = engines && n <= 4096 ? 8 : 1;  // at least a byte: an empty blob travels as nothing
            fence_result d = engines ? run_fence(p, s) : run_tree_pattern(p, s);
            uint32_t depth = 0;
            for (uint64_t reach = 1, level = 1; reach < n; ++depth) level *= k, reach += level;
            const bool ok = e.ok && d.ok;
            all_ok = all_ok && ok;
            printf("%6u %5u %5u | %12s %12s | %s%s\n", n, k, depth, human_us(e.max_us).c_str(), human_us(d.max_us).c_str(),
                   engines ? "real engines" : "tree pattern", ok ? "" : (" FAILED: " + (e.ok ? d.error : e.error)).c_str());
            printf("SIM mode=width nodes=%u ppn=%u width=%u depth=%u fence_empty_us=%.1f fence_data_us=%.1f auto=%u ok=%d\n", n,
                   ppn, k, depth, e.max_us, d.max_us, coll::default_tree_width(n), ok ? 1 : 0);
            fflush(stdout);
        }
    }
    return all_ok ? 0 : 1;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "codec") == 0) {
        printf("codec_ns_per_byte %.3f\n", measure_codec_ns());
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "loss") == 0) return loss_mode(argc, argv);
    if (argc >= 2 && (strcmp(argv[1], "width") == 0 || strcmp(argv[1], "conns") == 0 || strcmp(argv[1], "barrier") == 0))
        return other_modes(argc, argv);
    if (argc < 2 || (strcmp(argv[1], "scale") != 0 && strcmp(argv[1], "validate") != 0 && strcmp(argv[1], "wireup") != 0)) {
        fprintf(stderr, "usage: pmixcpp_sim scale|validate|wireup [--preset host|fabric] [--nodes a,b] [--ppn P] [--bytes S] "
                        "[--width k] [--ring-max N] [--real-max N] [--jobdata-max-ranks R] [--fences F] [--set name=value]...\n");
        return 2;
    }
    const bool validate = strcmp(argv[1], "validate") == 0, wireup = strcmp(argv[1], "wireup") == 0;
    net_params p = validate || wireup ? host_preset() : fabric_preset();
    std::vector<uint32_t> nodes = validate ? std::vector<uint32_t>{1, 2, 4, 8, 16, 32}
                                  : wireup ? std::vector<uint32_t>{4, 8, 16, 32}
                                           : std::vector<uint32_t>{1024, 4096, 16384, 65536};
    uint32_t ppn = validate ? 1 : 128, width = 0, ring_max = 4096, real_max = 16384, fences = validate ? 20 : 1;
    uint64_t bytes = 1024, jobdata_max = 524288;
    std::vector<std::string> sets;
    for (int i = 2; i < argc; ++i) {
        std::string a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : "";
        if (a == "--preset") {
            p = strcmp(v, "host") == 0 ? host_preset() : fabric_preset();
            ++i;
        } else if (a == "--nodes") nodes = parse_list(v), ++i;
        else if (a == "--ppn") ppn = uint32_t(atoi(v)), ++i;
        else if (a == "--bytes") bytes = uint64_t(atoll(v)), ++i;
        else if (a == "--width") width = uint32_t(atoi(v)), ++i;
        else if (a == "--ring-max") ring_max = uint32_t(atoi(v)), ++i;
        else if (a == "--real-max") real_max = uint32_t(atoi(v)), ++i;
        else if (a == "--jobdata-max-ranks") jobdata_max = uint64_t(atoll(v)), ++i;
        else if (a == "--fences") fences = uint32_t(atoi(v)), ++i;
        else if (a == "--set") sets.push_back(v), ++i;
        else return fail("unknown option", a);
    }
    for (const auto &kv : sets)
        if (!set_param(p, kv)) return fail("bad --set", kv);
    print_params(p);
    const uint32_t width_opt = width;  // 0: by node count, as PMIxCppTreeWidth=auto

    if (wireup) {
        printf("%6s %5s | %10s %10s %10s | %9s %12s\n", "nodes", "width", "static", "directory", "difference", "forwards",
               "their CPU");
        for (uint32_t n : nodes) {
            width = width_opt ? width_opt : coll::default_tree_width(n);
            static_wireup_result sw = run_static_wireup(p, n, width);
            directory_wireup_result dw = run_directory_wireup(p, n, width);
            printf("%6u %5u | %7.1f ms %7.1f ms %7.1f ms | %9.1f %9.1f ms\n", n, width, sw.total_us / 1e3, dw.total_us / 1e3,
                   (dw.total_us - sw.total_us) / 1e3, dw.forwards, dw.forwards_cpu_us / 1e3);
            printf("SIM mode=wireup preset=%s nodes=%u width=%u static_wireup_us=%.1f directory_wireup_us=%.1f "
                   "difference_us=%.1f forwards=%.1f forwards_cpu_us=%.1f\n",
                   p.name.c_str(), n, width, sw.total_us, dw.total_us, dw.total_us - sw.total_us, dw.forwards, dw.forwards_cpu_us);
        }
        return 0;
    }
    if (validate) {
        width = width_opt ? width_opt : 8;  // the local cluster's runs, whose figures it is checked against
        printf("%6s %6s | %14s %14s | %14s %14s | %s\n", "nodes", "tasks", "empty median", "empty max", "1KiB median",
               "1KiB max", "checks");
        for (uint32_t n : nodes) {
            fence_setup s;
            s.nodes = n;
            s.ppn = ppn;
            s.width = width;
            s.fences = fences;
            fence_result e = run_fence(p, s);
            s.collect = true;
            s.bytes_per_rank = bytes;
            s.real_blob_bytes = uint32_t(std::min<uint64_t>(uint64_t(ppn) * bytes, 1u << 20));
            fence_result d = run_fence(p, s);
            const bool ok = e.ok && d.ok;
            printf("%6u %6u | %14.0f %14.0f | %14.0f %14.0f | %s\n", n, n * ppn, e.median_us, e.max_us, d.median_us, d.max_us,
                   ok ? "ok" : (e.ok ? d.error : e.error).c_str());
            printf("SIM mode=validate nodes=%u ppn=%u fence_empty_us=%.1f fence_empty_max_us=%.1f fence_data_us=%.1f "
                   "fence_data_max_us=%.1f ok=%d\n",
                   n, ppn, e.median_us, e.max_us, d.median_us, d.max_us, ok ? 1 : 0);
            if (!ok) return fail("a correctness check failed", e.ok ? d.error : e.error);
        }
        return 0;
    }

    bool all_ok = true;
    double ring_ref_us = 0;
    uint32_t ring_ref_n = 0;
    for (uint32_t n : nodes) {
        const uint64_t ranks = uint64_t(n) * ppn;
        width = width_opt ? width_opt : coll::default_tree_width(n);
        printf("\n== %u nodes x %u tasks (%llu ranks), %llu bytes per rank, tree width %u\n", n, ppn,
               static_cast<unsigned long long>(ranks), static_cast<unsigned long long>(bytes), width);
        fflush(stdout);
        wireup_result wu = run_wireup(p, n);
        printf("  wire-up (MODELLED srun rendezvous, real codecs): %s  [srun takes %u requests in %s, sends %u tables "
               "of %s in %s; a node verifies %u records in %s]\n",
               human_us(wu.total_us).c_str(), n, human_us(wu.srun_collect_us).c_str(), n, human_bytes(double(wu.table_bytes)).c_str(),
               human_us(wu.srun_send_us - wu.srun_collect_us).c_str(), n - 1, human_us(wu.verify_us).c_str());

        static_wireup_result sw = run_static_wireup(p, n, width);
        printf("  wire-up, static route (MODELLED, reserved ports: no table, no srun): %s  [a node opens %u records; "
               "srun holds %u connections]\n",
               human_us(sw.total_us).c_str(), sw.peers, sw.srun_connections);
        directory_wireup_result dw = run_directory_wireup(p, n, width);
        printf("  wire-up, directory route (MODELLED, through slurmd: no table, no srun): %s  [its %u neighbours hold its "
               "record at %s, it holds its parent's at %s; %u messages of %s per node; srun holds %u connections%s%s]\n",
               human_us(dw.total_us).c_str(), dw.tells, human_us(dw.children_know_us).c_str(), human_us(dw.parent_known_us).c_str(),
               dw.messages_per_node, human_bytes(double(dw.message_bytes)).c_str(), dw.srun_connections,
               p.cpus ? "; every node's messages on the shared CPUs: " : "", p.cpus ? human_us(dw.host_cpu_us).c_str() : "");

        fence_setup s;
        s.nodes = n;
        s.ppn = ppn;
        s.width = width;
        s.fences = fences;
        const bool engines = n <= real_max;  // above: the pattern of what auto picks (run_*_pattern)
        const bool barrier = n >= coll::kDisseminationMinNodes;  // auto's choice for a fence without data
        const char *how = engines   ? "REAL fence_manager"
                          : barrier ? "MODELLED: the barrier's pattern, equal to the real engines where both run"
                                    : "MODELLED: the tree's pattern, equal to the real engines where both run";
        fence_result e = engines ? run_fence(p, s) : barrier ? run_dissemination_pattern(p, s) : run_tree_pattern(p, s);
        printf("  empty fence (%s, auto: %s): %s  [%llu messages, "
               "largest %s, a node takes in up to %s; peers per node max %u mean %.1f; host %.1f s] %s\n",
               how, barrier ? "dissemination" : n > 2 ? "tree" : "ring", human_us(e.max_us).c_str(),
               static_cast<unsigned long long>(e.messages / fences), human_bytes(double(e.max_message_bytes)).c_str(),
               human_bytes(double(e.max_node_in_bytes)).c_str(), e.max_peers, e.mean_peers, e.host_seconds,
               e.ok ? "ok" : e.error.c_str());
        fflush(stdout);

        s.collect = true;
        s.bytes_per_rank = bytes;
        s.fences = 1;
        s.real_blob_bytes = n <= 4096 ? 8 : 1;  // ids checked; above, a byte (memory; an empty blob travels as nothing)
        s.algo = coll::algorithm::tree;
        fence_result dt = engines ? run_fence(p, s) : run_tree_pattern(p, s);
        printf("  modex fence, tree (%s, blobs charged at %s per node): %s  [a node takes in %s; largest "
               "message %s; host %.1f s] %s\n",
               engines ? "REAL engines" : "MODELLED: the tree's pattern", human_bytes(double(ppn) * double(bytes)).c_str(), human_us(dt.max_us).c_str(),
               human_bytes(double(dt.max_node_in_bytes)).c_str(), human_bytes(double(dt.max_message_bytes)).c_str(),
               dt.host_seconds, dt.ok ? "ok" : dt.error.c_str());
        fflush(stdout);

        fence_result dr;
        double ring_us = 0;
        bool ring_real = n <= ring_max;
        if (ring_real) {
            s.algo = coll::algorithm::ring;
            s.real_blob_bytes = 8;
            dr = run_fence(p, s);
            ring_us = dr.max_us;
            ring_ref_us = dr.max_us;
            ring_ref_n = n;
            printf("  modex fence, ring (REAL engines): %s  [%llu messages; host %.1f s] %s\n", human_us(ring_us).c_str(),
                   static_cast<unsigned long long>(dr.messages), dr.host_seconds, dr.ok ? "ok" : dr.error.c_str());
        } else {
            if (ring_ref_n <= 1) {  // no smaller real run in this invocation: one at a size that runs quickly
                fence_setup r = s;
                r.nodes = std::min<uint32_t>(ring_max, 1024);
                r.algo = coll::algorithm::ring;
                r.real_blob_bytes = 8;
                fence_result ref = r.nodes > 1 ? run_fence(p, r) : fence_result{};
                if (ref.ok) {
                    ring_ref_us = ref.max_us;
                    ring_ref_n = r.nodes;
                }
            }
        }
        if (!ring_real && ring_ref_n > 1) {
            ring_us = ring_ref_us * double(n - 1) / double(ring_ref_n - 1);
            dr.ok = true;
            printf("  modex fence, ring (EXTRAPOLATED from the real run at %u nodes x (N-1)/(%u-1): %llu messages "
                   "would be simulated): %s\n",
                   ring_ref_n, ring_ref_n, static_cast<unsigned long long>(uint64_t(n) * (n - 1)), human_us(ring_us).c_str());
        } else if (!ring_real) {
            dr.ok = true;
            printf("  modex fence, ring: not run (--ring-max below 2)\n");
        }
        fflush(stdout);

        dmodex_result dm = run_dmodex(p, n, ppn, bytes);
        printf("  first direct-modex Get (REAL dmodex engines, node 0 asks node %u): %s with a new connection, %s "
               "on an open one  [request %llu B, reply %llu B] %s\n",
               n - 1, human_us(dm.cold_us).c_str(), human_us(dm.warm_us).c_str(),
               static_cast<unsigned long long>(dm.request_bytes), static_cast<unsigned long long>(dm.reply_bytes),
               dm.ok ? "ok" : dm.error.c_str());
        dmodex_result dm1 = run_dmodex(p, n, ppn, bytes, false);
        printf("  %u Gets of one node's ranks at once (REAL dmodex engines): batched %s in %llu request + %llu reply "
               "messages; one request per Get %s in %llu + %llu %s\n",
               dm.burst_gets, human_us(dm.burst_us).c_str(), static_cast<unsigned long long>(dm.burst_requests),
               static_cast<unsigned long long>(dm.burst_replies), human_us(dm1.burst_us).c_str(),
               static_cast<unsigned long long>(dm1.burst_requests), static_cast<unsigned long long>(dm1.burst_replies),
               dm1.ok ? "ok" : dm1.error.c_str());

        node_loss_result nl = run_node_loss(p, n, width, 4096);
        print_node_loss(nl);

        jobdata_result jd = run_jobdata(n, ppn, jobdata_max);
        const double modex_node = double(ranks) * double(bytes);
        const double node_mem = double(jd.file_bytes) + double(wu.node_mem_bytes) + double(dm.per_node_bytes) + double(nl.per_node_bytes);
        printf("  memory per node: job data %s (%s); address table + verified records %s; dmodex rank map %s; "
               "liveness %s; sum %s; a full modex adds %s\n",
               human_bytes(double(jd.file_bytes)).c_str(), jd.how.c_str(), human_bytes(double(wu.node_mem_bytes)).c_str(),
               human_bytes(double(dm.per_node_bytes)).c_str(), human_bytes(double(nl.per_node_bytes)).c_str(), human_bytes(node_mem).c_str(), human_bytes(modex_node).c_str());
        printf("  srun: %u connections, holds %s, sends %s in all\n", wu.srun_connections,
               human_bytes(double(wu.srun_mem_bytes)).c_str(), human_bytes(double(wu.srun_bytes_out)).c_str());
        printf("  connections per node server: %u node links at most in a tree fence (mean %.1f), %u in the empty "
               "fence, %u in the ring, + 1 per peer node fetched by direct modex (no cap), + %u local clients\n",
               dt.max_peers, dt.mean_peers, e.max_peers, ring_real ? dr.max_peers : 2u, ppn);
        const bool ok = e.ok && dt.ok && dr.ok && dm.ok && dm1.ok && nl.ok;
        all_ok = all_ok && ok;
        printf("SIM mode=scale preset=%s nodes=%u ppn=%u bytes=%llu wireup_us=%.1f srun_collect_us=%.1f srun_send_us=%.1f "
               "verify_us=%.1f fence_real=%d fence_empty_us=%.1f fence_tree_us=%.1f fence_ring_us=%.1f ring_real=%d "
               "dmodex_cold_us=%.1f dmodex_warm_us=%.1f jobdata_bytes=%llu jobdata_extrapolated=%d node_table_bytes=%llu "
               "node_mem_bytes=%.0f modex_node_bytes=%.0f srun_mem_bytes=%llu srun_out_bytes=%llu srun_conns=%u "
               "node_peers_tree_max=%u empty_fence_max_msg_bytes=%llu node_loss_us=%.1f node_loss_conns=%u node_loss_sends=%u "
               "static_wireup_us=%.1f static_records=%u directory_wireup_us=%.1f directory_messages=%u ok=%d\n",
               p.name.c_str(), n, ppn, static_cast<unsigned long long>(bytes), wu.total_us, wu.srun_collect_us, wu.srun_send_us,
               wu.verify_us, engines ? 1 : 0, e.max_us, dt.max_us, ring_us, ring_real ? 1 : 0, dm.cold_us, dm.warm_us,
               static_cast<unsigned long long>(jd.file_bytes), jd.extrapolated ? 1 : 0,
               static_cast<unsigned long long>(wu.table_bytes), node_mem, modex_node,
               static_cast<unsigned long long>(wu.srun_mem_bytes), static_cast<unsigned long long>(wu.srun_bytes_out),
               wu.srun_connections, e.max_peers, static_cast<unsigned long long>(e.max_message_bytes), nl.all_told_us,
               nl.max_new_connections, nl.max_sends, sw.total_us, sw.peers, dw.total_us, dw.messages_per_node, ok ? 1 : 0);
        fflush(stdout);
    }
    return all_ok ? 0 : 1;
}

// libFuzzer target: arbitrary bytes as the body of a node message that passed the envelope's
// checks (another node's server, shared/wire/node_messages.h): rank data, direct modex,
// node-down, probe, node query, forwarded publish/lookup and their answers, job control, a
// connect contribution, the transports' link message (hello / bye), the process-table request
// and reply, a spawn's process sets. The first byte picks the body. Nothing may crash, leak, read out of
// bounds or allocate beyond the decode budget; what decodes must re-encode to the same bytes
// (the few bodies whose encoder truncates text are checked to decode again).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "wire/node_messages.h"

using namespace pmixcpp;
using namespace pmixcpp::wire;

namespace {
constexpr uint32_t kTasks = 64;
constexpr uint32_t kNodes = 16;

void same(const Writer &w, std::span<const uint8_t> body) {
    if (w.data() != std::vector<uint8_t>(body.begin(), body.end())) abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    std::span<const uint8_t> body(data + 1, size - 1);
    Writer w;
    switch (data[0] % 14) {
    case 0: {
        std::vector<rank_data_entry> m;
        if (!decode_rank_data(body, kTasks, &m).ok()) break;
        if (m.size() > kTasks) abort();
        if (!encode_rank_data(w, m).ok()) abort();
        same(w, body);
        break;
    }
    case 1: {
        dmodex_request m;
        if (!decode(body, &m).ok()) break;
        if (!encode(w, m).ok()) abort();
        same(w, body);
        break;
    }
    case 2: {
        dmodex_reply m;
        if (!decode(body, kTasks, &m).ok()) break;
        if (!encode_head(w, m).ok()) abort();
        if (m.status == PMIX_SUCCESS && w.size() < body.size() && !encode_rank_data(w, m.data).ok()) abort();
        same(w, body);
        break;
    }
    case 3: {
        node_down_message m;
        if (!decode(body, kNodes, &m).ok()) break;
        if (m.node >= kNodes || m.origin >= kNodes || m.origin == m.node || m.width < kMinNodeDownWidth ||
            m.width > kMaxNodeDownWidth)
            abort();
        if (!encode(w, m).ok()) abort();
        same(w, body);
        break;
    }
    case 4: {
        probe_kind k;
        if (!decode(body, &k).ok()) break;
        if (!encode(w, k).ok()) abort();
        same(w, body);
        break;
    }
    case 5: {
        node_query_message m;
        if (!decode(body, &m).ok()) break;
        if (!encode(w, m).ok()) abort();
        same(w, body);
        break;
    }
    case 6: {
        pubsub_forward m;
        if (!decode(body, &m).ok()) break;
        if (!encode(w, m).ok()) abort();
        same(w, body);
        break;
    }
    case 7: {
        pubsub_answer m;
        if (!decode(body, &m).ok()) break;
        if (!encode(w, m).ok()) abort();
        same(w, body);
        break;
    }
    case 8: {
        job_control_forward m;
        if (!decode(body, kTasks, &m).ok()) break;
        for (uint32_t r : m.ranks)
            if (r >= kTasks) abort();
        if (!encode(w, m).ok()) abort();
        same(w, body);
        break;
    }
    case 9: {
        connect_contribution m;
        if (!decode(body, &m).ok()) break;
        if (!encode(w, m).ok()) abort();
        same(w, body);
        break;
    }
    case 10: {
        link_kind k;
        if (!decode(body, &k).ok()) break;
        if (!encode(w, k).ok()) abort();
        same(w, body);
        break;
    }
    case 11: {
        proc_table_request m;
        if (!decode(body, &m).ok()) break;
        if (m.id == 0 || !encode(w, m).ok()) abort();
        same(w, body);
        break;
    }
    case 12: {
        proc_table_reply m;
        if (!decode(body, kTasks, &m).ok()) break;
        if (m.rows.size() > kTasks) abort();
        for (const auto &p : m.rows)
            if (p.pid < 0 || p.executable.size() > kMaxExecutableLen) abort();
        if (!encode(w, m).ok()) abort();
        same(w, body);
        break;
    }
    case 13: {
        spawn_psets_message m;
        if (!decode(body, kTasks, &m).ok()) break;
        if (m.child.empty() || m.child.size() > PMIX_MAX_NSLEN || m.child_size > kTasks) abort();
        if (!encode(w, m).ok()) abort();
        same(w, body);
        break;
    }
    }
    return 0;
}

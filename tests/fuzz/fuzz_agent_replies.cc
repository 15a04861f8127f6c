// libFuzzer target: arbitrary bytes as what crosses srun's agent channel besides the cross-step
// messages (fuzz_agent): allocation requests and replies (plugin/services/alloc/alloc_codec.h), spawn
// requests and replies (spawn_request.h), session-store requests, replies, connect rendezvous and
// its pieces (session_store.h), fabric requests and watches (fabric_request.h), the request frame
// around them (plugin/agent/proto/agent_proto.h) and the node groups of the environment. The first byte picks the
// decoder. Nothing may crash, leak, read out of bounds or allocate beyond the decode budget;
// what decodes must re-encode to the same bytes where the encoding is canonical.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>

#include "plugin/agent/proto/agent_proto.h"
#include "plugin/services/service_ids.h"
#include "plugin/services/alloc/alloc_codec.h"
#include "plugin/services/fabric/fabric_codec.h"
#include "plugin/services/sessions/session_codec.h"
#include "plugin/services/spawn/spawn_codec.h"
#include "wire/frame.h"

using namespace pmixcpp;

namespace {
void same(const Result<std::vector<uint8_t>> &again, std::span<const uint8_t> body) {
    if (!again.ok() || again.value() != std::vector<uint8_t>(body.begin(), body.end())) abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    std::span<const uint8_t> body(data + 1, size - 1);
    switch (data[0] % 12) {
    case 0: {
        alloc::agent_request m;
        wire::Reader r(body);
        if (!alloc::decode(r, &m).ok() || !r.expect_end().ok()) break;
        same(alloc::encode_request(m), body);
        break;
    }
    case 1: {
        alloc::agent_reply m;
        wire::Reader r(body);
        if (!alloc::decode(r, &m).ok() || !r.expect_end().ok()) break;
        if (m.message.size() <= (1u << 16)) same(alloc::encode_reply(m), body);
        break;
    }
    case 2: {
        spawn::agent_spawn_request m;
        if (!spawn::decode_request(body, &m).ok()) break;
        same(spawn::encode_request(m), body);
        break;
    }
    case 3: {
        agent::reply r;
        spawn::agent_spawn_reply m;
        if (!agent::decode_reply(body, &r).ok() || !spawn::from_reply(r, &m).ok()) break;
        same(agent::encode_reply(spawn::to_reply(m)), body);
        break;
    }
    case 4: {
        session::agent_request m;
        if (!session::decode_request(body, &m).ok()) break;
        same(session::encode_request(m), body);
        break;
    }
    case 5: {
        session::agent_reply m;
        if (!agent::decode_reply(body, &m).ok()) break;
        same(agent::encode_reply(m), body);
        break;
    }
    case 6: {
        session::rendezvous_request m;
        if (!session::decode(body, &m).ok()) break;
        same(session::encode(m), body);
        break;
    }
    case 7: {
        std::vector<session::rendezvous_piece> m;
        if (!session::decode_pieces(body, &m).ok()) break;
        same(session::encode_pieces(m), body);
        break;
    }
    case 8: {
        fabric::fabric_request m;
        if (!fabric::decode_agent_request(body, &m).ok()) break;
        same(fabric::encode_agent_request(m), body);
        break;
    }
    case 9: {
        uint64_t generation = 0;
        if (!fabric::decode_watch(body, &generation).ok()) break;
        auto again = fabric::encode_watch(generation);
        if (again != std::vector<uint8_t>(body.begin(), body.end())) abort();
        break;
    }
    case 10: {
        wire::FrameReader reader(agent::kMaxPayload);
        if (!reader.feed(body.data(), body.size()).ok()) break;
        auto f = reader.next();
        if (!f.ok() || !f.value()) break;
        const uint16_t s = f.value()->type;
        if (!agent::is_service(&services::names(), s) || f.value()->flags != 0 || f.value()->id != 1) break;  // request_frame writes these
        same(agent::request_frame(s, f.value()->payload), body.first(wire::kFrameHeaderSize + f.value()->payload.size()));
        break;
    }
    case 11: {
        std::string text(reinterpret_cast<const char *>(body.data()), body.size());
        auto groups = fabric::decode_node_groups(text, 16);
        if (groups.ok() && groups->size() != 16) abort();
        break;
    }
    }
    return 0;
}

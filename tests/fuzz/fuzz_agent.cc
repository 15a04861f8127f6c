// libFuzzer target: arbitrary bytes as the srun-agent channel's input: a cross-step message
// (plugin/services/xstep/xstep_codec.h, from another step's srun or a node server), the items of an inbox
// reply, the MPMD app table of a spawned step (plugin/services/spawn/mpmd.h, from the environment), and
// the channel's own codecs (plugin/agent/proto/agent_proto.h): the one reply, a report, a
// rendezvous request, the address table, and a whole request frame as srun's agent reads it.
// The first byte picks the target. Nothing may crash, leak or read out of bounds; what decodes
// must re-encode to the same bytes (a report: to bytes that decode to the same report).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string_view>

#include "plugin/agent/proto/agent_proto.h"
#include "plugin/services/service_ids.h"
#include "plugin/services/spawn/mpmd.h"
#include "plugin/services/xstep/xstep_codec.h"
#include "wire/codec.h"
#include "wire/frame.h"

using namespace pmixcpp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    std::span<const uint8_t> body(data + 1, size - 1);
    switch (data[0] % 8) {
    case 0: {
        xstep::message m;
        if (!xstep::decode(body, &m).ok()) break;
        auto again = xstep::encode(m);
        if (!again.ok() || again.value() != std::vector<uint8_t>(body.begin(), body.end())) abort();
        break;
    }
    case 1: {
        std::vector<xstep::inbox_item> items;
        if (!xstep::decode_items(body, &items).ok()) break;
        auto again = xstep::encode_items(items);
        if (!again.ok() || again.value() != std::vector<uint8_t>(body.begin(), body.end())) abort();
        break;
    }
    case 2: {
        std::string_view hex(reinterpret_cast<const char *>(body.data()), body.size());
        std::vector<spawn::mpmd_app> apps;
        if (!spawn::decode_mpmd(hex, &apps).ok()) break;
        for (uint32_t r = 0; r < apps.back().first_rank + apps.back().nprocs && r < 4096; ++r)
            if (spawn::app_of_rank(apps, r) == nullptr) abort();  // decoded apps cover every rank
        auto again = spawn::encode_mpmd(apps);
        if (again.ok() && again.value() != hex) abort();  // hex is lower-case on both sides
        break;
    }
    case 3: {
        agent::reply r;
        if (!agent::decode_reply(body, &r).ok()) break;
        auto again = agent::encode_reply(r);
        if (!again.ok() || again.value() != std::vector<uint8_t>(body.begin(), body.end())) abort();
        break;
    }
    case 4: {
        agent::report r;
        if (!agent::decode_report(body, &r).ok()) break;
        if (r.status == 0 || r.message.size() > agent::kMaxReport / 2) break;  // normalised / cut
        auto again = agent::encode_report(r);
        agent::report back;
        if (!again.ok() || !agent::decode_report(again.value(), &back).ok()) abort();
        if (back.what != r.what || back.status != r.status || back.node != r.node || back.message != r.message) abort();
        break;
    }
    case 5: {
        agent::rendezvous_request r;
        if (!agent::decode_rendezvous(body, &r).ok()) break;
        if (r.nnodes == 0 || r.node >= r.nnodes) abort();
        auto again = agent::encode_rendezvous(r);
        if (!again.ok() || again.value() != std::vector<uint8_t>(body.begin(), body.end())) abort();
        break;
    }
    case 6: {
        wire::Reader head(body.data(), body.size());
        uint32_t count = 0;
        if (!head.get_u32(&count).ok()) break;
        std::vector<std::string> table;
        if (!agent::decode_table(body, count, &table).ok()) break;
        if (table.size() != count) abort();
        auto again = agent::encode_table(table);
        if (!again.ok() || again.value() != std::vector<uint8_t>(body.begin(), body.end())) abort();
        break;
    }
    case 7: {
        // What srun's agent does with the bytes after the handshake: frames, their service.
        wire::FrameReader reader(agent::kMaxPayload);
        if (!reader.feed(body.data(), body.size()).ok()) break;
        for (;;) {
            auto f = reader.next();
            if (!f.ok() || !f.value()) break;
            const uint16_t type = f.value()->type;
            const bool known = agent::is_service(&services::names(), type);
            if (known && agent::service_name(&services::names(), type) == std::string("unknown")) abort();
            if (!known && agent::service_name(&services::names(), type) != std::string("unknown")) abort();
        }
        break;
    }
    }
    return 0;
}

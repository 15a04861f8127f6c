// libFuzzer target: arbitrary bytes as node-to-node input, as a server receives it from another
// node: a whole node frame (envelope version 2, namespace check; the secret is no longer in it),
// and the body of a collective message. The first byte picks the target. Nothing may crash, leak or read out of
// bounds; a collective message that decodes must re-encode to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "plugin/coll/coll_message.h"
#include "plugin/net/envelope.h"
#include "plugin/server/node_channels.h"

using namespace pmixcpp;

namespace {
// The server's registration table with a few of its channels (the envelope accepts the ids it
// names, and the link channel).
const server::node_channels &channels() {
    static const server::node_channels table = [] {
        server::node_channels t;
        for (auto c : {server::node_channel::coll, server::node_channel::dmodex_request, server::node_channel::spawn_psets})
            if (!t.add(c, "fuzzed", [](uint32_t, std::span<const uint8_t>) {}).ok()) abort();
        return t;
    }();
    return table;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    std::span<const uint8_t> body(data + 1, size - 1);
    switch (data[0] % 3) {
    case 0: {
        net::envelope e;
        (void)net::decode_node_frame(body, {"slurm.1.0"}, 4, &channels(), &e);
        break;
    }
    case 1: {
        net::envelope e;
        (void)net::decode_node_payload(body, {"slurm.1.0"}, 4, &channels(), &e);
        break;
    }
    case 2: {
        coll::coll_message m;
        if (!coll::decode(body, 8, &m).ok()) break;
        auto again = coll::encode(m);
        if (again.size() != body.size() || !std::equal(again.begin(), again.end(), body.begin())) abort();
        break;
    }
    }
    return 0;
}

// libFuzzer target: the group messages (shared/wire/group_messages.h). The first byte picks the
// decoder: the client's group request, the server's reply, one node's contribution to a group
// collective, or a bootstrap entry or result between servers (ranks bounded by a step size taken
// from the second byte). Anything that decodes must
// re-encode and decode again; nothing may crash, leak or read out of bounds.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "wire/group_messages.h"
#include "wire/messages.h"

using namespace pmixcpp;
using namespace pmixcpp::wire;

namespace {
template <typename M>
void roundtrip(std::span<const uint8_t> body) {
    M m;
    if (!decode_payload(body, &m).ok()) return;
    Writer w;
    if (!encode(w, m).ok()) abort();
    M again;
    if (!decode_payload(w.data(), &again).ok()) abort();
}

// A node message decoded whole with ranks below ntasks.
template <typename M>
void roundtrip_node(std::span<const uint8_t> body, uint32_t ntasks,
                    Status (*decode)(std::span<const uint8_t>, uint32_t, M *)) {
    M m;
    if (!decode(body, ntasks, &m).ok()) return;
    Writer w;
    if (!encode(w, m).ok()) abort();
    M again;
    if (!decode(w.data(), ntasks, &again).ok()) abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    std::span<const uint8_t> body(data + 2, size - 2);
    const uint32_t ntasks = data[1] + 1u;
    switch (data[0] % 5) {
    case 0: roundtrip<group_request>(body); break;
    case 1: roundtrip<group_reply>(body); break;
    case 2: roundtrip_node<group_contribution>(body, ntasks, decode_group_contribution); break;
    case 3: roundtrip_node<group_bootstrap_entry>(body, ntasks, decode_group_bootstrap_entry); break;
    default: roundtrip_node<group_bootstrap_result>(body, ntasks, decode_group_bootstrap_result); break;
    }
    return 0;
}

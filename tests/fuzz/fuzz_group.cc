// libFuzzer target: the group messages (shared/wire/group_messages.h). The first byte picks the
// decoder: the client's group request, the server's reply, or one node's contribution to a group
// collective (ranks bounded by a step size taken from the second byte). Anything that decodes must
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
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    std::span<const uint8_t> body(data + 2, size - 2);
    switch (data[0] % 3) {
    case 0: roundtrip<group_request>(body); break;
    case 1: roundtrip<group_reply>(body); break;
    default: {
        const uint32_t ntasks = data[1] + 1u;
        group_contribution c;
        if (!decode_group_contribution(body, ntasks, &c).ok()) break;
        Writer w;
        if (!encode(w, c).ok()) abort();
        group_contribution again;
        if (!decode_group_contribution(w.data(), ntasks, &again).ok()) abort();
        break;
    }
    }
    return 0;
}

// libFuzzer target: arbitrary bytes as the payload of every client -> server message type (the
// first byte picks the type), decoded with decode_payload as the server does. Anything that
// decodes must re-encode to the same bytes; nothing may crash, leak or read out of bounds.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

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
    if (size == 0) return 0;
    std::span<const uint8_t> body(data + 1, size - 1);
    // Publish / lookup / spawn / connect / monitor messages: selector bytes 0xf0..0xf5.
    if (data[0] >= 0xf0 && data[0] <= 0xf5) {
        if (data[0] == 0xf5) roundtrip<monitor_request>(body);
        else if (data[0] == 0xf4) roundtrip<connect_data>(body);
        else if (data[0] == 0xf0) roundtrip<publish_request>(body);
        else if (data[0] == 0xf1) roundtrip<lookup_request>(body);
        else if (data[0] == 0xf3) roundtrip<spawn_request>(body);
        else roundtrip<lookup_reply>(body);
        return 0;
    }
    switch (data[0] % 13) {
    case 0: roundtrip<connect_request>(body); break;
    case 1: roundtrip<finalize_request>(body); break;
    case 2: roundtrip<abort_request>(body); break;
    case 3: roundtrip<commit_request>(body); break;
    case 4: roundtrip<fence_request>(body); break;
    case 5: roundtrip<get_request>(body); break;
    case 6: roundtrip<job_control_request>(body); break;
    case 7: roundtrip<log_request>(body); break;
    case 8: roundtrip<reply_header>(body); break;
    case 9: roundtrip<event_notification>(body); break;
    case 10: roundtrip<alloc_request>(body); break;
    case 11: roundtrip<query_request>(body); break;
    default: {
        std::vector<jobdata_entry> entries;
        (void)decode_jobdata(body, &entries);
        break;
    }
    }
    return 0;
}

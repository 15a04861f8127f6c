// libFuzzer target: arbitrary bytes as a directory-route message (shared/wire/directory_messages.h),
// as a slurmstepd's directory socket receives it from slurmd. Nothing may crash, leak or read out
// of bounds; a message that decodes must re-encode to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <algorithm>
#include <span>

#include "shared/wire/directory_messages.h"

using namespace pmixcpp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    std::span<const uint8_t> bytes(data, size);
    wire::directory_message m;
    if (!wire::decode_directory_message(bytes, &m).ok()) return 0;
    auto again = wire::encode_directory_message(m);
    if (!again.ok() || again.value().size() != size || !std::equal(again.value().begin(), again.value().end(), data)) abort();
    return 0;
}

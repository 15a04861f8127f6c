// libFuzzer target: arbitrary bytes as the srun-agent channel's input that this session added
// decoders for: a cross-step message (plugin/common/xstep.h, from another step's srun or a node
// server), the items of an inbox reply, and the MPMD app table of a spawned step
// (plugin/common/mpmd.h, from the environment). The first byte picks the target. Nothing may
// crash, leak or read out of bounds; what decodes must re-encode to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string_view>

#include "plugin/common/mpmd.h"
#include "plugin/common/xstep.h"

using namespace pmixcpp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    std::span<const uint8_t> body(data + 1, size - 1);
    switch (data[0] % 3) {
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
    }
    return 0;
}

// libFuzzer target: arbitrary bytes as the files a client maps from the server: the modex
// snapshot of a collecting fence (shared/wire/snapshot.h) and the job data file (PXJD,
// shared/wire/messages.h). The first byte picks the target. Nothing may crash, leak, read out of
// bounds or allocate beyond the decode budget; job data that decodes must re-encode to the same
// bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "wire/messages.h"
#include "wire/snapshot.h"

using namespace pmixcpp;
using namespace pmixcpp::wire;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    std::span<const uint8_t> body(data + 1, size - 1);
    if (data[0] % 2 == 0) {
        auto view = snapshot_view::parse(body);
        if (!view.ok()) return 0;
        size_t found = 0;
        for (uint32_t rank = 0; rank < 64 && found < view->size(); ++rank) {
            if (!view->has(rank)) continue;
            ++found;
            InfoArray infos;
            if (!view->rank_data(rank, &infos).ok()) continue;
            Writer w;
            if (!encode_info_array(w, infos.data(), infos.size()).ok()) abort();
        }
        return 0;
    }
    std::vector<jobdata_entry> entries;
    if (!decode_jobdata(body, &entries).ok()) return 0;
    auto again = encode_jobdata(entries);
    if (!again.ok() || again.value() != std::vector<uint8_t>(body.begin(), body.end())) abort();
    return 0;
}

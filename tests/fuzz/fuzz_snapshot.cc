// libFuzzer target: arbitrary bytes as the files a client maps from the server: the modex
// snapshot of a collecting fence (shared/wire/snapshot.h) and the job data file (PXJD,
// shared/wire/jobdata.h). The first byte picks the target. Nothing may crash, leak, read out of
// bounds or allocate beyond the decode budget. Job data is read as a client reads it (lookups in
// place through jobdata_view) and decoded whole; what decodes re-encodes to a file that decodes
// to the same entries (the encoding of those is canonical).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "wire/jobdata.h"
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
    if (auto view = jobdata_view::parse(body); view.ok()) {
        const uint32_t ranks[] = {0, 1, 2, 63, PMIX_RANK_WILDCARD, PMIX_RANK_UNDEF};
        for (uint32_t rank : ranks) {
            auto e = view->find(rank);
            if (!e.ok()) continue;
            for (uint32_t k = 0; k < e->nkeys && k < 64; ++k) {
                auto key = view->key_at(e.value(), k);
                if (!key.ok()) break;
                pmix_value_t v{};
                if (view->value(e.value(), key.value(), &v).ok()) value_destruct(&v);
            }
            pmix_value_t v{};
            if (view->value(e.value(), "pmix.absent", &v).ok()) value_destruct(&v);
        }
    }
    std::vector<jobdata_entry> entries;
    if (!decode_jobdata(body, &entries).ok()) return 0;
    auto again = encode_jobdata(entries);
    if (!again.ok()) abort();
    std::vector<jobdata_entry> back;
    if (!decode_jobdata(again.value(), &back).ok()) abort();
    auto third = encode_jobdata(back);
    if (!third.ok() || third.value() != again.value()) abort();
    return 0;
}

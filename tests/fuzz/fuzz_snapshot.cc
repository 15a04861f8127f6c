// libFuzzer target: arbitrary bytes as the files a client maps from the server: the modex
// snapshot of a collecting fence (shared/wire/snapshot.h) and the job data file (PXJD,
// shared/wire/jobdata.h). The first byte picks the target. Nothing may crash, leak, read out of
// bounds or allocate beyond the decode budget. Job data is read as a client reads it (lookups in
// place through jobdata_view) and decoded whole; what decodes re-encodes to a file that decodes
// to the same entries (the encoding of those is canonical). The same bytes are also decoded as
// the job layout a compact job-data file carries (shared/wire/job_layout.h).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "wire/job_layout.h"
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
    // The same bytes as the job layout of a compact job-data file: what decodes is consistent
    // (every rank on a node and in an app it has) and re-encodes to the same bytes.
    if (auto layout = job_layout::decode(body); layout.ok()) {
        for (uint32_t rank : {0u, 1u, 7u, layout->nranks / 2, layout->nranks - 1, layout->nranks}) {
            if (rank >= layout->nranks) continue;
            if (layout->locate(rank).node >= layout->nodes.size() || layout->app_of(rank).app >= layout->apps.size())
                abort();
            auto infos = layout->rank_infos(rank);
            if (!infos.ok()) abort();
        }
        if (layout->nranks <= 4096) (void)layout->proc_map();
        if (layout->encode() != std::vector<uint8_t>(body.begin(), body.end())) abort();
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

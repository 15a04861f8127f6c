// libFuzzer target: arbitrary bytes into the frame reader and the PMIx decoders. Anything that
// decodes must re-encode; nothing may crash, leak or read out of bounds.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "wire/codec.h"
#include "wire/frame.h"

using namespace pmixcpp;
using namespace pmixcpp::wire;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    // The first byte picks how the rest is chunked into the frame reader.
    size_t chunk = 1 + data[0] % 32;
    std::span<const uint8_t> body(data + 1, size - 1);

    FrameReader reader(1 << 16);
    for (size_t pos = 0; pos < body.size(); pos += chunk) {
        size_t n = std::min(chunk, body.size() - pos);
        if (!reader.feed(body.data() + pos, n).ok()) break;
        while (true) {
            auto f = reader.next();
            if (!f.ok() || !f->has_value()) break;
            if ((*f)->payload.size() > reader.max_payload()) abort();
            InfoArray infos;
            (void)decode_info_array_exact((*f)->payload, &infos);
        }
    }

    {
        Value v;
        if (decode_value_exact(body, v.get()).ok()) {
            Writer w;
            if (!encode_value(w, *v.get()).ok()) abort();
            Value again;
            if (!decode_value_exact(w.data(), again.get()).ok()) abort();
            pmix_value_cmp_t c = value_compare(v.get(), again.get());
            if (c != PMIX_EQUAL && c != PMIX_VALUE_COMPARISON_NOT_AVAIL) abort();  // NaN compares N/A
            Value copy;
            if (!value_xfer(copy.get(), v.get()).ok()) abort();
        }
    }
    {
        InfoArray infos;
        if (decode_info_array_exact(body, &infos).ok()) {
            Writer w;
            if (!encode_info_array(w, infos.data(), infos.size()).ok()) abort();
            if (w.data().size() != body.size()) abort();  // canonical encoding
        }
    }
    {
        Reader r(body);
        pmix_data_array_t *array = nullptr;
        if (decode_data_array(r, &array).ok()) data_array_free(array);
        Reader r2(body);
        pmix_proc_t proc;
        (void)decode_proc(r2, &proc);
    }
    return 0;
}

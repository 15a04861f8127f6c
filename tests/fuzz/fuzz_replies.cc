// libFuzzer target: arbitrary bytes as the body of a server -> client reply, decoded as the
// client decodes it (the whole body, nothing after the message); the first byte picks the reply.
// The modex snapshot reference a fence's or a snapshot request's reply names
// (shared/wire/snapshot.h) is encoded canonically: what decodes re-encodes to the same bytes. The
// lookup reply written from infos kept encoded (encode_lookup_reply, the server's) must be the
// bytes of encode(lookup_reply). Nothing may crash, leak, read out of bounds or allocate beyond
// the decode budget.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "wire/messages.h"
#include "wire/snapshot.h"

using namespace pmixcpp;
using namespace pmixcpp::wire;

namespace {
template <typename M>
bool roundtrip(std::span<const uint8_t> body, M *m) {
    if (!decode_payload(body, m).ok()) return false;
    Writer w;
    if (!encode(w, *m).ok()) abort();
    M again;
    if (!decode_payload(w.data(), &again).ok()) abort();
    return true;
}

template <typename M>
void roundtrip(std::span<const uint8_t> body) {
    M m;
    (void)roundtrip(body, &m);
}

void snapshot_reference(std::span<const uint8_t> body) {
    snapshot_ref ref;
    if (!decode_payload(body, &ref).ok()) return;
    Writer w;
    if (!encode(w, ref).ok()) abort();
    if (w.size() != body.size() || !std::equal(body.begin(), body.end(), w.data().begin())) abort();
    if (ref.id.empty() != ref.segments.empty() || ref.segments.size() > kMaxSnapshotSegments) abort();
}

void lookup(std::span<const uint8_t> body) {
    lookup_reply m;
    if (!roundtrip(body, &m)) return;
    std::vector<std::vector<uint8_t>> infos(m.data.size());
    std::vector<encoded_lookup_entry> entries(m.data.size());
    for (size_t i = 0; i < m.data.size(); ++i) {
        Writer w;
        if (!encode_info(w, m.data[i]).ok()) abort();
        infos[i] = w.take();
        entries[i].owner = m.owners[i];
        entries[i].info = infos[i];
    }
    Writer whole, from_encoded;
    if (!encode(whole, m).ok() || !encode_lookup_reply(from_encoded, entries).ok()) abort();
    if (whole.data() != from_encoded.data()) abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    std::span<const uint8_t> body(data + 1, size - 1);
    switch (data[0] % 7) {
    case 0: snapshot_reference(body); break;
    case 1: roundtrip<get_reply>(body); break;
    case 2: roundtrip<job_control_reply>(body); break;
    case 3: roundtrip<info_reply>(body); break;
    case 4: roundtrip<spawn_reply>(body); break;
    case 5: roundtrip<connect_reply>(body); break;
    default: lookup(body); break;
    }
    return 0;
}

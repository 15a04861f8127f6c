// The requests of an OpenPMIx client that the server serves by translation into its own
// requests (plugin/server/server.cc routes them through the same handlers as its own clients),
// and the replies in OpenPMIx's format (OPENPMIX-WIRE.md §4). No I/O, no server state.
//
// Every decoder takes the payload after the command byte (the unpacker positioned after it),
// checks every count against the bytes that remain (bounded by the unpacker's decode budget) and
// fails with a Status naming the field; the output is left empty on failure. Trailing bytes are
// an error: a client that sends more than the layout is not the client we think it is.
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "plugin/native/bfrops.h"
#include "status.h"
#include "value.h"

namespace pmixcpp::native {

// Shared by the request decoders: the message must end where the decoder stopped, and a top-level
// pack must hold exactly the `n` elements announced before it.
Status trailing(const unpacker &up, const char *what);
Status expect_count(unpacker &up, size_t n, const char *what);
// A number of elements (each at least min_bytes long) checked against a cap and the bytes left.
Status check_announced(const unpacker &up, size_t v, size_t cap, size_t min_bytes, const char *what);
// [SIZE n], n checked as check_announced does.
Status get_announced(unpacker &up, size_t cap, size_t min_bytes, const char *what, size_t *n);
// [SIZE n] then the pack of n PROCs (also when n is 0 if pack_when_empty).
Status get_procs(unpacker &up, size_t max_procs, const char *what, bool pack_when_empty,
                 std::vector<pmix_proc_t> *out);
// [SIZE n] then, when n > 0, the pack of n INFOs.
Status get_info_pack(unpacker &up, const char *what, InfoArray *out);

// COMMIT: repeated [SCOPE][BUFFER] pairs, each BUFFER [KVAL]... (count 1 each). A key that comes
// under both LOCAL and REMOTE (OpenPMIx puts GLOBAL data in both) is one key of scope GLOBAL.
struct commit_data {
    std::vector<uint8_t> scopes;
    InfoArray infos;  // infos[i] has scope scopes[i]
};
Status decode_commit(unpacker &up, commit_data *out);

// FENCENB: [SIZE nprocs][PROC...][SIZE ninfo][INFO...].
struct fence_data {
    std::vector<pmix_proc_t> procs;
    InfoArray infos;
};
Status decode_fence(unpacker &up, fence_data *out, size_t max_procs);

// GETNB: [STRING nspace][PROC_RANK][SIZE ninfo][INFO...], then an optional [STRING key].
struct get_data {
    pmix_proc_t proc{};
    InfoArray infos;
    std::string key;  // empty: all of the proc's data
};
Status decode_get(unpacker &up, get_data *out);

// ABORT: [STATUS][STRING msg][SIZE nprocs] then [PROC...] when nprocs > 0.
struct abort_data {
    pmix_status_t status = 0;
    std::string message;
    std::vector<pmix_proc_t> procs;
};
Status decode_abort(unpacker &up, abort_data *out, size_t max_procs);

// REGEVENTS: [SIZE ncodes] then [STATUS...] when ncodes > 0, [SIZE ninfo] then [INFO...].
struct regevents_data {
    std::vector<pmix_status_t> codes;
    InfoArray infos;
};
Status decode_regevents(unpacker &up, regevents_data *out);

// NOTIFY from a client: [STATUS code][DATA_RANGE][SIZE ninfo] then [INFO...] when ninfo > 0 (the
// source is the client itself).
struct notify_data {
    pmix_status_t status = 0;
    uint8_t range = PMIX_RANGE_UNDEF;
    InfoArray infos;
};
Status decode_notify(unpacker &up, notify_data *out);

// An event to a client, on tag 0 (kTagNotify): [COMMAND 12][STATUS][PROC source][SIZE ninfo]
// [INFO...] then [DATA_RANGE] (what 4.x servers append; older clients stop before it).
Result<std::vector<uint8_t>> encode_event(int_flavour f, pmix_status_t status, const pmix_proc_t &source,
                                          uint8_t range, const pmix_info_t *infos, size_t count);

// [STATUS]: the reply of COMMIT, FENCENB (gds/hash), FINALIZE, ABORT, REGEVENTS, and of every
// command not served.
std::vector<uint8_t> encode_status_reply(int_flavour f, pmix_status_t status);

// The GETNB reply: [STATUS]; on success one [BYTE_OBJECT] holding [PROC proc][KVAL...] (all of
// the proc's data the requester may see).
Result<std::vector<uint8_t>> encode_get_reply(int_flavour f, const pmix_proc_t &proc, const pmix_info_t *data,
                                              size_t count);

// A framed message to the client on `tag` (header in network order, then the payload).
std::vector<uint8_t> frame_message(uint32_t tag, std::span<const uint8_t> payload);

}  // namespace pmixcpp::native

// libFuzzer target: arbitrary bytes as fabric input (shared/fabric/fabric_wire.h): a client's
// PMIx_Fabric_register/update request, and the result infos srun's side answers with (decoded
// as an info array, then turned into a cost matrix, as the server does). The first byte picks the
// target. Nothing may crash, leak, read out of bounds or allocate beyond the decode budget; a
// matrix taken from results must turn into results again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "shared/fabric/fabric_wire.h"
#include "wire/codec.h"

using namespace pmixcpp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    std::span<const uint8_t> body(data + 1, size - 1);
    if (data[0] % 2 == 0) {
        sched::fabric_request m;
        if (!sched::decode_client_request(body, &m).ok()) return 0;
        wire::Writer w;
        if (!sched::encode_client_request(w, m).ok()) abort();
        if (w.data() != std::vector<uint8_t>(body.begin(), body.end())) abort();
        return 0;
    }
    InfoArray infos;
    if (!wire::decode_info_array_exact(body, &infos).ok()) return 0;
    sched::cost_matrix m;
    std::string plane;
    if (!sched::matrix_from_results(infos.data(), infos.size(), &m, &plane).ok()) return 0;
    if (!sched::matrix_to_results(m, plane).ok()) abort();
    return 0;
}

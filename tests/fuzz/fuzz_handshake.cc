// libFuzzer target: arbitrary bytes as an unauthenticated peer sends them to a node listener or
// srun's agent (plugin/net/handshake.h): fed to the bounded frame reader in the chunk sizes it asks
// for, each complete frame to the server's state machine, and, by the first byte's choice, to the
// client's (a hostile listener) or to the UCX seal check. Nothing may crash, leak or read out of
// bounds; the reader never holds more than one handshake frame; nothing random authenticates.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "plugin/net/handshake.h"

using namespace pmixcpp;
using namespace pmixcpp::net;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    static const auth::key k = auth::derive_key("fuzz secret", auth::purpose::node).value();
    std::span<const uint8_t> in(data + 1, size - 1);
    switch (data[0] % 3) {
    case 0: {  // a client talking to a listener
        auth::server_handshake srv(k, auth::purpose::node, "pmixcpp.1.0");
        auth::frame_reader r;
        size_t off = 0;
        while (off < in.size()) {
            size_t n = std::min(r.wanted(), in.size() - off);
            if (!r.feed(in.data() + off, n).ok()) return 0;
            off += n;
            if (!r.complete()) continue;
            if (r.payload().size() > auth::kMaxHandshakePayload) abort();
            if (!srv.on_frame(r.type(), r.payload()).ok()) return 0;
            if (srv.done()) abort();  // random bytes cannot know the key
            r.reset();
        }
        break;
    }
    case 1: {  // a listener answering our hello
        auth::client_handshake cli(k, auth::purpose::node, "pmixcpp.1.0", 0);
        if (!cli.hello_frame().ok()) abort();
        auth::frame_reader r;
        size_t off = 0;
        while (off < in.size() && !r.complete()) {
            size_t n = std::min(r.wanted(), in.size() - off);
            if (!r.feed(in.data() + off, n).ok()) return 0;
            off += n;
        }
        if (r.complete() && cli.on_frame(r.type(), r.payload()).ok()) abort();
        break;
    }
    case 2: {  // a UCX frame
        std::span<const uint8_t> inner;
        uint64_t seq = 0;
        if (auth::open_sealed_frame(k, in, 0, &inner, &seq).ok()) abort();
        auth::hello h;
        (void)auth::decode_hello(in, &h);
        auth::challenge c;
        (void)auth::decode_challenge(in, &c);
        break;
    }
    }
    return 0;
}

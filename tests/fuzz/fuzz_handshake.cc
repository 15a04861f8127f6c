// libFuzzer target: arbitrary bytes as an unauthenticated peer sends them to a node listener or
// srun's agent (plugin/net/handshake.h): fed to the bounded frame reader in the chunk sizes it asks
// for, each complete frame to the server's state machine, and, by the first byte's choice, to the
// client's (a hostile listener), to the node frame MAC check, or to the decoders of the signed node
// records and agent credentials (plugin/net/identity.h; what a credential service handed back).
// Nothing may crash, leak or read out of bounds; the reader never holds more than one handshake
// frame; nothing random authenticates.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "plugin/net/handshake.h"
#include "plugin/net/identity.h"

using namespace pmixcpp;
using namespace pmixcpp::net;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    static const auth::key k = auth::derive_key(auth::key{}, "fuzz", 0).value();
    std::span<const uint8_t> in(data + 1, size - 1);
    switch (data[0] % 4) {
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
    case 2: {  // a sealed node frame (UCX, or the payload of a TCP one)
        std::span<const uint8_t> inner;
        uint64_t seq = 0;
        uint32_t src = 0;
        (void)auth::sealed_source(in, &src);
        if (auth::open_sealed_frame(k, in, 0, &inner, &src, &seq).ok()) abort();
        auth::hello h;
        (void)auth::decode_hello(in, &h);
        auth::challenge c;
        (void)auth::decode_challenge(in, &c);
        break;
    }
    case 3: {  // the payload of an opened credential
        node_record r;
        if (decode_node_record(in, &r).ok() && r.address.size() > kMaxRecordAddress) abort();
        agent_credential_body b;
        (void)decode_agent_credential(in, &b);
        break;
    }
    }
    return 0;
}

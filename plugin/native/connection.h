// OpenPMIx's connection handshake and message framing (OPENPMIX-WIRE.md §2, §3), checked against
// the traffic of a real OpenPMIx 4.2.2 client and server (tests/native/openpmix/handshake-*.txt).
// No I/O: the listener feeds bytes to message_reader and writes what the encoders return.
//
// Every message, the handshake included, is a 16-byte header and `nbytes` of payload:
//   int32 pindex, uint32 tag, uint32 nbytes, uint32 padding (0)
// The client's first message (the handshake) carries its header in HOST byte order, pindex -1 and
// tag 0xFFFFFFFF, nbytes at most 131072 (PMIX_MAX_CRED_SIZE). Every later header is in network
// order. The handshake payload (strings NUL-terminated, u32 in network order):
//   psec name, u32 credential length, credential (native: geteuid, getegid in host order),
//   u8 peer flag, then by flag: 0 (client): nspace + u32 rank; 1/2/3/6: u32 uid + u32 gid;
//   4/5/7/8/9/10: uid, gid, nspace, rank; then the client's version ("4.2.2"; a 2.0.x client ends
//   here), bfrops name ("v41"), u8 buffer type (1 NON_DESC, 2 FULLY_DESC), gds name ("hash"), and
//   bytes up to nbytes the server skips (OpenPMIx 4.2.2 sends one zero byte, 6.x an info blob).
// The server answers a client (flag 0) with u32 status in network order and, on success, a u32
// index the client echoes as pindex; on failure it closes the connection.
#pragma once

#include <pmix_common.h>

#include <sys/types.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "status.h"

namespace pmixcpp::native {

inline constexpr size_t kHeaderSize = 16;
inline constexpr uint32_t kMaxHandshakeBytes = 131072;  // PMIX_MAX_CRED_SIZE
inline constexpr int32_t kHandshakePindex = -1;
inline constexpr uint32_t kHandshakeTag = 0xFFFFFFFFu;
// Message tags: NOTIFY (server-initiated events), HEARTBEAT, IOF; requests from 100 up.
inline constexpr uint32_t kTagNotify = 0;
inline constexpr uint32_t kTagHeartbeat = 1;
inline constexpr uint32_t kTagIof = 2;
inline constexpr uint8_t kBufferNonDesc = 1;
inline constexpr uint8_t kBufferFullyDesc = 2;

// The kind of peer a handshake announces (OpenPMIx ptl_base_handshake.h).
enum class peer_flag : uint8_t {
    simple_client = 0,
    legacy_tool = 1,
    legacy_launcher = 2,
    tool_needs_id = 3,
    tool_given_id = 4,
    tool_client = 5,
    launcher_needs_id = 6,
    launcher_given_id = 7,
    launcher_client = 8,
    singleton_client = 9,
    scheduler_with_id = 10,
};
const char *to_string(peer_flag f);

struct header {
    int32_t pindex = 0;
    uint32_t tag = 0;
    uint32_t nbytes = 0;
};

// Network order (every message but the client's handshake).
std::array<uint8_t, kHeaderSize> encode_header(const header &h);
header decode_header(const uint8_t *bytes);
// Host order (the client's handshake).
std::array<uint8_t, kHeaderSize> encode_handshake_header(uint32_t nbytes);
header decode_handshake_header(const uint8_t *bytes);

// The client's handshake payload.
struct hello {
    std::string psec;
    std::vector<uint8_t> credential;
    peer_flag flag = peer_flag::simple_client;
    std::optional<uid_t> uid;  // flags other than simple_client
    std::optional<gid_t> gid;
    std::optional<pmix_proc_t> proc;  // flags that name a process
    std::string version;  // the client library's PMIX_VERSION
    int major = 0, minor = 0, release = 0;
    // Absent for a 2.0.x client (then v20, the default buffer type, ds12/hash).
    std::string bfrops;
    uint8_t buffer_type = kBufferNonDesc;
    std::string gds;
    size_t trailing = 0;  // bytes after gds, skipped
};

// Parse a handshake payload (the nbytes after the host-order header). Every length is checked
// against the payload; strings are bounded (names 64, nspace PMIX_MAX_NSLEN, credential 64 KiB).
Result<hello> parse_hello(std::span<const uint8_t> payload);
// The payload a client sends (tests, and a client harness); trailing zero bytes appended.
std::vector<uint8_t> encode_hello(const hello &h);

// The native psec credential (8 bytes: uid and gid in the client's host order). Over TCP this is
// what the client asserts, nothing more: the server must check the socket's owner itself.
Status native_credential(const hello &h, uid_t *uid, gid_t *gid);

// The server's answer to a simple client: status, and the index when it is PMIX_SUCCESS.
std::vector<uint8_t> encode_client_ack(pmix_status_t status, uint32_t index);

// Incremental, bounded reader of one message at a time: first the 16-byte header (host order for
// the handshake, network order after it), then its payload. A header announcing more than the
// limit fails before anything is allocated for it.
class message_reader {
public:
    // max_payload: the largest payload accepted after the handshake.
    explicit message_reader(uint32_t max_payload) : _max(max_payload) {}

    // Bytes still wanted for the current message (header or payload).
    size_t wanted() const;
    // Feed at most wanted() bytes.
    Status feed(const uint8_t *data, size_t n);
    bool complete() const { return _have_header && _payload.size() == _hdr.nbytes; }
    const header &current() const { return _hdr; }
    std::span<const uint8_t> payload() const { return _payload; }
    // The handshake has been read: later headers are in network order.
    bool handshake_done() const { return _handshake_done; }
    // Ready for the next message.
    void next();

private:
    uint32_t _max;
    bool _handshake_done = false;
    bool _have_header = false;
    std::array<uint8_t, kHeaderSize> _hbuf{};
    size_t _hlen = 0;
    header _hdr;
    std::vector<uint8_t> _payload;
};

}  // namespace pmixcpp::native

// Versioned, length-prefixed frames: the unit of every client<->server (Unix socket) and
// server<->server message.
//
// Header, 16 bytes, little-endian, encoded byte by byte:
//   offset 0  u8[4] magic     "PMXC" (0x50 0x4D 0x58 0x43)
//   offset 4  u8    version   kProtocolVersion (1)
//   offset 5  u8    flags     opaque to the framing layer (message layer defines them)
//   offset 6  u16   type      message type
//   offset 8  u32   id        request / sequence id (a reply carries the request's id)
//   offset 12 u32   length    payload bytes that follow (<= the reader's max payload)
// followed by `length` payload bytes.
//
// Compatibility: the header layout is fixed forever; a new protocol version may only change what
// follows it. A reader rejects versions it does not speak, so a peer learns of a mismatch at once.
#pragma once

#include <algorithm>
#include <cstddef>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "status.h"

namespace pmixcpp::wire {

inline constexpr uint8_t kFrameMagic[4] = {'P', 'M', 'X', 'C'};
inline constexpr uint8_t kProtocolVersion = 1;
inline constexpr size_t kFrameHeaderSize = 16;
inline constexpr uint32_t kDefaultMaxPayload = 64u << 20;  // 64 MiB
inline constexpr uint32_t kMaxPayloadLimit = 1u << 30;     // no reader accepts more than 1 GiB

struct FrameHeader {
    uint8_t version = kProtocolVersion;
    uint8_t flags = 0;
    uint16_t type = 0;
    uint32_t id = 0;
    uint32_t length = 0;
};

// A descriptor that came with a frame over a Unix socket (SCM_RIGHTS; see kFrameFlagDescriptor in
// messages.h), closed when the last copy of the pointer goes.
using FrameDescriptor = std::shared_ptr<const int>;
// Take ownership of `fd` (closed with the last copy); nullptr if fd < 0.
FrameDescriptor adopt_descriptor(int fd);
// send() of `len` bytes on a Unix socket with `descriptor` attached to the first byte
// (SCM_RIGHTS), MSG_NOSIGNAL: what send() returns.
ssize_t send_with_descriptor(int socket, const uint8_t *data, size_t len, int descriptor);

struct Frame {
    uint16_t type = 0;
    uint8_t flags = 0;
    uint32_t id = 0;
    std::vector<uint8_t> payload;
    FrameDescriptor descriptor;  // set by the reader of a Unix socket for a flagged frame
};

// Write the 16 header bytes for `header` into out.
void encode_frame_header(const FrameHeader &header, uint8_t out[kFrameHeaderSize]);

// Parse and validate a header (magic, version, length <= max_payload).
Status decode_frame_header(std::span<const uint8_t> bytes, FrameHeader *header,
                           uint32_t max_payload = kDefaultMaxPayload);

// Header + payload in one buffer, ready to send. Fails if the payload exceeds max_payload.
Result<std::vector<uint8_t>> encode_frame(uint16_t type, uint8_t flags, uint32_t id,
                                          std::span<const uint8_t> payload,
                                          uint32_t max_payload = kDefaultMaxPayload);

// Incremental reassembly of frames from a byte stream. Feed whatever recv() returned; take
// complete frames with next(). The first malformed header makes the reader fail for good (the
// stream cannot be resynchronised; the caller closes the connection and logs error().message()).
class FrameReader {
public:
    explicit FrameReader(uint32_t max_payload = kDefaultMaxPayload);

    // Append bytes. Returns the reader's error if it has failed (bytes are then discarded).
    Status feed(const void *data, size_t size);
    Status feed(std::span<const uint8_t> bytes) { return feed(bytes.data(), bytes.size()); }

    // The next complete frame; std::nullopt if more bytes are needed; a Status if the stream is
    // malformed (bad magic, unsupported version, oversized length).
    Result<std::optional<Frame>> next();

    bool failed() const { return !_error.ok(); }
    const Status &error() const { return _error; }
    // Bytes received but not yet returned as frames.
    size_t buffered() const { return _buf.size() - _start; }
    uint32_t max_payload() const { return _max_payload; }
    // Change the limit for the frames whose header has not been read yet (a server accepts small
    // frames until a client has authenticated, its configured size after).
    void set_max_payload(uint32_t max_payload) { _max_payload = std::min(max_payload, kMaxPayloadLimit); }

private:
    void compact();

    uint32_t _max_payload;
    std::vector<uint8_t> _buf;
    size_t _start = 0;                   // first unconsumed byte in _buf
    std::optional<FrameHeader> _header;  // parsed header of the frame being assembled
    Status _error;
};

}  // namespace pmixcpp::wire

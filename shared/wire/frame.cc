// Frame header encoding and incremental frame reassembly; layout in frame.h.
#include "wire/frame.h"

#include <algorithm>
#include <cstring>
#include <string>

#include <sys/socket.h>
#include <unistd.h>

namespace pmixcpp::wire {

FrameDescriptor adopt_descriptor(int fd) {
    if (fd < 0) return nullptr;
    return FrameDescriptor(new int(fd), [](const int *p) {
        ::close(*p);
        delete p;
    });
}

ssize_t send_with_descriptor(int socket, const uint8_t *data, size_t len, int descriptor) {
    struct iovec iov = {const_cast<uint8_t *>(data), len};
    alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    struct msghdr msg {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &descriptor, sizeof(int));
    return sendmsg(socket, &msg, MSG_NOSIGNAL);
}

namespace {

void put_u16(uint8_t *p, uint16_t v) {
    p[0] = static_cast<uint8_t>(v);
    p[1] = static_cast<uint8_t>(v >> 8);
}

void put_u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint16_t get_u16(const uint8_t *p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

uint32_t get_u32(const uint8_t *p) {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
    return v;
}

std::string hex_bytes(const uint8_t *p, size_t n) {
    static const char digits[] = "0123456789abcdef";
    std::string out;
    for (size_t i = 0; i < n; ++i) {
        out += digits[p[i] >> 4];
        out += digits[p[i] & 0xf];
    }
    return out;
}

}  // namespace

void encode_frame_header(const FrameHeader &header, uint8_t out[kFrameHeaderSize]) {
    memcpy(out, kFrameMagic, 4);
    out[4] = header.version;
    out[5] = header.flags;
    put_u16(out + 6, header.type);
    put_u32(out + 8, header.id);
    put_u32(out + 12, header.length);
}

Status decode_frame_header(std::span<const uint8_t> bytes, FrameHeader *header, uint32_t max_payload) {
    if (bytes.size() < kFrameHeaderSize)
        return Status(PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER,
                      "frame header needs " + std::to_string(kFrameHeaderSize) + " bytes, have " +
                          std::to_string(bytes.size()));
    const uint8_t *p = bytes.data();
    if (memcmp(p, kFrameMagic, 4) != 0)
        return Status(PMIX_ERR_UNPACK_FAILURE, "bad frame magic 0x" + hex_bytes(p, 4));
    if (p[4] != kProtocolVersion)
        return Status(PMIX_ERR_NOT_SUPPORTED, "unsupported protocol version " + std::to_string(p[4]) +
                                                  " (this side speaks " + std::to_string(kProtocolVersion) +
                                                  ")");
    FrameHeader h;
    h.version = p[4];
    h.flags = p[5];
    h.type = get_u16(p + 6);
    h.id = get_u32(p + 8);
    h.length = get_u32(p + 12);
    uint32_t limit = std::min(max_payload, kMaxPayloadLimit);
    if (h.length > limit)
        return Status(PMIX_ERR_UNPACK_INADEQUATE_SPACE, "frame payload of " + std::to_string(h.length) +
                                                            " bytes exceeds limit " + std::to_string(limit));
    *header = h;
    return Status::success();
}

Result<std::vector<uint8_t>> encode_frame(uint16_t type, uint8_t flags, uint32_t id,
                                          std::span<const uint8_t> payload, uint32_t max_payload) {
    uint32_t limit = std::min(max_payload, kMaxPayloadLimit);
    if (payload.size() > limit)
        return Status(PMIX_ERR_PACK_FAILURE, "frame payload of " + std::to_string(payload.size()) +
                                                 " bytes exceeds limit " + std::to_string(limit));
    FrameHeader h;
    h.flags = flags;
    h.type = type;
    h.id = id;
    h.length = static_cast<uint32_t>(payload.size());
    std::vector<uint8_t> out(kFrameHeaderSize + payload.size());
    encode_frame_header(h, out.data());
    if (!payload.empty()) memcpy(out.data() + kFrameHeaderSize, payload.data(), payload.size());
    return out;
}

FrameReader::FrameReader(uint32_t max_payload) : _max_payload(std::min(max_payload, kMaxPayloadLimit)) {}

Status FrameReader::feed(const void *data, size_t size) {
    if (failed()) return _error;
    if (size == 0) return Status::success();
    if (data == nullptr) return Status(PMIX_ERR_BAD_PARAM, "feed: null data");
    compact();
    auto p = static_cast<const uint8_t *>(data);
    _buf.insert(_buf.end(), p, p + size);
    return Status::success();
}

void FrameReader::compact() {
    // Drop consumed bytes once they dominate the buffer, so it does not grow without bound.
    if (_start == 0) return;
    if (_start == _buf.size()) {
        _buf.clear();
        _start = 0;
    } else if (_start >= 4096 && _start * 2 >= _buf.size()) {
        _buf.erase(_buf.begin(), _buf.begin() + static_cast<std::ptrdiff_t>(_start));
        _start = 0;
    }
}

Result<std::optional<Frame>> FrameReader::next() {
    if (failed()) return _error;
    size_t avail = _buf.size() - _start;
    if (!_header) {
        // Check the magic and version as soon as those bytes arrive, not only when the whole
        // header is here: garbage is reported at once.
        size_t check = std::min(avail, size_t{5});
        if (check > 0 && memcmp(_buf.data() + _start, kFrameMagic, std::min(check, size_t{4})) != 0) {
            _error =
                Status(PMIX_ERR_UNPACK_FAILURE,
                       "bad frame magic 0x" + hex_bytes(_buf.data() + _start, std::min(check, size_t{4})));
            return _error;
        }
        if (avail < kFrameHeaderSize) return std::optional<Frame>();
        FrameHeader h;
        Status st = decode_frame_header(std::span<const uint8_t>(_buf.data() + _start, kFrameHeaderSize), &h,
                                        _max_payload);
        if (!st.ok()) {
            _error = st;
            return _error;
        }
        _header = h;
        _start += kFrameHeaderSize;
        avail -= kFrameHeaderSize;
    }
    if (avail < _header->length) return std::optional<Frame>();
    Frame f;
    f.type = _header->type;
    f.flags = _header->flags;
    f.id = _header->id;
    f.payload.assign(_buf.begin() + static_cast<std::ptrdiff_t>(_start),
                     _buf.begin() + static_cast<std::ptrdiff_t>(_start + _header->length));
    _start += _header->length;
    _header.reset();
    compact();
    return std::optional<Frame>(std::move(f));
}

}  // namespace pmixcpp::wire

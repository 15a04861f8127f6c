// What root's UCX node transport accepts from configuration and from peers, as plain functions
// (no UCX needed to test them): the transports it may open and the worker addresses it may
// create endpoints to.
#pragma once

#include "envelope.h"
#include "status.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace pmixcpp::net {

// UCX's shared-memory transports and their aliases. Root's UCX never opens one: a segment that
// slurmstepd (root) maps and a job process of the node may map too is a channel into root's
// memory that no network offers.
inline constexpr const char *kUcxSharedMemoryTls[] = {"sm", "shm", "mm", "posix", "sysv", "cma", "knem", "xpmem"};

// The UCX_TLS value root's worker runs with, from the administrator's PMIxCppUcxTls (empty = UCX's
// choice): shared-memory transports removed from an allow list, added to a '^' exclusion list,
// "all" or nothing becomes "^sm,mm" (every shared-memory transport). An allow list with nothing left
// is PMIX_ERR_BAD_PARAM naming the value.
Result<std::string> root_ucx_tls(const std::string &configured);

// A peer's worker address must look like one made by the same UCX with the same settings before it
// reaches ucp_ep_create (which reads it without a length): between kMinUcxAddress and
// kMaxUcxAddress bytes, and the same header byte (address format version and flags) as our own
// worker's address. PMIX_ERR_BAD_PARAM naming what is wrong otherwise.
inline constexpr size_t kMinUcxAddress = 9;
inline constexpr size_t kMaxUcxAddress = 8192;
Status check_ucx_address(std::span<const uint8_t> peer, std::span<const uint8_t> own);

// Bounds of the receive path: a frame longer than the node payload cap (with its envelope and
// seal) is refused before anything is allocated for it, eager or rendezvous; at most this many
// frames and bytes wait between two turns of the progress loop, beyond that frames are dropped
// (and logged, rate-limited).
inline constexpr size_t kUcxFrameMax = size_t{kMaxNodePayload} + 65536;  // envelope, namespace, seal
inline constexpr size_t kUcxReceivedFramesMax = 4096;
inline constexpr size_t kUcxReceivedBytesMax = size_t{512} << 20;

}  // namespace pmixcpp::net

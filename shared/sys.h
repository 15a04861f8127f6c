// Small system helpers shared by the plugin and the client library.
#pragma once

#include <pmix_common.h>

#include <cerrno>
#include <cstddef>
#include <string>

#include "status.h"

namespace pmixcpp {

// A failed system call as a Status: "<what>: <strerror(err)>", with `code` (PMIX_ERROR unless the
// caller's contract names another).
Status sys_error(const std::string &what, int err = errno, pmix_status_t code = PMIX_ERROR);

// `n` bytes from the kernel's random source (getrandom, retried on EINTR and short reads).
Status random_bytes(void *buf, size_t n);

}  // namespace pmixcpp

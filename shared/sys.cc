// Small system helpers; see sys.h.
#include "sys.h"

#include <sys/random.h>

#include <cstring>

namespace pmixcpp {

Status sys_error(const std::string &what, int err, pmix_status_t code) {
    return Status(code, what + ": " + std::strerror(err));
}

Status random_bytes(void *buf, size_t n) {
    auto *p = static_cast<unsigned char *>(buf);
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom(p + got, n - got, 0);
        if (r < 0) {
            if (errno == EINTR) continue;
            return sys_error("getrandom");
        }
        got += static_cast<size_t>(r);
    }
    return Status::success();
}

}  // namespace pmixcpp

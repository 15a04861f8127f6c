#include "munge_credentials.h"

#include <munge.h>

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>

namespace pmixcpp {

namespace {

struct ctx_deleter {
    void operator()(munge_ctx_t c) const { munge_ctx_destroy(c); }
};
using ctx_ptr = std::unique_ptr<std::remove_pointer_t<munge_ctx_t>, ctx_deleter>;

Result<ctx_ptr> context(const std::string &socket) {
    ctx_ptr ctx(munge_ctx_create());
    if (!ctx) return Status(PMIX_ERR_OUT_OF_RESOURCE, "munge: cannot create a context");
    if (!socket.empty() && munge_ctx_set(ctx.get(), MUNGE_OPT_SOCKET, socket.c_str()) != EMUNGE_SUCCESS)
        return Status(PMIX_ERROR, "munge: socket " + socket + ": " + munge_ctx_strerror(ctx.get()));
    return ctx;
}

// munged learns who asks from the socket's peer credentials, taken when the client connects.
// slurmstepd (real uid 0) lowers its effective uid to the job's user for a moment now and then
// (launching the tasks, opening the user's files), and glibc does that for every thread of the
// process, ours included: a credential made in such a moment would carry the user's uid (peers
// refuse it), and one opened then is refused as not root's. So a root process waits until its
// effective uid is root again, and a call that overlapped such a moment is done again.
constexpr int kEuidAttempts = 200;  // 5 ms apart: up to a second in all

bool is_root_process() { return getuid() == 0; }

void pause_ms(long ms) {
    timespec ts{0, ms * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

}  // namespace

bool wait_for_root_euid() {
    if (!is_root_process()) return true;
    for (int i = 0; i < kEuidAttempts; ++i) {
        if (geteuid() == 0) return true;
        pause_ms(5);
    }
    return geteuid() == 0;
}

Result<std::string> munge_credentials::make(std::span<const uint8_t> payload, readers who) {
    auto ctx = context(_socket);
    PMIXCPP_RETURN_IF_ERROR(ctx);
    uid_t reader = who == readers::root ? 0 : _job_uid;
    if (munge_ctx_set(ctx->get(), MUNGE_OPT_UID_RESTRICTION, reader) != EMUNGE_SUCCESS)
        return Status(PMIX_ERROR, std::string("munge: uid restriction: ") + munge_ctx_strerror(ctx->get()));
    // The payload travels encrypted with munged's key (the cipher munged defaults to).
    for (int attempt = 0;; ++attempt) {
        if (!wait_for_root_euid())
            return Status(PMIX_ERR_NO_PERMISSIONS, "munge_encode: the effective uid did not return to root");
        char *cred = nullptr;
        munge_err_t e = munge_encode(&cred, ctx->get(), payload.data(), static_cast<int>(payload.size()));
        if (e != EMUNGE_SUCCESS) {
            std::string why = munge_ctx_strerror(ctx->get()) ? munge_ctx_strerror(ctx->get()) : munge_strerror(e);
            free(cred);
            return Status(PMIX_ERR_NO_PERMISSIONS, "munge_encode: " + why);
        }
        std::string out(cred);
        free(cred);
        // made while the effective uid was lowered: it names the user, not us
        if (is_root_process() && geteuid() != 0 && attempt < kEuidAttempts) continue;
        return out;
    }
}

Result<net::credential_service::opened> munge_credentials::open(std::string_view credential) {
    auto ctx = context(_socket);
    PMIXCPP_RETURN_IF_ERROR(ctx);
    std::string text(credential);
    void *buf = nullptr;
    int len = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    munge_err_t e = EMUNGE_SUCCESS;
    for (int attempt = 0;; ++attempt) {
        if (!wait_for_root_euid())
            return Status(PMIX_ERR_NO_PERMISSIONS, "munge_decode: the effective uid did not return to root");
        e = munge_decode(text.c_str(), ctx->get(), &buf, &len, &uid, &gid);
        // refused for the uid we asked with: again, if it was lowered meanwhile (munged checks the
        // restriction before it records a credential as used, so this is no replay)
        if (e == EMUNGE_CRED_UNAUTHORIZED && is_root_process() && attempt < kEuidAttempts &&
            (geteuid() != 0 || attempt < 3)) {
            free(buf);
            buf = nullptr;
            pause_ms(5);
            continue;
        }
        break;
    }
    std::unique_ptr<void, decltype(&free)> guard(buf, &free);
    if (e != EMUNGE_SUCCESS && e != EMUNGE_CRED_REPLAYED) {
        const char *why = munge_ctx_strerror(ctx->get());
        return Status(PMIX_ERR_NO_PERMISSIONS, std::string("credential refused by munge: ") + (why ? why : munge_strerror(e)));
    }
    opened o;
    o.uid = static_cast<uint32_t>(uid);
    o.replayed = e == EMUNGE_CRED_REPLAYED;
    if (buf && len > 0) o.payload.assign(static_cast<uint8_t *>(buf), static_cast<uint8_t *>(buf) + len);
    return o;
}

std::string munge_socket_of(const char *authinfo) {
    if (!authinfo || !*authinfo) return {};
    std::string s(authinfo);
    size_t at = s.find("socket=");
    if (at == std::string::npos) return s.find('=') == std::string::npos ? s : std::string();
    at += 7;
    size_t end = s.find(',', at);
    return s.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

}  // namespace pmixcpp

// The credential service of plugin/net/identity.h on libmunge, the authentication service of
// Slurm's auth/munge (the socket comes from AuthInfo in slurm.conf, as auth/munge takes it).
// A credential made here carries the calling process's uid, vouched for by munged; "root"
// credentials are restricted to uid 0 (MUNGE_OPT_UID_RESTRICTION), so the job's user can neither
// make one with uid 0 nor open one. Decoding the same credential twice on one munged gives
// EMUNGE_CRED_REPLAYED with the payload: returned as `replayed`, and the caller decides
// (identity.h: tolerated for node records, refused for agent calls).
#pragma once

#include <sys/types.h>

#include <string>

#include "../net/identity.h"

namespace pmixcpp {

class munge_credentials : public net::credential_service {
public:
    // `socket`: munged's socket ("" = libmunge's default); `job_uid`: who may open job_user
    // credentials.
    munge_credentials(std::string socket, uid_t job_uid) : _socket(std::move(socket)), _job_uid(job_uid) {}
    Result<std::string> make(std::span<const uint8_t> payload, readers who) override;
    Result<opened> open(std::string_view credential) override;

private:
    std::string _socket;
    uid_t _job_uid;
};

// In a root process (slurmstepd): wait, up to a second, until the effective uid is root's again.
// slurmstepd lowers it to the job's user for moments (launching the tasks), for every thread at
// once; whatever authenticates by it meanwhile (a munge credential, a connection slurmd checks)
// would go as the user. True when it is root's (or the process is not root).
bool wait_for_root_euid();

// munged's socket named in Slurm's AuthInfo ("socket=<path>[,...]", or a bare path of old), or "".
std::string munge_socket_of(const char *authinfo);

}  // namespace pmixcpp

// Dynamic processes for OpenPMIx clients; see native_dyn.h.
#include "native_dyn.h"

#include <cstring>
#include <map>
#include <string>

#include "../native/requests.h"
#include "../native/requests_dyn.h"
#include "../native/session.h"
#include "native_jobdata.h"

namespace pmixcpp::server {

namespace {

// Our connect reply (the other namespaces' procs' data, rank WILDCARD = job level) as one job
// blob per namespace.
Result<std::vector<uint8_t>> connect_reply(native::int_flavour f, std::span<const uint8_t> body) {
    wire::connect_data d;
    wire::Reader r(body);
    PMIXCPP_RETURN_IF_ERROR(wire::decode(r, &d), "connect reply");
    std::map<std::string, native::job_blob_data> by_ns;
    for (const auto &e : d.entries) {
        std::string ns(e.proc.nspace, strnlen(e.proc.nspace, PMIX_MAX_NSLEN));
        native::job_blob_data &jb = by_ns[ns];
        jb.nspace = ns;
        if (e.proc.rank == PMIX_RANK_WILDCARD) {
            for (size_t i = 0; i < e.infos.size(); ++i)
                if (!native_left_out(e.infos[i])) jb.job.push_back(e.infos[i]);  // borrowed from d
            continue;
        }
        native::job_blob_data::rank rk;
        rk.rank = e.proc.rank;
        for (size_t i = 0; i < e.infos.size(); ++i)
            if (!native_left_out(e.infos[i])) rk.infos.push_back(e.infos[i]);
        jb.ranks.push_back(std::move(rk));
    }
    std::vector<std::vector<uint8_t>> blobs;
    for (const auto &[ns, jb] : by_ns) {
        auto b = native::pack_job_blob(f, jb);
        PMIXCPP_RETURN_IF_ERROR(b, "connect reply of " + ns);
        blobs.push_back(std::move(b.value()));
    }
    return native::encode_connect_reply(f, blobs);
}

}  // namespace

Result<std::vector<uint8_t>> native_spawn_reply(native::int_flavour f, const std::string &nspace,
                                                std::span<const uint8_t> jobdata) {
    std::vector<wire::jobdata_entry> entries;
    PMIXCPP_RETURN_IF_ERROR(wire::decode_jobdata(jobdata, &entries), "job data of " + nspace);
    const wire::jobdata_entry *job = nullptr;
    for (const auto &e : entries)
        if (e.rank == PMIX_RANK_WILDCARD) job = &e;
    const pmix_info_t *named = job ? find_info(job->infos, PMIX_NSPACE) : nullptr;
    if (named == nullptr || named->value.type != PMIX_STRING || named->value.data.string == nullptr ||
        nspace != named->value.data.string)
        return Status(PMIX_ERR_BAD_PARAM, "the job data sent for " + nspace + " is not that namespace's");
    native::job_blob_data data = native_job_blob(nspace, entries);  // borrows from `entries`
    // The child's server's own addresses mean nothing to the spawner.
    std::erase_if(data.job, [](const pmix_info_t &i) {
        return key_is(i, PMIX_SERVER_URI) || key_is(i, PMIX_MYSERVER_URI);
    });
    PMIXCPP_ASSIGN_OR_RETURN(auto blob, native::pack_job_blob(f, data));
    return native::encode_spawn_reply_with_job(f, blob);
}

bool native_dyn_command(uint8_t cmd) {
    return cmd >= native::kCmdPublish && cmd <= native::kCmdDisconnect;
}

Result<native_dyn_request> native_dyn_decode(uint8_t cmd, native::unpacker &up, size_t max_procs) {
    switch (cmd) {
    case native::kCmdSpawn: {
        wire::spawn_request m;
        PMIXCPP_RETURN_IF_ERROR(native::decode_spawn(up, &m));
        return as_request(wire::msg_type::spawn, m);
    }
    case native::kCmdPublish: {
        wire::publish_request m;
        PMIXCPP_RETURN_IF_ERROR(native::decode_publish(up, &m));
        return as_request(wire::msg_type::publish, m);
    }
    case native::kCmdLookup:
    case native::kCmdUnpublish: {
        wire::lookup_request m;
        PMIXCPP_RETURN_IF_ERROR(native::decode_lookup(up, &m));
        return as_request(cmd == native::kCmdLookup ? wire::msg_type::lookup : wire::msg_type::unpublish, m);
    }
    case native::kCmdConnect:
    case native::kCmdDisconnect: {
        native::connect_data d;
        PMIXCPP_RETURN_IF_ERROR(native::decode_connect(up, &d, max_procs));
        wire::fence_request m;
        m.procs = std::move(d.procs);
        m.infos = std::move(d.infos);
        return as_request(cmd == native::kCmdConnect ? wire::msg_type::xconnect : wire::msg_type::xdisconnect, m);
    }
    default: return Status(PMIX_ERR_NOT_SUPPORTED, "command " + std::to_string(cmd));
    }
}

Result<std::vector<uint8_t>> native_dyn_reply(uint8_t cmd, native::int_flavour f, std::span<const uint8_t> body) {
    switch (cmd) {
    case native::kCmdSpawn: {
        wire::spawn_reply m;
        wire::Reader r(body);
        PMIXCPP_RETURN_IF_ERROR(wire::decode(r, &m), "spawn reply");
        return native::encode_spawn_reply(f, PMIX_SUCCESS, m.nspace);
    }
    case native::kCmdLookup: {
        wire::lookup_reply m;
        wire::Reader r(body);
        PMIXCPP_RETURN_IF_ERROR(wire::decode(r, &m), "lookup reply");
        return native::encode_lookup_reply(f, m);
    }
    case native::kCmdConnect:
        if (body.empty()) return native::encode_connect_reply(f, {});
        return connect_reply(f, body);
    default: return native::encode_status_reply(f, PMIX_SUCCESS);
    }
}

}  // namespace pmixcpp::server

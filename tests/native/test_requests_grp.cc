// Groups, queries and logging of OpenPMIx clients (plugin/native/requests_grp.h): the messages as
// each client release packs them (layouts from OpenPMIx's src/client/pmix_client_group.c,
// src/common/pmix_query.c and pmix_log.c), the replies in the layout each release reads, and
// hostile input.
#include <gtest/gtest.h>

#include <cstring>

#include "plugin/native/requests_grp.h"
#include "plugin/server/native_grp.h"
#include "wire/messages.h"

using namespace pmixcpp;
using namespace pmixcpp::native;

namespace {

pmix_proc_t proc(const char *ns, pmix_rank_t r) {
    pmix_proc_t p{};
    strncpy(p.nspace, ns, PMIX_MAX_NSLEN);
    p.rank = r;
    return p;
}

// [STRING grp], optionally the members, then [SIZE ninfo][INFO...]: as a client packs a destruct.
std::vector<uint8_t> destruct_msg(int_flavour f, bool with_members, size_t nmembers) {
    packer pk(f);
    const char *grp = "g1";
    EXPECT_TRUE(pk.pack(PMIX_STRING, &grp, 1).ok());
    if (with_members) {
        EXPECT_TRUE(pk.pack(PMIX_SIZE, &nmembers, 1).ok());
        std::vector<pmix_proc_t> m;
        for (size_t i = 0; i < nmembers; ++i) m.push_back(proc("ns", static_cast<pmix_rank_t>(i)));
        EXPECT_TRUE(pk.pack(PMIX_PROC, m.data(), static_cast<int32_t>(m.size())).ok());
    }
    size_t ninfo = 0;
    EXPECT_TRUE(pk.pack(PMIX_SIZE, &ninfo, 1).ok());
    return pk.take();
}

}  // namespace

TEST(NativeGroups, ReleasesParse) {
    release r = parse_release("5.0.7a1");
    EXPECT_EQ(r.major, 5);
    EXPECT_EQ(r.minor, 0);
    EXPECT_EQ(r.patch, 7);
    EXPECT_TRUE(at_least(parse_release("4.2.4"), 4, 2, 4));
    EXPECT_FALSE(at_least(parse_release("4.2.3"), 4, 2, 4));
    EXPECT_TRUE(at_least(parse_release("6.1.0rc1"), 6, 0, 0));
    EXPECT_FALSE(at_least(parse_release("garbage"), 3, 0, 0));
}

// A destruct from 4.2.4 on carries the members; before it does not. Each decodes only as its
// release packs it.
TEST(NativeGroups, DestructByRelease) {
    for (int_flavour f : {int_flavour::flex128, int_flavour::fixed}) {
        wire::group_request m;
        auto newer = destruct_msg(f, true, 3);
        unpacker up(f, newer);
        ASSERT_TRUE(decode_group_destruct(up, parse_release("5.0.7"), 64, &m).ok());
        EXPECT_EQ(m.name, "g1");
        EXPECT_EQ(m.op, static_cast<uint8_t>(wire::group_op::destruct));

        auto older = destruct_msg(f, false, 0);
        unpacker up2(f, older);
        ASSERT_TRUE(decode_group_destruct(up2, parse_release("4.2.2"), 64, &m).ok());
        unpacker up3(f, newer);
        EXPECT_FALSE(decode_group_destruct(up3, parse_release("4.2.2"), 64, &m).ok());
        // more members than the step has ranks is refused
        unpacker up4(f, newer);
        EXPECT_FALSE(decode_group_destruct(up4, parse_release("5.0.7"), 2, &m).ok());
    }
}

// The construct reply each release reads: 4.2.2 a context id only; 5.0 members then the id; 6.0 a
// flag before the id; 6.1 also a count of group infos.
TEST(NativeGroups, ConstructReplyLayouts) {
    std::vector<pmix_proc_t> members = {proc("ns", 0), proc("ns", 1)};
    for (const char *v : {"4.2.2", "5.0.7", "6.0.0", "6.1.0"}) {
        auto r = encode_group_construct_reply(int_flavour::flex128, parse_release(v), PMIX_SUCCESS, members, 42);
        ASSERT_TRUE(r.ok()) << v;
        unpacker up(int_flavour::flex128, r.value());
        pmix_status_t st = -1;
        ASSERT_TRUE(up.unpack(PMIX_STATUS, &st, 1).ok()) << v;
        EXPECT_EQ(st, PMIX_SUCCESS);
        size_t n = 0;
        if (strcmp(v, "4.2.2") != 0) {
            ASSERT_TRUE(up.unpack(PMIX_SIZE, &n, 1).ok()) << v;
            EXPECT_EQ(n, 2u);
            pmix_proc_t got[2] = {};
            ASSERT_TRUE(up.unpack(PMIX_PROC, got, 2).ok()) << v;
            EXPECT_EQ(got[1].rank, 1u);
        }
        if (v[0] == '6') {
            bool has = false;
            ASSERT_TRUE(up.unpack(PMIX_BOOL, &has, 1).ok()) << v;
            EXPECT_TRUE(has);
        }
        size_t ctxid = 0;
        ASSERT_TRUE(up.unpack(PMIX_SIZE, &ctxid, 1).ok()) << v;
        EXPECT_EQ(ctxid, 42u);
        if (strcmp(v, "6.1.0") == 0) {
            size_t ninfo = 9;
            ASSERT_TRUE(up.unpack(PMIX_SIZE, &ninfo, 1).ok());
            EXPECT_EQ(ninfo, 0u);
        }
        EXPECT_TRUE(up.at_end()) << v;
    }
    // A failed construct is [STATUS] alone, which every release reads.
    auto r = encode_group_construct_reply(int_flavour::flex128, parse_release("5.0.7"), PMIX_ERR_PROC_ABORTED, members, 0);
    ASSERT_TRUE(r.ok());
    unpacker up(int_flavour::flex128, r.value());
    pmix_status_t st = 0;
    ASSERT_TRUE(up.unpack(PMIX_STATUS, &st, 1).ok());
    EXPECT_EQ(st, PMIX_ERR_PROC_ABORTED);
    EXPECT_TRUE(up.at_end());
}

// QUERY as OpenPMIx packs it: [SIZE nq], then per query [INT32 nkeys][STRING...][SIZE nqual]
// [INFO...]; hostile counts are refused before anything is allocated.
TEST(NativeGroups, QueryDecodes) {
    for (int_flavour f : {int_flavour::flex128, int_flavour::fixed}) {
        packer pk(f);
        size_t nq = 1;
        ASSERT_TRUE(pk.pack(PMIX_SIZE, &nq, 1).ok());
        pk.put_int32(1);  // the QUERY pack's count
        pk.put_int32(2);  // nkeys
        ASSERT_TRUE(pk.put_string(PMIX_QUERY_NUM_PSETS).ok());
        ASSERT_TRUE(pk.put_string(PMIX_QUERY_PSET_NAMES).ok());
        pk.put_size(1);
        pmix_info_t q{};
        strncpy(q.key, PMIX_QUERY_REFRESH_CACHE, PMIX_MAX_KEYLEN);
        q.value.type = PMIX_BOOL;
        q.value.data.flag = true;
        ASSERT_TRUE(pk.put_info(q).ok());
        wire::query_request m;
        unpacker up(f, pk.data());
        ASSERT_TRUE(decode_query(up, &m).ok());
        ASSERT_EQ(m.queries.size(), 1u);
        EXPECT_EQ(m.queries[0].keys.size(), 2u);
        EXPECT_EQ(m.queries[0].keys[1], PMIX_QUERY_PSET_NAMES);
        EXPECT_EQ(m.queries[0].qualifiers.size(), 1u);

        packer bad(f);
        ASSERT_TRUE(bad.pack(PMIX_SIZE, &nq, 1).ok());
        bad.put_int32(1);
        bad.put_int32(1 << 30);  // a billion keys in a few bytes
        wire::query_request none;
        unpacker up2(f, bad.data());
        EXPECT_FALSE(decode_query(up2, &none).ok());
        EXPECT_TRUE(none.queries.empty());
    }
}

// The query reply: results only with a status the client reads them with.
TEST(NativeGroups, QueryReplyStatuses) {
    pmix_info_t r{};
    strncpy(r.key, PMIX_QUERY_NUM_PSETS, PMIX_MAX_KEYLEN);
    r.value.type = PMIX_SIZE;
    r.value.data.size = 3;
    for (pmix_status_t st : {PMIX_SUCCESS, PMIX_ERR_PARTIAL_SUCCESS, PMIX_ERR_NOT_FOUND}) {
        auto out = encode_query_reply(int_flavour::flex128, st, &r, 1);
        ASSERT_TRUE(out.ok());
        unpacker up(int_flavour::flex128, out.value());
        pmix_status_t got = 0;
        ASSERT_TRUE(up.unpack(PMIX_STATUS, &got, 1).ok());
        EXPECT_EQ(got, st);
        if (st == PMIX_ERR_NOT_FOUND) {
            EXPECT_TRUE(up.at_end());
            continue;
        }
        size_t n = 0;
        ASSERT_TRUE(up.unpack(PMIX_SIZE, &n, 1).ok());
        ASSERT_EQ(n, 1u);
        pmix_info_t back{};
        ASSERT_TRUE(up.unpack(PMIX_INFO, &back, 1).ok());
        EXPECT_EQ(back.value.data.size, 3u);
        EXPECT_TRUE(up.at_end());
    }
}

// Job control, monitoring and allocation requests as OpenPMIx 3.2-5.0 clients pack them
// (src/common/pmix_control.c, pmix_query.c), in both integer flavours, and cut short anywhere.
TEST(NativeControl, JobControlMonitorAllocDecode) {
    for (int_flavour f : {int_flavour::flex128, int_flavour::fixed}) {
        // PMIx_Job_control_nb(targets 2, {PMIX_JOB_CTRL_SIGNAL: 15})
        packer pk(f);
        size_t nt = 2, nd = 1;
        pmix_proc_t t[2] = {proc("ns", 1), proc("ns", 3)};
        ASSERT_TRUE(pk.pack(PMIX_SIZE, &nt, 1).ok());
        ASSERT_TRUE(pk.pack(PMIX_PROC, t, 2).ok());
        ASSERT_TRUE(pk.pack(PMIX_SIZE, &nd, 1).ok());
        int sigterm = 15;
        pmix_info_t sig = make_info(PMIX_JOB_CTRL_SIGNAL, &sigterm, PMIX_INT);
        ASSERT_TRUE(pk.pack(PMIX_INFO, &sig, 1).ok());
        auto jc = pk.take();
        wire::job_control_request m;
        unpacker up(f, jc);
        ASSERT_TRUE(decode_job_control(up, 64, &m).ok());
        ASSERT_EQ(m.targets.size(), 2u);
        EXPECT_EQ(m.targets[1].rank, 3u);
        ASSERT_EQ(m.infos.size(), 1u);
        EXPECT_STREQ(m.infos.data()[0].key, PMIX_JOB_CTRL_SIGNAL);
        for (size_t cut = 0; cut < jc.size(); ++cut) {
            unpacker u2(f, std::span<const uint8_t>(jc.data(), cut));
            wire::job_control_request m2;
            EXPECT_FALSE(decode_job_control(u2, 64, &m2).ok()) << "cut at " << cut;
        }
        unpacker u3(f, jc);
        EXPECT_FALSE(decode_job_control(u3, 1, &m).ok());  // more targets than the step has

        // PMIx_Process_monitor_nb({PMIX_SEND_HEARTBEAT}, PMIX_MONITOR_HEARTBEAT_ALERT, no directives)
        packer pm(f);
        pmix_info_t what{};  // as the standard's examples load it: a NULL pointer
        strncpy(what.key, PMIX_SEND_HEARTBEAT, PMIX_MAX_KEYLEN);
        what.value.type = PMIX_POINTER;
        pmix_status_t code = PMIX_MONITOR_HEARTBEAT_ALERT;
        size_t zero = 0;
        ASSERT_TRUE(pm.pack(PMIX_INFO, &what, 1).ok());
        ASSERT_TRUE(pm.pack(PMIX_STATUS, &code, 1).ok());
        ASSERT_TRUE(pm.pack(PMIX_SIZE, &zero, 1).ok());
        auto mon = pm.take();
        wire::monitor_request mm;
        unpacker um(f, mon);
        ASSERT_TRUE(decode_monitor(um, &mm).ok());
        EXPECT_EQ(mm.error, PMIX_MONITOR_HEARTBEAT_ALERT);
        ASSERT_EQ(mm.monitor.size(), 1u);
        EXPECT_STREQ(mm.monitor.data()[0].key, PMIX_SEND_HEARTBEAT);
        EXPECT_EQ(mm.monitor.data()[0].value.type, PMIX_UNDEF);  // the key alone, as our client sends it

        // PMIx_Allocation_request_nb(PMIX_ALLOC_EXTEND, {PMIX_ALLOC_NUM_NODES: 2})
        packer pa(f);
        pmix_alloc_directive_t d = PMIX_ALLOC_EXTEND;
        uint64_t nodes = 2;
        pmix_info_t n = make_info(PMIX_ALLOC_NUM_NODES, &nodes, PMIX_UINT64);
        ASSERT_TRUE(pa.pack(PMIX_ALLOC_DIRECTIVE, &d, 1).ok());
        ASSERT_TRUE(pa.pack(PMIX_SIZE, &nd, 1).ok());
        ASSERT_TRUE(pa.pack(PMIX_INFO, &n, 1).ok());
        auto al = pa.take();
        wire::alloc_request ma;
        unpacker ua(f, al);
        ASSERT_TRUE(decode_alloc(ua, &ma).ok());
        EXPECT_EQ(ma.directive, PMIX_ALLOC_EXTEND);
        ASSERT_EQ(ma.infos.size(), 1u);
        al.push_back(0);  // a trailing byte
        unpacker ub(f, al);
        EXPECT_FALSE(decode_alloc(ub, &ma).ok());
        for (pmix_info_t *i : {&sig, &what, &n}) info_destruct(i);
    }
}

// A group made by invitation (OpenPMIx's PMIx_Group_invite): the PMIX_GROUP_CONSTRUCT_COMPLETE
// event names it and its members; the connection keeps them, and its destruct becomes a fence of
// the members. Other events and malformed ones name no group.
TEST(NativeGroups, InvitedGroupFromItsEvent) {
    pmix_proc_t members[3] = {proc("slurm.1.0", 0), proc("slurm.1.0", 2), proc("slurm.1.0", 3)};
    pmix_data_array_t arr{PMIX_PROC, 3, members};
    auto infos_of = [](pmix_value_t range, const char *name) {
        auto *i = static_cast<pmix_info_t *>(calloc(2, sizeof(pmix_info_t)));
        strncpy(i[0].key, PMIX_EVENT_CUSTOM_RANGE, PMIX_MAX_KEYLEN);
        EXPECT_TRUE(value_xfer(&i[0].value, &range).ok());
        i[1] = make_info(PMIX_GROUP_ID, name, PMIX_STRING);
        return InfoArray(i, 2);
    };
    pmix_value_t range{};
    range.type = PMIX_DATA_ARRAY;
    range.data.darray = &arr;
    InfoArray good = infos_of(range, "ourgroup");
    std::string name;
    std::vector<pmix_proc_t> got;
    ASSERT_TRUE(server::native_invited_group(PMIX_GROUP_CONSTRUCT_COMPLETE, good, 64, &name, &got));
    EXPECT_EQ(name, "ourgroup");
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[2].rank, 3u);
    EXPECT_FALSE(server::native_invited_group(PMIX_GROUP_INVITED, good, 64, &name, &got)) << "another event";
    EXPECT_FALSE(server::native_invited_group(PMIX_GROUP_CONSTRUCT_COMPLETE, good, 2, &name, &got))
        << "more members than the cap";
    InfoArray unnamed = infos_of(range, "");
    EXPECT_FALSE(server::native_invited_group(PMIX_GROUP_CONSTRUCT_COMPLETE, unnamed, 64, &name, &got));
    std::string longname(PMIX_MAX_NSLEN + 1, 'g');
    InfoArray too_long = infos_of(range, longname.c_str());
    EXPECT_FALSE(server::native_invited_group(PMIX_GROUP_CONSTRUCT_COMPLETE, too_long, 64, &name, &got));
    pmix_value_t wrong{};
    wrong.type = PMIX_UINT32;
    wrong.data.uint32 = 3;
    InfoArray mistyped = infos_of(wrong, "ourgroup");
    EXPECT_FALSE(server::native_invited_group(PMIX_GROUP_CONSTRUCT_COMPLETE, mistyped, 64, &name, &got));

    // The connection's copy: its destruct is a fence of the members, then it is gone.
    server::native_grp_link link;
    link.invited("ourgroup", got);
    ASSERT_NE(link.invited_members("ourgroup"), nullptr);
    EXPECT_EQ(link.groups(), 1u);
    for (int_flavour f : {int_flavour::flex128, int_flavour::fixed}) {
        packer pk(f);
        const char *grp = "ourgroup";
        ASSERT_TRUE(pk.pack(PMIX_STRING, &grp, 1).ok());
        size_t ninfo = 0;
        ASSERT_TRUE(pk.pack(PMIX_SIZE, &ninfo, 1).ok());
        unpacker up(f, pk.data());
        server::native_grp_note note;
        auto r = link.decode(kCmdGroupDestruct, up, parse_release("4.2.2"), 64, &note);
        ASSERT_TRUE(r.ok()) << r.status().message();
        EXPECT_EQ(r.value().type, wire::msg_type::fence);
        wire::fence_request fr;
        wire::Reader rd(r.value().payload);
        ASSERT_TRUE(wire::decode(rd, &fr).ok());
        ASSERT_EQ(fr.procs.size(), 3u);
        EXPECT_EQ(fr.procs[1].rank, 2u);
        EXPECT_EQ(note.group, "ourgroup");
    }
    auto done = link.reply(kCmdGroupDestruct, int_flavour::flex128, parse_release("4.2.2"), PMIX_SUCCESS, {},
                           server::native_grp_note{"ourgroup", false});
    ASSERT_TRUE(done.ok());
    EXPECT_EQ(link.invited_members("ourgroup"), nullptr);
    EXPECT_EQ(link.groups(), 0u);
}

// GROUP_LEAVE: [STRING grp][SIZE ninfo][INFO...]; the leaver's record goes, the others are named
// for the PMIX_GROUP_LEFT event; a member's leave that comes before the construct's end is kept
// and applied to the record (not to the construct's answer).
TEST(NativeGroups, Leave) {
    for (int_flavour f : {int_flavour::flex128, int_flavour::fixed}) {
        packer pk(f);
        const char *grp = "g.leave";
        ASSERT_TRUE(pk.pack(PMIX_STRING, &grp, 1).ok());
        size_t ninfo = 0;
        ASSERT_TRUE(pk.pack(PMIX_SIZE, &ninfo, 1).ok());
        std::vector<uint8_t> msg = pk.take();
        std::string name;
        InfoArray dirs;
        unpacker up(f, msg);
        ASSERT_TRUE(decode_group_leave(up, &name, &dirs).ok());
        EXPECT_EQ(name, "g.leave");
        for (size_t cut = 0; cut < msg.size(); ++cut) {
            std::vector<uint8_t> part(msg.begin(), msg.begin() + static_cast<long>(cut));
            unpacker upc(f, part);
            EXPECT_FALSE(decode_group_leave(upc, &name, &dirs).ok()) << "truncated at " << cut;
        }
        std::vector<uint8_t> longer = msg;
        longer.push_back(0);
        unpacker upl(f, longer);
        EXPECT_FALSE(decode_group_leave(upl, &name, &dirs).ok());
    }

    server::native_grp_link link;
    std::vector<pmix_proc_t> all{proc("ns", 0), proc("ns", 1), proc("ns", 2)};
    link.invited("g.inv", all);
    auto others = link.leave("g.inv", proc("ns", 1));
    ASSERT_TRUE(others.ok());
    ASSERT_EQ(others.value().size(), 2u);
    EXPECT_EQ(others.value()[1].rank, 2u);
    EXPECT_EQ(link.invited_members("g.inv"), nullptr);
    EXPECT_EQ(link.leave("g.inv", proc("ns", 1)).status().code(), PMIX_ERR_NOT_FOUND);

    link.invited("g.two", all);
    EXPECT_TRUE(link.member_left("g.two", proc("ns", 2)));
    ASSERT_NE(link.invited_members("g.two"), nullptr);
    EXPECT_EQ(link.invited_members("g.two")->size(), 2u);
    EXPECT_FALSE(link.member_left("g.later", proc("ns", 2)));  // no construct of it in flight: not kept
}

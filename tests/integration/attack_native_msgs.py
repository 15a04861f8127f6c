#!/usr/bin/env python3
"""Hostile group, query and log requests of a rank of the step on the native listener
(tests/integration/t-attack-native.sh).

usage: attack_native_msgs.py FLAVOUR DIR
Runs as a task of the step (srun gives PMIX_SERVER_URI41, PMIX_NAMESPACE, SLURM_PROCID): connects
to the step's native listener as its own rank with a handshake of OpenPMIx 3.2 (FLAVOUR "fixed":
bfrops v3, fixed-width integers) or 4.2 ("flex": bfrops v41, varints), then sends malformed and
oversized QUERY, LOG, GROUP_CONSTRUCT and GROUP_DESTRUCT requests (OPENPMIX-WIRE.md §3, §4) and
hostile group-completion events (groups made by invitation).
Each case prints one line
    CASE <flavour> <name>: <answer> -> ok | UNEXPECTED (wanted <what>)
where the answer is "status N" (the server's [STATUS] reply), "closed" (it closed the connection;
the script connects again as the same rank) or "silent" (no answer in 60 s). Also prints the
server's memory (VmRSS of the slurmstepd this task descends from) around the group flood and the
oversized queries: "RSS <flavour> <when> <kB> kB".

Coordination through DIR: the flex rank constructs the group "solo.flex" first and leaves
DIR/solo.flex; the fixed rank waits for it and for DIR/honest.0 (ranks 0 and 1 constructed the
group "honest"), attacks both groups, leaves DIR/done.fixed; the flex rank then checks its group
survived and runs its own cases. The floods run one at a time (DIR/flooded.fixed); at the end,
once the fixed rank is done (DIR/cases.fixed), the flex rank's connections each leave 4096 groups
behind until the node's cap of 65536 refuses them. Both end with FINALIZE."""
import os
import socket
import struct
import sys
import time

CMD_FINALIZE, CMD_QUERY, CMD_LOG, CMD_GROUP_CONSTRUCT, CMD_GROUP_DESTRUCT = 5, 15, 16, 24, 28
CMD_ALLOC, CMD_JOB_CONTROL, CMD_MONITOR = 17, 18, 19
CMD_FENCENB, CMD_NOTIFY = 3, 12
GROUP_CONSTRUCT_COMPLETE, RANGE_CUSTOM, T_DATA_ARRAY = -166, 6, 39
KEY_CUSTOM_RANGE, KEY_GROUP_ID = "pmix.evrange", "pmix.grp.id"
TAG_HEARTBEAT = 1
T_BOOL, T_STRING, T_SIZE, T_INT32, T_UINT32, T_UINT64, T_PROC, T_INFO = 1, 3, 4, 9, 14, 15, 22, 24
ST = {0: "PMIX_SUCCESS", -11: "PMIX_ERR_EXISTS", -24: "PMIX_ERR_TIMEOUT", -25: "PMIX_ERR_NO_PERMISSIONS",
      -27: "PMIX_ERR_BAD_PARAM", -29: "PMIX_ERR_OUT_OF_RESOURCE", -46: "PMIX_ERR_NOT_FOUND",
      -47: "PMIX_ERR_NOT_SUPPORTED", -104: "PMIX_QUERY_PARTIAL_SUCCESS"}
KEY_PSET_NAMES = "pmix.qry.psets"
KEY_PSET_MEMBERSHIP = "pmix.qry.pmems"
KEY_PSET_NAME = "pmix.pset.nm"
KEY_LOG_MSG = "pmix.log.msg"
KEY_LOG_STDERR = "pmix.log.stderr"
KEY_TIMEOUT = "pmix.timeout"
KEY_JCTRL_SIGNAL = "pmix.jctrl.sig"
KEY_SEND_HEARTBEAT = "pmix.monitor.beat"
KEY_ALLOC_NUM_NODES = "pmix.alloc.nnodes"


class Packer:
    """OpenPMIx's NON_DESC encoding in one of its two integer flavours (bfrops.h)."""

    def __init__(self, flex):
        self.flex = flex
        self.b = bytearray()

    def varint(self, v):
        for _ in range(8):
            byte = v & 0x7F
            v >>= 7
            if v:
                byte |= 0x80
            self.b.append(byte)
            if not v:
                return self
        self.b.append(v & 0xFF)
        return self

    def i32(self, v):
        if self.flex:
            return self.varint(((v << 1) ^ (v >> 63)) & 0xFFFFFFFFFFFFFFFF)
        self.b += struct.pack(">i", v)
        return self

    def u32(self, v):
        if self.flex:
            return self.varint(v)
        self.b += struct.pack(">I", v & 0xFFFFFFFF)
        return self

    def u16(self, v):
        if self.flex:
            return self.varint(v)
        self.b += struct.pack(">H", v)
        return self

    def u64(self, v):
        if self.flex:
            return self.varint(v)
        self.b += struct.pack(">Q", v)
        return self

    def size(self, v):
        if not self.flex:
            self.u16(T_UINT64)
        return self.u64(v)

    def string(self, s):
        raw = s if isinstance(s, bytes) else s.encode()
        self.i32(len(raw) + 1)
        self.b += raw + b"\0"
        return self

    def proc(self, nspace, rank):
        return self.string(nspace).u32(rank)

    def info(self, key, typ, payload):
        """payload: a function that packs the value's payload."""
        self.string(key).u32(0).u16(typ)
        payload(self)
        return self

    def info_str(self, key, value):
        return self.info(key, T_STRING, lambda p: p.string(value))

    # top-level packs: [INT32 count][elements]
    def command(self, cmd):
        self.i32(1)
        self.b.append(cmd)
        return self

    def pack_size(self, v):
        return self.i32(1).size(v)

    def pack_string(self, s):
        return self.i32(1).string(s)

    def bytes(self):
        return bytes(self.b)


class Unpacker:
    def __init__(self, flex, data):
        self.flex, self.d, self.at = flex, data, 0

    def varint(self):
        v, shift = 0, 0
        for i in range(9):
            byte = self.d[self.at]
            self.at += 1
            if i == 8:
                return v | (byte << shift)
            v |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return v
        return v

    def i32(self):
        if self.flex:
            u = self.varint()
            return (u >> 1) ^ -(u & 1)
        v = struct.unpack_from(">i", self.d, self.at)[0]
        self.at += 4
        return v


class Client:
    def __init__(self, flavour, port, nspace, rank):
        self.flavour, self.flex = flavour, flavour == "flex"
        self.port, self.nspace, self.rank = port, nspace, rank
        self.tag = 100
        self.events = 0
        self.s = None
        self.connect()

    def connect(self):
        self.s = socket.create_connection(("127.0.0.1", self.port), timeout=60)
        version, bfrops = (b"4.2.2", b"v41") if self.flex else (b"3.2.3", b"v3")
        body = b"native\0" + struct.pack("!I", 8) + struct.pack("=II", os.getuid(), os.getgid())
        body += b"\0" + self.nspace.encode() + b"\0" + struct.pack("!I", self.rank)
        body += version + b"\0" + bfrops + b"\0" + b"\x01" + b"hash\0"
        self.s.sendall(struct.pack("=iIII", -1, 0xFFFFFFFF, len(body), 0) + body)
        ack = self.recv_exact(8)
        if ack is None or struct.unpack("!i", ack[:4])[0] != 0:
            raise RuntimeError("handshake refused: %r" % (ack,))
        self.index = struct.unpack("!I", ack[4:])[0]

    def recv_exact(self, n):
        out = b""
        while len(out) < n:
            try:
                chunk = self.s.recv(n - len(out))
            except socket.timeout:
                raise
            except OSError:
                return None
            if not chunk:
                return None
            out += chunk
        return out

    def send(self, payload):
        self.tag += 1
        try:
            self.s.sendall(struct.pack("!iIII", self.index, self.tag, len(payload), 0) + payload)
        except OSError:
            return None
        return self.tag

    def read_reply(self):
        """The next reply: (tag, status, payload) or None when the server closed the connection.
        Events the server sends meanwhile (tag 0: PMIX_PROCESS_SET_DEFINE and the like) are
        counted and skipped."""
        while True:
            hdr = self.recv_exact(16)
            if hdr is None:
                return None
            _, tag, n, _ = struct.unpack("!iIII", hdr)
            body = self.recv_exact(n) if n else b""
            if body is None:
                return None
            if tag == 0:
                self.events += 1
                continue
            up = Unpacker(self.flex, body)
            count = up.i32()
            return tag, (up.i32() if count == 1 else None), body

    def request(self, payload):
        """Send one request; its answer as text ("status N", "closed", "silent")."""
        if self.send(payload) is None:
            self.reconnect()
            return "closed", None
        try:
            r = self.read_reply()
        except socket.timeout:
            return "silent", None
        if r is None:
            self.reconnect()
            return "closed", None
        if r[0] != self.tag:
            return "a reply to tag %d, not %d" % (r[0], self.tag), r
        return "status %s" % r[1], r

    def reconnect(self):
        try:
            self.s.close()
        except OSError:
            pass
        for _ in range(50):
            try:
                self.connect()
                return
            except (OSError, RuntimeError):
                time.sleep(0.2)  # the server may not have seen the old connection close yet
        raise RuntimeError("cannot connect again as rank %d" % self.rank)

    def p(self):
        return Packer(self.flex)

    def finalize(self):
        return self.request(self.p().command(CMD_FINALIZE).bytes())


rss_samples = []


def stepd_rss_kb():
    """VmRSS of the slurmstepd this process descends from (its /proc status is world-readable)."""
    pid = os.getpid()
    while pid > 1:
        with open("/proc/%d/status" % pid) as f:
            st = dict(line.split(":", 1) for line in f if ":" in line)
        if st["Name"].strip() == "slurmstepd":
            rss = int(st["VmRSS"].split()[0])
            rss_samples.append(rss)
            return rss
        pid = int(st["PPid"])
    return -1


results = {"ok": 0, "bad": 0}


def case(c, name, answer, want):
    """want: a set of accepted answers ("closed", "status -27", ...)."""
    good = answer in want
    results["ok" if good else "bad"] += 1
    print("CASE %s %s: %s -> %s" % (c.flavour, name, answer,
                                    "ok" if good else "UNEXPECTED (wanted %s)" % " or ".join(sorted(want))), flush=True)


def err(code):
    return "status %d" % code


# ---- the requests
def construct(c, name, members, infos=()):
    p = c.p().command(CMD_GROUP_CONSTRUCT).pack_string(name).pack_size(len(members))
    if members:
        p.i32(len(members))
        for ns, r in members:
            p.proc(ns, r)
    p.pack_size(len(infos))
    if infos:
        p.i32(len(infos))
        for f in infos:
            f(p)
    return p.bytes()


def destruct(c, name):
    # 3.2 and 4.2.2 clients name the group, then the directives (no member list before 4.2.4)
    return c.p().command(CMD_GROUP_DESTRUCT).pack_string(name).pack_size(0).bytes()


def notify(c, status, range_, infos):
    p = c.p().command(CMD_NOTIFY).i32(1).i32(status).i32(1)
    p.b.append(range_)
    p.pack_size(len(infos))
    if infos:
        p.i32(len(infos))
        for f in infos:
            f(p)
    return p.bytes()


def group_complete(c, name, members):
    """PMIX_GROUP_CONSTRUCT_COMPLETE as OpenPMIx's PMIx_Group_invite sends it: custom range = the
    members, the group's name."""
    def procs(p):
        p.u16(T_PROC).size(len(members))
        for ns, r in members:
            p.proc(ns, r)
    return notify(c, GROUP_CONSTRUCT_COMPLETE, RANGE_CUSTOM,
                  [lambda p: p.info(KEY_CUSTOM_RANGE, T_DATA_ARRAY, procs), lambda p: p.info_str(KEY_GROUP_ID, name)])


def fence_of(c, nspace):
    return c.p().command(CMD_FENCENB).pack_size(1).i32(1).proc(nspace, 0xFFFFFFFE).pack_size(0).bytes()


def attack_invited(c):
    """Groups made by invitation (events alone, OpenPMIx's PMIx_Group_invite): hostile completion
    events; a fence across such a group and its destruct are fences of its members, refused when
    a member is not a rank of the step, never a hang."""
    me, fl = (c.nspace, c.rank), c.flavour
    case(c, "group-complete event of inv.%s with this rank and rank 999999" % fl,
         c.request(group_complete(c, "inv." + fl, [me, (c.nspace, 999999)]))[0], {err(0)})
    case(c, "fence across inv.%s (a member that is not a rank)" % fl, c.request(fence_of(c, "inv." + fl))[0],
         {err(-27)})
    case(c, "group destruct of inv.%s" % fl, c.request(destruct(c, "inv." + fl))[0], {err(-27)})
    case(c, "group-complete event naming this step's namespace as the group",
         c.request(group_complete(c, c.nspace, [me]))[0], {err(0)})
    case(c, "group destruct of this step's namespace after that", c.request(destruct(c, c.nspace))[0], {err(-46)})
    case(c, "group-complete event of notme.%s without this rank" % fl,
         c.request(group_complete(c, "notme." + fl, [(c.nspace, 999998)]))[0], {err(0)})
    case(c, "group destruct of notme.%s" % fl, c.request(destruct(c, "notme." + fl))[0], {err(-46)})
    mistyped = notify(c, GROUP_CONSTRUCT_COMPLETE, RANGE_CUSTOM,
                      [lambda p: p.info(KEY_CUSTOM_RANGE, T_UINT32, lambda q: q.u32(3)),
                       lambda p: p.info_str(KEY_GROUP_ID, "mist." + fl)])
    case(c, "group-complete event whose range is a number", c.request(mistyped)[0], {err(-27)})
    case(c, "group destruct of mist.%s" % fl, c.request(destruct(c, "mist." + fl))[0], {err(-46)})
    case(c, "group-complete event of a 300-character group name",
         c.request(group_complete(c, "g" * 300, [me]))[0], {err(0)})
    unnamed = notify(c, GROUP_CONSTRUCT_COMPLETE, RANGE_CUSTOM,
                     [lambda p: p.info(KEY_CUSTOM_RANGE, T_PROC, lambda q: q.proc(*me))])
    case(c, "group-complete event without a name", c.request(unnamed)[0], {err(0)})


def query(c, queries):
    """queries: [(keys, qualifier packers)]."""
    p = c.p().command(CMD_QUERY).pack_size(len(queries)).i32(len(queries))
    for keys, quals in queries:
        p.i32(len(keys))
        for k in keys:
            p.string(k)
        p.size(len(quals))
        for q in quals:
            q(p)
    return p.bytes()


def log(c, infos):
    p = c.p().command(CMD_LOG).i32(1).u64(int(time.time())).pack_size(len(infos))
    if infos:
        p.i32(len(infos))
        for f in infos:
            f(p)
    return p.pack_size(0).bytes()


def job_control(c, targets, infos):
    p = c.p().command(CMD_JOB_CONTROL).pack_size(len(targets))
    if targets:
        p.i32(len(targets))
        for ns, r in targets:
            p.proc(ns, r)
    p.pack_size(len(infos))
    if infos:
        p.i32(len(infos))
        for f in infos:
            f(p)
    return p.bytes()


def alloc(c, directive, infos):
    p = c.p().command(CMD_ALLOC).i32(1)
    p.b.append(directive)
    p.pack_size(len(infos))
    if infos:
        p.i32(len(infos))
        for f in infos:
            f(p)
    return p.bytes()


def attack_control(c):
    """Job control, monitoring, heartbeats and allocation requests, hostile."""
    me = (c.nspace, c.rank)
    closed = {"closed"}
    sig = lambda p: p.info(KEY_JCTRL_SIGNAL, T_INT32, lambda q: q.i32(0))  # signal 0: changes nothing
    beat = lambda p: p.info(KEY_SEND_HEARTBEAT, T_BOOL, lambda q: q.b.append(1))
    nodes = lambda p: p.info(KEY_ALLOC_NUM_NODES, T_UINT64, lambda q: q.u64(1 << 40))
    mon = c.p().command(CMD_MONITOR).i32(1)
    beat(mon)
    mon.i32(1).i32(-1).pack_size(0)
    for name, body in (("job control", job_control(c, [me], [sig])), ("monitor", mon.bytes()),
                       ("allocation", alloc(c, 2, [nodes]))):
        for cut in (len(body) // 2, len(body) - 1):
            case(c, "truncated %s (%d of %d bytes)" % (name, cut, len(body)), c.request(body[:cut])[0], closed)
    p = c.p().command(CMD_JOB_CONTROL).pack_size(1 << 40).i32(1)
    case(c, "job control: 2^40 targets", c.request(p.proc(*me).pack_size(0).bytes())[0], closed)
    case(c, "job control: no directives", c.request(job_control(c, [me], []))[0], closed)
    case(c, "job control: a directive of data type 9999",
         c.request(job_control(c, [me], [lambda p: p.info(KEY_JCTRL_SIGNAL, 9999, lambda q: q.i32(0))]))[0], closed)
    ans = c.request(job_control(c, [(c.nspace, 1 << 20)], [sig]))[0]
    case(c, "job control of a rank beyond the step: an error status",
         "an error status" if ans.startswith("status -") else ans, {"an error status"})
    m = c.p().command(CMD_MONITOR).i32(1)
    m.info(KEY_SEND_HEARTBEAT, 9999, lambda q: q.i32(0))
    case(c, "monitor: the monitored item of data type 9999", c.request(m.i32(1).i32(-1).pack_size(0).bytes())[0], closed)
    case(c, "allocation: 2^40 infos", c.request(c.p().command(CMD_ALLOC).i32(1).bytes() + bytes([2]) +
                                                 c.p().pack_size(1 << 40).i32(1).bytes())[0], closed)
    case(c, "allocation: a byte after the request", c.request(alloc(c, 2, [nodes]) + b"\0")[0], closed)
    # 1000 heartbeats (OpenPMIx's empty one-way message on tag 1) without a monitor: no answer,
    # the connection stays, the next request is served
    for _ in range(1000):
        c.s.sendall(struct.pack("!iIII", c.index, TAG_HEARTBEAT, 0, 0))
    case(c, "1000 heartbeats without a monitor, then a query", c.request(query(c, [([KEY_PSET_NAMES], [])]))[0],
         {err(0)})


def run_cases(c, d):
    me = (c.nspace, c.rank)
    closed = {"closed"}
    fl = c.flavour
    attack_control(c)
    attack_invited(c)

    # truncated bodies: the connection is closed (malformed request), the rank connects again
    for name, body in (("query", query(c, [([KEY_PSET_NAMES], [])])),
                       ("log", log(c, [lambda p: p.info_str(KEY_LOG_MSG, "hello")])),
                       ("group-construct", construct(c, "trunc." + fl, [me])),
                       ("group-destruct", destruct(c, "trunc." + fl))):
        for cut in (len(body) // 2, len(body) - 1):
            case(c, "truncated %s (%d of %d bytes)" % (name, cut, len(body)), c.request(body[:cut])[0], closed)

    # counts far over the caps
    case(c, "query: 257 queries (cap 256)",
         c.request(c.p().command(CMD_QUERY).pack_size(257).i32(257).bytes() + b"\0" * 64)[0], closed)
    case(c, "query: 2^40 queries",
         c.request(c.p().command(CMD_QUERY).pack_size(1 << 40).i32(1).bytes())[0], closed)
    p = c.p().command(CMD_QUERY).pack_size(1).i32(1).i32(257)
    for i in range(257):
        p.string("k%d" % i)
    case(c, "query: 257 keys in one query (cap 256)", c.request(p.size(0).bytes())[0], closed)
    case(c, "query: 2^31-1 keys announced",
         c.request(c.p().command(CMD_QUERY).pack_size(1).i32(1).i32(0x7FFFFFFF).bytes())[0], closed)
    case(c, "query: -5 keys",
         c.request(c.p().command(CMD_QUERY).pack_size(1).i32(1).i32(-5).bytes())[0], closed)
    case(c, "query: 2^40 qualifiers",
         c.request(c.p().command(CMD_QUERY).pack_size(1).i32(1).i32(1).string(KEY_PSET_NAMES).size(1 << 40).bytes())[0],
         closed)
    p = c.p().command(CMD_GROUP_CONSTRUCT).pack_string("big." + fl).pack_size(1 << 40).i32(1).proc(*me)
    case(c, "group construct: 2^40 members", c.request(p.pack_size(0).bytes())[0], closed)
    p = c.p().command(CMD_GROUP_CONSTRUCT).pack_string("big." + fl).pack_size(100000).i32(100000)
    for _ in range(2000):
        p.proc(*me)
    case(c, "group construct: 100000 members announced, 2000 sent", c.request(p.pack_size(0).bytes())[0], closed)
    p = c.p().command(CMD_GROUP_CONSTRUCT).pack_string("big." + fl).pack_size(1).i32(5).proc(*me)
    case(c, "group construct: 1 member announced, a pack of 5", c.request(p.pack_size(0).bytes())[0], closed)
    p = c.p().command(CMD_GROUP_CONSTRUCT).pack_string("big." + fl).pack_size(1).i32(1).proc(*me)
    case(c, "group construct: 2^40 directives", c.request(p.pack_size(1 << 40).i32(1).bytes())[0], closed)
    case(c, "log: 2^40 infos", c.request(c.p().command(CMD_LOG).i32(1).u64(1).pack_size(1 << 40).i32(1).bytes())[0],
         closed)
    p = c.p().command(CMD_LOG).i32(1).u64(1).pack_size(0).pack_size(1 << 62)
    case(c, "log: 2^62 directives", c.request(p.bytes())[0], closed)

    # wrong data types where a string or a proc is expected
    p = c.p().command(CMD_GROUP_CONSTRUCT).i32(1).u32(0xDEADBEEF).pack_size(1).i32(1).proc(*me).pack_size(0)
    case(c, "group construct: an integer for the name", c.request(p.bytes())[0], closed)
    p = c.p().command(CMD_GROUP_CONSTRUCT).pack_string("x" * 300).pack_size(1).i32(1).proc(*me).pack_size(0)
    case(c, "group construct: a name of 300 characters", c.request(p.bytes())[0], closed)
    p = c.p().command(CMD_GROUP_CONSTRUCT).pack_string("").pack_size(1).i32(1).proc(*me).pack_size(0)
    case(c, "group construct: an empty name", c.request(p.bytes())[0], closed)
    p = c.p().command(CMD_GROUP_CONSTRUCT).pack_string("t." + fl).pack_size(1).i32(1).i32(-7).u32(c.rank)
    case(c, "group construct: a member whose namespace is a negative length", c.request(p.pack_size(0).bytes())[0],
         closed)
    p = c.p().command(CMD_GROUP_CONSTRUCT).pack_string("t." + fl).pack_size(1).i32(1).string("n" * 400).u32(0)
    case(c, "group construct: a member namespace of 400 characters", c.request(p.pack_size(0).bytes())[0], closed)
    case(c, "group construct: a member without a rank (PMIX_RANK_UNDEF)",
         c.request(construct(c, "t." + fl, [(c.nspace, 0xFFFFFFFF)]))[0], closed)
    t0 = time.time()
    ans = c.request(construct(c, "w." + fl, [(c.nspace, 0xFFFFFFFE)],
                              [lambda p: p.info(KEY_TIMEOUT, T_INT32, lambda q: q.i32(2))]))[0]
    case(c, "group construct: every rank (PMIX_RANK_WILDCARD), the others never join, timeout 2 s", ans, {err(-24)})
    print("TIME %s the wildcard construct was answered after %.1f s" % (fl, time.time() - t0))
    case(c, "group construct: a member rank beyond the step",
         c.request(construct(c, "t." + fl, [me, (c.nspace, 99999)]))[0], {err(-27)})
    case(c, "group construct: the caller not among the members",
         c.request(construct(c, "t." + fl, [(c.nspace, 0)]))[0], {err(-27)})
    case(c, "group construct: named like the step's namespace",
         c.request(construct(c, c.nspace, [me]))[0], {err(-27)})
    case(c, "group construct: a directive of data type 9999",
         c.request(construct(c, "t." + fl, [me], [lambda p: p.info("pmix.grp.actxid", 9999, lambda q: q.u32(1))]))[0],
         closed)
    case(c, "group construct: PMIX_TIMEOUT as a proc, not a number (ignored)",
         c.request(construct(c, "t." + fl, [me], [lambda p: p.info(KEY_TIMEOUT, T_PROC, lambda q: q.proc(*me))]))[0],
         {err(0)})
    case(c, "group destruct of the group just made", c.request(destruct(c, "t." + fl))[0], {err(0)})
    case(c, "query: a proc for the key string",
         c.request(c.p().command(CMD_QUERY).pack_size(1).i32(1).i32(1).proc(*me).size(0).bytes())[0], closed)
    case(c, "query: PMIX_PSET_NAME qualifier as an INT32 (not answered)",
         c.request(query(c, [([KEY_PSET_MEMBERSHIP], [lambda p: p.info(KEY_PSET_NAME, T_INT32, lambda q: q.i32(5))])]))[0],
         {err(-46)})
    case(c, "log: the message as a proc, not a string",
         c.request(log(c, [lambda p: p.info(KEY_LOG_MSG, T_PROC, lambda q: q.proc(*me))]))[0],
         {err(0), err(-47)})
    case(c, "log: a string whose length runs past the message",
         c.request(c.p().command(CMD_LOG).i32(1).u64(1).pack_size(1).i32(1).string(KEY_LOG_MSG).u32(0).u16(T_STRING)
                   .i32(1 << 30).bytes() + b"abc")[0], closed)

    # queries with huge keys: over PMIX_MAX_KEYLEN is malformed, at it a key no one knows
    case(c, "query: a key of 100000 characters", c.request(query(c, [(["k" * 100000], [])]))[0], closed)
    rss0 = stepd_rss_kb()
    t0 = time.time()
    big = [(["%03d%s" % (k, "q" * 508) for k in range(256)], []) for _ in range(256)]
    case(c, "query: 256 queries of 256 keys of 511 characters (16 MiB, none known)", c.request(query(c, big))[0],
         {err(-46)})
    print("RSS %s around 256x256 unknown keys: %d -> %d kB (%.1f s)" % (fl, rss0, stepd_rss_kb(), time.time() - t0))

    # oversize log messages: cut and rate-limited by the server, the request answered
    case(c, "log: one message of 8 MiB", c.request(log(c, [lambda p: p.info_str(KEY_LOG_MSG, "L" * (8 << 20))]))[0],
         {err(0), err(-29)})
    case(c, "log: 4096 messages of 2 KiB in one request",
         c.request(log(c, [lambda p: p.info_str(KEY_LOG_STDERR, "M" * 2048)] * 4096))[0], {err(0), err(-29)})
    case(c, "log: a message of 70 MiB (over the payload limit)",
         c.request(log(c, [lambda p: p.info_str(KEY_LOG_MSG, "O" * (70 << 20))]))[0], closed)


def attack_groups(c, other):
    """Destructs of groups this connection is not in, and hijacks of their names: the group
    "honest" of ranks 0 and 1, and `other`, the other attacker's connection's group (or None)."""
    me = (c.nspace, c.rank)
    case(c, "group destruct of a group that does not exist", c.request(destruct(c, "nosuch"))[0], {err(-46)})
    case(c, "group destruct of group honest (ranks 0 and 1)", c.request(destruct(c, "honest"))[0], {err(-46)})
    if other:
        case(c, "group destruct of group %s (the other attacker's connection)" % other,
             c.request(destruct(c, other))[0], {err(-46)})
    # the same name with a membership of our own: refused, the other's group stays as it was
    case(c, "group construct of the existing group honest with only this rank",
         c.request(construct(c, "honest", [me]))[0], {err(-11)})
    case(c, "group destruct of honest after that", c.request(destruct(c, "honest"))[0], {err(-46)})
    if other:
        case(c, "group construct of the existing group %s with only this rank" % other,
             c.request(construct(c, other, [me]))[0], {err(-11)})
        case(c, "group destruct of %s after that" % other, c.request(destruct(c, other))[0], {err(-46)})
    case(c, "group construct of honest with its members and this rank (they never join: timeout 2 s)",
         c.request(construct(c, "honest", [(c.nspace, 0), (c.nspace, 1), me],
                             [lambda p: p.info(KEY_TIMEOUT, T_INT32, lambda q: q.i32(2))]))[0], {err(-11)})


def flood(c, d):
    """GROUP_CONSTRUCTs up to the per-connection cap of 4096 and one over it; names of 255 chars."""
    me = (c.nspace, c.rank)
    rss0 = stepd_rss_kb()
    t0 = time.time()
    names = ["f.%s.%05d.%s" % (c.flavour, i, "g" * 240) for i in range(4097)]
    statuses = {}
    batch = 512
    for start in range(0, len(names), batch):
        chunk = names[start:start + batch]
        for n in chunk:
            c.send(construct(c, n, [me]))
        for _ in chunk:
            r = c.read_reply()
            if r is None:
                statuses["closed"] = statuses.get("closed", 0) + 1
                c.reconnect()
                break
            statuses[r[1]] = statuses.get(r[1], 0) + 1
    last = statuses.get(-29, 0)
    rss1 = stepd_rss_kb()
    print("FLOOD %s: 4097 constructs of 255-character names in %.1f s: %s" %
          (c.flavour, time.time() - t0, ", ".join("%s x%d" % (ST.get(k, k), v) for k, v in sorted(statuses.items(), key=str))))
    case(c, "group flood: 4096 constructs succeed", "%d" % statuses.get(0, 0), {"4096"})
    case(c, "group flood: the 4097th is refused at the cap", err(-29) if last == 1 else "%d refused" % last, {err(-29)})
    # the query every key of which names every group: its answer would be 256 x 256 x 1 MiB
    t0 = time.time()
    allnames = [([KEY_PSET_NAMES] * 256, []) for _ in range(256)]
    case(c, "query: 256 x 256 PMIX_QUERY_PSET_NAMES over 4096+ long group names",
         c.request(query(c, allnames))[0], {err(-29)})
    rss2 = stepd_rss_kb()
    print("RSS %s query of every group name 65536 times: %d kB after (%.1f s)" % (c.flavour, rss2, time.time() - t0))
    ok = 0
    for start in range(0, 4096, batch):
        chunk = names[start:min(start + batch, 4096)]
        for n in chunk:
            c.send(destruct(c, n))
        for _ in chunk:
            r = c.read_reply()
            ok += r is not None and r[1] == 0
    rss3 = stepd_rss_kb()
    case(c, "group flood: 4096 destructs succeed", "%d" % ok, {"4096"})
    print("RSS %s flood: before %d kB, after 4096 groups %d kB (+%d), after their destruct %d kB" %
          (c.flavour, rss0, rss1, rss1 - rss0, rss3))



def node_cap(c):
    """Connections again and again, each constructing 4096 groups and closing without destructing
    them (the groups stay, as those of a rank that died): the node's cap of 65536 groups ends it,
    with the same clear error; slurmstepd's memory stays bounded."""
    me = (c.nspace, c.rank)
    rss0 = stepd_rss_kb()
    t0 = time.time()
    made, rounds = 0, 0
    refused_all = False
    while rounds < 20 and not refused_all:
        rounds += 1
        names = ["n%02d.%05d.%s" % (rounds, i, "g" * 240) for i in range(4096)]
        ok = refused = 0
        for start in range(0, len(names), 512):
            chunk = names[start:start + 512]
            for n in chunk:
                c.send(construct(c, n, [me]))
            for _ in chunk:
                r = c.read_reply()
                ok += r is not None and r[1] == 0
                refused += r is not None and r[1] == -29
        made += ok
        refused_all = ok == 0 and refused == len(names)
        c.reconnect()
    rss1 = stepd_rss_kb()
    print("NODECAP %s: %d connections made %d groups in %.1f s; slurmstepd %d -> %d kB" %
          (c.flavour, rounds, made, time.time() - t0, rss0, rss1))
    case(c, "groups of closed connections: the node's cap ends them",
         "a connection refused at the node's cap" if refused_all else "no refusal after %d groups" % made,
         {"a connection refused at the node's cap"})


def wait_for(path, secs=120):
    for _ in range(secs * 10):
        if os.path.exists(path):
            return True
        time.sleep(0.1)
    return False


def main():
    flavour, d = sys.argv[1], sys.argv[2]
    port = int(os.environ["PMIX_SERVER_URI41"].rsplit(":", 1)[1])
    c = Client(flavour, port, os.environ["PMIX_NAMESPACE"], int(os.environ["SLURM_PROCID"]))
    me = (c.nspace, c.rank)
    stepd_rss_kb()
    if flavour == "flex":
        case(c, "group construct solo.flex of this rank", c.request(construct(c, "solo.flex", [me]))[0], {err(0)})
        open(os.path.join(d, "solo.flex"), "w").close()
        wait_for(os.path.join(d, "done.fixed"))
        # the other connection's destructs and hijacks left it alone: still ours, with us only
        ans, r = c.request(query(c, [([KEY_PSET_MEMBERSHIP], [lambda p: p.info_str(KEY_PSET_NAME, "solo.flex")])]))
        # the answer: one info whose value, a data array of one proc, ends the reply
        one = r is not None and r[2].count(c.nspace.encode()) == 1 and r[2].endswith(c.p().proc(*me).bytes())
        case(c, "query of solo.flex's membership after the other's attack", ans + (", this rank alone" if one else ""),
             {err(0) + ", this rank alone"})
        case(c, "group destruct solo.flex by its member", c.request(destruct(c, "solo.flex"))[0], {err(0)})
        attack_groups(c, None)
    else:
        wait_for(os.path.join(d, "solo.flex"))
        wait_for(os.path.join(d, "honest.0"))
        wait_for(os.path.join(d, "honest.1"))
        attack_groups(c, "solo.flex")
        open(os.path.join(d, "done.fixed"), "w").close()
    if flavour == "flex":  # one flood at a time: the server's memory is measured around each
        wait_for(os.path.join(d, "flooded.fixed"), 240)
    flood(c, d)
    open(os.path.join(d, "flooded." + flavour), "w").close()
    run_cases(c, d)
    open(os.path.join(d, "cases." + flavour), "w").close()
    if flavour == "flex":  # last: once the node is full, no rank constructs a group any more
        wait_for(os.path.join(d, "cases.fixed"), 240)
        node_cap(c)
    print("EVENTS %s: %d event messages from the server" % (flavour, c.events))
    stepd_rss_kb()
    peak = max(rss_samples)
    print("RSS %s: %d samples, first %d kB, peak %d kB, last %d kB" %
          (flavour, len(rss_samples), rss_samples[0], peak, rss_samples[-1]))
    case(c, "slurmstepd's memory stays under 256 MiB", "peak %s" % ("under" if peak < 262144 else "%d kB" % peak),
         {"peak under"})
    case(c, "finalize", c.finalize()[0], {err(0)})
    print("ATTACKER %s done: %d ok, %d unexpected" % (flavour, results["ok"], results["bad"]), flush=True)
    open(os.path.join(d, "done." + flavour), "w").close()


if __name__ == "__main__":
    main()

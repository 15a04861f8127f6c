#!/usr/bin/env python3
"""Attacker and observer for t-attack-net.sh: loopback only, every loop bounded in count and time.

  listeners PID                 TCP ports PID listens on (from /proc/PID/fd and /proc/net/tcp)
  probe PORT PURPOSE [NSPACE]   "yes" if a pmixcpp listener of that purpose (node|agent) answers a
                                hello with a challenge (how the test tells our listeners from
                                Slurm's own among those ports)
  sniff OUT SECONDS             (root) record for SECONDS the client->server bytes of every
                                loopback TCP connection that opens with a pmixcpp hello (AF_PACKET
                                on lo; at most 200 connections of 64 KiB); JSON to OUT
  attack PORT PURPOSE NSPACE [CAPTURE]
                                garbage, a 4 GiB length, a node frame without authentication, a
                                hello followed by a forged response, and each captured stream
                                replayed on a new connection; one line per attack saying whether
                                the listener dropped it and how fast
  flood PORT COUNT HOLD         COUNT idle connections held up to HOLD seconds; prints how many
                                connected and how many the listener dropped meanwhile
  forge PORT NSPACE NODE DUMP   (the job's user) forged node traffic to a node listener with what
                                the user knows: the signed records srun relayed (DUMP, the bytes
                                srun's agent sent), the namespace, the node ids; hellos whose
                                response is keyed by every guess made from those, a MAC'd node
                                frame without a handshake, hellos naming impossible nodes; one
                                line per attempt
"""
import json
import os
import resource
import select
import socket
import struct
import sys
import time

MAGIC = b"PMXC"
HELLO, CHALLENGE, RESPONSE = 0x1F0, 0x1F1, 0x1F2
NODE_FRAME, SEALED_NODE_FRAME = 0x100, 0x101
HANDSHAKE_VERSION = 2
PURPOSE = {"node": 1, "agent": 2}


def frame(ftype, payload, length=None):
    n = len(payload) if length is None else length
    return MAGIC + bytes([1, 0]) + struct.pack("<HII", ftype, 0, n) + payload


def wstr(s):
    b = s.encode()
    return struct.pack("<I", len(b)) + b


def hello(purpose, nspace, node=0, credential=b""):
    return frame(HELLO, bytes([HANDSHAKE_VERSION, PURPOSE[purpose]]) + wstr(nspace) + struct.pack("<I", node) +
                 os.urandom(32) + struct.pack("<I", len(credential)) + credential)


def connect(port, timeout=2.0):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    return s


def dropped_within(s, seconds):
    """True if the peer closes the connection within `seconds` (data it sends is read and ignored)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        r, _, _ = select.select([s], [], [], max(0.0, end - time.monotonic()))
        if not r:
            continue
        try:
            if not s.recv(4096):
                return True
        except OSError:
            return True
    return False


def listeners(pid):
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if f[3] == "0A" and f[9] in inodes:  # LISTEN
                ports.add(int(f[1].rsplit(":", 1)[1], 16))
    print(" ".join(str(p) for p in sorted(ports)))


def probe(port, purpose, nspace):
    # A node listener answers a hello from any other node of the step (not from its own id): try two.
    for node in (1, 0):
        if probe_as(port, purpose, nspace, node):
            print("yes")
            return
    print("no")


def probe_as(port, purpose, nspace, node):
    try:
        s = connect(port, 1.0)
        s.sendall(hello(purpose, nspace, node))
        s.settimeout(1.0)
        got = s.recv(16)
        s.close()
        return got.startswith(MAGIC) and struct.unpack("<H", got[6:8])[0] == CHALLENGE
    except OSError:
        return False


def sniff(out, seconds):
    raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.ntohs(0x0003))
    raw.bind(("lo", 0))
    streams = {}  # (sport, dport) -> {seq: payload}, only connections that opened with a hello
    end = time.monotonic() + float(seconds)
    while time.monotonic() < end:
        r, _, _ = select.select([raw], [], [], 0.2)
        if not r:
            continue
        pkt, addr = raw.recvfrom(65600)
        if addr[2] != socket.PACKET_OUTGOING or len(pkt) < 14 + 20 or pkt[12:14] != b"\x08\x00":
            continue  # each loopback packet shows twice: keep the outgoing copy
        ip = pkt[14:]
        ihl = (ip[0] & 15) * 4
        if ip[9] != 6:
            continue
        total = struct.unpack("!H", ip[2:4])[0]
        tcp = ip[ihl:total]
        sport, dport, seq = struct.unpack("!HHI", tcp[:8])
        payload = tcp[(tcp[12] >> 4) * 4:]
        if not payload:
            continue
        key = (sport, dport)
        if key not in streams:
            if len(streams) >= 200 or not (payload.startswith(MAGIC) and payload[6:8] == struct.pack("<H", HELLO)):
                continue
            streams[key] = {}
        if sum(len(p) for p in streams[key].values()) < 65536:
            streams[key][seq] = payload
    result = []
    for (sport, dport), segs in streams.items():
        data = b"".join(segs[k] for k in sorted(segs))
        result.append({"sport": sport, "dport": dport, "hex": data.hex()})
    json.dump(result, open(out, "w"))
    print(f"captured {len(result)} connection(s), {sum(len(r['hex']) // 2 for r in result)} bytes")


def attack(port, purpose, nspace, capture=None):
    cases = [
        ("garbage", b"GET / HTTP/1.0\r\n\r\n" + os.urandom(64)),
        ("4GiB length", frame(HELLO, b"", length=0xFFFFFFFF)),
        ("frame without authentication",
         frame(NODE_FRAME, bytes([2]) + wstr(nspace) + struct.pack("<IH", 1, 1) + struct.pack("<I", 1) + b"x")),
        ("forged response", hello(purpose, nspace, 1)),
    ]
    for name, data in cases:
        s = connect(port)
        t0 = time.monotonic()
        s.sendall(data)
        if name == "forged response":
            s.settimeout(2.0)
            try:
                s.recv(4096)  # the challenge (a node listener); answer it without the key
                s.sendall(frame(RESPONSE, os.urandom(32)))
            except OSError:
                pass  # srun's agent refuses a hello without a slurmstepd credential at once
        ok = dropped_within(s, 5.0)
        print(f"{name}: {'dropped' if ok else 'KEPT'} ({(time.monotonic() - t0) * 1000:.0f} ms)")
        s.close()
    if capture:
        for c in json.load(open(capture)):
            if c["dport"] != port:
                continue
            data = bytes.fromhex(c["hex"])
            s = connect(port)
            t0 = time.monotonic()
            s.sendall(data)
            ok = dropped_within(s, 5.0)
            print(f"replay of {len(data)} captured bytes: {'dropped' if ok else 'KEPT'} "
                  f"({(time.monotonic() - t0) * 1000:.0f} ms)")
            s.close()


def read_frame(s, timeout=2.0):
    s.settimeout(timeout)
    data = b""
    try:
        while len(data) < 16:
            chunk = s.recv(16 - len(data))
            if not chunk:
                return None
            data += chunk
        n = struct.unpack("<I", data[12:16])[0]
        while len(data) < 16 + n:
            chunk = s.recv(16 + n - len(data))
            if not chunk:
                return None
            data += chunk
    except OSError:
        return None
    return data


def forge(port, nspace, node, dump):
    import hashlib
    import hmac
    import re
    raw = open(dump, "rb").read() if dump and os.path.exists(dump) else b""
    creds = sorted(set(re.findall(rb"MUNGE:[A-Za-z0-9+/=]+:", raw)))
    print(f"user knows {len(creds)} signed records")
    guesses = [b"\0" * 32, hashlib.sha256(nspace.encode()).digest()]
    for c in creds:
        guesses += [hashlib.sha256(c).digest(), c[6:38].ljust(32, b"\0")]
    node = int(node)
    for i, key in enumerate(guesses[:12]):
        s = connect(port)
        t0 = time.monotonic()
        hp = bytes([HANDSHAKE_VERSION, PURPOSE["node"]]) + wstr(nspace) + struct.pack("<I", node) + os.urandom(32) + \
            struct.pack("<I", 0)
        s.sendall(frame(HELLO, hp))
        ch = read_frame(s)
        if ch is not None and len(ch) >= 16 + 1 + 32 + 32:
            ns = ch[17:49]
            mac = hmac.new(key, b"client" + hp + ns, hashlib.sha256).digest()
            try:
                s.sendall(frame(RESPONSE, mac))
                env = bytes([2]) + wstr(nspace) + struct.pack("<IH", node, 1) + struct.pack("<I", 1) + b"x"
                inner = frame(NODE_FRAME, env)
                trailer = struct.pack("<IIQ", node, 0, 1)
                s.sendall(frame(SEALED_NODE_FRAME, inner + trailer + hmac.new(key, inner + trailer, hashlib.sha256).digest()))
            except OSError:
                pass
        ok = dropped_within(s, 5.0)
        print(f"forged hello and response, key guess {i}: {'dropped' if ok else 'KEPT'} "
              f"({(time.monotonic() - t0) * 1000:.0f} ms)")
        s.close()
    cases = [
        ("MAC'd node frame without a handshake",
         frame(SEALED_NODE_FRAME, frame(NODE_FRAME, b"x") + struct.pack("<IIQ", node, 0, 1) + os.urandom(32))),
        ("hello naming an impossible node", hello("node", nspace, 0xFFFFFFFF)),
        ("hello carrying a signed record", hello("node", nspace, node, creds[0] if creds else b"MUNGE:x:")),
    ]
    for name, data in cases:
        s = connect(port)
        t0 = time.monotonic()
        s.sendall(data)
        if name == "hello carrying a signed record":
            ch = read_frame(s)
            if ch is not None:
                try:
                    s.sendall(frame(RESPONSE, os.urandom(32)))
                except OSError:
                    pass
        ok = dropped_within(s, 5.0)
        print(f"{name}: {'dropped' if ok else 'KEPT'} ({(time.monotonic() - t0) * 1000:.0f} ms)")
        s.close()


def flood(port, count, hold):
    soft, hardlim = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hardlim, hardlim))
    count = min(int(count), hardlim - 100)
    socks = []
    t_end = time.monotonic() + 30  # the connecting phase is bounded too
    for _ in range(count):
        if time.monotonic() > t_end:
            break
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        except OSError:
            s.close()
            continue
        socks.append(s)
    connected = dropped = 0
    alive = set(socks)
    seen = set()
    end = time.monotonic() + float(hold)
    while alive and time.monotonic() < end:
        for s in list(alive):
            err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            try:
                d = s.recv(1)
                if d == b"":
                    dropped += 1
                    alive.discard(s)
                    seen.add(s)
                    continue
            except BlockingIOError:
                if s not in seen and err == 0:
                    try:
                        s.getpeername()
                        seen.add(s)
                    except OSError:
                        pass
            except OSError:
                dropped += 1
                alive.discard(s)
                seen.add(s)
        time.sleep(0.2)
    connected = len(seen)
    for s in socks:
        s.close()
    print(f"opened {len(socks)} connected {connected} dropped {dropped}")


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "listeners":
        listeners(args[0])
    elif cmd == "probe":
        probe(int(args[0]), args[1], args[2] if len(args) > 2 else "")
    elif cmd == "sniff":
        sniff(args[0], args[1])
    elif cmd == "attack":
        attack(int(args[0]), args[1], args[2], args[3] if len(args) > 3 else None)
    elif cmd == "flood":
        flood(int(args[0]), args[1], args[2])
    elif cmd == "forge":
        forge(int(args[0]), args[1], args[2], args[3] if len(args) > 3 else None)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()

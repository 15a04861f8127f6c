#!/usr/bin/env python3
"""Another user's process against a step's native listener (tests/integration/t-attack-native.sh).

usage: attack_native.py PORT NSPACE RANK UID GID
Connects to 127.0.0.1:PORT and sends a well-formed OpenPMIx 4.2 handshake (OPENPMIX-WIRE.md §2)
for NSPACE/RANK whose native credential claims UID/GID (the job's user). Prints
"REFUSED-SILENTLY" when the server closes the connection without answering (refused by the
socket's owner, as the kernel names it), "ANSWERED <status>" when it answers, "OPEN" when the
connection stays open for 15 s, "CONNECT-FAILED <error>" when it cannot connect."""
import socket
import struct
import sys


def handshake(nspace, rank, uid, gid):
    body = b"native\0" + struct.pack("!I", 8) + struct.pack("=II", uid, gid)
    body += b"\0" + nspace.encode() + b"\0" + struct.pack("!I", rank)
    body += b"4.2.2\0" + b"v41\0" + b"\x01" + b"hash\0" + b"\0"
    return struct.pack("=iIII", -1, 0xFFFFFFFF, len(body), 0) + body


def main():
    port, nspace, rank, uid, gid = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=15)
    except OSError as e:
        print("CONNECT-FAILED", e)
        return
    try:
        s.sendall(handshake(nspace, rank, uid, gid))
        data = s.recv(64)
    except socket.timeout:
        print("OPEN")
        return
    except OSError:
        data = b""
    if not data:
        print("REFUSED-SILENTLY")
    else:
        print("ANSWERED", struct.unpack("!i", data[:4])[0] if len(data) >= 4 else data.hex())


if __name__ == "__main__":
    main()

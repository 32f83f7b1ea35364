#!/usr/bin/env python3
"""Deterministic big capture for the inspector benchmarks: replays a pcap COPIES times, each copy
on new connections (client ports remapped per copy, sequence and acknowledgement numbers shifted by
a per-copy amount so some wrap around 2^32) and later in time (each copy starts after the previous
one ends), so the result holds COPIES x the connections of the input, in order.

    replay.py INPUT.pcap OUTPUT.pcap --size 400M      (or --copies N)
    replay.py INPUT.pcap - --copies 3 | tcpdump -r - -nn | head

Ports listed with --server-port (default 9042 and 19042) keep their value; every other TCP port
is a client port. Checksums are left as they were (captures on the sending host carry unfinished
ones anyway; neither cqlwire nor tshark by default checks them). Input: pcap (either byte order,
micro or nanosecond) with Ethernet (VLAN tags included), Linux SLL/SLL2, NULL/LOOP or raw IP
packets; pcapng inputs can be converted first with `editcap -F pcap`.
"""
import argparse
import struct
import sys

MAGICS = {b"\xd4\xc3\xb2\xa1": ("<", False), b"\xa1\xb2\xc3\xd4": (">", False),
          b"\x4d\x3c\xb2\xa1": ("<", True), b"\xa1\xb2\x3c\x4d": (">", True)}
LINK_HEADER = {0: 4, 108: 4, 101: 0, 12: 0, 14: 0, 228: 0, 229: 0, 113: 16, 276: 20}
GOLDEN = 0x9E3779B9


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(text[:-1]) * units[text[-1].upper()]) if text[-1].upper() in units else int(text)


def tcp_offset(linktype, data):
    """Offset of the TCP header in a packet, or None when it is not TCP."""
    if linktype == 1:
        at, ethertype = 14, data[12:14]
        while ethertype in (b"\x81\x00", b"\x88\xa8") and len(data) >= at + 4:
            ethertype, at = data[at + 2:at + 4], at + 4
        if ethertype not in (b"\x08\x00", b"\x86\xdd"):
            return None
    elif linktype in LINK_HEADER:
        at = LINK_HEADER[linktype]
    else:
        raise SystemExit(f"link type {linktype} not supported")
    if len(data) < at + 20:
        return None
    version = data[at] >> 4
    if version == 4:
        return at + (data[at] & 15) * 4 if data[at + 9] == 6 else None
    if version == 6:
        return at + 40 if data[at + 6] == 6 and len(data) >= at + 60 else None
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input")
    parser.add_argument("output", help="'-' for standard output")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--copies", type=int)
    group.add_argument("--size", type=parse_size, help="stop after the copy that reaches this size")
    parser.add_argument("--server-port", type=int, action="append")
    args = parser.parse_args()
    servers = set(args.server_port or [9042, 19042])

    blob = open(args.input, "rb").read()
    if blob[:4] not in MAGICS:
        raise SystemExit("not a pcap file (convert pcapng with editcap -F pcap)")
    order, nano = MAGICS[blob[:4]]
    linktype = struct.unpack(order + "I", blob[20:24])[0]
    packets, at = [], 24
    while at + 16 <= len(blob):
        sec, frac, caplen, wirelen = struct.unpack(order + "IIII", blob[at:at + 16])
        data = blob[at + 16:at + 16 + caplen]
        packets.append((sec * 10**9 + (frac if nano else frac * 1000), wirelen, data, tcp_offset(linktype, data)))
        at += 16 + caplen
    if not packets:
        raise SystemExit("no packets")
    start, end = packets[0][0], packets[-1][0]
    period = end - start + 1_000_000

    out = sys.stdout.buffer if args.output == "-" else open(args.output, "wb")
    out.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 262144, linktype))
    written, copy = 24, 0
    record = struct.Struct("<IIII")
    while (args.copies is not None and copy < args.copies) or (args.size is not None and written < args.size):
        shift = (copy * GOLDEN) & 0xFFFFFFFF
        chunks = []
        for ts, wirelen, data, tcp in packets:
            if tcp is not None:
                sport, dport, seq, ack = struct.unpack_from(">HHII", data, tcp)
                if sport not in servers:
                    sport = 1024 + (sport + copy * 7) % 64000
                if dport not in servers:
                    dport = 1024 + (dport + copy * 7) % 64000
                data = bytearray(data)
                struct.pack_into(">HHII", data, tcp, sport, dport, (seq + shift) & 0xFFFFFFFF, (ack + shift) & 0xFFFFFFFF)
            t = ts - start + copy * period + start
            chunks.append(record.pack(t // 10**9, t % 10**9, len(data), wirelen))
            chunks.append(bytes(data))
        block = b"".join(chunks)
        out.write(block)
        written += len(block)
        copy += 1
    out.flush()
    print(f"replay: {copy} copies, {written} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()

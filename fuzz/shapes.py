"""Capture shapes no healthy conversation has, derived from the committed pcap fixtures for the
`capture` and `inspect` fuzz seeds (`fuzz/seed.sh` imports this file): snaplen-truncated records,
an RST with sequence number 0 (outside its stream), a pcapng packet block whose captured length
runs past its block, a capture rotated into two files, and each direction's TCP payload as raw
bytes. Only classic little-endian pcap of Ethernet or raw IPv4/IPv6 is read, as the fixtures are.
"""
import struct

ETHERNET, RAW = 1, 101
RST = 0x04


class Pcap:
    """A classic pcap file: its link type and records (timestamp seconds, microseconds, original
    length, captured bytes)."""

    def __init__(self, data):
        magic, _, _, _, _, _, self.linktype = struct.unpack("<IHHiIII", data[:24])
        if magic != 0xA1B2C3D4:
            raise ValueError("not a little-endian microsecond pcap")
        self.records, at = [], 24
        while at + 16 <= len(data):
            sec, usec, caplen, origlen = struct.unpack("<IIII", data[at:at + 16])
            self.records.append((sec, usec, origlen, data[at + 16:at + 16 + caplen]))
            at += 16 + caplen

    def write(self, records=None, snaplen=262144):
        """The pcap file of `records` (all by default)."""
        out = bytearray(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, snaplen, self.linktype))
        for sec, usec, origlen, data in self.records if records is None else records:
            out += struct.pack("<IIII", sec, usec, len(data), origlen) + data
        return bytes(out)

    def prefix(self, max_len):
        """The first records whose file stays within `max_len` bytes."""
        size, kept = 24, []
        for record in self.records:
            size += 16 + len(record[3])
            if size > max_len:
                break
            kept.append(record)
        return kept

    def tcp(self, data):
        """(IP header offset, TCP header offset, payload offset) of a TCP packet, or None."""
        ip = 14 if self.linktype == ETHERNET else 0
        if self.linktype == ETHERNET and data[12:14] != b"\x08\x00" and data[12:14] != b"\x86\xdd":
            return None
        if len(data) < ip + 40:
            return None
        if data[ip] >> 4 == 4:
            if data[ip + 9] != 6:
                return None
            tcp = ip + (data[ip] & 15) * 4
        elif data[ip] >> 4 == 6 and data[ip + 6] == 6:
            tcp = ip + 40
        else:
            return None
        return ip, tcp, tcp + (data[tcp + 12] >> 4) * 4


def snaplen_truncated(pcap, records, snaplen=96):
    """Every record cut to `snaplen` captured bytes, its original length kept (`tcpdump -s`)."""
    cut = [(s, u, o, d[:snaplen]) for s, u, o, d in records]
    return pcap.write(cut, snaplen)


def rst_outside(pcap, records, after=10):
    """A copy of the first client packet after record `after`, turned into an RST with sequence
    number 0 and no payload, inserted after it: a TCP stack ignores it, as the reassembler must."""
    out = list(records)
    for i in range(after, len(records)):
        sec, usec, _, data = records[i]
        where = pcap.tcp(data)
        if where is None or struct.unpack(">H", data[where[1] + 2:where[1] + 4])[0] not in (9042, 19042):
            continue
        ip, tcp, payload = where
        packet = bytearray(data[:payload])
        packet[tcp + 4:tcp + 8] = b"\0\0\0\0"
        packet[tcp + 13] = RST
        if packet[ip] >> 4 == 4:
            packet[ip + 2:ip + 4] = struct.pack(">H", payload - ip)
        else:
            packet[ip + 4:ip + 6] = struct.pack(">H", payload - tcp)
        out.insert(i + 1, (sec, usec, len(packet), bytes(packet)))
        break
    return pcap.write(out)


def pcapng_block(kind, body):
    """A pcapng block: type, length, body padded to 4 bytes, length."""
    body += b"\0" * (-len(body) % 4)
    length = 12 + len(body)
    return struct.pack("<II", kind, length) + body + struct.pack("<I", length)


def pcapng_overrun(pcap, records, damaged=7):
    """The records as pcapng (section, interface, enhanced packet blocks), block `damaged`'s
    captured length 8 bytes longer than the packet it holds."""
    out = bytearray(pcapng_block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1)))
    out += pcapng_block(1, struct.pack("<HHI", pcap.linktype, 0, 262144))
    for i, (sec, usec, origlen, data) in enumerate(records):
        units = sec * 1_000_000 + usec
        caplen = len(data) + (8 if i == damaged else 0)
        head = struct.pack("<IIIII", 0, units >> 32, units & 0xFFFFFFFF, caplen, origlen)
        out += pcapng_block(6, head + data)
    return bytes(out)


def rotated(pcap, records):
    """The records cut in two files in the middle (as `tcpdump -C` cuts), in the layout the targets
    read: the first file behind its 2-byte little-endian length, then the second."""
    half = len(records) // 2
    first, second = pcap.write(records[:half]), pcap.write(records[half:])
    if len(first) > 0xFFFF:
        raise ValueError("first file over 64 KiB")
    return struct.pack("<H", len(first)) + first + second


def directions(pcap, records):
    """The TCP payload of each direction of the first connection, in capture order (the
    fixtures are in order): (from its initiator, from its responder)."""
    streams, first = ([], []), None
    for _, _, _, data in records:
        where = pcap.tcp(data)
        if where is None:
            continue
        ports = data[where[1]:where[1] + 4]
        if first is None:
            first = ports
        if ports not in (first, first[2:] + first[:2]):
            continue
        streams[ports != first].append(data[where[2]:])
    return b"".join(streams[0]), b"".join(streams[1])


def lz4_repeat(head, byte, count, tail):
    """A CQL v4 LZ4 body (4-byte length, then the block) of `head`, `count` times `byte`, `tail`:
    the run is one match at offset 1, the block about count / 255 bytes."""

    def length(n):
        return b"\xff" * (n // 255) + bytes([n % 255])

    def sequence(literals, match=None):
        token = min(len(literals), 15) << 4
        extra = length(len(literals) - 15) if len(literals) >= 15 else b""
        if match is None:
            return bytes([token]) + extra + literals
        token |= min(match - 4, 15)
        more = length(match - 4 - 15) if match - 4 >= 15 else b""
        return bytes([token]) + extra + literals + b"\x01\x00" + more

    payload = head + byte * count + tail
    block = sequence(head + byte, count - 5) + sequence(byte * 4 + tail)
    return struct.pack(">I", len(payload)) + block


def cql_frame(flags, stream, opcode, body):
    """A v4 request frame."""
    return struct.pack(">BBhBI", 4, flags, stream, opcode, len(body)) + body


def unanswered_inflating(values, size=16 << 10, length=128 << 10):
    """A pcap of one connection (raw IPv4) whose client sends a STARTUP naming LZ4, then QUERYs
    whose LZ4 bodies inflate to `size` bytes, never answered: each a text of `size` bytes, or
    (`values`) a short text and one bound value of `size` bytes. `length` bytes in all. What
    the inspector keeps of them is bounded by its caps, not by 255 times the capture."""
    options = [(b"CQL_VERSION", b"3.0.0"), (b"COMPRESSION", b"lz4")]
    startup = struct.pack(">H", len(options)) + b"".join(
        struct.pack(">H", len(k)) + k + struct.pack(">H", len(v)) + v for k, v in options)
    stream, i = cql_frame(0, 0, 0x01, startup), 1
    while len(stream) < length - 200 - 40 * (len(stream) // 16000 + 2):
        if values:
            head = struct.pack(">I", 8) + b"SELECT ?" + b"\x00\x01\x01\x00\x01"
            head += struct.pack(">i", size - len(head) - 4)
            body = lz4_repeat(head, b"a", size - len(head), b"")
        else:
            count = size - 4 - 8 - 4
            head = struct.pack(">I", count + 9) + b"SELECT '"
            body = lz4_repeat(head, b"a", count, b"'\x00\x01\x00")
        stream += cql_frame(1, i, 0x07, body)
        i += 1

    def packet(flags, seq, payload):
        tcp = struct.pack(">HHIIBBHHH", 40000, 9042, seq, 0, 0x50, flags, 65535, 0, 0)
        ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 40 + len(payload), 0, 0, 64, 6, 0,
                         bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
        return ip + tcp + payload

    packets = [packet(0x02, 999, b"")]
    for at in range(0, len(stream), 16000):
        packets.append(packet(0x18, 1000 + at, stream[at:at + 16000]))
    capture = Pcap(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, RAW))
    return capture.write([(1, i, len(p), p) for i, p in enumerate(packets)])


if __name__ == "__main__":
    # Writes the inputs of fixtures/fuzz-regressions/inspect/ that this file makes (run from the
    # repository root): the inspect target's control byte 0x01 (a capture), then the capture.
    import pathlib
    folder = pathlib.Path("fixtures/fuzz-regressions/inspect")
    folder.mkdir(parents=True, exist_ok=True)
    for name, values in (("unanswered-inflating-texts", False), ("unanswered-inflating-values", True)):
        (folder / name).write_bytes(b"\x01" + unanswered_inflating(values))

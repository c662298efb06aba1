#!/usr/bin/env python3
"""Wraps the packets of a plain trace into one TracePacket with
compressed_packets (field 50: a deflated Trace, as Perfetto writes with
compress_from_cli), followed by the trace's packets left uncompressed
after the first N:

  compress_packets.py IN OUT [N]     N: packets to compress (default all)
"""
import sys
import zlib

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from trace_cut import records  # noqa: E402


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def field_len(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


b = open(sys.argv[1], "rb").read()
recs = list(records(b))
n = int(sys.argv[3]) if len(sys.argv) > 3 else len(recs)
inner = b"".join(b[s:e] for s, e, _ in recs[:n])
rest = b"".join(b[s:e] for s, e, _ in recs[n:])
pkt = varint(10 << 3) + varint(1)  # trusted_packet_sequence_id 1
pkt += field_len(50, zlib.compress(inner, 9))
open(sys.argv[2], "wb").write(field_len(1, pkt) + rest)

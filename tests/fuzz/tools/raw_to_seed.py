#!/usr/bin/env python3
"""Turns ring records captured by tests/tools/capture_raw (the "BTRRAW01"
file format) into a seed of fuzz_bundle (see tests/fuzz/fuzz_bundle.c):

  raw_to_seed.py RAW OUT [--cpu N] [--first I] [--count N] [--types 1,2,...]
                 [--max-per-type N]

keeps the records of one CPU (default: all), from the I-th on, at most N
(default 64), optionally only some record types and at most N of each."""
import argparse
import struct

ap = argparse.ArgumentParser()
ap.add_argument("raw")
ap.add_argument("out")
ap.add_argument("--cpu", type=int)
ap.add_argument("--first", type=int, default=0)
ap.add_argument("--count", type=int, default=64)
ap.add_argument("--types")
ap.add_argument("--max-per-type", type=int)
a = ap.parse_args()
types = {int(t) for t in a.types.split(",")} if a.types else None

b = open(a.raw, "rb").read()
if b[:8] != b"BTRRAW01":
    raise SystemExit("%s: not a capture_raw file" % a.raw)
i, k, out, per = 8, 0, bytearray(b"\x00"), {}
while i < len(b) and a.count > 0:
    cpu, n = struct.unpack_from("<II", b, i)
    rec = b[i + 8:i + 8 + n]
    i += 8 + (n + 7) // 8 * 8
    t = struct.unpack_from("<H", rec, 16)[0] if n >= 18 else -1
    if a.cpu is not None and cpu != a.cpu:
        continue
    if types is not None and t not in types:
        continue
    if a.max_per_type is not None and per.get(t, 0) >= a.max_per_type:
        continue
    k += 1
    if k <= a.first:
        continue
    per[t] = per.get(t, 0) + 1
    out += bytes([n]) + rec if n <= 0xEF else b"\xf2" + struct.pack("<H", n) + rec
    a.count -= 1
open(a.out, "wb").write(out)

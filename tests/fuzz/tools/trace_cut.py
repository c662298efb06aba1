#!/usr/bin/env python3
"""Cuts small seed traces out of a recorded Perfetto trace, at packet
boundaries (each kept packet is copied byte for byte, framing included).

  trace_cut.py list TRACE               one line per packet: index, offset,
                                        size, top-level TracePacket fields
  trace_cut.py cut TRACE OUT IDX...     writes packets IDX... (in that order)
  trace_cut.py head TRACE OUT BYTES     the first packets that fit in BYTES
"""
import sys


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if not c & 0x80:
            return v, i


def records(b):
    """(offset, end, payload start) of each Trace field-1 record."""
    i = 0
    while i < len(b):
        start = i
        tag, i = varint(b, i)
        if tag & 7 != 2:
            raise SystemExit("offset %d: not a length-delimited field" % start)
        n, i = varint(b, i)
        yield start, i + n, i
        i += n


def fields(b, i, end):
    out = []
    while i < end:
        tag, i = varint(b, i)
        wt = tag & 7
        if wt == 0:
            _, i = varint(b, i)
        elif wt == 1:
            i += 8
        elif wt == 5:
            i += 4
        elif wt == 2:
            n, i = varint(b, i)
            i += n
        else:
            break
        out.append(tag >> 3)
    return out


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    b = open(path, "rb").read()
    recs = list(records(b))
    if cmd == "list":
        for k, (s, e, p) in enumerate(recs):
            print(k, s, e - s, ",".join(map(str, fields(b, p, e))))
    elif cmd == "cut":
        with open(sys.argv[3], "wb") as f:
            for k in sys.argv[4:]:
                s, e, _ = recs[int(k)]
                f.write(b[s:e])
    elif cmd == "head":
        limit, n = int(sys.argv[4]), 0
        with open(sys.argv[3], "wb") as f:
            for s, e, _ in recs:
                if n + e - s > limit:
                    break
                f.write(b[s:e])
                n += e - s
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()

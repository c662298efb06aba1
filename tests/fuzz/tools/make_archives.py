#!/usr/bin/env python3
"""Seeds of fuzz_sync_cmd: small tar, gzip tar and zip archives holding two
trace cuts, a perf script sample and a perfetto_manifest.json relating
them (deterministic bytes: fixed names, times and owners).

  make_archives.py CORPUS_DIR OUT_DIR
"""
import gzip
import io
import os
import sys
import tarfile
import zipfile

corpus, out = sys.argv[1], sys.argv[2]
read = lambda p: open(os.path.join(corpus, p), "rb").read()
manifest = b"""{"perfetto_manifest": {"version": 1,
 "trace_time": {"clock": "BOOTTIME", "file": "a.pb"},
 "files": [{"path": "a.pb", "machine": {"name": "host"}},
           {"path": "b.pb", "machine": {"name": "vm"},
            "clocks": {"clock": "BOOTTIME", "offset_ns": -1000,
                       "sync_to": {"file": "a.pb"}}},
           {"path": "perf.txt", "clocks": {"sync_to": {"file": "a.pb"}}}]}}
"""
members = [
    ("a.pb", read("fuzz_trace/header.pb")),
    ("b.pb", read("fuzz_trace/tail.pb")),
    ("perf.txt", read("fuzz_perf_text/flat_fields.txt")),
    ("perfetto_manifest.json", manifest),
    (".hidden.pb", b"\x0a\x02\x50\x01"),
]


def tar_bytes():
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as t:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


tb = tar_bytes()
open(os.path.join(out, "traces.tar"), "wb").write(tb)
open(os.path.join(out, "traces.tgz"), "wb").write(gzip.compress(tb, 9, mtime=0))
with zipfile.ZipFile(os.path.join(out, "traces.zip"), "w",
                     zipfile.ZIP_DEFLATED) as z:
    for name, data in members:
        z.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), data)

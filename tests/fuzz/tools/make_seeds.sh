#!/bin/sh
# Regenerates the hand-made seeds of tests/fuzz/corpus/ from the text
# protos in seeds/ and the recorded seeds (run from anywhere; needs protoc
# and python3). The recorded ones (recorded.pb & co, cut from a real
# recording with trace_cut.py, and the raw records made with
# raw_to_seed.py from tests/tools/capture_raw output) are kept as they are:
# making them again needs root and gives other bytes. See ../README.md.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
corpus=$root/tests/fuzz/corpus
enc() {
	protoc --encode=perfetto.protos.Trace -I"$root/protos" \
		"$root/protos/perfetto/trace.proto" <"$here/seeds/$1.textproto"
}
for t in fuzz_trace fuzz_sync; do
	enc clocks >"$corpus/$t/clocks.pb"
	python3 "$here/compress_packets.py" "$corpus/fuzz_trace/header.pb" \
		"$corpus/$t/compressed.pb" 3
done
enc stats >"$corpus/fuzz_stats/stats.pb"
enc stats >"$corpus/fuzz_trace/stats.pb"
gzip -9 -n -c "$corpus/fuzz_stats/stats.pb" >"$corpus/fuzz_stats/stats.pb.gz"
c=$corpus/fuzz_sync_cmd
mkdir -p "$c"
python3 "$here/make_archives.py" "$corpus" "$c"
cp "$corpus/fuzz_trace/header.pb" "$corpus/fuzz_trace/clocks.pb" \
	"$corpus/fuzz_trace/compressed.pb" "$corpus/fuzz_trace/bundles.pb.gz" \
	"$corpus/fuzz_perf_text/callchain_ns.txt" "$c/"

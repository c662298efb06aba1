#!/bin/sh
# By hand, not in CI: opens a `report --folded` file in speedscope (npm's
# package, installed into a temporary directory at run time; nothing of it
# is kept) in headless chromium and takes a screenshot, to see that the
# folded lines load as an off-CPU profile with their weights.
# Usage: scripts/speedscope-check.sh FOLDED [PNG] [VIEW]
#   PNG   the screenshot (default /tmp/speedscope-offcpu.png)
#   VIEW  speedscope's view: time-ordered, left-heavy (default), sandwich
# Needs npm, python3 and chromium (Debian: apt-get install chromium).
set -eu
folded=${1:?usage: $0 FOLDED [PNG] [VIEW]}
png=${2:-/tmp/speedscope-offcpu.png}
view=${3:-left-heavy}
port=${PORT:-8765}
dir=$(mktemp -d /tmp/speedscope-check.XXXXXX)
profile=$(mktemp -d /tmp/speedscope-profile.XXXXXX)
server=
cleanup() {
	[ -z "$server" ] || kill "$server" 2>/dev/null || true
	rm -rf "$dir" "$profile"
}
trap cleanup EXIT
(cd "$dir" && npm install --silent --no-audit --no-fund speedscope >/dev/null)
release="$dir/node_modules/speedscope/dist/release"
cp "$folded" "$release/offcpu.folded"
python3 -m http.server --bind 127.0.0.1 --directory "$release" "$port" \
	>/dev/null 2>&1 &
server=$!
sleep 1
url="http://127.0.0.1:$port/offcpu.folded"
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync \
	--user-data-dir="$profile" --screenshot="$png" --window-size=1600,1000 \
	--virtual-time-budget=10000 \
	"http://127.0.0.1:$port/index.html#profileURL=$url&view=$view" 2>/dev/null
echo "$png"

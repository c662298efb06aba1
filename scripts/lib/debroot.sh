# shellcheck shell=bash
# Minimal Debian 12 roots for the checks that run in one
# (scripts/fresh-check.sh, scripts/unit-check.sh): the minbase tarball,
# built once with mmdebstrap and cached in $TMPDIR (default /tmp), named
# after what it holds. Sourced by bash; needs root.

DEBROOT_MIRROR=${FRESH_MIRROR:-http://deb.debian.org/debian}
DEBROOT_SECURITY=${FRESH_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
DEBROOT_SUITE=bookworm

# debroot_tarball INCLUDE: prints the path of the cached minbase tarball
# with the comma-separated packages INCLUDE, building it when missing.
debroot_tarball() {
	local include=$1 cache key tarball
	if ! command -v mmdebstrap >/dev/null; then
		echo "debroot: installing mmdebstrap" >&2
		DEBIAN_FRONTEND=noninteractive apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends mmdebstrap >/dev/null || return 1
	fi
	cache=${TMPDIR:-/tmp}/btr-fresh-check
	mkdir -p "$cache"
	key=$(printf '%s\n' "$DEBROOT_SUITE" "$include" "$DEBROOT_MIRROR" \
		"$DEBROOT_SECURITY" | sha256sum | cut -c1-12)
	tarball=$cache/$DEBROOT_SUITE-minbase-$key.tar
	if [ ! -s "$tarball" ]; then
		echo "debroot: building a minimal $DEBROOT_SUITE root (mmdebstrap --variant=minbase)" >&2
		mmdebstrap --quiet --variant=minbase --mode=root --format=tar \
			--include="$include" "$DEBROOT_SUITE" "$tarball.part" \
			"deb $DEBROOT_MIRROR $DEBROOT_SUITE main" \
			"deb $DEBROOT_MIRROR $DEBROOT_SUITE-updates main" \
			"deb $DEBROOT_SECURITY $DEBROOT_SUITE-security main" ||
			{ rm -f "$tarball.part"; echo "debroot: mmdebstrap failed" >&2; return 1; }
		mv "$tarball.part" "$tarball"
	fi
	echo "$tarball"
}

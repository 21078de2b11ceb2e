#!/bin/sh
# fetch-source.sh DIR - Debian trixie's python3.13 source package into DIR
# (its .dsc, .orig tarball and .debian tarball), checked by apt.
#
# The package comes from the Debian archive this machine's apt already uses:
# the deb-src line is made from the URI its sources give for its own suite
# (scripts/host-mirror.sh), with trixie as the suite, in a private sources
# list and private package lists under DIR, so the machine's apt
# configuration is neither read for anything else nor changed.  apt checks
# trixie's Release file against debian-archive-keyring (Signed-By) and every
# file of the package against the signed Sources index; dpkg-source checks
# them against the .dsc again when it extracts.  Needs root (apt-get).
#
# SPDX-License-Identifier: MIT
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DIR=${1:?usage: fetch-source.sh DIR}
PKG=python3.13
SUITE=trixie
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

say() { printf 'cpython: %s\n' "$*"; }
die() { say "$*" >&2; exit 1; }

if ls "$DIR"/${PKG}_*.dsc >/dev/null 2>&1; then exit 0; fi
[ "$(id -u)" = 0 ] || die "fetching the source package needs root (apt-get); or put ${PKG}_*.dsc and its files in $DIR"
[ -f "$KEYRING" ] || die "$KEYRING is missing (apt-get install debian-archive-keyring)"
host=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$host" ] || die "no VERSION_CODENAME in /etc/os-release"
uri=$(sh "$ROOT/scripts/host-mirror.sh" "$host") || die "no '$host' source in this machine's apt configuration"

mkdir -p "$DIR/apt/lists/partial" "$DIR/apt/cache/archives/partial"
printf 'deb-src [signed-by=%s] %s %s main\n' "$KEYRING" "$uri" "$SUITE" > "$DIR/apt/sources.list"
set -- -o Dir::Etc::SourceList="$DIR/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null \
	-o Dir::State::Lists="$DIR/apt/lists" -o Dir::Cache="$DIR/apt/cache" -o APT::Sandbox::User=root
say "apt-get update with deb-src $SUITE main from $uri"
apt-get "$@" update >"$DIR/apt/update.log" 2>&1 || { cat "$DIR/apt/update.log" >&2; die "apt-get update failed"; }
say "apt-get source --download-only $PKG/$SUITE"
(cd "$DIR" && apt-get "$@" source --download-only "$PKG/$SUITE") >"$DIR/apt/source.log" 2>&1 ||
	{ cat "$DIR/apt/source.log" >&2; die "apt-get source failed"; }
ls "$DIR"/${PKG}_*.dsc >/dev/null 2>&1 || die "no .dsc downloaded (see $DIR/apt/source.log)"

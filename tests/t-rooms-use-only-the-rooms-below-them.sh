# SPDX-License-Identifier: MIT
# The tree's rooms in their order (docs/ARCHITECTURE.md): a source file
# includes only headers of its own room or of rooms below it.
#   jitstack: base < target < python < jit < unwind < out < record < main.c, dump.c
#   tinyjit:  vm < runtime < host (gen/ and stencils/ are build time)
#   src:      the channel files (ch_*.c) include neither arena's nor core's
#             parts (channels.h), and use no arena_ function: they reach
#             the live blobs through ctx->live.
# Every room of each list must exist, so a moved file cannot make the
# check pass by leaving nothing to check.
. "$(dirname "$0")/lib.sh"

# rank ROOM-LIST DIR: the position of DIR in ROOM-LIST, "top" when absent
rank() {
	i=0
	for r in $1; do
		[ "$r" = "$2" ] && { echo $i; return; }
		i=$((i + 1))
	done
	echo top
}

# room_of TREE ROOMS FILE INCLUDE: the room the header INCLUDE of FILE is
# in, found as the compiler finds it: beside FILE ("../vm/vm.h", "vm.h"),
# else from TREE's top ("jit/desc.h"), else from the tree's top
# ("formats/gdbjit.h", outside every room: prints nothing).  A header that
# is not in the tree (generated: profile.pb-c.h, stencils_fp.h) counts by
# its first directory when that names a room.
room_of() {
	for at in "$(dirname "$3")" "$ROOT/$1" "$ROOT"; do
		[ -e "$at/$4" ] || continue
		p=$(realpath -m "$at/$4")
		case $p in "$ROOT/$1"/*/*) ;; *) return ;; esac
		p=${p#"$ROOT/$1"/}
		echo "${p%%/*}"
		return
	done
	case $4 in */*) echo "${4%%/*}" ;; esac
}

# check TREE ROOMS: every #include "..." in TREE/ROOM*/ is of a room at or
# below the file's own, whatever its spelling; files at TREE's top may
# include any room.
bad=0 seen=0
check() {
	tree=$1 rooms=$2
	for room in $rooms; do
		[ -d "$ROOT/$tree/$room" ] || fail "$tree/$room: no such room"
		mine=$(rank "$rooms" "$room")
		for f in "$ROOT/$tree/$room"/*.[ch]; do
			[ -e "$f" ] || continue
			seen=$((seen + 1))
			for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" | sort -u); do
				inroom=$(room_of "$tree" "$rooms" "$f" "$inc")
				[ -n "$inroom" ] || continue
				theirs=$(rank "$rooms" "$inroom")
				[ "$theirs" = top ] && continue # gen/, stencils/: build time
				if [ "$theirs" -gt "$mine" ]; then
					echo "  ${f#"$ROOT"/} ($room) includes $inc, of $inroom/, a room above it"
					bad=$((bad + 1))
				fi
			done
		done
	done
}
check jitstack "base target python jit unwind out record"
# tinyjit's includes name files relative to the includer ("../vm/vm.h"),
# or, inside vm/, by bare name: a bare name in vm/ must be a vm/ file
check tinyjit "vm runtime host"
for f in "$ROOT"/tinyjit/vm/*.[ch]; do
	for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
		case $inc in
		formats/* | vm/*) ;;
		*/*) echo "  ${f#"$ROOT"/} includes $inc, not a vm/ file"; bad=$((bad + 1)) ;;
		*) [ -e "$ROOT/tinyjit/vm/$inc" ] || { echo "  ${f#"$ROOT"/} includes $inc, not a vm/ file"; bad=$((bad + 1)); } ;;
		esac
	done
done

# src/: the channels below the arena set and the core
n=0
for f in "$ROOT"/src/ch_*.c; do
	n=$((n + 1))
	if grep -q '#include "channels.h"' "$f" || grep -qE '\barena_[a-z_]+\(' "$f"; then
		echo "  ${f#"$ROOT"/} uses the channel table or arena.c"
		bad=$((bad + 1))
	fi
done
[ $n -ge 5 ] || fail "only $n channel files in src/"
[ $seen -ge 40 ] || fail "only $seen files in the rooms: the rooms moved?"
[ $bad -eq 0 ] || fail "$bad includes or calls point up"
pass "$seen files in jitstack's and tinyjit's rooms and $n channels: every include and call points down"

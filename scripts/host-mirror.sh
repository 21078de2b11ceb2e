#!/bin/sh
# SPDX-License-Identifier: MIT
# host-mirror.sh SUITE - the first URI this machine's apt sources give for a
# Debian suite, in either format (deb822 .sources or one-line .list), so
# that debootstrap fetches from where apt already does; no mirror is named
# in the tree.  Prints nothing (and exits 1) when there is none.
SUITE=${1:?usage: host-mirror.sh SUITE}
{
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v s="$SUITE" '
			/^[ \t]*$/ { if (deb && suite && uri) { print uri; exit } deb = suite = 0; uri = "" }
			tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
			tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == s) suite = 1 }
			tolower($1) == "uris:" { uri = $2 }
			END { if (deb && suite && uri) print uri }' "$f"
	done
	cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
		awk -v s="$SUITE" '$1 == "deb" { i = 2; if ($2 ~ /^\[/) while ($i !~ /\]$/) i++; if ($2 ~ /^\[/) i++;
			if ($(i + 1) == s) print $i }'
} | awk 'NR == 1 { print; found = 1 } END { exit !found }'

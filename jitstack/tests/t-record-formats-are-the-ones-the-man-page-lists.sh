# SPDX-License-Identifier: MIT
# record's formats are one table (out/writers.h); what --format accepts
# comes from it, and so does the message naming them.  jitstack(1) names
# them twice (the synopsis, and the paragraph of --format), --help once:
# each of those lists is the table's, in its order.
. "$(dirname "$0")/lib.sh"
MAN=${JS_MAN:-$ROOT/docs/man/jitstack.1}

# the table, as jitstack names it when --format gets a word it does not know
"$JS" record -p 1 --format no-such-format > /dev/null 2> err
rc=$?
[ $rc -eq 2 ] || { cat err; fail "--format no-such-format: exit $rc, expected 2 (usage)"; }
table=$(sed -n "s/.*--format: expected \(.*\), got 'no-such-format'.*/\1/p" err | sed 's/, / /g; s/ or / /')
[ -n "$table" ] || { cat err; fail "no list of formats in the message"; }
note "the table: $table"
# each is accepted: the run stops at the next option, --mode, instead
for f in $table; do
	"$JS" record -p 1 --format "$f" --mode no-such-mode > /dev/null 2> err
	grep -q -- "--mode: expected" err || { cat err; fail "--format $f is named by the table but refused"; }
done

# the man page's synopsis: .BR a | b | c ]
synopsis=$(sed -n '/^\.RB \[ \\-\\-format$/{n;s/^\.BR //;s/ ]$//;s/ | / /g;p;q}' "$MAN")
# the paragraph of --format: its .B lines, up to the next .TP
paragraph=$(sed -n '/^\.BI \\-\\-format " FMT"$/,/^\.TP$/{s/^\.B \([a-z0-9]*\)$/\1/p}' "$MAN" | tr '\n' ' ')
# --help's synopsis: [--format a|b|c]
help=$("$JS" --help | sed -n 's/.*\[--format \([a-z0-9|]*\)\].*/\1/p' | tr '|' ' ')

same() { [ "$(echo $1)" = "$(echo $2)" ]; }
bad=0
same "$table" "$synopsis" || { echo "man page synopsis: '$synopsis', the table: '$table'"; bad=1; }
same "$table" "$paragraph" || { echo "man page, --format: '$paragraph', the table: '$table'"; bad=1; }
same "$table" "$help" || { echo "--help: '$help', the table: '$table'"; bad=1; }
[ $bad = 0 ] || fail "the formats the man page or --help lists are not the table's"
pass "record's formats ($(echo $table)) are the ones jitstack(1)'s synopsis and --format, and --help, list, in order"

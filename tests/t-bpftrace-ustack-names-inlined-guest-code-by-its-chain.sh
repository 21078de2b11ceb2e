# SPDX-License-Identifier: MIT
# bpftrace's ustack (the kernel's frame-pointer walk, JIT code named from
# the perf map, as eBPF profilers do) names the samples of `guest-child
# spin` in guest:leaf's code by the chain of guest functions, innermost
# first -- the guest frames of guest.expect joined by " <- " -- with
# run_guest and main after it.
. "$(dirname "$0")/lib.sh"
need_cmd bpftrace
trap 'rm -f ${CLEANUP_MAPS:-}; cleanup' EXIT INT TERM

start_ready child.out '^ready' guest-child env JITUNWIND=perfmap "$TB/guest-child" spin 8
CLEANUP_MAPS="/tmp/perf-$CHILD_PID.map"
chain=$(awk 'NF == 2 { printf "%s%s", sep, $1; sep = " <- " }' guest.expect)
bpftrace -e "profile:hz:199 /pid == $CHILD_PID/ { @[ustack(perf)] = count(); } interval:s:1 { exit(); }" \
	> bpf.out 2>&1
grep -q '^@\[' bpf.out || { cat bpf.out; skip "bpftrace took no stack here (permissions? eBPF?)"; }
kill_tree "$CHILD_PID"
cat bpf.out
# One line per stack: its frames' names (SYM of "ADDR SYM+OFF (MODULE)"), then its count.
awk '/^@\[/ { s = ""; next }
     /^\]: / { print $2 "\t" substr(s, 2); next }
     /^\t/ { sub(/^\t[0-9a-f]+ /, ""); sub(/\+[0-9]+ \(.*$/, ""); s = s "|" $0 }' bpf.out > stacks.txt
total=$(awk -F'\t' '{ n += $1 } END { print n + 0 }' stacks.txt)
ok=$(awk -F'\t' -v w="$chain|run_guest|main" 'index($2, w) == 1 { n += $1 } END { print n + 0 }' stacks.txt)
echo "stacks: $ok of $total samples begin '$chain|run_guest|main'"
[ "$total" -ge 50 ] || fail "only $total samples"
[ $((ok * 10)) -ge $((total * 8)) ] || fail "fewer than 80% of the stacks are '$chain ...'"
pass "bpftrace ustack names samples in inlined guest code '$chain'"

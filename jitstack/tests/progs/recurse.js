// recurse.js DEPTH - recurseJs calls itself DEPTH times, then spins in
// spin() forever (for jitstack's node test: every JS frame on the stack is
// JIT code that node names only in its perf map).
function spin(n) {
	let x = 0;
	for (let i = 0; i < n; i++) x = (x * 31 + i) | 0;
	return x;
}
function recurseJs(d) {
	if (d === 0) {
		let s = 0;
		for (;;) s += spin(100000);
	}
	return recurseJs(d - 1) + 1;
}
console.log("ready " + process.pid);
recurseJs(Number(process.argv[2] || 8));
// SPDX-License-Identifier: MIT

// recurse-dump.js DEPTH - recurse.js for node --perf-prof: recurseJs calls
// itself DEPTH times, then spins in spin() forever.  node writes its
// jitdump through a 2 MiB stdio buffer, so the records of the code it
// compiled last reach the file only when more records follow: every 2 s
// (the first time 0.5 s into the spin) the innermost frame compiles and
// runs 1300 throwaway functions, about 2.6 MB of records, enough to push
// out whatever the buffer held.  (Until then, code compiled at an address
// that older code had is still named after the older code.)
function spin(n) {
	let x = 0;
	for (let i = 0; i < n; i++) x = (x * 31 + i) | 0;
	return x;
}
function churn(round) {
	let s = 0;
	for (let i = 0; i < 1300; i++) s += new Function("a", "return a + " + (round * 1300 + i))(i);
	return s;
}
function recurseJs(d) {
	if (d === 0) {
		let s = 0, round = 0, next = Date.now() + 500;
		for (;;) {
			s += spin(100000);
			if (Date.now() >= next) {
				s += churn(round++);
				next = Date.now() + 2000;
			}
		}
	}
	return recurseJs(d - 1) + 1;
}
console.log("ready " + process.pid);
recurseJs(Number(process.argv[2] || 8));
// SPDX-License-Identifier: MIT

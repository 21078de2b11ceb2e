// recurse-dump.js DEPTH - recurse.js for node --perf-prof: recurseJs calls
// itself DEPTH times, then spins in spin() forever.  node writes its
// jitdump through a 2 MiB stdio buffer, so the records of the code it
// compiled last reach the file only when more records follow: while the
// spin settles (0.5, 1.5 and 3 s into it) the innermost frame compiles and
// runs throwaway functions, enough records to push the buffer out.
function spin(n) {
	let x = 0;
	for (let i = 0; i < n; i++) x = (x * 31 + i) | 0;
	return x;
}
function churn(round) {
	let s = 0;
	for (let i = 0; i < 3000; i++) s += new Function("a", "return a + " + (round * 3000 + i))(i);
	return s;
}
function recurseJs(d) {
	if (d === 0) {
		let s = 0, round = 0;
		const t0 = Date.now(), at = [500, 1500, 3000];
		for (;;) {
			s += spin(100000);
			if (round < at.length && Date.now() - t0 >= at[round]) s += churn(round++);
		}
	}
	return recurseJs(d - 1) + 1;
}
console.log("ready " + process.pid);
recurseJs(Number(process.argv[2] || 8));

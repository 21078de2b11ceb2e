// Rec.java DEPTH - main calls recurseJava(DEPTH) over and over; recurseJava
// calls itself DEPTH times, and at the bottom leafJava does about a
// millisecond of arithmetic.  For jitstack's OpenJDK test: once HotSpot has
// compiled the three methods, nearly every instant of the main thread is in
// leafJava under DEPTH compiled recurseJava frames, code that HotSpot names
// only in the perf map `jcmd PID Compiler.perfmap` writes.
public class Rec {
	static volatile int sink;

	static int leafJava(int n) {
		int s = n;
		for (int i = 0; i < 1000000; i++)
			s = s * 31 + (i ^ n);
		sink = s;
		return s;
	}

	static int recurseJava(int d, boolean down) {
		if (d == 0)
			return leafJava(sink);
		return recurseJava(d - 1, down) + 1;
	}

	public static void main(String[] args) {
		int depth = args.length > 0 ? Integer.parseInt(args[0]) : 8;
		System.out.println("ready " + ProcessHandle.current().pid());
		System.out.flush();
		for (;;)
			sink += recurseJava(depth, true);
	}
}
// SPDX-License-Identifier: MIT

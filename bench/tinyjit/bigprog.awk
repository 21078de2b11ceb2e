# SPDX-License-Identifier: MIT
# bigprog.awk - write a large .tj program for the compile-speed benchmark:
#   awk -v funcs=F -v body=B -f bigprog.awk
# F functions of about B instructions each (arithmetic on locals, a loop
# branch, a call), and a main that returns 0 without running them.
BEGIN {
	print "func main(n)\n    push 0\n    ret\nend"
	for (f = 0; f < funcs; f++) {
		printf "func f%d(a, b)\n    var x, y\ntop:\n", f
		for (i = 0; i < body / 8; i++) {
			printf "    load a\n    push %d\n    add\n    load b\n    xor\n    store x\n", i
			printf "    load x\n    store y\n"
		}
		printf "    load y\n    jz top\n    load x\n    load y\n    call f%d 2\n    ret\nend\n", f
	}
}

#!/bin/sh
# SPDX-License-Identifier: MIT
# exported-symbols.sh SO ARCHIVE - the symbols the two libraries export, in
# the form of tests/abi/exports: "so NAME@VERSION" for the shared
# library's dynamic symbols (NAME alone: unversioned), "a NAME" for the
# archive's global definitions.  The marker AddressSanitizer adds beside an
# exported variable (SAN=1 builds) is left out.
set -eu
readelf --dyn-syms -W "$1" |
	awk '$1 ~ /^[0-9]+:$/ && $7 != "UND" && $7 != "ABS" && $5 != "LOCAL" { print "so " $8 }' |
	grep -v '__odr_asan' | sort
nm --defined-only "$2" | awk 'NF == 3 && $2 ~ /^[TDBRVW]$/ { print "a " $3 }' | grep -v '__odr_asan' | sort

/* SPDX-License-Identifier: MIT */
/* host.h - the embedding program's pieces shared between its C and C++. */
#ifndef TJ_HOST_H
#define TJ_HOST_H

#include "../vm/vm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The host functions (hostfns.c): the table tinyjit's programs are loaded
 * with (tj_load). */
extern const tj_host tj_hosts[];
extern const uint32_t tj_n_hosts;

/* Throw the probe's C++ exception (cxx.cc). */
void tj_cxx_throw(long long mode);

/* Run body(arg) inside a C++ try block that catches the probe's exception;
 * returns body's result, or TJ_CAUGHT when the exception arrived. */
int tj_cxx_guard(int (*body)(void *), void *arg);

#define TJ_CAUGHT 100

#ifdef __cplusplus
}
#endif
#endif

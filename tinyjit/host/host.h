/* host.h - the embedding program's pieces shared between its C and C++. */
#ifndef TJ_HOST_H
#define TJ_HOST_H

#ifdef __cplusplus
extern "C" {
#endif

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

/* SPDX-License-Identifier: MIT */
/* arch.c - picks the host's architecture table. */
#include "arch.h"

const ju_arch *arch_host(void)
{
#if defined(__x86_64__)
	return &ju_arch_x86_64;
#elif defined(__aarch64__)
	return &ju_arch_aarch64;
#else
	return NULL;
#endif
}

/* SPDX-License-Identifier: MIT */
/* channels.c - the channel table and the cross-context lock (channels.h). */
#include "channels.h"

/* The file channels see a publish in this order, and one that fails has
 * the ones before it take their records back (unlog_last): the jitdump,
 * which cannot, comes last. */
const ju_channel_ops *const ju_channel_table[JU_N_CHANNELS] = {
	&ju_ch_unwinder, &ju_ch_libunwind, &ju_ch_gdb, &ju_ch_perfmap, &ju_ch_jitdump,
};

static pthread_mutex_t cross_lock = PTHREAD_MUTEX_INITIALIZER;

void ju__cross_lock(void)
{
	pthread_mutex_lock(&cross_lock);
}

void ju__cross_unlock(void)
{
	pthread_mutex_unlock(&cross_lock);
}

/* SPDX-License-Identifier: MIT */
/* channels.h - what core.c and arena.c both drive, kept below them both so
 * that neither calls up into the other: the table of channels, in the order
 * they see every change, and the lock over every context's arena table.
 * The channels themselves see neither (internal.h has their interface).
 */
#ifndef JU_CHANNELS_H
#define JU_CHANNELS_H

#include "internal.h"

/* Channel table order; index with the bit's position. */
#define JU_N_CHANNELS 5
_Static_assert(JU_CH_ALL == (1u << JU_N_CHANNELS) - 1, "one JU_CH_* bit per channel");
extern const ju_channel_ops *const ju_channel_table[JU_N_CHANNELS];

/* Held around every change to any context's arena table, so that a publish
 * can check the other contexts' blobs (core.c, check_other_contexts).  Taken
 * inside a context's lock; takes no other lock. */
void ju__cross_lock(void);
void ju__cross_unlock(void);

#endif

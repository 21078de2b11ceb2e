/* ch_gdb.c - PLACEHOLDER until the channel lands. */
#include "internal.h"

static int ph_open(struct ju_ctx *ctx)
{
	(void)ctx;
	return JU_FAIL(JU_ENOCONSUMER, "gdb channel: not built yet");
}

const ju_channel_ops ju_ch_gdb = {
	.bit = JU_CH_GDB,
	.name = "gdb",
	.open = ph_open,
};

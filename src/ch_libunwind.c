/* ch_libunwind.c - PLACEHOLDER until the channel lands. */
#include "internal.h"

static int ph_open(struct ju_ctx *ctx)
{
	(void)ctx;
	return JU_FAIL(JU_ENOCONSUMER, "libunwind channel: not built yet");
}

const ju_channel_ops ju_ch_libunwind = {
	.bit = JU_CH_LIBUNWIND,
	.name = "libunwind",
	.open = ph_open,
};

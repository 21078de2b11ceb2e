/* ch_perfmap.c - PLACEHOLDER until the channel lands. */
#include "internal.h"

static int ph_open(struct ju_ctx *ctx)
{
	(void)ctx;
	return JU_FAIL(JU_ENOCONSUMER, "perfmap channel: not built yet");
}

const ju_channel_ops ju_ch_perfmap = {
	.bit = JU_CH_PERFMAP,
	.name = "perfmap",
	.open = ph_open,
};

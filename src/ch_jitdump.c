/* ch_jitdump.c - PLACEHOLDER until the channel lands. */
#include "internal.h"

static int ph_open(struct ju_ctx *ctx)
{
	(void)ctx;
	return JU_FAIL(JU_ENOCONSUMER, "jitdump channel: not built yet");
}

const ju_channel_ops ju_ch_jitdump = {
	.bit = JU_CH_JITDUMP,
	.name = "jitdump",
	.open = ph_open,
};

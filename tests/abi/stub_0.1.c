/* SPDX-License-Identifier: MIT */
/* stub_0.1.c - a library with 0.1's soname and functions, and no symbol
 * versions, as libjitunwind.so.0 was before them.  old_client links
 * against it so that its references are what a 0.1 binary's are
 * (unversioned); it runs against the real library.  Never run. */
#include <jitunwind.h>

int ju_open(const ju_options *opt, ju_ctx **out)
{
	return (void)opt, (void)out, JU_EINVAL;
}
int ju_close(ju_ctx *ctx)
{
	return (void)ctx, JU_EINVAL;
}
uint32_t ju_channels(const ju_ctx *ctx)
{
	return (void)ctx, 0;
}
int ju_publish(ju_ctx *ctx, const ju_blob *b)
{
	return (void)ctx, (void)b, JU_EINVAL;
}
int ju_publish_batch(ju_ctx *ctx, const ju_blob *b, size_t n)
{
	return (void)ctx, (void)b, (void)n, JU_EINVAL;
}
int ju_room_after(const ju_ctx *ctx, const ju_blob *b, size_t *room)
{
	return (void)ctx, (void)b, (void)room, JU_EINVAL;
}
int ju_unpublish(ju_ctx *ctx, const void *start)
{
	return (void)ctx, (void)start, JU_EINVAL;
}
int ju_unpublish_batch(ju_ctx *ctx, const void *const *s, size_t n)
{
	return (void)ctx, (void)s, (void)n, JU_EINVAL;
}
int ju_unpublish_all(ju_ctx *ctx)
{
	return (void)ctx, JU_EINVAL;
}
size_t ju_count(const ju_ctx *ctx)
{
	return (void)ctx, 0;
}
int ju_after_fork(ju_ctx *ctx)
{
	return (void)ctx, JU_EINVAL;
}
const char *ju_strerror(int err)
{
	return (void)err, "";
}
const char *ju_errmsg(void)
{
	return "";
}
const char *ju_channel_name(uint32_t channel)
{
	return (void)channel, "";
}

/* outfile.c - a profile file written whole or not at all (see outfile.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "out/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int cannot(js_err *err, const char *path, int e)
{
	return js_fail(err, JS_EXIT_FAILURE, e, "cannot write %s: %s", path, strerror(e));
}

int js_outfile_open(js_outfile *o, const char *path, js_err *err)
{
	*o = (js_outfile){ .path = path };
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (!(o->f = fopen(path, "we")))
			return cannot(err, path, errno);
		return 0;
	}
	const char *slash = strrchr(path, '/');
	size_t dir = slash ? (size_t)(slash - path) + 1 : 0;
	size_t len = strlen(path);
	if (!(o->tmp = malloc(len + 9)))
		return cannot(err, path, ENOMEM);
	/* DIR/.NAME.XXXXXX */
	memcpy(o->tmp, path, dir);
	o->tmp[dir] = '.';
	memcpy(o->tmp + dir + 1, path + dir, len - dir);
	memcpy(o->tmp + len + 1, ".XXXXXX", 8);
	int fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		free(o->tmp);
		o->tmp = NULL;
		return cannot(err, path, e);
	}
	/* the mode a new file gets from fopen: 0666 less the umask */
	mode_t mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	if (!(o->f = fdopen(fd, "w"))) {
		int e = errno;
		close(fd);
		js_outfile_abort(o);
		return cannot(err, path, e);
	}
	return 0;
}

int js_outfile_commit(js_outfile *o, js_err *err)
{
	int e = 0;
	if (fflush(o->f) || ferror(o->f))
		e = errno ? errno : EIO;
	if (!e && o->tmp && fsync(fileno(o->f)))
		e = errno;
	if (fclose(o->f) && !e)
		e = errno ? errno : EIO;
	o->f = NULL;
	if (!e && o->tmp && rename(o->tmp, o->path))
		e = errno;
	if (!e) {
		free(o->tmp);
		o->tmp = NULL;
		return 0;
	}
	js_outfile_abort(o);
	return cannot(err, o->path, e);
}

void js_outfile_abort(js_outfile *o)
{
	if (o->f)
		fclose(o->f);
	o->f = NULL;
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	o->tmp = NULL;
}

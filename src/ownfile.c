/* SPDX-License-Identifier: MIT */
/* ownfile.c - this process's own files for perf (ownfile.h). */
#include "ownfile.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

int ju__ownfile_open(const char *path, int access, struct stat *st)
{
	return ju__ownfile_openat(AT_FDCWD, path, path, access, st);
}

int ju__fd_above_stdio(int fd)
{
	if (fd < 0 || fd > 2)
		return fd;
	int high = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	int e = errno;
	close(fd);
	errno = e;
	return high;
}

int ju__ownfile_openat(int dirfd, const char *name, const char *path, int access, struct stat *st)
{
	if (ju__fault())
		return JU_FAIL(JU_EIO, "cannot open %s: %s", path, strerror(EIO));
	/* O_NONBLOCK: a FIFO planted at the path must not block us. */
	int fd = openat(dirfd, name,
			access | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0644);
	if (fd < 0 && errno == ELOOP)
		return JU_FAIL(JU_EPERM, "%s is a symbolic link; refusing to write through it", path);
	if (fd < 0 && errno == ENXIO)
		return JU_FAIL(JU_EPERM, "%s is a FIFO or socket, not a regular file; refusing to write it",
			       path);
	if (fd < 0 && errno == EISDIR) /* planted: API.md's table says JU_EPERM for it */
		return JU_FAIL(JU_EPERM, "%s is a directory, not a regular file; refusing to write it", path);
	if (fd < 0)
		return JU_FAIL(errno == EACCES || errno == EPERM ? JU_EPERM : JU_EIO, "cannot open %s: %s",
			       path, strerror(errno));
	if ((fd = ju__fd_above_stdio(fd)) < 0)
		return JU_FAIL(JU_EIO, "cannot move %s's descriptor above 2: %s", path, strerror(errno));
	int err = 0;
	if (fstat(fd, st))
		err = JU_FAIL(JU_EIO, "cannot stat %s: %s", path, strerror(errno));
	else if (!S_ISREG(st->st_mode))
		err = JU_FAIL(JU_EPERM, "%s is not a regular file; refusing to write it", path);
	else if (st->st_uid != geteuid())
		err = JU_FAIL(JU_EPERM,
			      "%s belongs to uid %u, not to this process's user (uid %u); "
			      "refusing to write it",
			      path, (unsigned)st->st_uid, (unsigned)geteuid());
	else if (st->st_nlink != 1)
		err = JU_FAIL(JU_EPERM, "%s has %ju hard links; refusing to write it", path,
			      (uintmax_t)st->st_nlink);
	else if (fcntl(fd, F_SETFL, O_APPEND)) /* blocking again */
		err = JU_FAIL(JU_EIO, "cannot set flags on %s: %s", path, strerror(errno));
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int ju__ownfile_append(int fd, const void *p, size_t len, const char *what)
{
	size_t done = 0;
	int e = 0;
	while (done < len && !e) {
		ssize_t w =
			ju__fault() ? (errno = EIO, -1) : write(fd, (const uint8_t *)p + done, len - done);
		if (w > 0)
			done += (size_t)w;
		else if (w == 0 || errno != EINTR)
			e = w ? errno : ENOSPC;
	}
	if (!e)
		return 0;
	struct stat st;
	if (done && (fstat(fd, &st) || ftruncate(fd, st.st_size - (off_t)done)))
		return JU_FAIL(JU_EIO, "writing %s failed (%s), and so did restoring its length (%s)", what,
			       strerror(e), strerror(errno));
	return JU_FAIL(JU_EIO, "writing %zu bytes to %s failed: %s", len, what, strerror(e));
}

int ju__ownfile_create_new(const char *path, char *tmp, size_t tmp_len)
{
	static const char letters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	if (strlen(path) + 8 > tmp_len) /* room for ".XXXXXX" and the NUL */
		return JU_FAIL(JU_ERANGE, "%s: path too long for a new copy", path);
	snprintf(tmp, tmp_len, "%s.tmp", path);
	for (int tries = 0; tries < 16; tries++) {
		if (tries) {
			uint64_t r = 0;
			if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
				r = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)&r ^
				    (uint64_t)tries << 40;
			char *x = tmp + strlen(path) + 1; /* over "tmp" and beyond: six letters */
			for (int i = 0; i < 6; i++, r /= 62)
				x[i] = letters[r % 62];
			x[6] = 0;
		}
		if (ju__fault())
			return JU_FAIL(JU_EIO, "cannot create %s: %s", tmp, strerror(EIO));
		int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC | O_NOCTTY,
			      0644);
		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd >= 0 && (fd = ju__fd_above_stdio(fd)) < 0) {
			int e = errno;
			unlink(tmp);
			return JU_FAIL(JU_EIO, "cannot move %s's descriptor above 2: %s", tmp, strerror(e));
		}
		if (fd < 0)
			return JU_FAIL(errno == EACCES || errno == EPERM ? JU_EPERM : JU_EIO,
				       "cannot create %s: %s", tmp, strerror(errno));
		/* O_EXCL made it, so it is ours; the check costs nothing. */
		struct stat st;
		if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
			close(fd);
			return JU_FAIL(JU_EPERM, "%s is not the regular file of ours just created", tmp);
		}
		return fd;
	}
	return JU_FAIL(JU_EIO, "cannot create a new copy of %s: every name tried is taken", path);
}

int ju__ownfile_replace(const char *tmp, const char *path)
{
	int e = ju__fault() ? EIO : rename(tmp, path) ? errno : 0;
	if (!e)
		return 0;
	unlink(tmp);
	return JU_FAIL(e == EACCES || e == EPERM ? JU_EPERM : JU_EIO, "cannot put %s in place of %s: %s", tmp,
		       path, strerror(e));
}

bool ju__is_symlink_at(int dirfd, const char *name)
{
	/* openat(O_DIRECTORY | O_NOFOLLOW) on a link fails with ENOTDIR or
	 * ELOOP, depending on the kernel: ask the entry itself. */
	struct stat st;
	return !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode);
}

int ju__dir_trusted(int fd, const char *shown, int len)
{
	struct stat st;
	if (fstat(fd, &st))
		return JU_FAIL(JU_EIO, "cannot stat %.*s: %s", len, shown, strerror(errno));
	if (st.st_uid != 0 && st.st_uid != geteuid())
		return JU_FAIL(
			JU_EPERM,
			"%.*s belongs to user %u, not to this one (%u) or root; refusing to write under it",
			len, shown, (unsigned)st.st_uid, (unsigned)geteuid());
	if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
		return JU_FAIL(
			JU_EPERM,
			"%.*s may be written by any user and has no sticky bit; refusing to write under it",
			len, shown);
	return 0;
}

int ju__dir_open_nofollow(const char *path)
{
	if (ju__fault())
		return JU_FAIL(JU_EIO, "cannot open the directory %s: %s", path, strerror(EIO));
	int fd = open(path[0] == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	const char *p = path;
	while (fd >= 0 && *p) {
		size_t len = strcspn(p, "/");
		char part[NAME_MAX + 1];
		if (len > NAME_MAX) {
			close(fd);
			return JU_FAIL(JU_ERANGE, "%s: a component is longer than %d bytes", path, NAME_MAX);
		}
		memcpy(part, p, len);
		part[len] = 0;
		int upto = (int)(p - path + len); /* the path up to this component */
		p += len + strspn(p + len, "/");
		if (!len || !strcmp(part, "."))
			continue;
		int next = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		bool link = next < 0 && ju__is_symlink_at(fd, part);
		close(fd);
		if (link)
			return JU_FAIL(JU_EPERM, "%s: %.*s is a symbolic link; refusing to follow it", path,
				       upto, path);
		if (next < 0)
			return JU_FAIL(e == EACCES || e == EPERM ? JU_EPERM : JU_EIO,
				       "cannot open %s: %.*s: %s", path, upto, path, strerror(e));
		int untrusted = ju__dir_trusted(next, path, upto);
		if (untrusted) {
			close(next);
			return untrusted;
		}
		fd = next;
	}
	if (fd >= 0)
		fd = ju__fd_above_stdio(fd);
	if (fd < 0)
		return JU_FAIL(JU_EIO, "cannot open %s: %s", path, strerror(errno));
	return fd;
}

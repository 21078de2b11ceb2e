/* SPDX-License-Identifier: MIT */
/* ownfile.h - the files the library writes for perf (the perf map in /tmp,
 * the jitdump): opened only as this process's own regular file, appended
 * to all or nothing.  Used by ch_perfmap.c and ch_jitdump.c.
 */
#ifndef JU_OWNFILE_H
#define JU_OWNFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/* Open path for appending (access: O_WRONLY or O_RDWR), creating it 0644.
 * /tmp and home directories may be shared with other users, so refuse a
 * symbolic link (O_NOFOLLOW), a FIFO or socket (O_NONBLOCK, then ENXIO)
 * and anything but a regular file with one link owned by our effective
 * user.  The file's stat goes to *st.  Returns the descriptor, or a
 * negative JU_E* code with the message set. */
int ju__ownfile_open(const char *path, int access, struct stat *st);
/* fd itself when it is 3 or above, else a duplicate that is (the original
 * closed): no descriptor the library keeps is 0, 1 or 2, which a program
 * that closed its standard input or output (a daemon, a test) would find
 * to be the perf map, and write its output into.  -1 (fd closed, errno
 * set) when it cannot be moved. */
int ju__fd_above_stdio(int fd);
/* The same for `name` in the directory open at dirfd; path names the file in
 * messages. */
int ju__ownfile_openat(int dirfd, const char *name, const char *path, int access, struct stat *st);

/* 0 when the directory open at fd (shown as the first len bytes of
 * `shown`) is one only we or root can change: owned by us or root, and not
 * writable by every user unless sticky (/tmp).  Else JU_EPERM: another
 * user could swap what we make in it (a later `perf inject --jit` as root
 * would read their file). */
int ju__dir_trusted(int fd, const char *shown, int len);

/* Open `path` as a directory (O_RDONLY, close-on-exec), refusing a symbolic
 * link at every component, not only the last (O_NOFOLLOW on each openat),
 * and a component another user could change (ju__dir_trusted):
 * a directory swapped for a link anywhere on the way must not redirect us.
 * Returns the descriptor, or a negative JU_E* code with the message set. */
int ju__dir_open_nofollow(const char *path);
/* Is `name` in the directory open at dirfd a symbolic link? */
bool ju__is_symlink_at(int dirfd, const char *name);

/* Make a new file to replace `path` with: "<path>.tmp", or when anything
 * is at that name (a file or link another user may have planted there, or
 * one left by a process that had our pid), "<path>.XXXXXX" with random
 * letters.  O_CREAT | O_EXCL: the name must not exist, so nothing found there
 * is ever followed or written.  O_RDWR, mode 0644, O_APPEND, close-on-exec; its name
 * goes to tmp (tmp_len bytes).  Returns the descriptor, or a negative JU_E*
 * code with the message set. */
int ju__ownfile_create_new(const char *path, char *tmp, size_t tmp_len);
/* Put the file made by ju__ownfile_create_new in place of `path` in one
 * step (rename: a reader opening `path` gets the old file or the new one,
 * whole), or remove it again when that fails.  0, or a negative JU_E* code. */
int ju__ownfile_replace(const char *tmp, const char *path);

/* Append len bytes (O_APPEND: a batch lands whole even beside another
 * writer); if that fails part way, cut the part written off again, so the
 * file never keeps half a batch.  what names the file in messages ("the
 * perf map").  0, or a negative JU_E* code. */
int ju__ownfile_append(int fd, const void *p, size_t len, const char *what);

#endif

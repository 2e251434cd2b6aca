/* hm_file.h — output files a run writes (its JSON, reports, distributions):
 * checked before the work that fills them starts, and written whole or not
 * at all.
 *
 * Errors are negative errnos, the system's own (ENOENT for a missing
 * folder, ENOSPC for a full disk), never a generic EIO.
 *
 * Ownership: nothing is kept; render's FILE is valid only during the call. */
#ifndef HM_FILE_H
#define HM_FILE_H

#include <stdio.h>

/* Whether path can be written now: an existing file that is writable and
 * not a folder, or a new name in a writable folder. 0 or a negative errno
 * (-ENOENT: no such folder, -ENOTDIR, -EISDIR, -EACCES, -EROFS). Nothing
 * is created. */
int hm_file_writable(const char *path);

/* Writes what render puts into its FILE to path. A regular file (or a new
 * one) is replaced atomically: written beside path, then renamed over it,
 * so a reader never sees half of it and a failure leaves the old one. A
 * path that exists and is not a regular file (a symlink, /dev/stdout, a
 * FIFO, a device) is written in place, so the link or device stays. render returns 0 or a negative
 * errno. Returns 0 or a negative errno: render's, or the one the system gave. */
int hm_file_replace(const char *path, int (*render)(FILE *f, void *ctx), void *ctx);

#endif

/* hm_file.c — output files, checked up front and written whole; see hm_file.h. */
#include "base/hm_file.h"

#include "base/hm_base.h"

#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int hm_file_writable(const char *path)
{
    if (!path || !*path) return -ENOENT;
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return -EISDIR;
        return access(path, W_OK) == 0 ? 0 : -errno;
    }
    if (errno != ENOENT) return -errno;
    /* A new file: its folder must exist and take a new name. */
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof(dir), ".");
    else if (slash == path)
        snprintf(dir, sizeof(dir), "/");
    else
        snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
    if (stat(dir, &st) < 0) return -errno;
    if (!S_ISDIR(st.st_mode)) return -ENOTDIR;
    return access(dir, W_OK | X_OK) == 0 ? 0 : -errno;
}

/* All of buf to fd; 0 or the errno write gave. */
static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -errno;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

int hm_file_replace(const char *path, int (*render)(FILE *f, void *ctx), void *ctx)
{
    /* Rendered into memory first, so the write below sees each error the
     * system reports, with its errno (stdio's buffering would blur it). */
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) return -errno;
    int rc = render(mem, ctx);
    if (fclose(mem) != 0 && rc == 0) rc = -ENOMEM;
    if (rc < 0) {
        free(buf);
        return rc;
    }
    /* A symlink stays one (its target is written), and so do /dev/stdout
     * (itself a symlink), FIFOs and devices. */
    struct stat st;
    bool in_place = lstat(path, &st) == 0 && !S_ISREG(st.st_mode);
    char tmp[PATH_MAX];
    if (!in_place &&
        snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp)) {
        free(buf);
        return -ENAMETOOLONG;
    }
    const char *target = in_place ? path : tmp;
    int fd = open(
        target,
        in_place ? O_WRONLY | O_TRUNC | O_CLOEXEC : O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        rc = -errno;
        free(buf);
        return rc;
    }
    rc = write_all(fd, buf, len);
    free(buf);
    if (close(fd) < 0 && rc == 0) rc = -errno;
    if (!in_place && rc == 0 && rename(tmp, path) < 0) rc = -errno;
    if (!in_place && rc < 0) unlink(tmp);
    return rc;
}

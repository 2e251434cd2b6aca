/* procfs.c — processes and listening ports as /proc shows them
 * (procfs.h). */
#include "cli/procfs.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool hm_proc_stat_read(pid_t pid, hm_proc_stat *ps)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return false;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    /* The name in parentheses may hold spaces and parentheses: after the last ')'. */
    char *p = strrchr(buf, ')');
    if (!p) return false;
    char state = 0;
    long long ppid;
    unsigned long long ut, st;
    long long cut, cst, threads, rss;
    int got =
        sscanf(p + 1,
               " %c %lld %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld %lld %*d %*d %lld "
               "%*d %*u %*u %lld",
               &state, &ppid, &ut, &st, &cut, &cst, &threads, &rss);
    if (got != 8 || state == 'Z' || state == 'X') return false;
    ps->ppid = (pid_t)ppid;
    ps->cpu_ticks = (double)ut + (double)st + (double)cut + (double)cst;
    ps->threads = (double)threads;
    ps->rss_pages = (double)rss;
    return true;
}

#define LISTENERS_MAX 16 /* SO_REUSEPORT lets several sockets share a port */

/* The inodes of the sockets listening on port in one /proc/net table;
 * returns how many are in inode[] now. */
static int listening_inodes(const char *table, int port, unsigned long *inode, int n)
{
    FILE *f = fopen(table, "r");
    if (!f) return n;
    char line[512];
    if (!fgets(line, sizeof(line), f)) { /* the header */
        fclose(f);
        return n;
    }
    while (n < LISTENERS_MAX && fgets(line, sizeof(line), f)) {
        unsigned local_port, state;
        unsigned long ino;
        /* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
        if (sscanf(line,
                   " %*d: %*[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x %*x:%*x %*x:%*x %*x %*u %*u %lu",
                   &local_port, &state, &ino) != 3)
            continue;
        if (state == 0x0A /* TCP_LISTEN */ && (int)local_port == port && ino) inode[n++] = ino;
    }
    fclose(f);
    return n;
}

/* Whether pid holds a descriptor on one of the n sockets. */
static bool holds_socket(pid_t pid, const unsigned long *inode, int n)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
    DIR *d = opendir(path);
    if (!d) return false;
    bool held = false;
    for (struct dirent *e; !held && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char fd_path[320], target[64];
        snprintf(fd_path, sizeof(fd_path), "%s/%s", path, e->d_name);
        ssize_t len = readlink(fd_path, target, sizeof(target) - 1);
        if (len <= 0) continue;
        target[len] = 0;
        unsigned long ino;
        if (sscanf(target, "socket:[%lu]", &ino) != 1) continue;
        for (int i = 0; i < n && !held; i++)
            held = ino == inode[i];
    }
    closedir(d);
    return held;
}

/* Whether pid is root or descends from it (its parents, walked up). */
static bool in_tree(pid_t pid, pid_t root)
{
    for (int depth = 0; pid > 0 && depth < 256; depth++) {
        if (pid == root) return true;
        hm_proc_stat ps;
        if (!hm_proc_stat_read(pid, &ps) || ps.ppid == pid) return false;
        pid = ps.ppid;
    }
    return false;
}

pid_t hm_port_foreign_listener(int port, pid_t root, char *comm, size_t len)
{
    unsigned long inode[LISTENERS_MAX];
    int n = listening_inodes("/proc/net/tcp", port, inode, 0);
    n = listening_inodes("/proc/net/tcp6", port, inode, n);
    if (!n) return 0;
    DIR *d = opendir("/proc");
    if (!d) return 0;
    pid_t foreign = 0;
    for (struct dirent *e; !foreign && (e = readdir(d));) {
        if (!isdigit((unsigned char)e->d_name[0])) continue;
        pid_t pid = (pid_t)atoi(e->d_name);
        if (holds_socket(pid, inode, n) && !in_tree(pid, root)) foreign = pid;
    }
    closedir(d);
    if (foreign && len) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/comm", (int)foreign);
        FILE *f = fopen(path, "r");
        comm[0] = 0;
        if (f) {
            if (fgets(comm, (int)len, f)) comm[strcspn(comm, "\n")] = 0;
            fclose(f);
        }
    }
    return foreign;
}

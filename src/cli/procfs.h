/* procfs.h — what /proc says of this machine's processes: one process's
 * stat line, and which process holds a listening TCP port.
 *
 * The matrix asks the second before it trusts a health check: a port it
 * picked for a server is free when picked, but until the server binds it
 * any other program may take it, answer the health path, and be measured
 * in the server's place (docs/matrix.md).
 *
 * Ownership: plain functions; nothing is kept between calls. */
#ifndef HM_CLI_PROCFS_H
#define HM_CLI_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* What /proc/PID/stat says of one process. */
typedef struct hm_proc_stat {
    pid_t ppid;
    double cpu_ticks; /* utime + stime + cutime + cstime: reaped children's time stays */
    double threads, rss_pages;
} hm_proc_stat;

/* false when pid is gone (or a zombie: nothing left but its exit status). */
bool hm_proc_stat_read(pid_t pid, hm_proc_stat *ps);

/* A process that listens on TCP port (IPv4 or IPv6, this network
 * namespace) and is neither root nor one of root's descendants: its pid,
 * with its name in comm. 0 when every listener on the port is root's
 * tree's, when there is none, or when its holder cannot be seen (another
 * user's process): only a holder seen outside the tree is named. */
pid_t hm_port_foreign_listener(int port, pid_t root, char *comm, size_t len);

#endif

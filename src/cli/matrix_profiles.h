/* matrix_profiles.h — the profiles file of `hammer matrix`: reading it
 * with inih, checking every value before any server starts, and the
 * configuration it becomes (docs/matrix.md, "The profiles file"). Lines
 * may be up to 1 MiB long (never cut: a longer one is an error naming it),
 * and command and args may continue over lines that start with a space or
 * tab. Every value must be UTF-8 (stats/json_text.h).
 *
 * Ownership: hm_matrix_config_load fills a caller-owned, zeroed
 * hm_matrix_config (large: static or heap). Every string in it is
 * hm_alloc'd and freed by hm_matrix_config_free, which is also safe after
 * a failed load. Not thread-safe: one load at a time. */
#ifndef HM_CLI_MATRIX_PROFILES_H
#define HM_CLI_MATRIX_PROFILES_H

#include <jansson.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#define HM_MATRIX_MAX_PROFILES 32
#define HM_MATRIX_MAX_WORKLOADS 32
#define HM_MATRIX_MAX_ENV 32

typedef struct hm_matrix_profile {
    char *name;                   /* first: see named_entry in matrix_profiles.c */
    char *command;                /* template: {port}, {bindir}, {dir} */
    char *env[HM_MATRIX_MAX_ENV]; /* NAME=VALUE; the value may hold {port}, {bindir}, {dir} */
    int n_env;
    int port;     /* 0: a free port for each start */
    char *health; /* path that answers 2xx once the server is ready */
    char *url;    /* template, default http://127.0.0.1:{port} */
    char *cwd;    /* template, or NULL for hammer's */
    /* listener = any: the health check trusts whichever process listens on
     * the port (a container runtime's port proxy); by default only the
     * command or a process it started. */
    bool any_listener;
} hm_matrix_profile;

typedef struct hm_matrix_workload {
    char *name; /* first, as in hm_matrix_profile */
    char *scenario;
    char *args;        /* extra hammer options, before "scenario" */
    char *actions;     /* per-workload -n, or NULL for the matrix's */
    char *duration;    /* per-workload -d */
    char *concurrency; /* per-workload -c */
} hm_matrix_workload;

typedef struct hm_matrix_config {
    const char *path;      /* the profiles file, as given (not owned) */
    char dir[PATH_MAX];    /* the profiles file's directory, for {dir} */
    char bindir[PATH_MAX]; /* hammer's directory, for {bindir} */
    char self[PATH_MAX];   /* hammer itself, for the child runs */
    int runs;
    char *actions, *duration, *concurrency, *timeout, *engine, *threads, *passes, *args;
    char *baseline;                  /* always set after a load: the first profile by default */
    char *server_cpus, *hammer_cpus; /* CPU lists, or NULL for no pinning */
    cpu_set_t server_set, hammer_set;
    int64_t health_timeout_ns, stop_grace_ns, run_timeout_ns;
    hm_matrix_profile profiles[HM_MATRIX_MAX_PROFILES];
    int n_profiles;
    hm_matrix_workload workloads[HM_MATRIX_MAX_WORKLOADS];
    int n_workloads;
    char error[300]; /* why the last load or override failed */
} hm_matrix_config;

/* Reads and checks the profiles file at path into c (zeroed by the
 * caller). 0; -EINVAL with c->error saying what and where ("FILE:LINE: ..."
 * for what a line holds); -ENOMEM. Sets inih's run-time limits (Debian's
 * libinih) for the parse and restores them. */
int hm_matrix_config_load(hm_matrix_config *c, const char *path);

/* The command line's --runs, -n and -c (each NULL when not given) over the
 * file's values; -n also drops every duration. 0, or -EINVAL with c->error
 * set, or -ENOMEM (c->error empty). */
int hm_matrix_config_override(hm_matrix_config *c, const char *runs, const char *actions,
                              const char *concurrency);

/* Frees every string of c; c may then be loaded again once zeroed. */
void hm_matrix_config_free(hm_matrix_config *c);

#endif

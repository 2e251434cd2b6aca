/* matrix_spawn.h — the processes of `hammer matrix`: a profile's server
 * from its command template to healthy to stopped, and one child hammer
 * per workload run.
 *
 * Commands are split into words by wordexp(3) (no command substitution)
 * and started with posix_spawnp: no shell runs. A server gets its own
 * process group, so stopping it stops its workers too. Everything here
 * runs on the matrix's one thread; `stop` is the flag its signal handler
 * sets, checked while waiting.
 *
 * Ownership: the caller owns every buffer passed in; the JSON object given
 * to hm_matrix_run_workload gains keys owned by it. */
#ifndef HM_CLI_MATRIX_SPAWN_H
#define HM_CLI_MATRIX_SPAWN_H

#include <jansson.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "cli/matrix_profiles.h"
#include "engine/engine.h"

/* A started server: its process group, port, URL and log file, and what
 * was started, for the matrix document. */
typedef struct hm_matrix_server {
    pid_t pid; /* the group leader; -1 when none runs */
    int port;
    char url[512];
    char log[2 * PATH_MAX];
    /* {"server_port", "server_command" (placeholders replaced),
     * "server_argv" (the words executed), "server_env" (the profile's env,
     * placeholders replaced)}, as far as the start got; set by
     * hm_matrix_server_start even when it fails, json_decref'd by the
     * caller. */
    json_t *ran;
} hm_matrix_server;

/* Starts p's server (logging to LOGDIR/server-PROFILE-rROUND.log) and waits
 * until its health path answers 2xx. {port}, {bindir} and {dir} are
 * replaced in its url, command, cwd (each path one word) and env values
 * (as plain text). 0 with s filled in; or a negative
 * errno with the reason in why and no server left running: -EADDRINUSE
 * something already answers on the URL, -ESRCH the server exited first,
 * -ETIMEDOUT not healthy within health_timeout, -EINTR *stop was set,
 * -EINVAL a command or cwd that cannot be used, or what spawning failed
 * with. */
int hm_matrix_server_start(const hm_matrix_config *c, const hm_matrix_profile *p,
                           const char *logdir, int round, hm_backend_kind backend,
                           const atomic_bool *stop, hm_matrix_server *s, char *why, size_t whylen);

/* SIGTERM to the server's process group, SIGKILL after grace_ns, then
 * SIGKILL to anything of the group still around. Says which in how. */
void hm_matrix_server_stop(pid_t pid, int64_t grace_ns, char *how, size_t howlen);

/* Runs workload w's passes against server s as a child hammer (--json
 * into LOGDIR) and sets in run: "hammer_log", "hammer_exit", "passes" (the
 * numbers of each pass), "status" (ok, interrupted or failed) and, unless
 * ok, "reason". *stop makes the child finish early (SIGINT, then SIGKILL
 * after 30 s); so does run_timeout (SIGKILL after 10 s more). */
void hm_matrix_run_workload(const hm_matrix_config *c, const hm_matrix_workload *w,
                            const hm_matrix_server *s, const char *logdir, int round,
                            const char *profile, const atomic_bool *stop, json_t *run);

#endif

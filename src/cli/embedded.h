/* embedded.h — the bench_app hammer starts when there is no --url.
 *
 * The `hammer` executable links bench_app (hm_benchapp) only for this: a
 * forked child runs hm_bench_app_run() on a free loopback port, in its own
 * process group (Ctrl-C at the terminal stops hammer's sending, not the
 * server under test), and hammer stops it with SIGTERM at the end. This is
 * the only file of src/ that includes bench_app (see docs/architecture.md).
 *
 * One embedded server per process; its pid is kept here until stopped. */
#ifndef HM_CLI_EMBEDDED_H
#define HM_CLI_EMBEDDED_H

#include "engine/engine.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Starts bench_app with `workers` workers (0 or 1: one; more: dispatched by
 * session, as php-via's dispatch_func does) on the backend, serving h2c
 * too when http2. Returns its port, or a negative errno with the reason in
 * why. */
int hm_embedded_start(hm_backend_kind backend, int workers, bool http2, char *why, size_t whylen);

/* Its pid (the server resources sample it), or -1 when none runs. */
pid_t hm_embedded_pid(void);

/* Stops it: SIGTERM, then SIGKILL after 2 s. Nothing when none runs. */
void hm_embedded_stop(void);

#endif

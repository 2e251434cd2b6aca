/* A coroutine that cannot be started ends the run with an error, never a
 * hang: hammer runs against bench_app with the engine's stack limit
 * (HAMMER_MAX_STACKS=2 a thread) below what the run needs, in the hammer
 * model (thread 0 needs the observer, the finisher and the senders'
 * driver), the browser model (VUs), sticky and a flow in the hammer model
 * (prologue, observer, finisher, senders); each exits non-zero, names
 * the cause, and ends within its own --timeout bounds. The server runs
 * without the limit.
 * argv: HAMMER BENCH_APP FLOW_YAML */
#include "run_util.h"

#include <stdlib.h>

static const char *hammer, *bench_app;

static void check(const char *what, char *const argv[])
{
    proc p;
    setenv("HAMMER_MAX_STACKS", "2", 1);
    time_t t0 = time(NULL);
    /* bound: set-up and tear-down requests (--timeout 3s each) and slack */
    int rc = proc_run(&p, argv, 60);
    unsetenv("HAMMER_MAX_STACKS");
    if (rc == 0 || !strstr(p.out, "cannot start")) fprintf(stderr, "%s\n", p.out);
    ASSERT(rc == 1 || rc == 2);
    ASSERT(strstr(p.out, "cannot start"));
    printf("%s with 2 stacks a thread: exit %d in %lds: ok\n", what, rc, (long)(time(NULL) - t0));
}

int main(int argc, char **argv)
{
    if (argc < 4) HM_FAIL_("usage: %s HAMMER BENCH_APP FLOW_YAML", argv[0]);
    hammer = argv[1];
    bench_app = argv[2];
    int port = free_port();
    char port_s[16], url[64];
    snprintf(port_s, sizeof(port_s), "%d", port);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
    char *app_argv[] = {(char *)bench_app, "--port", port_s, NULL};
    proc app;
    proc_start(&app, app_argv);
    for (int i = 0; i < 100 && !strstr(app.out, "listening"); i++)
        proc_read(&app, 50);
    ASSERT(strstr(app.out, "listening"));

    char *h1[] = {(char *)hammer, "--url", url,         "-c", "40",       "-n",      "4000",
                  "-t",           "2",     "--timeout", "3s", "scenario", "counter", NULL};
    check("hammer model, -c 40 -t 2", h1);
    char *h2[] = {(char *)hammer, "--url",   url,         "-c", "20",       "-n",      "40",
                  "--mode",       "browser", "--timeout", "3s", "scenario", "counter", NULL};
    check("browser model, -c 20", h2);
    char *h3[] = {(char *)hammer, "--url",     url,  "-c",       "20",     "-n",
                  "400",          "--timeout", "3s", "scenario", "sticky", NULL};
    check("sticky, -c 20", h3);
    char *h4[] = {(char *)hammer, "--url", url,         "-c", "20",   "-n",    "400",
                  "-t",           "2",     "--timeout", "3s", "flow", argv[3], NULL};
    check("flow, hammer model, -c 20 -t 2", h4);

    kill(app.pid, SIGTERM);
    proc_wait(&app, 10);
    return 0;
}

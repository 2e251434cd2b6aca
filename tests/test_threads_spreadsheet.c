/* Engine threads on both sides at once: hammer with two threads against
 * bench_app with four workers that take any request (--dispatch stream, so
 * every worker runs every kind of action at once), the spreadsheet
 * scenario, whose every action is worker work (the table, the signals, the
 * patch). Under ThreadSanitizer a race in either process kills it with
 * exit 66 (make check-tsan), and this test fails. hammer may exit 1: stream
 * dispatch loses contexts, as php-via's does, and the run counts that.
 * argv: HAMMER BENCH_APP */
#include "run_util.h"

#include <signal.h>

int main(int argc, char **argv)
{
    if (argc < 3) HM_FAIL_("usage: %s HAMMER BENCH_APP", argv[0]);
    int port = free_port();
    char port_s[16], url[64];
    snprintf(port_s, sizeof(port_s), "%d", port);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
    char *app_argv[] = {argv[2], "--port", port_s, "--workers", "4", "--dispatch", "stream", NULL};
    proc app;
    proc_start(&app, app_argv);
    for (int i = 0; i < 100 && !strstr(app.out, "listening"); i++)
        proc_read(&app, 50);
    ASSERT(strstr(app.out, "listening"));

    char *run[] = {argv[1],
                   "-q",
                   "--url",
                   url,
                   "-t",
                   "2",
                   "-c",
                   "32",
                   "-n",
                   "2000",
                   "--no-server-watch",
                   "scenario",
                   "spreadsheet",
                   NULL};
    proc p;
    int rc = proc_run(&p, run, 120);
    if (rc != 0 && rc != 1) fprintf(stderr, "%s\n", p.out);
    ASSERT(rc == 0 || rc == 1);
    printf("spreadsheet, 2 hammer threads, 32 connections: exit %d\n", rc);

    kill(app.pid, SIGTERM);
    rc = proc_wait(&app, 30);
    if (rc != 0) fprintf(stderr, "%s\n", app.out);
    ASSERT_EQ(rc, 0);
    printf("bench_app, 4 workers: exit 0 after SIGTERM\n");
    return 0;
}

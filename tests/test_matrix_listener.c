/* hammer matrix trusts a health answer only from the server it started: a
 * profile whose command leaves its listener to a process outside its tree
 * (here a bench_app orphaned by a subshell, as another program that took
 * the port while the server started would be) is skipped, its reason
 * naming that process, and never measured; with listener = any the same
 * profile is measured. Stopping the profile's group takes the orphan too.
 * argv: HAMMER BENCH_APP */
#include "run_util.h"

#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 3) HM_FAIL_("usage: %s HAMMER BENCH_APP", argv[0]);
    char dir[] = "/tmp/hammer-matrix-listener-XXXXXX";
    ASSERT(mkdtemp(dir));
    char ini[300], js[300], logs[300];
    snprintf(ini, sizeof(ini), "%s/profiles.ini", dir);
    snprintf(js, sizeof(js), "%s/results.json", dir);
    snprintf(logs, sizeof(logs), "%s/logs", dir);
    int port_tree = free_port(), port_any = free_port();
    /* The subshell starts bench_app and exits: bench_app is reparented, out
     * of the command's tree, but stays in its process group. */
    const char *orphaning = "/bin/sh -c '(\"%s\" --port {port} &); exec sleep 60'";
    FILE *f = fopen(ini, "w");
    ASSERT(f);
    fprintf(f,
            "[matrix]\nruns = 1\nactions = 40\nconcurrency = 4\ntimeout = 60s\n"
            "health_timeout = 4s\nstop_grace = 10s\n\n"
            "[profile stray]\nport = %d\nhealth = /_health\ncommand = ",
            port_tree);
    fprintf(f, orphaning, argv[2]);
    fprintf(f, "\n\n[profile stray-any]\nport = %d\nhealth = /_health\nlistener = any\ncommand = ",
            port_any);
    fprintf(f, orphaning, argv[2]);
    fprintf(f, "\n\n[workload counter]\nscenario = counter\n");
    fclose(f);

    proc p;
    char *m[] = {argv[1], "matrix", "-q", "--json", js, "--logs", logs, ini, NULL};
    int rc = proc_run(&p, m, 240);
    if (rc != 1) fprintf(stderr, "%s\n", p.out);
    ASSERT_EQ(rc, 1); /* completed, with a skipped profile */

    json_t *doc = load_json(js);
    json_t *stray = json_row(doc, "runs", "profile", "stray");
    ASSERT_STREQ(json_string_value(json_object_get(stray, "status")), "skipped");
    const char *why = json_string_value(json_object_get(stray, "reason"));
    ASSERT(why);
    ASSERT(strstr(why, "not healthy after 4.0 s"));
    ASSERT(strstr(why, "/_health answered, but from pid "));
    ASSERT(strstr(why, "(bench_app), which the command did not start"));
    ASSERT(!json_object_get(json_object_get(stray, "passes"), "warm"));

    json_t *any = json_row(doc, "runs", "profile", "stray-any");
    ASSERT_STREQ(json_string_value(json_object_get(any, "status")), "ok");
    ASSERT_EQ(json_int_at(json_object_get(json_object_get(any, "passes"), "warm"), "ok"), 40);
    json_decref(doc);

    /* Both orphans went with their groups: nothing answers either port. */
    for (int i = 0; i < 2; i++) {
        char url[64];
        snprintf(url, sizeof(url), "http://127.0.0.1:%d", i ? port_any : port_tree);
        char *get[] = {argv[1], "-n", "1", "-c", "1", "--timeout", "2s", "get", url, NULL};
        ASSERT(proc_run(&p, get, 30) != 0);
    }
    return 0;
}

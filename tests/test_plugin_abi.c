/* The scenario plugin ABI: a plugin built against API version 1 still
 * loads and runs; one of a newer version, or with an impossible struct
 * size, is refused with a reason (exit 2); hammer_vu_sleep_ms returns
 * -ECANCELED once the run is stopping (here: Ctrl-C).
 * argv: HAMMER V1.so FUTURE.so BADSIZE.so CANCEL.so */
#include "hammer/scenario.h"
#include "run_util.h"

static const char *hammer;
static char json_path[256];

static void old_plugin_runs(const char *so)
{
    proc p;
    unlink(json_path);
    char *argv[] = {(char *)hammer, "--plugin", (char *)so, "-c",       "4",      "-n",
                    "40",           "--json",   json_path,  "scenario", "abi-v1", NULL};
    int rc = proc_run(&p, argv, 60);
    if (rc != 0) fprintf(stderr, "%s\n", p.out);
    ASSERT_EQ(rc, 0);
    json_t *j = load_json(json_path);
    ASSERT_EQ(json_int_at(j, "actions.ok"), 40);
    ASSERT_EQ(json_int_at(j, "check.passed"), 1);
    const char *detail = json_string_value(json_object_get(json_object_get(j, "check"), "detail"));
    ASSERT(detail && strstr(detail, "v1 plugin: 40 OK actions"));
    json_decref(j);
    printf("a version 1 plugin loads and runs\n");
}

static void refused(const char *so, const char *reason)
{
    proc p;
    char *argv[] = {(char *)hammer, "--plugin", (char *)so, "list", NULL};
    int rc = proc_run(&p, argv, 30);
    if (rc != 2 || !strstr(p.out, reason)) fprintf(stderr, "exit %d:\n%s\n", rc, p.out);
    ASSERT_EQ(rc, 2);
    ASSERT(strstr(p.out, reason));
}

static void sleep_reports_cancel(const char *so)
{
    proc p;
    unlink(json_path);
    char *argv[] = {(char *)hammer, "--plugin", (char *)so, "-c",         "3", "-t", "1",
                    "--json",       json_path,  "scenario", "abi-cancel", NULL};
    proc_start(&p, argv);
    /* Interrupt once a VU is pausing (the run and its signal handler are up). */
    for (int i = 0; i < 600 && !strstr(p.out, "abi-cancel: pausing"); i++)
        proc_read(&p, 100);
    ASSERT(strstr(p.out, "abi-cancel: pausing"));
    kill(p.pid, SIGINT);
    /* The VUs pause 50 ms at a time and never end on their own: only a
     * cancelled pause lets the run finish. */
    int rc = proc_wait(&p, 60);
    if (rc != 1) fprintf(stderr, "exit %d:\n%s\n", rc, p.out);
    ASSERT_EQ(rc, 1); /* interrupted before any action: nothing ran, so nothing passed */
    json_t *j = load_json(json_path);
    ASSERT_EQ(json_int_at(j, "interrupted"), 1);
    /* The plugin's check held, but no action ran: not evaluated (0 OK is
     * never PASS, docs/output.md), its words kept in the detail. */
    ASSERT_EQ(json_int_at(j, "check.passed"), 0);
    ASSERT_EQ(json_int_at(j, "check.evaluated"), 0);
    const char *detail = json_string_value(json_object_get(json_object_get(j, "check"), "detail"));
    ASSERT(detail && strstr(detail, "3 of 3 VUs saw their pause cancelled"));
    json_decref(j);
    printf("hammer_vu_sleep_ms returns -ECANCELED when the run is interrupted\n");
}

int main(int argc, char **argv)
{
    if (argc < 6) HM_FAIL_("usage: %s HAMMER V1.so FUTURE.so BADSIZE.so CANCEL.so", argv[0]);
    hammer = argv[1];
    snprintf(json_path, sizeof(json_path), "/tmp/hammer-abi-%d.json", (int)getpid());
    old_plugin_runs(argv[2]);
    char why[200];
    snprintf(why, sizeof(why),
             "scenario 0 ('abi-future') was built for plugin API version %d; this hammer "
             "supports versions 1 to %d",
             HAMMER_SCENARIO_API_VERSION + 1, HAMMER_SCENARIO_API_VERSION);
    refused(argv[3], why);
    printf("a plugin of a newer API version is refused, naming the versions\n");
    refused(argv[4], "scenario 0 says its struct has 4 bytes");
    printf("a plugin with an impossible struct size is refused\n");
    sleep_reports_cancel(argv[5]);
    unlink(json_path);
    return 0;
}

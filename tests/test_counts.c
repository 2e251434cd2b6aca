/* The count lines of the summary against the embedded bench_app: every pair
 * of counts that can differ either agrees or says why on the same line, and
 * the JSON holds the counts apart.
 * argv: HAMMER DATA_DIR (tests/data, its HAR recordings) */
#include "run_util.h"

static const char *hammer, *data_dir;

/* --think is refused in the hammer model, as -m is, naming --mode browser. */
static void check_think_refused(void)
{
    proc p;
    char *argv[] = {(char *)hammer, "-n", "5", "--think", "100ms", "scenario", "counter", NULL};
    ASSERT_EQ(proc_run(&p, argv, 60), 2);
    ASSERT(strstr(p.out, "--think"));
    ASSERT(strstr(p.out, "--mode browser"));
    char *get[] = {(char *)hammer, "--url", "http://127.0.0.1:1/", "--think", "1s", "scenario",
                   "get",          NULL};
    ASSERT_EQ(proc_run(&p, get, 60), 2);
    ASSERT(strstr(p.out, "--think applies to --mode browser, not get"));
    printf("--think without --mode browser: exit 2, %.*s\n", (int)strcspn(p.out, "\n"), p.out);
}

int main(int argc, char **argv)
{
    if (argc < 3) HM_FAIL_("usage: %s HAMMER DATA_DIR", argv[0]);
    hammer = argv[1];
    data_dir = argv[2];
    check_think_refused();
    return 0;
}

/* What a run prints while it goes and at the end (issue 15): the progress
 * line shows done/total and an ETA when the run has an end (-n, or -d),
 * and the summary's latencies pick µs, ms or s per cell as wrk does
 * instead of a fixed "Latency (ms)" with three decimals.
 * argv: HAMMER */
#include "run_util.h"

#include <regex.h>

static const char *hammer;

/* Lines of out containing needle. */
static int count_lines(const char *out, const char *needle)
{
    int n = 0;
    for (const char *q = out; (q = strstr(q, needle)); q++)
        n++;
    return n;
}

static void check_n(void)
{
    char *argv[] = {(char *)hammer, "-n",         "30000", "-c",       "10",      "-R",
                    "20000",        "--interval", "200ms", "scenario", "counter", NULL};
    proc p;
    ASSERT_EQ(proc_run(&p, argv, 120), 0);
    int lines = count_lines(p.out, "actions/s  OK");
    int with_eta = count_lines(p.out, "/30000  ETA ");
    ASSERT_GE(with_eta, 3);
    ASSERT_GE(lines, with_eta);
    /* done never goes back, and grows over the run (an interval of a busy
     * machine may complete nothing) */
    long long prev = -1, first = -1;
    for (const char *q = p.out; (q = strstr(q, "/30000  ETA ")); q++) {
        const char *s = q;
        while (s > p.out && s[-1] >= '0' && s[-1] <= '9')
            s--;
        long long done = atoll(s);
        ASSERT_GE(done, prev);
        ASSERT_LE(done, 30000);
        if (first < 0) first = done;
        prev = done;
    }
    ASSERT_GT(prev, first);
    printf("-n 30000: %d of %d lines show done/30000 and an ETA, done growing\n", with_eta, lines);
}

static void check_d(void)
{
    char *argv[] = {(char *)hammer, "-d",    "3s",       "-c",      "10",
                    "--interval",   "500ms", "scenario", "counter", NULL};
    proc p;
    ASSERT_EQ(proc_run(&p, argv, 120), 0);
    ASSERT_GE(count_lines(p.out, "s/3s  ETA "), 3);
    ASSERT(strstr(p.out, "  1s/3s  ETA 2s") || strstr(p.out, "  2s/3s  ETA 1s"));
    printf("-d 3s: lines show elapsed/3s and the time left\n");
}

static void check_units(void)
{
    char *argv[] = {(char *)hammer, "-n", "3000", "-c", "20", "scenario", "counter", NULL};
    proc p;
    ASSERT_EQ(proc_run(&p, argv, 120), 0);
    ASSERT(!strstr(p.out, "Latency (ms)"));
    ASSERT(strstr(p.out, "\nLatency                p50       p90       p99     p99.9       max"));
    regex_t cell;
    ASSERT_EQ(regcomp(&cell, "^([0-9]+µs|[0-9]+\\.[0-9]{2}ms|[0-9]+\\.[0-9]{2}s)$", REG_EXTENDED),
              0);
    int rows = 0;
    const char *names[] = {"\n  action ", "\n  action->patch ", "\n  connect "};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const char *row = strstr(p.out, names[i]);
        ASSERT(row);
        row += strlen(names[i]);
        char line[256];
        snprintf(line, sizeof(line), "%.*s", (int)strcspn(row, "\n"), row);
        char *save, *tok = strtok_r(line, " ", &save);
        for (int k = 0; k < 6; k++, tok = strtok_r(NULL, " ", &save)) {
            ASSERT(tok);
            if (regexec(&cell, tok, 0, NULL, 0))
                HM_FAIL_("latency cell '%s' has no unit of its own", tok);
        }
        ASSERT(tok && atoll(tok) > 0); /* the count */
        rows++;
    }
    regfree(&cell);
    printf("summary: %d latency rows, each cell in µs, ms or s\n", rows);
}

int main(int argc, char **argv)
{
    if (argc < 2) HM_FAIL_("usage: %s HAMMER", argv[0]);
    hammer = argv[1];
    check_n();
    check_d();
    check_units();
    return 0;
}

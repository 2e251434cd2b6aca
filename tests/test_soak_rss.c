/* A 60 s soak with interval output: hammer's RSS at the end is within 5%
 * of its RSS at 10 s (fixed-size histograms, no per-request records).
 * argv: HAMMER [normal|sanitized] */
#include "run_util.h"

static long rss_kib(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long kib = -1;
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, "VmRSS:", 6)) kib = atol(line + 6);
    fclose(f);
    return kib;
}

int main(int argc, char **argv)
{
    if (argc < 2) HM_FAIL_("usage: %s HAMMER [normal|sanitized]", argv[0]);
    if (argc > 2 && !strcmp(argv[2], "sanitized"))
        HM_SKIP("RSS flatness is measured on the normal build; ASan's quarantine keeps freed "
                "memory resident on purpose");
    char *args[] = {argv[1], "-d",     "60s",    "-c",       "100",     "--interval",
                    "10s",   "--mode", "hammer", "scenario", "counter", NULL};
    proc p;
    time_t started = time(NULL);
    proc_start(&p, args);
    /* After the first interval's line: its tick has done what every later
     * one repeats (the server watch's first sample on the reporter's
     * thread allocates that thread's arena), so what follows is steady. */
    ASSERT(proc_wait_output(&p, "actions/s  OK"));
    long at10 = rss_kib(p.pid);
    long last = at10;
    /* Sample until just before the end of -d 60s (the run, not its
     * tear-down: hammer then frees what it held). */
    while (time(NULL) < started + 58) {
        proc_read(&p, 1000);
        long r = rss_kib(p.pid);
        if (r > 0) last = r;
    }
    int rc = proc_wait(&p, 60);
    if (rc != 0) fprintf(stderr, "%s\n", p.out);
    ASSERT_EQ(rc, 0);
    int lines = 0;
    for (const char *q = p.out; (q = strstr(q, "actions/s  OK")); q++)
        lines++;
    ASSERT_GE(lines, 5);
    ASSERT_GT(at10, 0);
    printf("RSS at 10 s: %ld KiB, at ~59 s: %ld KiB (%+.2f%%), %d interval lines\n", at10, last,
           100.0 * (double)(last - at10) / (double)at10, lines);
    ASSERT_LE(last, at10 + at10 / 20);
    return 0;
}

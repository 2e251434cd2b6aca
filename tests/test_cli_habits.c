/* The habits users bring from wrk, oha, hey, k6 and vegeta meet a word of
 * help, not a wall: did-you-mean for commands and scenarios, `hammer URL`
 * and `hammer get URL`, bad values that name what is allowed, compound
 * durations, `scenario NAME --help`, a YAML tab named as a tab, a missing
 * file named with its OS error, and -n beside -d saying which ends the run.
 * No server: the runs aim at a closed loopback port, so each ends at the
 * reachability check, past every option check.
 * argv: HAMMER */
#include "base/hm_base.h"
#include "run_util.h"

#include <stdlib.h>
#include <string.h>

static const char *hammer;

/* Runs hammer with args; its exit code, output in p. */
static int run(proc *p, const char *const *args)
{
    char *argv[24] = {(char *)hammer};
    size_t n = 1;
    for (size_t k = 0; args[k]; k++)
        argv[n++] = (char *)args[k];
    argv[n] = NULL;
    return proc_run(p, argv, 60);
}

/* One case: the exit code and a line the output must hold whole. */
static void expect(const char *const *args, int code, const char *line)
{
    proc p;
    int rc = run(&p, args);
    char want[600];
    snprintf(want, sizeof(want), "%s\n", line);
    bool at_start = !strncmp(p.out, want, strlen(want));
    char inner[602];
    snprintf(inner, sizeof(inner), "\n%s", want);
    if (rc != code || (!at_start && !strstr(p.out, inner)))
        HM_FAIL_("hammer %s ...: exit %d, output:\n%s\nwant exit %d and the line:\n%s", args[0], rc,
                 p.out, code, want);
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

int main(int argc, char **argv)
{
    if (argc < 2) HM_FAIL_("usage: %s HAMMER", argv[0]);
    hammer = argv[1];
    char closed[64];
    snprintf(closed, sizeof(closed), "http://127.0.0.1:%d/", free_port());
    char unreachable[160];
    snprintf(unreachable, sizeof(unreachable),
             "hammer: target %s is unreachable: connect failed: Connection refused", closed);

    /* Did you mean: a scenario named where a command belongs, a slip of a
     * command, a slip of a scenario. */
    expect(ARGS("-c", "200", "-n", "5000", "spreadsheet"), 2,
           "hammer: unknown command 'spreadsheet'; did you mean 'scenario spreadsheet'? "
           "(hammer --help)");
    expect(ARGS("scenarion", "counter"), 2,
           "hammer: unknown command 'scenarion'; did you mean 'scenario'? (hammer --help)");
    expect(ARGS("countr"), 2,
           "hammer: unknown command 'countr'; did you mean 'scenario counter'? (hammer --help)");
    expect(ARGS("scenario", "countr"), 2,
           "hammer: unknown scenario 'countr'; did you mean 'counter'? (hammer list shows them)");
    expect(ARGS("scenario", "spredsheet-live"), 2,
           "hammer: unknown scenario 'spredsheet-live'; did you mean 'spreadsheet-live'? (hammer "
           "list shows them)");
    printf("did you mean: commands and scenarios\n");

    /* Bad values name what is allowed. */
    expect(ARGS("-c", "0", "scenario", "counter"), 2,
           "hammer: bad value '0' for -c: expected a whole number from 1 to 1000000");
    expect(ARGS("--mode", "Browser", "scenario", "counter"), 2,
           "hammer: bad value 'Browser' for --mode: expected hammer or browser");
    expect(ARGS("--engine", "kqueue", "scenario", "counter"), 2,
           "hammer: bad value 'kqueue' for --engine: expected auto, io_uring or epoll");
    expect(ARGS("-d", "1m30", "scenario", "counter"), 2,
           "hammer: bad value '1m30' for -d: expected a duration above 0, e.g. 30s, 10m, 1m30s, "
           "or a bare number of seconds");
    expect(ARGS("--interval", "50ms", "scenario", "counter"), 2,
           "hammer: bad value '50ms' for --interval: expected a duration of at least 100ms with a "
           "unit, e.g. 10s");
    printf("bad values name what is allowed\n");

    /* Compound durations are durations (k6's and vegeta's 1m30s). */
    expect(ARGS("-d", "1m30s", "--timeout", "1m2s", "--url", closed, "scenario", "get"), 2,
           unreachable);
    printf("1m30s is a duration\n");

    /* -n beside -d: said which one ends the run. */
    expect(ARGS("-n", "5", "-d", "5s", "--url", closed, "scenario", "get"), 2,
           "hammer: -n 5 and -d 5s both given: the run ends at whichever is reached first");
    printf("-n with -d: the run ends at whichever is reached first\n");

    /* hammer URL and hammer get URL: the get scenario against URL. */
    char json[256];
    snprintf(json, sizeof(json), "%s/hammer-habits-%d.json",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    const char *const *shorthands[] = {ARGS("--json", json, closed),
                                       ARGS("--json", json, "get", closed)};
    for (size_t i = 0; i < HM_ARRAY_LEN(shorthands); i++) {
        unlink(json);
        expect(shorthands[i], 2, unreachable);
        json_t *doc = load_json(json);
        ASSERT_STREQ(json_string_value(json_object_get(doc, "scenario")), "get");
        json_decref(doc);
    }
    unlink(json);
    char twice[300];
    snprintf(twice, sizeof(twice), "hammer: the URL is given twice (--url %s and %s); give it once",
             closed, closed);
    expect(ARGS("--url", closed, "get", closed), 2, twice);
    printf("hammer URL and hammer get URL run scenario get\n");

    /* scenario NAME --help: that scenario's page, action, check, models. */
    proc p;
    ASSERT_EQ(run(&p, ARGS("scenario", "spreadsheet", "--help")), 0);
    if (strncmp(p.out, "scenario spreadsheet: ", 22) ||
        !strstr(p.out, "\n  page      /bench/spreadsheet (--route)\n") ||
        !strstr(p.out, "\n  check     net increment equals HTTP OK; viewRow = focusRow") ||
        !strstr(p.out, "--mode browser") || strstr(p.out, "usage: hammer [options]"))
        HM_FAIL_("scenario spreadsheet --help printed:\n%s", p.out);
    ASSERT_EQ(run(&p, ARGS("--help", "scenario", "get")), 0);
    if (!strstr(p.out, "usage     hammer [options] --url URL scenario get\n") ||
        !strstr(p.out, "-m METHOD"))
        HM_FAIL_("--help scenario get printed:\n%s", p.out);
    expect(ARGS("scenario", "countr", "--help"), 2,
           "hammer: unknown scenario 'countr'; did you mean 'counter'? (hammer list shows them)");
    ASSERT_EQ(run(&p, ARGS("--help")), 0);
    ASSERT(!strncmp(p.out, "usage: hammer [options] scenario NAME", 37));
    printf("scenario NAME --help prints that scenario's help\n");

    /* A tab in a flow file is named as one. */
    char yaml[256];
    snprintf(yaml, sizeof(yaml), "%s/hammer-habits-%d.yaml",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    write_file(yaml, "name: t\nflows:\n  - name: a\n    steps:\n\t- get: /\n");
    ASSERT_EQ(run(&p, ARGS("--mode", "browser", "flow", yaml)), 2);
    unlink(yaml);
    if (!strstr(p.out, ":5:1: not valid YAML: ") ||
        !strstr(p.out, "(a tab: YAML indents with spaces only)\n"))
        HM_FAIL_("a tab in a flow file:\n%s", p.out);
    printf("a tab in a flow file is named as a tab\n");

    /* A file that is not there: its name and the OS error. */
    expect(ARGS("import-har", "/nonexistent/recording.har"), 2,
           "hammer import-har: cannot read /nonexistent/recording.har: No such file or directory");
    expect(ARGS("report", "/nonexistent/run.json"), 2,
           "hammer: report: cannot read /nonexistent/run.json: No such file or directory");
    printf("missing files: named, with the OS error\n");
    return 0;
}

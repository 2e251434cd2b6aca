/* hammer refuses option combinations its scenarios cannot run, before it
 * starts anything: exit 2 and one line naming the problem. The rules come
 * from each scenario's capabilities (hm_scenario_def.caps), so this pins
 * what the CLI derives from that data.
 * argv: HAMMER PLUGIN_SO */
#include "base/hm_base.h"
#include "run_util.h"

typedef struct usage_case {
    const char *args[12];
    const char *says; /* the whole stderr line */
} usage_case;

int main(int argc, char **argv)
{
    if (argc < 3) HM_FAIL_("usage: %s HAMMER PLUGIN", argv[0]);
    const char *hammer = argv[1], *plugin = argv[2];
    const usage_case cases[] = {
        {{"-c", "abc", "scenario", "counter"},
         "hammer: bad value 'abc' for -c: expected a whole number from 1 to 1000000"},
        {{"--concurrency=0", "scenario", "counter"},
         "hammer: bad value '0' for --concurrency=0: expected a whole number from 1 to "
         "1000000"},
        {{"scenario"}, "hammer: expected 'scenario NAME' or 'flow FILE' (see hammer --help)"},
        {{"scenario", "flow"}, "hammer: scenario flow reads a flow file: hammer flow FILE.yaml"},
        {{"scenario", "nope"}, "hammer: unknown scenario 'nope' (hammer list shows them)"},
        {{"--workload", "cpu", "scenario", "counter"},
         "hammer: --workload takes counter|cpu|io|spreadsheet (sticky only)"},
        {{"--workload", "spreadsheet-live", "scenario", "sticky"},
         "hammer: --workload takes counter|cpu|io|spreadsheet (sticky only)"},
        {{"-d", "1s", "scenario", "sticky"},
         "hammer: sticky compares variants by -n; -d is not supported there"},
        {{"scenario", "get"}, "hammer: scenario get needs --url"},
        {{"-R", "10", "--mode", "browser", "scenario", "counter"},
         "hammer: -R applies to the hammer load model and to get: browser VUs and sticky are "
         "paced by the server's patches"},
        {{"-R", "10", "scenario", "sticky"},
         "hammer: -R applies to the hammer load model and to get: browser VUs and sticky are "
         "paced by the server's patches"},
        {{"--mode", "browser", "--url", "http://127.0.0.1:1/", "scenario", "get"},
         "hammer: --mode browser applies to php-via scenarios, not get"},
        {{"--mode", "hammer", "--plugin", plugin, "scenario", "double-click"},
         "hammer: plugin scenarios run in the browser model only"},
        {{"-R", "10", "--plugin", plugin, "scenario", "double-click"},
         "hammer: -R applies to the hammer load model and to get: browser VUs and sticky are "
         "paced by the server's patches"},
        /* issue 15: a bare number is not a duration (except -d's seconds) */
        {{"--mode", "browser", "--think", "100", "scenario", "counter"},
         "hammer: --think 100 needs a unit, e.g. 100ms or 100s (only -d takes bare seconds, as "
         "in wrk)"},
        {{"--think", "50ms..200", "scenario", "counter"},
         "hammer: --think 50ms..200 needs a unit on both ends, e.g. 50ms..200ms"},
        {{"--timeout", "5", "scenario", "counter"},
         "hammer: --timeout 5 needs a unit, e.g. 5ms or 5s (only -d takes bare seconds, as in "
         "wrk)"},
        {{"--interval", "10", "scenario", "counter"},
         "hammer: --interval 10 needs a unit, e.g. 10ms or 10s (only -d takes bare seconds, as "
         "in wrk)"},
        /* a URL without a scheme */
        {{"--url", "127.0.0.1:3000", "scenario", "counter"},
         "hammer: --url 127.0.0.1:3000 has no scheme; did you mean http://127.0.0.1:3000 ?"},
        {{"--url", "ftp://127.0.0.1/", "scenario", "get"},
         "hammer: --url ftp://127.0.0.1/: only http:// and https:// URLs are supported"},
        /* a typo gets one line naming the nearest option, not the help */
        {{"--thnik", "1s", "scenario", "counter"},
         "hammer: unknown option '--thnik'; did you mean --think? (hammer --help)"},
        {{"--concurency=5", "scenario", "counter"},
         "hammer: unknown option '--concurency'; did you mean --concurrency? (hammer --help)"},
        {{"--frobnicate", "scenario", "counter"},
         "hammer: unknown option '--frobnicate' (hammer --help lists them)"},
        {{"-x", "scenario", "counter"}, "hammer: unknown option '-x' (hammer --help lists them)"},
        {{"scenario", "counter", "--url"}, "hammer: --url needs a value (hammer --help)"},
        /* stray arguments */
        {{"list", "extra"}, "hammer: unexpected 'extra' after list"},
        {{"scenario", "counter", "extra"}, "hammer: unexpected 'extra' after 'scenario counter'"},
        {{"scenarios", "counter"},
         "hammer: unknown command 'scenarios'; did you mean 'scenario'? (hammer --help)"},
        {{"frobnicate", "counter"},
         "hammer: unknown command 'frobnicate' (expected scenario NAME, flow FILE, URL, get URL, "
         "list, matrix, merge, report or import-har; hammer --help)"},
        {{"flow", "a.yaml", "extra"}, "hammer: unexpected 'extra' after 'flow a.yaml'"},
        /* get's request options belong to get */
        {{"-H", "X-A: 1", "scenario", "counter"},
         "hammer: -m, -H and --body apply to get, not counter"},
        {{"-H", "no colon", "--url", "http://127.0.0.1:1/", "scenario", "get"},
         "hammer: -H 'no colon' is not a header line (e.g. -H 'Accept: text/html')"},
        {{"-m", "GE T", "--url", "http://127.0.0.1:1/", "scenario", "get"},
         "hammer: bad value 'GE T' for -m: expected a method token such as GET, POST or PURGE"},
        {{"--body", "/nonexistent/body", "--url", "http://127.0.0.1:1/", "scenario", "get"},
         "hammer: cannot read --body /nonexistent/body: No such file or directory"},
    };
    for (size_t i = 0; i < HM_ARRAY_LEN(cases); i++) {
        char *args[16] = {(char *)hammer};
        size_t n = 1;
        for (size_t k = 0; cases[i].args[k]; k++)
            args[n++] = (char *)cases[i].args[k];
        proc p;
        int rc = proc_run(&p, args, 30);
        char want[400];
        snprintf(want, sizeof(want), "%s\n", cases[i].says);
        if (rc != 2 || strcmp(p.out, want))
            HM_FAIL_("case %zu: exit %d, output:\n%s\nwant exit 2 and:\n%s", i, rc, p.out, want);
    }
    printf("%zu bad combinations: exit 2, one line each\n", HM_ARRAY_LEN(cases));

    /* The combinations the same data allows get past the checks: -R with
     * get and with the hammer model (refused later only for the closed
     * port), --mode browser with sticky (accepted, as before). */
    const usage_case allowed[] = {
        {{"-R", "10", "--url", "http://127.0.0.1:1/", "scenario", "get"},
         "is unreachable: connect failed: Connection refused"},
        {{"-R", "10", "--url", "http://127.0.0.1:1/", "scenario", "counter"},
         "is unreachable: connect failed: Connection refused"},
        {{"--mode", "browser", "--url", "http://127.0.0.1:1/", "scenario", "sticky"},
         "is unreachable: connect failed: Connection refused"},
        {{"--workload", "io", "--url", "http://127.0.0.1:1/", "scenario", "sticky"},
         "is unreachable: connect failed: Connection refused"},
        /* -d keeps wrk's bare seconds */
        {{"-d", "5", "--url", "http://127.0.0.1:1/", "scenario", "get"},
         "is unreachable: connect failed: Connection refused"},
        {{"-m", "POST", "-H", "X-A: 1", "-H", "X-B: 2", "--url", "http://127.0.0.1:1/", "scenario",
          "get"},
         "is unreachable: connect failed: Connection refused"},
    };
    for (size_t i = 0; i < HM_ARRAY_LEN(allowed); i++) {
        char *args[16] = {(char *)hammer, "--timeout", "2s"};
        size_t n = 3;
        for (size_t k = 0; allowed[i].args[k]; k++)
            args[n++] = (char *)allowed[i].args[k];
        proc p;
        int rc = proc_run(&p, args, 60);
        if (rc != 2 || !strstr(p.out, allowed[i].says))
            HM_FAIL_("allowed case %zu: exit %d, output:\n%s", i, rc, p.out);
    }
    printf("%zu allowed combinations pass the checks\n", HM_ARRAY_LEN(allowed));
    return 0;
}

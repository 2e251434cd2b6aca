/* hammer flow FILE against the embedded bench_app: what each step does on
 * the wire and in the report, and how a flow that does not fit the app
 * stops the run.
 * argv: HAMMER */
#include "run_util.h"

#include <stdbool.h>
#include <stdarg.h>
#include <sys/stat.h>

static const char *hammer;
static char dir[256], json_path[300];

static const char *put(const char *name, const char *text)
{
    static char path[4][512];
    static int k;
    char *p = path[k++ % 4];
    snprintf(p, 512, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    ASSERT(f);
    fputs(text, f);
    fclose(f);
    return p;
}

/* Runs hammer with args (NULL-terminated) plus --json; returns the exit code. */
static int hm(proc *p, int timeout_s, ...)
{
    char *argv[40];
    int n = 0;
    argv[n++] = (char *)hammer;
    argv[n++] = "--json";
    argv[n++] = json_path;
    va_list ap;
    va_start(ap, timeout_s);
    for (char *a; (a = va_arg(ap, char *)) != NULL && n < 39;)
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    unlink(json_path);
    int rc = proc_run(p, argv, timeout_s);
    /* Every caller checks the code; say what hammer said when it is odd. */
    if (rc != 0 && rc != 2) fprintf(stderr, "hammer exited %d:\n%s\n", rc, p->out);
    return rc;
}

static json_t *row(json_t *j, const char *key, const char *name)
{
    return json_row(j, key, "name", name);
}

static long long count(json_t *j, const char *name)
{
    return json_int_at(row(j, "steps", name), "count");
}

/* A flow naming an action its page does not offer stops at the first VU
 * that loads the page: nothing is POSTed, exit 2, and the message says
 * where and what the page offers. */
static void missing_action(void)
{
    const char *f = put("typo.yaml", "steps:\n"
                                     "  - page: /bench/counter\n"
                                     "  - sse: open\n"
                                     "  - repeat: forever\n"
                                     "    steps:\n"
                                     "      - action: incremnt\n"
                                     "      - wait: patch\n");
    const char *modes[] = {"browser", "hammer"};
    for (int m = 0; m < 2; m++) {
        proc p;
        int rc = hm(&p, 60, "--mode", modes[m], "-c", "50", "-n", "5000", "flow", f, NULL);
        if (rc != 2) fprintf(stderr, "%s\n", p.out);
        ASSERT_EQ(rc, 2);
        ASSERT(strstr(p.out, "typo.yaml:6:9: flow 'flow', step 3.1 (action): the page "
                             "/bench/counter does not offer action 'incremnt' (it offers: "
                             "increment)"));
        json_t *j = load_json(json_path);
        ASSERT_EQ(json_int_at(j, "actions.sent"), 0);
        ASSERT_EQ(json_int_at(j, "passed"), 0);
        json_decref(j);
    }
    /* With another flow that fits, some actions may go out first: still
     * the input's fault, still exit 2. */
    f = put("half.yaml", "flows:\n"
                         "  - name: good\n"
                         "    steps: [{page: /bench/counter}, {sse: open}, {action: increment}]\n"
                         "  - name: bad\n"
                         "    steps: [{page: /bench/io}, {sse: open}, {action: nope}]\n");
    proc p;
    ASSERT_EQ(hm(&p, 60, "--mode", "browser", "-c", "20", "-n", "2000", "flow", f, NULL), 2);
    ASSERT(strstr(p.out, "half.yaml:5:45: flow 'bad', step 3 (action): the page /bench/io does "
                         "not offer action 'nope'"));
    /* A page step on something that is no php-via page. */
    f = put("health.yaml", "steps: [{page: /_health}, {sse: open}, {action: a}]\n");
    ASSERT_EQ(hm(&p, 60, "-n", "100", "flow", f, NULL), 2);
    ASSERT(strstr(p.out, "/_health is not a php-via page"));
    printf("a missing action stops the run at the first VU: 0 sent, exit 2, both models\n");
}

/* Mistakes found before the target is reached: a closed loopback port
 * would be "unreachable", but the file is read first. */
static void early_errors(void)
{
    proc p;
    const char *f = put("broken.yaml", "steps:\n  - page: /x\n  - thinkk: 1s\n");
    ASSERT_EQ(hm(&p, 30, "--url", "http://127.0.0.1:1", "flow", f, NULL), 2);
    ASSERT(strstr(p.out, "hammer: "));
    ASSERT(strstr(p.out, "broken.yaml:3:5: flow 'flow', step 2: expected a step"));
    ASSERT(!strstr(p.out, "unreachable"));
    char *a1[] = {(char *)hammer, "scenario", "flow", NULL};
    ASSERT_EQ(proc_run(&p, a1, 30), 2);
    ASSERT(strstr(p.out, "scenario flow reads a flow file: hammer flow FILE.yaml"));
    f = put("gets.yaml", "steps: [{get: /_health}]\n");
    ASSERT_EQ(hm(&p, 30, "-n", "10", "flow", f, NULL), 2);
    ASSERT(strstr(p.out, "fires no action, so -n"));
    ASSERT_EQ(hm(&p, 30, "--think", "10ms", "flow", f, NULL), 2);
    ASSERT(strstr(p.out, "--think does not apply to flows"));
    f = put("nav.yaml",
            "steps: [{page: /bench/counter}, {action: increment}, {page: /bench/io}]\n");
    ASSERT_EQ(hm(&p, 30, "--mode", "hammer", "flow", f, NULL), 2);
    ASSERT(strstr(p.out, "nav.yaml:1:54: flow 'flow', step 3 (page): a page step after the "
                         "flow's first action cannot run in the hammer model"));
    ASSERT_EQ(hm(&p, 30, "flow", "/nonexistent.yaml", NULL), 2);
    ASSERT(strstr(p.out, "cannot read flow file /nonexistent.yaml"));
    printf("bad files, a missing file, --think and -n without actions: exit 2 before any "
           "request\n");
}

/* A failed expectation is counted under its name and fails the run. */
static void failed_expectation(void)
{
    const char *f = put("expect.yaml", "steps:\n"
                                       "  - page: /bench/counter\n"
                                       "  - expect: {status: 200}\n"
                                       "  - sse: open\n"
                                       "  - repeat: forever\n"
                                       "    steps:\n"
                                       "      - action: increment\n"
                                       "      - wait: {signal: count}\n"
                                       "      - expect: {signal: count, equals: -1}\n"
                                       "        name: impossible\n"
                                       "      - expect: {signal: count, above: 0}\n");
    proc p;
    ASSERT_EQ(hm(&p, 60, "--mode", "browser", "-c", "4", "-n", "40", "flow", f, NULL), 1);
    ASSERT(strstr(p.out, "FAIL impossible: 0 held, 40 failed; first: flow 'flow', step 4.3 "
                         "(expect) at line 9: count is "));
    ASSERT(strstr(p.out, "Result            FAIL"));
    json_t *j = load_json(json_path);
    ASSERT_EQ(json_int_at(j, "actions.ok"), 40);
    json_t *imp = row(j, "checks", "impossible");
    ASSERT_EQ(json_int_at(imp, "failed"), 40);
    ASSERT_EQ(json_int_at(imp, "passed"), 0);
    ASSERT_EQ(json_int_at(row(j, "checks", "count above 0"), "passed"), 40);
    /* One status check per page load: a VU that starts after the 40 actions
     * are spent (a slow machine, ASan) loads no page. */
    long long pages = json_int_at(j, "latency_us.page.count");
    ASSERT(pages >= 1 && pages <= 4);
    ASSERT_EQ(json_int_at(row(j, "checks", "status 200"), "passed"), pages);
    ASSERT_EQ(json_int_at(j, "passed"), 0);
    json_decref(j);
    printf("a failed expectation: counted under its name (40 of 40), exit 1\n");
}

/* Values from every source reach the server: bench_app's counter sets
 * count to what the click carried plus one. */
static void values_reach_the_server(void)
{
    put("start.csv", "n\n500\n600\n700\n");
    const char *f = put("values.yaml", "data: {starts: start.csv}\n"
                                       "variables: {big: [2000, 3000]}\n"
                                       "steps:\n"
                                       "  - page: /bench/counter\n"
                                       "  - sse: open\n"
                                       "  - action: increment\n"
                                       "    signals: {count: {csv: starts.n}}\n"
                                       "  - wait: {signal: count, at_least: 501}\n"
                                       "  - expect: {signal: count, at_most: 701}\n"
                                       "    name: from the CSV\n"
                                       "  - set: {before: {signal: count}}\n"
                                       "  - action: increment\n"
                                       "    signals: {count: {var: big}}\n"
                                       "  - wait: {signal: count, above: 2000}\n"
                                       "  - expect: {signal: count, not: {var: before}}\n"
                                       "    name: from a variable\n"
                                       "  - action: increment\n"
                                       "    signals: {count: {random: [10000, 20000]}}\n"
                                       "  - wait: {signal: count, at_least: 10001}\n"
                                       "  - expect: {signal: count, at_most: 20001}\n"
                                       "    name: from a random range\n"
                                       "  - action: increment\n"
                                       "  - wait: {signal: count, changed_by: 1}\n"
                                       "    name: last-seen plus one\n"
                                       "  - get: /_health?vu={{ vu }}&i={{ iteration }}\n"
                                       "  - expect: {status: 200}\n"
                                       "  - think: 10ms..30ms\n"
                                       "  - close\n");
    proc p;
    int rc = hm(&p, 60, "--mode", "browser", "-c", "3", "-n", "24", "flow", f, NULL);
    if (rc) fprintf(stderr, "%s\n", p.out);
    ASSERT_EQ(rc, 0);
    json_t *j = load_json(json_path);
    ASSERT_EQ(json_int_at(j, "actions.ok"), 24);
    const char *checks[] = {"from the CSV", "from a variable", "from a random range", "status 200"};
    for (int i = 0; i < 4; i++) {
        json_t *c = row(j, "checks", checks[i]);
        ASSERT_GT(json_int_at(c, "passed"), 0);
        ASSERT_EQ(json_int_at(c, "failed"), 0);
    }
    /* 24 actions, 4 per instance: 6 instances when none is cut short. A VU
     * may start an instance while another still has actions to claim; when
     * the budget runs out, that other VU's instance ends early (docs/flows.md:
     * the run ends when -n is spent). Each VU cuts at most one instance by at
     * most 3 actions, so at least (24 - 3 * 3) / 4 -> 4 instances complete. */
    long long whole = count(j, "last-seen plus one");
    ASSERT(whole >= 4 && whole <= 6);
    ASSERT_EQ(json_int_at(row(j, "steps", "last-seen plus one"), "failed"), 0);
    ASSERT_EQ(count(j, "close"), whole); /* no action after the last wait */
    ASSERT_GE(count(j, "get /_health?vu={{ vu }}&i={{ iteration }}"), whole);
    json_decref(j);
    printf("signals from CSV rows, variables, random ranges and the last-seen values reach "
           "the server\n");
}

/* changed_by after an action that sets the signal compares with the value
 * sent: bench_app's counter builds on it (100 -> 101), so changed_by 1
 * holds on every click, the first (last seen 0) and the later ones (last
 * seen 101). A wait that times out says what it saw. */
static void changed_by_after_override(void)
{
    const char *f = put("override.yaml", "steps:\n"
                                         "  - page: /bench/counter\n"
                                         "  - sse: open\n"
                                         "  - repeat: forever\n"
                                         "    steps:\n"
                                         "      - action: increment\n"
                                         "        signals: {count: 100}\n"
                                         "      - wait: {signal: count, changed_by: 1}\n"
                                         "        name: from the value sent\n");
    proc p;
    int rc = hm(&p, 60, "--mode", "browser", "-c", "3", "-n", "30", "flow", f, NULL);
    ASSERT_EQ(rc, 0);
    json_t *j = load_json(json_path);
    ASSERT_EQ(json_int_at(j, "actions.ok"), 30);
    ASSERT_EQ(count(j, "from the value sent"), 30);
    ASSERT_EQ(json_int_at(row(j, "steps", "from the value sent"), "failed"), 0);
    json_decref(j);

    /* changed_by 2 cannot hold (the server adds 1): the message names the
     * value sent, the value seen and the one expected, and what came. The
     * wait's timeout is short: it times out on every click by design. */
    f = put("wrong.yaml", "steps:\n"
                          "  - page: /bench/counter\n"
                          "  - sse: open\n"
                          "  - action: increment\n"
                          "    signals: {count: 100}\n"
                          "  - wait: {signal: count, changed_by: 2, timeout: 300ms}\n"
                          "  - action: increment\n"
                          "  - wait: {elements: nowhere, timeout: 300ms}\n");
    ASSERT_EQ(hm(&p, 60, "--mode", "browser", "-c", "1", "-n", "2", "flow", f, NULL), 1);
    j = load_json(json_path);
    json_t *w = row(j, "steps", "wait count changed_by 2");
    ASSERT_EQ(json_int_at(w, "failed"), 1);
    const char *why = json_string_value(json_object_get(w, "first_failure"));
    ASSERT(why);
    printf("changed_by 2: %s\n", why);
    ASSERT(strstr(why, "no matching patch within 0.300 s (1 patch since the action, 1 carrying "
                       "count): count was 100 when the last action was sent, is 101 (expected "
                       "changed_by 2: 102)"));
    w = row(j, "steps", "wait elements nowhere");
    why = json_string_value(json_object_get(w, "first_failure"));
    ASSERT(why);
    printf("elements: %s\n", why);
    ASSERT(strstr(why, "no matching patch within 0.300 s (1 patch since the action, 0 with "
                       "elements): none held \"nowhere\""));
    ASSERT(strstr(p.out, "count was 100 when the last action was sent, is 101"));
    json_decref(j);
    printf("changed_by compares with the value the action sent; a timed-out wait says what "
           "it saw\n");
}

/* weight: 3 and weight: 1 pick the flows 3:1; a repeat runs N times. */
static void weights_and_repeats(void)
{
    const char *f = put("weights.yaml", "flows:\n"
                                        "  - name: often\n"
                                        "    weight: 3\n"
                                        "    steps:\n"
                                        "      - page: /bench/counter\n"
                                        "      - sse: open\n"
                                        "      - action: increment\n"
                                        "        name: click often\n"
                                        "  - name: rarely\n"
                                        "    weight: 1\n"
                                        "    steps:\n"
                                        "      - page: /bench/io\n"
                                        "      - sse: open\n"
                                        "      - action: increment\n"
                                        "        name: click rarely\n");
    proc p;
    ASSERT_EQ(hm(&p, 60, "-c", "20", "-n", "4000", "flow", f, NULL), 0);
    json_t *j = load_json(json_path);
    long long often = count(j, "click often"), rarely = count(j, "click rarely");
    ASSERT_EQ(often + rarely, 4000);
    ASSERT(often > 2.5 * rarely && often < 3.6 * rarely);
    printf("hammer model: weights 3:1 picked %lld:%lld\n", often, rarely);
    json_decref(j);

    f = put("repeat.yaml", "steps:\n"
                           "  - page: /bench/counter\n"
                           "  - sse: open\n"
                           "  - repeat: 3\n"
                           "    steps:\n"
                           "      - action: increment\n"
                           "      - wait: {signal: count, changed_by: 1}\n"
                           "  - repeat: 5\n"
                           "    probability: 0.000001\n"
                           "    steps: [{get: /_health}]\n");
    ASSERT_EQ(hm(&p, 60, "--mode", "browser", "-c", "4", "-n", "60", "flow", f, NULL), 0);
    j = load_json(json_path);
    ASSERT_EQ(count(j, "action increment"), 60);
    ASSERT_EQ(count(j, "wait count changed_by 1"), 60);
    /* 20 instances of 3 clicks; a VU may start one more when the budget
     * runs out under it. */
    ASSERT_GE(count(j, "page /bench/counter"), 20);
    ASSERT_LE(count(j, "page /bench/counter"), 24);
    ASSERT_EQ(count(j, "get /_health"), 0);
    json_decref(j);
    printf("browser model: repeat 3 ran 3 clicks per instance; probability ~0 ran none\n");
}

/* The hammer model's senders walk the rest of the flow between actions:
 * a get goes out on the sender's connection outside -n and the action
 * counts, an expect status judges it, and repeats of gets run; over
 * HTTP/1.1 and HTTP/2 (4 stream slots on each of the 8 connections). */
static void hammer_walks_between_actions(void)
{
    const char *f = put("between.yaml", "check: {kind: net-increment, signal: count}\n"
                                        "steps:\n"
                                        "  - page: /bench/counter\n"
                                        "  - sse: open\n"
                                        "  - action: increment\n"
                                        "  - get: /_health\n"
                                        "    name: side\n"
                                        "  - expect: {status: 200}\n"
                                        "    name: side ok\n"
                                        "  - repeat: 2\n"
                                        "    steps: [{get: /_health, name: twice}]\n");
    const char *h2[] = {NULL, "--http2"};
    for (int k = 0; k < 2; k++) {
        proc p;
        if (h2[k])
            ASSERT_EQ(
                hm(&p, 60, "--http2", "--streams", "4", "-c", "8", "-n", "400", "flow", f, NULL),
                0);
        else
            ASSERT_EQ(hm(&p, 60, "-c", "8", "-n", "400", "flow", f, NULL), 0);
        json_t *j = load_json(json_path);
        ASSERT_EQ(json_int_at(j, "actions.sent"), 400);
        ASSERT_EQ(json_int_at(j, "actions.ok"), 400);
        ASSERT_EQ(count(j, "action increment"), 400);
        /* Each pass's steps after its action run once the sender claimed
         * its next action, so a sender's last action has none after it:
         * one fewer get per sender that sent (8 connections, or 32 stream
         * slots). The first of the 2 threads' pools to begin claims for
         * all its senders at once; the other's may find -n (partly) spent. */
        long long side = count(j, "side"), twice = count(j, "twice");
        long long senders = h2[k] ? 8 * 4 : 8, used = 400 - side;
        if (used < senders / 2 || used > senders)
            HM_FAIL_("%lld senders sent actions, want %lld..%lld", used, senders / 2, senders);
        ASSERT_EQ(twice, 2 * side);
        ASSERT_EQ(json_int_at(row(j, "steps", "side"), "failed"), 0);
        ASSERT_EQ(json_int_at(row(j, "checks", "side ok"), "passed"), side);
        ASSERT_EQ(json_int_at(j, "passed"), 1);
        json_decref(j);
        printf("hammer model%s: 400 actions from %lld senders, %lld gets after them outside "
               "-n, %lld repeated, expect status on each\n",
               h2[k] ? " over HTTP/2" : "", used, side, twice);
    }
}

/* An action whose values cannot be made still takes its place in -n, in
 * its step's row as a failure with why; in the hammer model 200 000 of
 * them in a row run one after the other from the loop (they once nested
 * a call each, and the stack overflowed). */
static void unmakeable_actions(void)
{
    const char *f = put("unmakeable.yaml", "steps:\n"
                                           "  - page: /bench/counter\n"
                                           "  - sse: open\n"
                                           "  - repeat: forever\n"
                                           "    steps:\n"
                                           "      - action: increment\n"
                                           "        signals: {count: {signal: nosuchsignal}}\n");
    proc p;
    ASSERT_EQ(hm(&p, 60, "-c", "2", "-n", "200000", "flow", f, NULL), 1);
    json_t *j = load_json(json_path);
    ASSERT_EQ(json_int_at(j, "actions.sent"), 0);
    json_t *r = row(j, "steps", "action increment");
    ASSERT_EQ(json_int_at(r, "count"), 200000);
    ASSERT_EQ(json_int_at(r, "failed"), 200000);
    ASSERT(strstr(p.out, "signal nosuchsignal not seen on the stream yet"));
    json_decref(j);
    printf("hammer model: 200000 actions whose values cannot be made: each in -n, each a "
           "failure with why, none sent\n");
}

/* A think step paces a VU: a lower bound only (a slow machine is slower). */
static void think_paces(void)
{
    const char *f = put("think.yaml", "steps:\n"
                                      "  - page: /bench/counter\n"
                                      "  - sse: open\n"
                                      "  - repeat: forever\n"
                                      "    steps:\n"
                                      "      - think: 200ms..300ms\n"
                                      "      - action: increment\n");
    proc p;
    ASSERT_EQ(hm(&p, 60, "--mode", "browser", "-c", "2", "-n", "10", "flow", f, NULL), 0);
    json_t *j = load_json(json_path);
    /* 5 actions per VU, each after at least 200 ms */
    ASSERT(json_real_value(json_object_get(j, "wall_seconds")) >= 1.0);
    json_decref(j);
    printf("think 200ms..300ms: 5 clicks per VU took at least 1 s\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) HM_FAIL_("usage: %s HAMMER", argv[0]);
    hammer = argv[1];
    /* A directory of its own, whatever an earlier (failed) run left. */
    snprintf(dir, sizeof(dir), "/tmp/hammer-flow-run-XXXXXX");
    ASSERT(mkdtemp(dir));
    snprintf(json_path, sizeof(json_path), "%s/out.json", dir);
    early_errors();
    missing_action();
    failed_expectation();
    values_reach_the_server();
    changed_by_after_override();
    weights_and_repeats();
    hammer_walks_between_actions();
    unmakeable_actions();
    think_paces();
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return 0;
}

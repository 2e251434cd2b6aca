/* What a flow's steps compute (flow/flow.c): values from each source,
 * templates, signal names as php-via spells them, action bodies,
 * conditions, weighted choice and repeats; the action list of a page
 * (proto/via_html.c) for error messages; and the report's step rows and
 * checks (stats/steps.c). */
#include "hm_test.h"

#include "proto/via_html.h"
#include "flow/flow.h"
#include "stats/steps.h"

#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

static hm_flow_file *load(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ASSERT(f);
    fputs(text, f);
    fclose(f);
    hm_flow_file *ff = NULL;
    char why[512];
    if (hm_flow_load(path, &ff, why, sizeof(why)) < 0) HM_FAIL_("%s", why);
    return ff;
}

static char *eval_str(hm_flow_exec *x, const hm_flow_value *v)
{
    char why[200] = "";
    json_t *j = hm_flow_eval(x, v, why, sizeof(why));
    if (!j) return strdup(why);
    char *s = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);
    json_decref(j);
    return s;
}

static void values(void)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/people.csv", dir);
    FILE *csv = fopen(path, "w");
    fputs("name,age,zip\nann,31,0123\nbob,42,9999\n", csv);
    fclose(csv);
    hm_flow_file *f = load("v.yaml", "data: {people: people.csv}\n"
                                     "variables: {team: blue, pick: [x, y, z]}\n"
                                     "steps:\n"
                                     "  - page: /p/{{ people.name }}/{{vu}}-{{ iteration }}\n"
                                     "  - sse: open\n"
                                     "  - action: go\n"
                                     "    signals:\n"
                                     "      count: 7\n"
                                     "      label: \"7\"\n"
                                     "      age: {csv: people.age}\n"
                                     "      zip: {csv: people.zip}\n"
                                     "      dice: {random: [1, 6]}\n"
                                     "      ratio: {random: [0.5, 1.5]}\n"
                                     "      team: {var: team}\n"
                                     "      pick: {var: pick}\n"
                                     "      seen: {signal: focusRow}\n"
                                     "      hello: \"hi {{ team }}\"\n");
    hm_flow_exec x = {0};
    x.rng = 12345;
    /* Rows go in order across instances: the first instance gets row 0. */
    ASSERT_EQ(hm_flow_exec_start(&x, f, &f->flows[0], 7, 3), 0);
    char *page = hm_flow_expand(&x, f->flows[0].steps[0].path);
    ASSERT_STREQ(page, "/p/ann/7-3");
    hm_free(page);
    const hm_flow_step *a = &f->flows[0].steps[2];
    char *s;
    ASSERT_STREQ(s = eval_str(&x, &a->fields[0].value), "7");
    free(s);
    ASSERT_STREQ(s = eval_str(&x, &a->fields[1].value), "\"7\"");
    free(s);
    ASSERT_STREQ(s = eval_str(&x, &a->fields[2].value), "31"); /* a number cell */
    free(s);
    ASSERT_STREQ(s = eval_str(&x, &a->fields[3].value), "\"0123\""); /* not a JSON number */
    free(s);
    for (int i = 0; i < 200; i++) {
        char why[64];
        json_t *d = hm_flow_eval(&x, &a->fields[4].value, why, sizeof(why));
        ASSERT(json_is_integer(d));
        ASSERT_GE(json_integer_value(d), 1);
        ASSERT_LE(json_integer_value(d), 6);
        json_decref(d);
        json_t *r = hm_flow_eval(&x, &a->fields[5].value, why, sizeof(why));
        ASSERT(json_is_real(r));
        ASSERT(json_real_value(r) >= 0.5 && json_real_value(r) <= 1.5);
        json_decref(r);
    }
    ASSERT_STREQ(s = eval_str(&x, &a->fields[6].value), "\"blue\"");
    free(s);
    s = eval_str(&x, &a->fields[7].value); /* a list: one of its values per instance */
    ASSERT(!strcmp(s, "\"x\"") || !strcmp(s, "\"y\"") || !strcmp(s, "\"z\""));
    free(s);
    /* A signal not seen yet has no value, and says so. */
    ASSERT_STREQ(s = eval_str(&x, &a->fields[8].value),
                 "signal focusRow not seen on the stream yet");
    free(s);
    ASSERT_STREQ(s = eval_str(&x, &a->fields[9].value), "\"hi blue\"");
    free(s);

    /* The last-seen signals as php-via names them: TAB ids. */
    json_t *sig = json_loads("{\"count__bench_counter__3f2a9c\":5,\"focusRow__bench_"
                             "counter__3f2a9c\":2}",
                             0, NULL);
    x.signals = sig;
    ASSERT_STREQ(hm_flow_signal_key(sig, "count"), "count__bench_counter__3f2a9c");
    ASSERT(hm_flow_signal_key(sig, "nope") == NULL);
    ASSERT_STREQ(s = eval_str(&x, &a->fields[8].value), "2");
    free(s);
    /* The body's own fields go under the page's ids. */
    char why[200];
    char *body = hm_flow_action_fields(&x, a, sig, NULL, why, sizeof(why));
    ASSERT(body);
    json_t *b = json_loads(body, 0, NULL);
    ASSERT_EQ(json_integer_value(json_object_get(b, "count__bench_counter__3f2a9c")), 7);
    ASSERT(json_object_get(b, "count") == NULL);
    ASSERT_STREQ(json_string_value(json_object_get(b, "label")), "7");
    ASSERT_EQ(json_integer_value(json_object_get(b, "focusRow__bench_counter__3f2a9c")), 0);
    ASSERT_EQ(json_integer_value(json_object_get(b, "seen")), 2);
    json_decref(b);
    hm_free(body);
    /* What changed_by compares with: the signals as sent, the step's values
     * over the last-seen ones, under the same ids. */
    json_t *sent = NULL;
    body = hm_flow_action_fields(&x, a, sig, &sent, why, sizeof(why));
    ASSERT(body && sent);
    ASSERT_EQ(json_integer_value(json_object_get(sent, "count__bench_counter__3f2a9c")), 7);
    ASSERT_EQ(json_integer_value(json_object_get(sent, "focusRow__bench_counter__3f2a9c")), 2);
    ASSERT_EQ(json_integer_value(json_object_get(sent, "seen")), 2);
    ASSERT_EQ(json_integer_value(json_object_get(sig, "count__bench_counter__3f2a9c")), 5);
    b = json_loads(body, 0, NULL); /* a random value: the one drawn for the body */
    ASSERT_EQ(json_integer_value(json_object_get(sent, "dice")),
              json_integer_value(json_object_get(b, "dice")));
    json_decref(b);
    json_decref(sent);
    hm_free(body);

    /* The second instance takes the next row. */
    hm_flow_exec y = {0};
    ASSERT_EQ(hm_flow_exec_start(&y, f, &f->flows[0], 0, 0), 0);
    page = hm_flow_expand(&y, f->flows[0].steps[0].path);
    ASSERT_STREQ(page, "/p/bob/0-0");
    hm_free(page);
    hm_flow_exec_end(&y);
    json_decref(sig);
    hm_flow_exec_end(&x);
    hm_flow_free(f);
    printf("values: literals typed as YAML, CSV rows in order, random in range, variables, "
           "templates, signals by php-via id\n");
}

static bool holds(hm_flow_exec *x, const hm_flow_cond *c, const char *signals, int status,
                  char *why)
{
    json_t *sig = json_loads(signals, 0, NULL);
    bool h = hm_flow_cond_holds(x, c, sig, status, why, 256);
    json_decref(sig);
    return h;
}

static void conditions(void)
{
    hm_flow_file *f = load("c.yaml", "variables: {target: 10}\n"
                                     "steps:\n"
                                     "  - page: /x\n"
                                     "  - sse: open\n"
                                     "  - expect: {status: [200, 204]}\n"
                                     "  - expect: {signal: count, equals: 10}\n"
                                     "  - expect: {signal: count, not: {var: target}}\n"
                                     "  - expect: {signal: count, above: 9}\n"
                                     "  - expect: {signal: count, below: 9}\n"
                                     "  - expect: {signal: count, at_least: 10}\n"
                                     "  - expect: {signal: count, at_most: 10}\n"
                                     "  - expect: {signal: count, changed_by: 1}\n"
                                     "  - expect: {signal: name, contains: bob}\n"
                                     "  - expect: {signal: count}\n");
    hm_flow_exec x = {0};
    ASSERT_EQ(hm_flow_exec_start(&x, f, &f->flows[0], 0, 0), 0);
    const hm_flow_step *e = f->flows[0].steps + 2;
    char why[256] = "";
    const char *sig = "{\"count__x__ab\":10,\"name\":\"bobby\"}";
    ASSERT(holds(&x, &e[0].cond, sig, 204, why));
    ASSERT(!holds(&x, &e[0].cond, sig, 500, why));
    ASSERT_STREQ(why, "status was 500");
    ASSERT(!holds(&x, &e[0].cond, sig, -HM_ECLOSED, why));
    ASSERT(strstr(why, "the request failed"));
    ASSERT(holds(&x, &e[1].cond, sig, 0, why));
    ASSERT(!holds(&x, &e[2].cond, sig, 0, why)); /* not {var: target} = not 10 */
    ASSERT_STREQ(why, "count is 10 (expected not 10)");
    ASSERT(holds(&x, &e[3].cond, sig, 0, why));
    ASSERT(!holds(&x, &e[4].cond, sig, 0, why));
    ASSERT_STREQ(why, "count is 10 (expected below 9)");
    ASSERT(holds(&x, &e[5].cond, sig, 0, why));
    ASSERT(holds(&x, &e[6].cond, sig, 0, why));
    /* changed_by compares with the signals when the last action went out. */
    ASSERT(!holds(&x, &e[7].cond, sig, 0, why));
    ASSERT(strstr(why, "no numeric value when the last action was sent"));
    x.at_send = json_loads("{\"count__x__ab\":9}", 0, NULL);
    ASSERT(holds(&x, &e[7].cond, sig, 0, why));
    json_decref(x.at_send);
    x.at_send = json_loads("{\"count__x__ab\":3}", 0, NULL);
    ASSERT(!holds(&x, &e[7].cond, sig, 0, why));
    ASSERT_STREQ(why,
                 "count was 3 when the last action was sent, is 10 (expected changed_by 1: 4)");
    ASSERT(holds(&x, &e[8].cond, sig, 0, why));
    ASSERT(holds(&x, &e[9].cond, sig, 0, why));
    ASSERT(!holds(&x, &e[9].cond, "{}", 0, why));
    ASSERT_STREQ(why, "count not seen on the stream");
    /* Integers and reals of the same value are equal. */
    ASSERT(holds(&x, &e[1].cond, "{\"count\":10.0}", 0, why));
    hm_flow_exec_end(&x);
    hm_flow_free(f);
    printf("conditions: status lists, every comparison, changed_by from the last send\n");
}

/* The walk: repeats N times, with a probability, and "forever" until the
 * budget ends; weights pick flows in proportion. */
typedef struct counter_exec {
    int leaves, budget;
} counter_exec;

static int count_leaf(hm_flow_exec *x, const hm_flow_step *s)
{
    counter_exec *c = x->self;
    (void)s;
    c->leaves++;
    return HM_FLOW_NEXT;
}

static bool count_budget(hm_flow_exec *x)
{
    counter_exec *c = x->self;
    return c->budget-- > 0;
}

static void walking(void)
{
    hm_flow_file *f = load("w.yaml", "flows:\n"
                                     "  - name: three\n"
                                     "    weight: 3\n"
                                     "    steps:\n"
                                     "      - repeat: 4\n"
                                     "        steps: [{get: /a}, {get: /b}]\n"
                                     "      - repeat: 1000\n"
                                     "        probability: 0.5\n"
                                     "        steps: [{get: /c}]\n"
                                     "  - name: one\n"
                                     "    steps:\n"
                                     "      - repeat: forever\n"
                                     "        steps: [{get: /d}]\n");
    counter_exec c = {0};
    hm_flow_exec x = {.leaf = count_leaf, .budget_left = count_budget, .self = &c, .rng = 99};
    ASSERT_EQ(hm_flow_walk(&x, f->flows[0].steps, 1), HM_FLOW_NEXT);
    ASSERT_EQ(c.leaves, 8);
    /* With p = 0.5 a pass goes on with probability one half: over many
     * walks the mean number of passes is near 1. */
    int total = 0;
    for (int i = 0; i < 2000; i++) {
        c.leaves = 0;
        hm_flow_walk(&x, f->flows[0].steps + 1, 1);
        total += c.leaves;
    }
    ASSERT(total > 1600 && total < 2400);
    c.leaves = 0;
    c.budget = 25;
    ASSERT_EQ(hm_flow_walk(&x, f->flows[1].steps, 1), HM_FLOW_STOP);
    ASSERT_EQ(c.leaves, 25);
    int picks[2] = {0};
    for (int i = 0; i < 40000; i++)
        picks[hm_flow_pick(f, &x.rng) == &f->flows[0] ? 0 : 1]++;
    ASSERT(picks[0] > 3 * picks[1] * 0.9 && picks[0] < 3 * picks[1] * 1.1);
    hm_flow_free(f);
    printf("walk: repeat N, probability, forever until the budget; weights 3:1 pick 3:1\n");
}

/* The cursor stops at each leaf and goes on later: it gives the leaves
 * in the walk's order, through repeats nested deeper than its inline
 * frames, and ends a "forever" repeat when the budget does. */
static int path_leaf(hm_flow_exec *x, const hm_flow_step *s)
{
    char *seen = x->self;
    strncat(seen, s->path + 1, 1);
    return HM_FLOW_NEXT;
}

static void cursor(void)
{
    hm_flow_file *f = load("c.yaml", "flows:\n"
                                     "  - name: deep\n"
                                     "    steps:\n"
                                     "      - {get: /a}\n"
                                     "      - repeat: 2\n"
                                     "        steps:\n"
                                     "          - repeat: 1\n"
                                     "            steps:\n"
                                     "              - repeat: 1\n"
                                     "                steps:\n"
                                     "                  - repeat: 1\n"
                                     "                    steps:\n"
                                     "                      - repeat: 2\n"
                                     "                        steps: [{get: /b}, {get: /c}]\n"
                                     "          - {get: /d}\n"
                                     "      - {get: /e}\n"
                                     "  - name: endless\n"
                                     "    steps:\n"
                                     "      - repeat: forever\n"
                                     "        steps: [{get: /f}, {get: /g}]\n");
    char walked[64] = "", stepped[64] = "";
    hm_flow_exec x = {.leaf = path_leaf, .self = walked, .rng = 7};
    ASSERT_EQ(hm_flow_walk(&x, f->flows[0].steps, f->flows[0].n_steps), HM_FLOW_NEXT);
    ASSERT_STREQ(walked, "abcbcdbcbcde");
    hm_flow_cursor cu;
    hm_flow_cursor_start(&cu, f->flows[0].steps, f->flows[0].n_steps);
    const hm_flow_step *s;
    int rc, deepest = 0;
    while ((s = hm_flow_cursor_next(&x, &cu, &rc))) {
        strncat(stepped, s->path + 1, 1);
        if (cu.depth > deepest) deepest = cu.depth;
    }
    ASSERT_EQ(rc, HM_FLOW_NEXT);
    ASSERT_STREQ(stepped, walked);
    ASSERT_EQ(deepest, 6);
    ASSERT(cu.frames != cu.inline_frames); /* it grew past its inline frames */
    hm_flow_cursor_free(&cu);
    ASSERT(cu.frames == cu.inline_frames);
    counter_exec c = {.budget = 2};
    x.self = &c;
    x.budget_left = count_budget;
    stepped[0] = 0;
    hm_flow_cursor_start(&cu, f->flows[1].steps, f->flows[1].n_steps);
    while ((s = hm_flow_cursor_next(&x, &cu, &rc)))
        strncat(stepped, s->path + 1, 1);
    ASSERT_EQ(rc, HM_FLOW_STOP);
    ASSERT_STREQ(stepped, "fgfg");
    hm_flow_cursor_free(&cu);
    hm_flow_free(f);
    printf("cursor: leaf by leaf in the walk's order, 6 frames deep, forever ends with the "
           "budget\n");
}

static void action_list(void)
{
    const char *html = "<button data-on:click=\"@post('/_action/increment')\">+</button>"
                       "<div data-on:keydown=\"$d = evt.key; @post('/app/_action/navigate')\">"
                       "<a data-on-click=\"@post('/_action/save-3f2a')\">old</a>"
                       "<i data-on:click=\"@post('/_action/increment')\"></i>"
                       "<script>@post('/_action/hidden')</script>";
    char buf[128];
    ASSERT_EQ(hm_via_list_actions(html, strlen(html), buf, sizeof(buf)), 3);
    ASSERT_STREQ(buf, "increment, navigate, save");
    ASSERT_EQ(hm_via_list_actions("<p>none</p>", 11, buf, sizeof(buf)), 0);
    ASSERT_STREQ(buf, "");
    printf("a page's actions listed for messages: each once, hashes dropped\n");
}

static void report(void)
{
    hm_steps *t0, *t1, *all;
    ASSERT_EQ(hm_steps_create(&t0, 2, 1), 0);
    ASSERT_EQ(hm_steps_create(&t1, 2, 1), 0);
    ASSERT_EQ(hm_steps_create(&all, 2, 1), 0);
    hm_steps_name_row(all, 0, "f", "page /x");
    hm_steps_name_row(all, 1, "f", "wait patch");
    hm_steps_name_check(all, 0, "f", "count equals 1");
    hm_steps_record(t0, 0, 1000, NULL);
    hm_steps_record(t1, 0, 3000, NULL);
    hm_steps_record(t1, 1, 5000, "timed out");
    hm_steps_check(t0, 0, true, NULL);
    hm_steps_check(t1, 0, false, "count is 2");
    hm_steps_merge(all, t0);
    hm_steps_merge(all, t1);
    ASSERT_EQ(all->rows[0].count, 2);
    ASSERT_EQ(hm_hdr_max(&all->rows[0].us), hm_hdr_max(&t1->rows[0].us));
    ASSERT_EQ(all->rows[1].failed, 1);
    ASSERT_STREQ(all->rows[1].first_failure, "timed out");
    ASSERT_EQ(all->checks[0].passed, 1);
    ASSERT_EQ(all->checks[0].failed, 1);
    ASSERT(!hm_steps_passed(all));
    json_t *root = json_object();
    hm_steps_json(root, all);
    json_t *rows = json_object_get(root, "steps"), *checks = json_object_get(root, "checks");
    ASSERT_EQ(json_array_size(rows), 2);
    ASSERT_STREQ(json_string_value(json_object_get(json_array_get(rows, 1), "name")), "wait patch");
    ASSERT_EQ(json_integer_value(
                  json_object_get(json_object_get(json_array_get(rows, 0), "latency_us"), "count")),
              2);
    ASSERT_STREQ(json_string_value(json_object_get(json_array_get(checks, 0), "first_failure")),
                 "count is 2");
    json_decref(root);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    hm_steps_print(mem, all);
    fclose(mem);
    ASSERT(strstr(text, "page /x"));
    ASSERT(strstr(text, "FAIL count equals 1: 1 held, 1 failed; first: count is 2"));
    free(text);
    hm_steps_free(t0);
    hm_steps_free(t1);
    hm_steps_free(all);
    printf("report: per-thread rows merge; a failed row or check fails the run\n");
}

int main(void)
{
    /* A directory of its own, whatever an earlier (failed) run left. */
    snprintf(dir, sizeof(dir), "/tmp/hammer-flow-values-XXXXXX");
    ASSERT(mkdtemp(dir));
    values();
    conditions();
    walking();
    cursor();
    action_list();
    report();
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return 0;
}

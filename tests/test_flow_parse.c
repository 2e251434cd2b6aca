/* Flow files (flow/flow_parse.c): the examples parse into the steps
 * they spell, and every kind of mistake is reported with FILE:LINE:COL,
 * the flow, the step and what was expected there.
 * argv: EXAMPLES_DIR (examples/flows) */
#include "hm_test.h"

#include "flow/flow.h"

#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

/* Writes text to NAME in the scratch directory; returns the path. */
static const char *put(const char *name, const char *text)
{
    static char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ASSERT(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* Loads text, which must fail, and checks that the message holds each of
 * the NULL-terminated fragments. */
static void bad(const char *text, ...)
{
    const char *path = put("bad.yaml", text);
    hm_flow_file *f = NULL;
    char why[1024] = "";
    int rc = hm_flow_load(path, &f, why, sizeof(why));
    if (rc == 0) HM_FAIL_("loaded, but should not have:\n%s", text);
    ASSERT(f == NULL);
    va_list ap;
    va_start(ap, text);
    for (const char *frag; (frag = va_arg(ap, const char *)) != NULL;)
        if (!strstr(why, frag)) HM_FAIL_("message lacks \"%s\":\n  %s\nfor:\n%s", frag, why, text);
    va_end(ap);
    printf("ok: %s\n", why + strlen(dir) + 1);
}

static hm_flow_file *good(const char *path)
{
    hm_flow_file *f = NULL;
    char why[1024] = "";
    if (hm_flow_load(path, &f, why, sizeof(why)) < 0) HM_FAIL_("%s: %s", path, why);
    return f;
}

static void examples(const char *ex)
{
    static const char *const names[] = {"counter", "cpu", "io", "spreadsheet", "spreadsheet-live"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char path[512];
        snprintf(path, sizeof(path), "%s/%s.yaml", ex, names[i]);
        hm_flow_file *f = good(path);
        ASSERT_EQ(f->n_flows, 1);
        ASSERT_STREQ(f->flows[0].name, names[i]);
        ASSERT(f->has_action);
        ASSERT_NE(f->check.check, HM_CHECK_NONE);
        /* page, sse, then the repeat that holds the click */
        ASSERT_EQ(f->flows[0].prologue, 2);
        ASSERT_EQ(f->flows[0].steps[0].kind, HM_FLOW_PAGE);
        ASSERT_EQ(f->flows[0].steps[1].kind, HM_FLOW_SSE);
        const hm_flow_step *rep = &f->flows[0].steps[2];
        ASSERT_EQ(rep->kind, HM_FLOW_REPEAT);
        ASSERT_EQ(rep->times, 0);
        ASSERT_EQ(rep->steps[0].kind, HM_FLOW_ACTION);
        ASSERT_EQ(rep->steps[1].kind, HM_FLOW_WAIT);
        /* the page step knows the action its page must offer */
        ASSERT_EQ(f->flows[0].steps[0].n_offers, 1);
        ASSERT(f->flows[0].steps[0].offers[0] == &rep->steps[0]);
        char why[256];
        ASSERT_EQ(hm_flow_check_hammer(f, why, sizeof(why)), 0);
        hm_flow_free(f);
    }
    hm_flow_file *f = NULL;
    char path[512];
    snprintf(path, sizeof(path), "%s/counter.yaml", ex);
    f = good(path);
    ASSERT_EQ(f->check.check, HM_CHECK_NET_INCREMENT);
    ASSERT_STREQ(f->check_signal, "count");
    ASSERT_EQ(f->n_rows, 4); /* page, sse, action, wait */
    ASSERT_STREQ(f->row_name[3], "wait count changed_by 1");
    ASSERT_EQ(f->flows[0].steps[2].steps[1].cond.op, HM_FLOW_OP_CHANGED_BY);
    hm_flow_free(f);
    printf("the five examples parse into page, sse, repeat {action, wait}\n");
}

/* Every feature of the format in one file, read back. */
static void everything(void)
{
    put("users.csv", "name,age\nann,31\n\"bob, jr\",\"007\"\n");
    const char *path = put("all.yaml", "name: shop\n"
                                       "check: {kind: constant, signal: count, value: 65451}\n"
                                       "data:\n"
                                       "  users: {file: users.csv, order: random}\n"
                                       "variables:\n"
                                       "  greeting: hello\n"
                                       "  colour: [red, green]\n"
                                       "flows:\n"
                                       "  - name: browse\n"
                                       "    weight: 3\n"
                                       "    steps:\n"
                                       "      - page: /shop/{{ users.name }}\n"
                                       "        name: shop page\n"
                                       "        timeout: 2s\n"
                                       "      - sse: open\n"
                                       "      - think: 1s..3s\n"
                                       "      - set: {n: {random: [1, 6]}}\n"
                                       "      - action: add\n"
                                       "        signals:\n"
                                       "          qty: {var: n}\n"
                                       "          who: {csv: users.name}\n"
                                       "          note: \"5\"\n"
                                       "          price: 2.5\n"
                                       "          tag: {one_of: [a, b]}\n"
                                       "          same: {signal: count}\n"
                                       "          obj: {literal: {x: [1, 2]}}\n"
                                       "          dec: 0123\n"
                                       "          hex: 0x1f\n"
                                       "      - wait: {signal: count, at_least: 1, timeout: 3s}\n"
                                       "      - expect: {status: [200, 204]}\n"
                                       "        name: added\n"
                                       "      - repeat: 2\n"
                                       "        probability: 0.5\n"
                                       "        steps:\n"
                                       "          - get: /api/{{ greeting }}\n"
                                       "      - close\n"
                                       "  - name: idle\n"
                                       "    weight: 0\n"
                                       "    steps:\n"
                                       "      - get: /\n");
    hm_flow_file *f = good(path);
    ASSERT_STREQ(f->name, "shop");
    ASSERT_EQ(f->n_flows, 2);
    ASSERT_DBL_NEAR(f->total_weight, 3.0, 1e-9);
    ASSERT_EQ(f->check.check, HM_CHECK_CONSTANT);
    ASSERT_EQ(f->check.expected, 65451);
    ASSERT_EQ(f->n_data, 1);
    ASSERT_EQ(f->data[0].n_rows, 2);
    ASSERT(f->data[0].random);
    ASSERT_STREQ(f->data[0].cells[2], "bob, jr");
    ASSERT_STREQ(f->data[0].cells[3], "007");
    const hm_flow *fl = &f->flows[0];
    ASSERT_EQ(fl->n_steps, 9);
    ASSERT_STREQ(fl->steps[0].label, "shop page");
    ASSERT_EQ(fl->steps[0].timeout_ns, 2000000000LL);
    ASSERT_EQ(fl->steps[2].think_min_ns, 1000000000LL);
    ASSERT_EQ(fl->steps[2].think_max_ns, 3000000000LL);
    const hm_flow_step *a = &fl->steps[4];
    ASSERT_EQ(a->n_fields, 9);
    ASSERT_EQ(a->fields[0].value.src, HM_FLOW_VAR);
    ASSERT_EQ(a->fields[1].value.src, HM_FLOW_CSV);
    ASSERT(json_is_string(a->fields[2].value.json)); /* "5" quoted: a string */
    ASSERT(json_is_real(a->fields[3].value.json));
    ASSERT_EQ(a->fields[4].value.src, HM_FLOW_ONE_OF);
    ASSERT_EQ(a->fields[5].value.src, HM_FLOW_SIGNAL);
    ASSERT(json_is_object(a->fields[6].value.json));
    ASSERT_EQ(json_integer_value(a->fields[7].value.json), 123); /* YAML 1.2: not octal */
    ASSERT_EQ(json_integer_value(a->fields[8].value.json), 31);
    ASSERT_EQ(fl->steps[5].cond.op, HM_FLOW_OP_AT_LEAST);
    ASSERT_EQ(fl->steps[5].timeout_ns, 3000000000LL);
    ASSERT_EQ(fl->steps[6].cond.n_status, 2);
    ASSERT_STREQ(f->check_name[0], "added");
    ASSERT_EQ(fl->steps[7].times, 2);
    ASSERT_DBL_NEAR(fl->steps[7].probability, 0.5, 1e-9);
    ASSERT_EQ(fl->steps[8].kind, HM_FLOW_CLOSE);
    ASSERT_EQ(fl->prologue, 4);
    char why[512];
    /* A close after the first action: browser model only. */
    ASSERT_EQ(hm_flow_check_hammer(f, why, sizeof(why)), -EINVAL);
    ASSERT(strstr(why, "all.yaml:36:9: flow 'browse', step 9 (close): a close step after the "
                       "flow's first action cannot run in the hammer model"));
    hm_flow_free(f);
    printf("every step, value source, data file and option reads back\n");
}

static void mistakes(void)
{
    bad("steps: [page: /x\n", "bad.yaml:2:1: not valid YAML", NULL);
    bad("", "the file is empty", NULL);
    bad("- page: /x\n", "bad.yaml:1:1:", "expected a mapping with flows:", NULL);
    bad("flows:\n  - name: a\n    steps:\n      - click: button\n",
        "bad.yaml:4:9: flow 'a', step 1: expected a step: one of page, sse, action", NULL);
    bad("steps:\n  - page: /x\n  - sse: open\n  - action: inc\n    signal: {a: 1}\n",
        "bad.yaml:5:5: flow 'flow', step 3 (action): unknown key 'signal' in an action step "
        "(expected one of: action,signals,name,timeout)",
        NULL);
    bad("steps:\n  - action: inc\n",
        "bad.yaml:2:5: flow 'flow', step 1 (action): no page step before it", NULL);
    bad("steps:\n  - page: /x\n  - wait: patch\n",
        "bad.yaml:3:5: flow 'flow', step 2 (wait): no sse step since the page", NULL);
    bad("steps:\n  - page: /x\n  - think: soon\n",
        "bad.yaml:3:12: flow 'flow', step 2 (think): expected a pause such as 500ms, 2s or "
        "1s..3s, got 'soon'",
        NULL);
    bad("steps:\n  - page: x\n", "bad.yaml:2:11:", "expected a path starting with /", NULL);
    bad("steps:\n  - page: /x\n  - repeat: 3\n", "step 2 (repeat): a repeat needs steps:", NULL);
    bad("steps:\n  - page: /x\n  - repeat: lots\n    steps: [{get: /}]\n",
        "bad.yaml:3:13:", "expected a count (1 or more) or 'forever', got 'lots'", NULL);
    bad("steps:\n  - page: /x\n  - repeat: 2\n    probability: 2\n    steps: [{get: /}]\n",
        "bad.yaml:4:18:", "a probability above 0 and at most 1", NULL);
    bad("steps:\n  - page: /u/{{ user }}\n",
        "bad.yaml:2:5: flow 'flow', step 1 (page): '{{ user }}' names no variable", NULL);
    bad("steps:\n  - page: /x\n  - sse: open\n  - action: a\n    signals: {n: {var: nope}}\n",
        "step 3 (action): {var: nope} names no variable", NULL);
    bad("steps:\n  - page: /x\n  - sse: open\n  - wait: {equals: 3}\n",
        "bad.yaml:4:20:", "'equals' compares a signal: add signal: NAME", NULL);
    bad("steps:\n  - page: /x\n  - sse: open\n  - wait: {signal: n, above: many}\n",
        "bad.yaml:4:30:", "expected a number, got 'many'", NULL);
    bad("steps:\n  - page: /x\n  - sse: open\n  - expect: {}\n",
        "step 3 (expect): expected status: CODE or signal: NAME", NULL);
    bad("steps:\n  - page: /x\n  - expect: {status: 999}\n",
        "bad.yaml:3:22:", "expected an HTTP status (100..599) or a list of them, got '999'", NULL);
    bad("steps:\n  - page: /x\n  - sse: open\n  - action: a\n    signals: {via_ctx: x}\n",
        "bad.yaml:5:15:", "via_ctx is the page's own", NULL);
    bad("steps:\n  - page: /x\n    page: /y\n", "bad.yaml:3:5:", "key 'page' appears twice", NULL);
    bad("steps:\n  - page: /x\n    get: /y\n",
        "bad.yaml:3:5:", "one step per list item ('get' starts another)", NULL);
    bad("check: {kind: sum, signal: count}\nsteps: [{page: /x}]\n", "bad.yaml:1:15:",
        "unknown check kind 'sum' (expected net-increment, constant, spreadsheet, table or "
        "none)",
        NULL);
    bad("check: {kind: constant, signal: count}\nsteps: [{page: /x}]\n",
        "a constant check needs value: N", NULL);
    bad("flows:\n  - name: a\n    weight: 0\n    steps: [{get: /}]\n", "every flow has weight 0",
        NULL);
    bad("flows:\n  - name: a\n    steps: [{get: /}]\n  - name: a\n    steps: [{get: /}]\n",
        "bad.yaml:4:11:", "a second flow named 'a'", NULL);
    bad("flows:\n  - steps: [{get: /}]\n    wieght: 2\n",
        "bad.yaml:3:5:", "unknown key 'wieght' in a flow (expected one of: name,weight,steps)",
        NULL);
    bad("data: {u: {file: nowhere.csv}}\nsteps: [{get: /}]\n", "bad.yaml:1:18:", "cannot read",
        "nowhere.csv", NULL);
    put("short.csv", "a,b\n1,2\n3\n");
    bad("data: {u: short.csv}\nsteps: [{get: /}]\n",
        "short.csv line 3 has 1 fields; its header "
        "has 2",
        NULL);
    put("ok.csv", "a,b\n1,2\n");
    bad("data: {u: ok.csv}\nsteps:\n  - page: /x\n  - sse: open\n  - action: go\n    signals: "
        "{v: {csv: u.c}}\n",
        "data file 'u'", "has no column 'c'", NULL);
    bad("steps: [{get: /}]\n---\nsteps: [{get: /}]\n", "bad.yaml:3:1: a second YAML document",
        NULL);
    bad("steps:\n  - page: /x\n  - sse: open\n  - action: a\n    signals: {n: [1, 2]}\n",
        "bad.yaml:5:18:", "expected a value, got a list", NULL);
    bad("steps:\n  - page: /x\n  - sse: open\n  - action: a\n    signals: {n: {random: [5, 1]}}\n",
        "[MIN, MAX] with MIN <= MAX", NULL);
    printf("every mistake names FILE:LINE:COL, the flow, the step and what was expected\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) HM_FAIL_("usage: %s EXAMPLES_DIR", argv[0]);
    /* A directory of its own, whatever an earlier (failed) run left. */
    snprintf(dir, sizeof(dir), "/tmp/hammer-flow-parse-XXXXXX");
    ASSERT(mkdtemp(dir));
    examples(argv[1]);
    everything();
    mistakes();
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return 0;
}

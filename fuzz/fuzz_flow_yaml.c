/* fuzz_flow_yaml.c — the flow file parser (src/flow/flow_parse.c,
 * hm_flow_load), as `hammer flow FILE.yaml` reads a file the user wrote.
 *
 * The payload is the flow file. It is written to flow.yaml in the scratch
 * directory, next to users.csv (the data file of tests/test_flow_parse.c,
 * so `data: {u: users.csv}` resolves), and loaded on a coroutine-sized
 * stack. A file is either loaded or refused with a message naming the file
 * and where ("flow.yaml:LINE:COL: ..."); a loaded one is walked whole:
 * every step says where it is, and every row, check, wait and action index
 * lies within the file's counts. Then the hammer-model check runs on it.
 * Inputs that name /dev, /proc or /sys are skipped (a data file there is
 * the machine's, not the parser's).
 *
 * Flags (byte 0):
 *   bit 0  the payload holds the flow up to its first NUL byte and
 *          users.csv after it (else users.csv is the unit test's) */
#include "fuzz_common.h"

#include "base/hm_base.h"
#include "flow/flow.h"

#include <string.h>

enum { F_OWN_CSV = 1 };

static const char UNIT_CSV[] = "name,age\nann,31\n\"bob, jr\",\"007\"\n";

static void walk(const hm_flow_file *f, const hm_flow_step *steps, int n)
{
    HM_FUZZ_CHECK(n >= 0 && (n == 0 || steps));
    for (int i = 0; i < n; i++) {
        const hm_flow_step *s = &steps[i];
        HM_FUZZ_CHECK(s->where && s->where[0]);
        HM_FUZZ_CHECK(s->line >= 1 && s->col >= 1);
        HM_FUZZ_CHECK(s->row >= -1 && s->row < f->n_rows);
        if (s->kind == HM_FLOW_EXPECT) HM_FUZZ_CHECK(s->check >= 0 && s->check < f->n_checks);
        if (s->kind == HM_FLOW_WAIT) {
            HM_FUZZ_CHECK(s->wait >= 0 && s->wait < f->n_waits);
            HM_FUZZ_CHECK(f->waits[s->wait] == s);
        }
        if (s->kind == HM_FLOW_ACTION) {
            HM_FUZZ_CHECK(s->slot >= 0 && s->slot < f->n_actions);
            HM_FUZZ_CHECK(s->action && f->has_action);
        }
        if (s->kind == HM_FLOW_THINK) HM_FUZZ_CHECK(s->think_min_ns <= s->think_max_ns);
        HM_FUZZ_CHECK(s->n_fields >= 0 && (s->n_fields == 0 || s->fields));
        for (int k = 0; k < s->n_offers; k++)
            HM_FUZZ_CHECK(s->offers[k]->kind == HM_FLOW_ACTION);
        walk(f, s->steps, s->n_steps);
    }
}

static void body(void *arg)
{
    const hm_fuzz_input *in = arg;
    if (hm_fuzz_names_device(in)) return;
    size_t flow_len = in->len;
    const char *csv = UNIT_CSV;
    size_t csv_len = sizeof(UNIT_CSV) - 1;
    if (in->flags & F_OWN_CSV) {
        const uint8_t *nul = memchr(in->data, 0, in->len);
        flow_len = nul ? (size_t)(nul - in->data) : in->len;
        csv = nul ? (const char *)nul + 1 : "";
        csv_len = nul ? in->len - flow_len - 1 : 0;
    }
    hm_fuzz_file("users.csv", csv, csv_len);
    const char *path = hm_fuzz_file("flow.yaml", in->data, flow_len);

    hm_flow_file *f = NULL;
    char why[1024] = "";
    int rc = hm_flow_load(path, &f, why, sizeof(why));
    HM_FUZZ_CHECK(memchr(why, 0, sizeof(why)));
    if (rc < 0) {
        HM_FUZZ_CHECK(f == NULL);
        /* Refused: in words, naming the file (where it is when a line can be named). */
        HM_FUZZ_CHECK(why[0] && strstr(why, "flow.yaml"));
        return;
    }
    HM_FUZZ_CHECK(rc == 0 && f);
    HM_FUZZ_CHECK(f->n_flows >= 1 && f->total_weight > 0);
    double weight = 0;
    for (int i = 0; i < f->n_flows; i++) {
        HM_FUZZ_CHECK(f->flows[i].name && f->flows[i].weight >= 0); /* weight 0: never picked */
        weight += f->flows[i].weight;
        walk(f, f->flows[i].steps, f->flows[i].n_steps);
    }
    HM_FUZZ_CHECK(weight > 0);
    for (int i = 0; i < f->n_rows; i++)
        HM_FUZZ_CHECK(f->row_flow[i] && f->row_name[i]);
    for (int i = 0; i < f->n_checks; i++)
        HM_FUZZ_CHECK(f->check_flow[i] && f->check_name[i]);
    for (int i = 0; i < f->n_data; i++) {
        const hm_flow_data *d = &f->data[i];
        HM_FUZZ_CHECK(d->n_cols >= 1 && d->n_rows >= 0);
        for (int k = 0; k < d->n_rows * d->n_cols; k++)
            HM_FUZZ_CHECK(d->cells[k]);
    }
    char hwhy[1024] = "";
    if (hm_flow_check_hammer(f, hwhy, sizeof(hwhy)) < 0) HM_FUZZ_CHECK(hwhy[0]);
    hm_flow_free(f);
}

HM_FUZZ_ENTRY(body)

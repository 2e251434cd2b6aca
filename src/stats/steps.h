/* steps.h — a scenario's own named measurements, reported after the
 * standard rows: latency rows (a flow's steps: how long each took, how
 * often it ran, how often it failed) and checks (a flow's expectations:
 * how often each held). A run with a failed row or check does not pass.
 *
 * Use: each engine thread records into its own hm_steps (same shape, names
 * optional); after the threads are joined the scenario merges them into one
 * that carries the names and hands it to hm_results (r->steps), which
 * hm_report_print prints and hm_report_json writes under "steps" and
 * "checks" (docs/output.md).
 *
 * Ownership: hm_steps_create allocates everything; names are copied. The
 * hm_results that holds one owns it; hm_steps_free releases it. */
#ifndef HM_STATS_STEPS_H
#define HM_STATS_STEPS_H

#include "stats/hdr.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct hm_step_row {
    char *flow, *name; /* NULL in per-thread copies */
    hm_hdr us;         /* how long each run of the step took */
    uint64_t count, failed;
    char first_failure[320];
} hm_step_row;

typedef struct hm_check_row {
    char *flow, *name;
    uint64_t passed, failed;
    uint64_t skipped;    /* times the scenario passed it by design (not_run says why) */
    const char *not_run; /* why it never runs by design (a static string), or NULL */
    char first_failure[320];
} hm_check_row;

typedef struct hm_steps {
    hm_step_row *rows;
    int n_rows;
    hm_check_row *checks;
    int n_checks;
} hm_steps;

/* n_rows latency rows (1 µs .. 1 h) and n_checks checks, all zero. 0 or
 * -ENOMEM. */
int hm_steps_create(hm_steps **out, int n_rows, int n_checks);
/* Names row i / check i (copies). 0 or -ENOMEM. */
int hm_steps_name_row(hm_steps *s, int i, const char *flow, const char *name);
int hm_steps_name_check(hm_steps *s, int i, const char *flow, const char *name);
/* One run of step row i: its latency, and whether it failed (why: the
 * first failure's reason is kept; NULL when it did not fail). */
void hm_steps_record(hm_steps *s, int i, int64_t us, const char *why);
/* One evaluation of check i: held, or failed with why. */
void hm_steps_check(hm_steps *s, int i, bool held, const char *why);
/* Check i was passed over by design (why: a static string saying so, e.g.
 * the hammer model skips signal expectations after the first action). */
void hm_steps_check_skipped(hm_steps *s, int i, const char *why);
/* dst += src (same shape; the first failures of dst win). */
void hm_steps_merge(hm_steps *dst, const hm_steps *src);
void hm_steps_free(hm_steps *s);

/* True when no row failed, no check failed and every check was evaluated
 * or passed over by design (also for NULL). */
bool hm_steps_passed(const hm_steps *s);
/* Appends each failed row and check, and each check never evaluated, to
 * the run's verdict in words (results.h). */
struct hm_verdict;
void hm_steps_verdict(const hm_steps *s, struct hm_verdict *v);
/* The "Steps" and "Checks" tables of the summary. */
void hm_steps_print(FILE *f, const hm_steps *s);
/* Adds "steps" and "checks" arrays to the JSON object root. */
struct json_t;
void hm_steps_json(struct json_t *root, const hm_steps *s);

#endif

/* flow.h — user flows from a YAML file (`hammer flow FILE.yaml`,
 * docs/flows.md): the parsed file, the values and conditions its steps
 * use, and what both load models share to run it.
 *
 * flow_parse.c (with flow_parse_steps.c for the steps) reads the file with
 * libyaml into a hm_flow_file and checks it (every error names
 * file:line:column, the flow, the step and what was expected); flow.c
 * evaluates values and conditions, walks the steps and reports;
 * flow_browser.c runs it in the browser model (each VU runs flow
 * instances), flow_hammer.c in the hammer model (one context per flow, the
 * actions in flight).
 *
 * Ownership: hm_flow_load allocates the whole tree (hm_alloc; JSON values
 * are jansson references the tree holds); hm_flow_free releases it. A
 * loaded file is read-only while it runs, so every thread may read it. */
#ifndef HM_FLOW_FLOW_H
#define HM_FLOW_FLOW_H

#include "load/request.h"
#include "load/workload.h"
#include "stats/steps.h"

#include <jansson.h>
#include <stdatomic.h>

/* Where a value comes from when a step runs. */
typedef enum hm_flow_src {
    HM_FLOW_LITERAL,  /* a YAML scalar (typed as YAML does: 5 is a number, "5" a string) */
    HM_FLOW_TEMPLATE, /* a string with {{ name }} in it */
    HM_FLOW_VAR,      /* {var: NAME}: a variable of the flow instance */
    HM_FLOW_CSV,      /* {csv: SET.COLUMN}: the instance's row of a data file */
    HM_FLOW_RANDOM,   /* {random: [MIN, MAX]}: uniform, integers when both are */
    HM_FLOW_ONE_OF,   /* {one_of: [A, B, ...]}: one of the literals */
    HM_FLOW_SIGNAL,   /* {signal: NAME}: the last-seen value of a signal */
} hm_flow_src;

typedef struct hm_flow_value {
    hm_flow_src src;
    json_t *json;  /* LITERAL: the value; ONE_OF: the array */
    char *name;    /* VAR, SIGNAL: the name; TEMPLATE: the text */
    int data, col; /* CSV: the data set and its column */
    double min, max;
    bool integer; /* RANDOM */
} hm_flow_value;

/* How a condition compares a signal's value with the step's value. */
typedef enum hm_flow_op {
    HM_FLOW_OP_NONE, /* no comparison: the signal is there (patched) */
    HM_FLOW_OP_EQUALS,
    HM_FLOW_OP_NOT,
    HM_FLOW_OP_ABOVE,
    HM_FLOW_OP_BELOW,
    HM_FLOW_OP_AT_LEAST,
    HM_FLOW_OP_AT_MOST,
    HM_FLOW_OP_CHANGED_BY, /* the value minus its value when the last action was sent */
    HM_FLOW_OP_CONTAINS,   /* a string holding the text */
} hm_flow_op;

/* A wait's or an expectation's condition. */
typedef struct hm_flow_cond {
    char *signal; /* the signal compared, or NULL */
    hm_flow_op op;
    hm_flow_value value;
    int status[8]; /* expect status: any of these */
    int n_status;
    char *elements; /* wait: a patch-elements event holding this text ("" any) */
} hm_flow_cond;

/* One `signals:` entry of an action, or one `set:` entry. */
typedef struct hm_flow_field {
    char *name;
    hm_flow_value value;
} hm_flow_field;

typedef enum hm_flow_kind {
    HM_FLOW_PAGE,
    HM_FLOW_SSE,
    HM_FLOW_ACTION,
    HM_FLOW_WAIT,
    HM_FLOW_EXPECT,
    HM_FLOW_THINK,
    HM_FLOW_REPEAT,
    HM_FLOW_GET,
    HM_FLOW_CLOSE,
    HM_FLOW_SET,
} hm_flow_kind;

typedef struct hm_flow_step hm_flow_step;
struct hm_flow_step {
    hm_flow_kind kind;
    int line, col; /* 1-based, where the step starts in the file */
    char *where;   /* "flow 'x', step 3.2 (action)", for messages */
    char *label;   /* its row or check name: the `name:` given, or made up */
    int row;       /* its latency row in the report, -1 none */
    int check;     /* EXPECT: its check row */
    int wait;      /* WAIT: its index among the file's waits */
    int slot;      /* ACTION: its index among the file's actions */
    char *path;    /* PAGE, GET: a template */
    char *action;  /* ACTION: the name */
    hm_flow_field *fields;
    int n_fields;       /* ACTION signals, SET variables */
    hm_flow_cond cond;  /* WAIT, EXPECT */
    int64_t timeout_ns; /* PAGE, SSE, ACTION, WAIT, GET: 0 = --timeout */
    int64_t think_min_ns, think_max_ns;
    int64_t times;       /* REPEAT: 0 = until the run's budget ends */
    double probability;  /* REPEAT: each pass happens with it; the first miss ends the loop */
    hm_flow_step *steps; /* REPEAT: the block */
    int n_steps;
    bool has_action;             /* it is, or its block holds, an action */
    const hm_flow_step **offers; /* PAGE: the actions that follow it, which its page must offer */
    int n_offers;
};

typedef struct hm_flow {
    char *name;
    double weight;
    int line, col;
    hm_flow_step *steps;
    int n_steps;
    int prologue; /* hammer model: the steps before the first one with an action */
} hm_flow;

/* A CSV data file: a header row names the columns. */
typedef struct hm_flow_data {
    char *name, *path;
    char **cols;
    int n_cols;
    char **cells; /* n_rows * n_cols */
    int n_rows;
    bool random;           /* rows drawn at random, else in order */
    _Atomic int64_t *next; /* in order: the next row (shared by every thread) */
} hm_flow_data;

typedef struct hm_flow_file {
    char *path, *name;
    hm_flow *flows;
    int n_flows;
    double total_weight;
    hm_flow_field *vars; /* `variables:` */
    int n_vars;
    hm_flow_data *data;
    int n_data;
    /* `check:`: the stream check each context passes, as the built-in
     * scenarios' (workload.h); HM_CHECK_NONE without one. */
    hm_workload check;
    char *check_signal, *check_text;
    char *set_value; /* storage for check.set_value */
    bool has_action; /* some flow fires an action */
    int n_rows, n_checks, n_waits, n_actions;
    const hm_flow_step **waits;  /* every wait step, by its index */
    char **row_flow, **row_name; /* the report's rows */
    char **check_flow, **check_name;
} hm_flow_file;

/* Reads and checks path. 0, or a negative code with "FILE:LINE:COL: ..."
 * in why. */
int hm_flow_load(const char *path, hm_flow_file **out, char *why, size_t whylen);
void hm_flow_free(hm_flow_file *f);
/* The hammer model cannot run a page, sse or close after a flow's first
 * action (its actions are in flight on one context per flow): 0, or
 * -EINVAL with the step and why. */
int hm_flow_check_hammer(const hm_flow_file *f, char *why, size_t whylen);

/* The `flow` scenario: its input check (before the target is reached) and
 * its run, in the model o->browser picks. */
int hm_flow_prepare(const hm_options *o, char *why, size_t whylen);
int hm_flow_run(const hm_options *o, hm_results *r);
int hm_flow_browser_run(const hm_options *o, const hm_flow_file *f, hm_results *r);
int hm_flow_hammer_run(const hm_options *o, const hm_flow_file *f, hm_results *r);

/* ---- running a flow instance (flow.c) -------------------------------------- */

/* What a step's walk returns. */
enum {
    HM_FLOW_NEXT = 0, /* carry on */
    HM_FLOW_END = 1,  /* this instance ends (its page failed) */
    HM_FLOW_STOP = 2, /* the budget is spent or the run stops: the VU (sender) ends */
};

/* One flow instance's state, and what runs its steps. */
typedef struct hm_flow_exec hm_flow_exec;
struct hm_flow_exec {
    const hm_flow_file *file;
    const hm_flow *flow;
    unsigned rng;
    json_t *vars;    /* the instance's variables (an object it owns) */
    int rows[8];     /* the instance's row of each data file */
    hm_steps *stats; /* this thread's rows and checks */
    int last_status; /* of the last page, action or get; 0 none, < 0 an error */
    json_t *signals; /* the last-seen signals (borrowed), or NULL */
    json_t *at_send; /* the signals the last action sent, the step's values included
                      * (owned), or NULL */
    /* A leaf step (not REPEAT); returns HM_FLOW_NEXT/END/STOP. */
    int (*leaf)(hm_flow_exec *x, const hm_flow_step *s);
    /* May another pass of a repeat that lasts until the budget ends start? */
    bool (*budget_left)(hm_flow_exec *x);
    void *self;
};

/* Starts an instance of flow fl: variables (vu, iteration, `variables:`)
 * and data rows drawn. */
int hm_flow_exec_start(hm_flow_exec *x, const hm_flow_file *f, const hm_flow *fl, int vu,
                       int64_t iteration);
void hm_flow_exec_end(hm_flow_exec *x);
/* Runs steps in order (repeats included) through a cursor, calling
 * x->leaf for each leaf step until one returns other than HM_FLOW_NEXT. */
int hm_flow_walk(hm_flow_exec *x, const hm_flow_step *steps, int n);

/* Where a walk is, so that it can stop at a leaf step and go on later (a
 * sender that sends a step's request and resumes when it is answered).
 * A frame per open block: the steps given, then each repeat entered. */
typedef struct hm_flow_frame {
    const hm_flow_step *steps;
    int n, i;                   /* the block, and its next step */
    const hm_flow_step *repeat; /* the repeat whose block this is, or NULL */
    int64_t passes;             /* the repeat's passes begun */
} hm_flow_frame;

typedef struct hm_flow_cursor {
    hm_flow_frame *frames; /* inline_frames, or the heap once repeats nest deeper */
    int depth, cap;
    hm_flow_frame inline_frames[4];
} hm_flow_cursor;

/* A cursor before the first of steps[0..n). It holds no memory until
 * repeats nest deeper than its inline frames; hm_flow_cursor_free frees. */
void hm_flow_cursor_start(hm_flow_cursor *cu, const hm_flow_step *steps, int n);
void hm_flow_cursor_free(hm_flow_cursor *cu);
/* The next leaf step (a repeat decides its passes as hm_flow_walk's rule
 * says: each with its probability, the first miss ending it; "forever"
 * while x->budget_left), or NULL at the end (*rc HM_FLOW_NEXT) or when a
 * "forever" repeat's budget is spent or memory ran out (*rc HM_FLOW_STOP).
 * A cursor is moved by one thread at a time; its copy is not a cursor
 * (inline frames). */
const hm_flow_step *hm_flow_cursor_next(hm_flow_exec *x, hm_flow_cursor *cu, int *rc);
/* Picks a flow by weight. */
const hm_flow *hm_flow_pick(const hm_flow_file *f, unsigned *rng);
/* A uniform draw in [0, 1). */
double hm_flow_rand01(unsigned *rng);

/* A value as JSON (a new reference), or NULL (and why) when its source has
 * nothing (a signal not seen yet). */
json_t *hm_flow_eval(hm_flow_exec *x, const hm_flow_value *v, char *why, size_t whylen);
/* A template with {{ name }} expanded; hm_alloc'd. */
char *hm_flow_expand(hm_flow_exec *x, const char *tpl);
/* The key in signals a php-via user calls name (exact, TAB or scoped id),
 * or NULL. */
const char *hm_flow_signal_key(json_t *signals, const char *name);
/* The action body's extra fields: the step's signals under their wire ids
 * in signals (when seen there) as a JSON object string (hm_alloc'd), or
 * NULL with why. as_sent (optional): a new object the caller owns, the
 * signals as the server receives them (signals with the step's values
 * over them), what changed_by compares with; NULL when the fields fail. */
char *hm_flow_action_fields(hm_flow_exec *x, const hm_flow_step *s, json_t *signals,
                            json_t **as_sent, char *why, size_t whylen);
/* Does the condition hold on these signals (status for expect status)?
 * When not, why says what was seen. */
bool hm_flow_cond_holds(hm_flow_exec *x, const hm_flow_cond *c, json_t *signals, int status,
                        char *why, size_t whylen);
/* A think step's pause. */
int64_t hm_flow_think_ns(hm_flow_exec *x, const hm_flow_step *s);
/* An expect step against the last status and signals, into x->stats. */
void hm_flow_expect(hm_flow_exec *x, const hm_flow_step *s);
/* A SET step: the variables it assigns. */
int hm_flow_set(hm_flow_exec *x, const hm_flow_step *s);

/* The report's rows and checks for f, named (for the merged totals) or
 * not (per thread). */
int hm_flow_stats_create(const hm_flow_file *f, bool named, hm_steps **out);
/* The check line's name for the file's `check:`. */
const char *hm_flow_check_name(const hm_flow_file *f);

#endif

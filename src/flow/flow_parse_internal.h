/* flow_parse_internal.h — what the flow file reader's two halves share:
 * flow_parse.c (the file, errors, YAML helpers, values, check:,
 * variables:, data:, names, freeing) and flow_parse_steps.c (steps and their
 * conditions, flows, the hammer model's limits).
 *
 * Ownership: internal to the reader. Only flow_parse.c and flow_parse_steps.c
 * include it; everything else uses flow/flow.h. The parsing context
 * (pctx) lives on hm_flow_load's stack for one load; nothing here
 * allocates. Functions shared across the two files carry the fp_ prefix;
 * the small node accessors are static inline and keep their short names. */
#ifndef HM_FLOW_PARSE_INTERNAL_H
#define HM_FLOW_PARSE_INTERNAL_H

#include "flow/flow.h"

#include "base/hm_base.h"

#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

typedef struct pctx {
    const char *path;
    yaml_document_t *doc;
    hm_flow_file *f;
    char *why;
    size_t whylen;
    char where[240]; /* "flow 'x', step 3.2 (action)": the step being read */
    const char *flow_name;
    const hm_flow_step *page; /* the last page step read in this flow */
    bool sse;                 /* an sse step was read after that page */
    /* A page's offers are collected while its flow is read. */
    hm_flow_step **pages;
    int n_pages;
    char **set_names; /* every variable a set step assigns */
    int n_set_names;
} pctx;

/* ---- errors (flow_parse.c) ---------------------------------------------------- */

/* "a list", "a mapping", "'text'" or "nothing": what a node is, for errors;
 * a scalar's text goes into buf. */
const char *fp_node_kind(const yaml_node_t *n, char *buf, size_t cap);
/* Sets c->why to "FILE:LINE:COL: flow 'x', step 3 (action): <message>"
 * at node n (1:1 when NULL) and returns -EINVAL. */
int fp_fail_at(pctx *c, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "expected X, got Y" at node n. */
int fp_expected(pctx *c, const yaml_node_t *n, const char *what);

/* ---- YAML helpers ------------------------------------------------------------ */

static inline yaml_node_t *node(pctx *c, int index)
{
    return yaml_document_get_node(c->doc, index);
}

static inline bool is_scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE;
}

static inline const char *sval(const yaml_node_t *n)
{
    return (const char *)n->data.scalar.value;
}

static inline bool plain(const yaml_node_t *n)
{
    return is_scalar(n) && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

#define FOR_PAIRS(c, map, k, v)                                                                    \
    for (yaml_node_pair_t *p_ = (map)->data.mapping.pairs.start;                                   \
         p_ < (map)->data.mapping.pairs.top && ((k) = node(c, p_->key), (v) = node(c, p_->value)); \
         p_++)

#define FOR_ITEMS(c, seq, it)                                                                      \
    for (yaml_node_item_t *i_ = (seq)->data.sequence.items.start;                                  \
         i_ < (seq)->data.sequence.items.top && ((it) = node(c, *i_)); i_++)

static inline int seq_len(const yaml_node_t *n)
{
    return (int)(n->data.sequence.items.top - n->data.sequence.items.start);
}

static inline char *dup_scalar(const yaml_node_t *n)
{
    return hm_strdup(sval(n));
}

/* Checks that a mapping's keys are names, each given once. */
int fp_check_dupes(pctx *c, yaml_node_t *map, const char *what);
/* Checks that a mapping's keys are all among `allowed` ("a|b|c"), each
 * given once. */
int fp_check_keys(pctx *c, yaml_node_t *map, const char *allowed, const char *what);
/* The value under `key` in a mapping, or NULL. */
yaml_node_t *fp_get(pctx *c, yaml_node_t *map, const char *key);
/* A variable, signal or column name: a letter or _, then letters, digits,
 * _, . or -. */
bool fp_valid_name(const char *s);

/* ---- values (flow_parse.c) and flows (flow_parse_steps.c) ------------------------ */

/* A value: a scalar or {var|csv|random|one_of|literal: ...} ({signal: ...}
 * too when allow_signal). */
int fp_parse_value(pctx *c, yaml_node_t *n, hm_flow_value *v, bool allow_signal);
/* One flow (shorthand: the file's top-level steps: as flow 1). */
int fp_parse_flow(pctx *c, yaml_node_t *n, hm_flow *fl, int index, bool shorthand);

#endif

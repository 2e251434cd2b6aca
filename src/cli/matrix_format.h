/* matrix_format.h — the text of a matrix report's cells, shared by the
 * Markdown and the HTML renderers so both show the same figures: numbers
 * with thousands separators, "median (min–max)" ranges, signed changes
 * with their verdicts.
 *
 * Input is the matrix document and its summary (matrix_summary.h). Every
 * function writes into buffers the caller owns, or returns strings that
 * live as long as the document (or the given buffer). */
#ifndef HM_CLI_MATRIX_FORMAT_H
#define HM_CLI_MATRIX_FORMAT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* One results-table row: a profile's runs of a workload, as text. */
typedef struct hm_matrix_table_row {
    const char *profile;
    bool skipped; /* no completed run: only reason applies */
    const char *reason;
    char cold[112], warm[112], delta[80], cold_ok[48], warm_ok[48], c2w[64];
    int runs, failed; /* failed counts skipped runs too */
    int failing;      /* runs in the figures that hammer failed (exit 1) */
    bool comparable;  /* every run in the figures passed at 100% OK */
} hm_matrix_table_row;

/* Fills t from a summary row (doc["summary"][workload]["rows"][i]). */
void hm_matrix_format_row(json_t *row, hm_matrix_table_row *t);

/* A row's warm p50 and p99 as "1.75 (1.60–2.01)" milliseconds; false for a
 * row without runs. */
bool hm_matrix_warm_latency(json_t *row, char *p50, char *p99, size_t len);

/* o[a] (or o[a][b] when b is not NULL) if it is a string, else NULL. */
const char *hm_matrix_str_at(json_t *o, const char *a, const char *b);

/* The parameter key of doc as "5,000" when it is a number, else its text,
 * or dflt when absent; buf (len bytes) holds the formatted number. */
const char *hm_matrix_param(json_t *doc, const char *key, const char *dflt, char *buf, size_t len);

/* "fastest" of a workload's summary as one sentence into out: the
 * profile with the best warm median among the comparable ones, and which
 * profiles were left out; false when no profile ran. */
bool hm_matrix_fastest_text(json_t *ws, const char *pass, char *out, size_t len);

/* SKIPPED, INTERRUPTED or FAILED: how a run that is not ok is listed. */
const char *hm_matrix_status_word(json_t *run);

/* What a profile's server ran, for the profiles table: the first run of
 * the profile that recorded it (docs/matrix.md, runs[].server_argv). */
typedef struct hm_matrix_as_run {
    char *command;      /* its words, shell-quoted where needed, or the profile's
                           template for a document without server_argv; free() */
    char *other_rounds; /* "round 1; round 2 on port 41567, ..." when later
                           rounds ran other words or env (a free port each start),
                           else NULL; free() */
    json_t *env;        /* borrowed: its NAME=VALUE strings (server_env or env) */
} hm_matrix_as_run;

/* Fills r for profile (an element of doc["profiles"]). 0, or -ENOMEM;
 * either way hm_matrix_as_run_free(r) releases it. */
int hm_matrix_profile_as_run(json_t *doc, json_t *profile, hm_matrix_as_run *r);

void hm_matrix_as_run_free(hm_matrix_as_run *r);

#endif

/* matrix_summary.h — the numbers of `hammer matrix`'s reports: per
 * workload and profile, the median and range across runs of cold and warm
 * throughput, OK % and latency, the Δ against the baseline profile and the
 * cold→warm change, each with a verdict: "not separable" when the two
 * ranges overlap (the difference is within run-to-run noise).
 *
 * Input is the matrix's JSON document (docs/matrix.md): environment,
 * parameters, profiles, workloads and one object per run, built by a
 * matrix or loaded from a saved --json. Everything read from it may be
 * missing or of the wrong type without a crash. The summary lives in the
 * document (doc["summary"]); nothing here allocates what the caller frees. */
#ifndef HM_CLI_MATRIX_SUMMARY_H
#define HM_CLI_MATRIX_SUMMARY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* Computes doc["summary"] from doc["runs"] (replacing any earlier one). */
void hm_matrix_summarize(json_t *doc);

/* True when nothing was interrupted, skipped or failed, and every pass
 * passed (100% OK and its checks). */
bool hm_matrix_all_passed(json_t *doc);

/* The two pass names of doc's parameters ("cold,warm") into a and b, each
 * of len bytes; characters other than letters, digits, - and _ become _. */
void hm_matrix_pass_names(json_t *doc, char *a, char *b, size_t len);

/* o[key] as a string, "" when absent or not a string. */
static inline const char *hm_matrix_text(json_t *o, const char *key)
{
    const char *v = json_string_value(json_object_get(o, key));
    return v ? v : "";
}

/* o[key] as a number, 0 when absent or not a number. */
static inline double hm_matrix_num(json_t *o, const char *key)
{
    return json_number_value(json_object_get(o, key));
}

/* Whether a run's figures count in the medians: both passes completed,
 * passed or not (a document saved before runs[].measured: status ok). */
static inline bool hm_matrix_run_measured(json_t *run)
{
    json_t *m = json_object_get(run, "measured");
    return json_is_boolean(m) ? json_is_true(m) : !strcmp(hm_matrix_text(run, "status"), "ok");
}

#endif

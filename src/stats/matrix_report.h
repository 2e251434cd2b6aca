/* matrix_report.h — the summary and the reports of `hammer matrix`.
 *
 * Input is the matrix's JSON document (docs/matrix.md): environment,
 * parameters, profiles, workloads and one object per run. The summary adds,
 * per workload and profile, the median and range across runs of cold and
 * warm throughput and OK %, the Δ against the baseline profile and the
 * cold→warm change, each with a verdict: "not separable" when the two
 * ranges overlap (the difference is within run-to-run noise).
 *
 * Nothing here allocates what the caller must free except through the
 * document itself (the summary lives in doc["summary"]). The renderers only
 * write to the FILE they are given and return 0 or -EIO. */
#ifndef HM_STATS_MATRIX_REPORT_H
#define HM_STATS_MATRIX_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* Computes doc["summary"] from doc["runs"] (replacing any earlier one). */
void hm_matrix_summarize(json_t *doc);

/* True when nothing was interrupted, skipped or failed, and every pass
 * passed (100% OK and its checks). */
bool hm_matrix_all_passed(json_t *doc);

/* Markdown in the layout of php-via's BENCHMARK_RESULTS.md. */
int hm_matrix_markdown(FILE *f, json_t *doc);

/* One self-contained HTML file: the same tables, a latency-distribution
 * plot per workload (inline SVG), and the document embedded as JSON in
 * <script id="hammer-matrix-data" type="application/json">. */
int hm_matrix_html(FILE *f, json_t *doc);

/* The document itself, indented. */
int hm_matrix_json(FILE *f, json_t *doc);

#endif

/* matrix_report.h — the reports of `hammer matrix`, rendered from its JSON
 * document after hm_matrix_summarize (matrix_summary.h): Markdown in
 * matrix_markdown.c, HTML in matrix_html.c. Both read only the document,
 * so a saved --json renders the same reports again (--render).
 *
 * The renderers only write to the FILE they are given; they allocate
 * nothing the caller frees. */
#ifndef HM_CLI_MATRIX_REPORT_H
#define HM_CLI_MATRIX_REPORT_H

#include <jansson.h>
#include <stdio.h>

/* Markdown in the layout of php-via's BENCHMARK_RESULTS.md. 0 or -EIO. */
int hm_matrix_markdown(FILE *f, json_t *doc);

/* One self-contained HTML file: the same tables, a latency-distribution
 * plot per workload (inline SVG), and the document embedded as JSON in
 * <script id="hammer-matrix-data" type="application/json">. 0, -EIO or
 * -ENOMEM. */
int hm_matrix_html(FILE *f, json_t *doc);

#endif

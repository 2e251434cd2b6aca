/* report.h — a run's HTML report, rendered from its JSON document
 * (docs/output.md) and nothing else, so `--html` during a run and
 * `hammer report RUN.json --html FILE` afterwards give the same page
 * (CONTRIBUTING, "Reports"). docs/reports.md says how to read it.
 *
 * The renderer only writes to the FILE it is given; it allocates nothing
 * the caller frees. */
#ifndef HM_CLI_REPORT_H
#define HM_CLI_REPORT_H

#include <jansson.h>
#include <stdio.h>

/* One self-contained page (inline SVG, no script but the embedded
 * document) for a run's document or a --passes document. 0, -EIO or
 * -ENOMEM. */
int hm_report_html(FILE *f, json_t *doc);

/* Renders doc into path (written beside it, then renamed). 0 or a
 * negative errno. */
int hm_report_html_write(const char *path, json_t *doc);

/* `hammer report RUN.json --html FILE`: argv[0] is "report". Returns the
 * exit code (0, or 2 with one line on stderr). */
int hm_report_main(int argc, char **argv);

#endif

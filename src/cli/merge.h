/* merge.h — `hammer merge`: the shards of one run (--shard I/N, each with
 * its --json and optionally its --hdr-log) into one document and its
 * reports, as if one process had run it all (docs/distributed.md).
 *
 * The merge itself is stats/merge.h (documents) and the interval log
 * reader/writer of stats/hdr_log.h; this file reads the inputs, writes the
 * outputs, and merge_report.c renders the summary and the Markdown from
 * the merged document alone. */
#ifndef HM_CLI_MERGE_H
#define HM_CLI_MERGE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* argv[0] is "merge". Returns the exit code: 0 the merged run passed, 1 it
 * did not (a check, a threshold, or a shard missing), 2 usage error, an
 * unreadable input, or inputs that are not shards of one run. */
int hm_merge_main(int argc, char **argv);

/* The summary of a merged document on f (stdout), or of one run's own
 * document (hammer report: no shard table). 0 or -EIO. */
int hm_merge_print(FILE *f, json_t *doc);

/* The shards a merged document's shard object (sh) lacks ("missing") or
 * has more than once ("repeated") as one line's text into buf: "1 of 4 (no
 * input is shard 3)", "1 of 2 (2 inputs are shard 0)". False (buf
 * untouched) when there are none. */
bool hm_merge_coverage_text(json_t *sh, const char *which, char *buf, size_t len);

/* The same as Markdown. 0 or -EIO. */
int hm_merge_markdown(FILE *f, json_t *doc);

#endif

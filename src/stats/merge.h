/* merge.h — several runs' JSON documents into one (`hammer merge`).
 *
 * The shards of one run (--shard I/N, docs/distributed.md) each write a
 * document (docs/output.md); merging them gives the document one process
 * would have written had it recorded every value:
 *   - histograms (every object carrying `hdr`, wherever it sits) are
 *     decoded, added and re-encoded; their percentiles, max, mean and
 *     count are recomputed from the sum, never averaged;
 *   - counts (every other number) are summed, a `*_pct` is averaged (and
 *     `ok_pct` recomputed from ok/sent), booleans must all hold
 *     (`interrupted`: any), strings that differ are listed once each,
 *     `scenario`, `pass`, `mode`, `unit` and `schema` must be equal;
 *     `started` is the earliest, `command_line` and `interval_s` the first
 *     input's, and in `options` the run's size (concurrency, actions, rate,
 *     threads) is summed and every other setting is the first input's;
 *   - arrays merge element by element; a time series (an array of objects,
 *     `t` and `dt` averaged) may be longer in one input than another; a
 *     latency summary without `hdr` inside one keeps what adds up (count,
 *     min, max), its percentiles and mean are null, and its place is listed
 *     in `shard.inexact`;
 *   - `wall_seconds` spans the earliest load start to the latest end,
 *     `throughput_rps` is sent over that, thresholds are evaluated again on
 *     the merged histograms, `passed` holds only when every shard passed,
 *     every threshold holds and no shard is missing;
 *   - `shard` describes the merge: every input's start, throughput and
 *     verdict, the start skew, and the shards missing or given twice.
 * Documents of different runs (run id), with different options, or with a
 * histogram that has no `hdr` are refused with the reason.
 *
 * Memory: the inputs are borrowed; the result is a new document the caller
 * owns (json_decref). */
#ifndef HM_STATS_MERGE_H
#define HM_STATS_MERGE_H

#include <jansson.h>
#include <stddef.h>

/* One input: a run's document and the name messages cite (its file). */
typedef struct hm_merge_input {
    json_t *doc;
    const char *name;
} hm_merge_input;

/* Merges n >= 1 documents. Returns the merged document, or NULL with the
 * reason in why (a refusal, a malformed input, or out of memory). */
json_t *hm_results_merge(const hm_merge_input *in, int n, char *why, size_t whylen);

#endif

/* shard.h — one process's part of a run spread over many machines
 * (docs/distributed.md): --shard I/N splits -c, -n and -R; --start-at
 * starts the shards' load together; the run id and the options let
 * `hammer merge` refuse files of different runs.
 *
 * Ownership: a hm_shard lives in the hm_cli; hm_shard_free releases the
 * options record it builds. The JSON record returned by hm_shard_json is
 * the caller's (json_decref). */
#ifndef HM_CLI_SHARD_H
#define HM_CLI_SHARD_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

struct hm_cli;

typedef struct hm_shard {
    int index, count;         /* --shard I/N; 0/1 when not given */
    const char *run_id_arg;   /* --run-id, or NULL */
    const char *start_at_arg; /* --start-at as given, or NULL */
    int64_t start_at_ns;      /* --start-at, CLOCK_REALTIME ns; 0 when not given */
    /* The whole run's -c, -n and -R, before this shard took its share. */
    int concurrency;
    int64_t actions;
    double rate;
    json_t *options; /* what must match between shards (set by hm_shard_identify) */
    char run_id[72]; /* --run-id, or derived from the options and --start-at */
} hm_shard;

/* Parses "I/N" (0 <= I < N <= 100000). 0 or -EINVAL. */
int hm_shard_parse_spec(hm_shard *s, const char *arg);

/* Parses an RFC 3339 time ("2026-12-01T10:00:00Z", fractions and
 * offsets allowed) or "+DURATION" from now ("+10s") into CLOCK_REALTIME
 * nanoseconds. 0 or -EINVAL. */
int hm_shard_parse_start_at(const char *arg, int64_t *epoch_ns);

/* Replaces -c, -n and -R with this shard's share (the first shards take the
 * remainder, so the shares add up to the whole). HM_CLI_GO, or
 * HM_EXIT_USAGE (message printed) when a shard would get nothing. Call
 * after hm_cli_parse, before hm_cli_validate. */
int hm_shard_split(struct hm_cli *cli);

/* After hm_cli_validate: records the options shards must share, derives
 * the run id, hands --start-at to the scenario, and warns when the start
 * time has already passed. HM_CLI_GO or HM_EXIT_FAILED (out of memory). */
int hm_shard_identify(struct hm_cli *cli);

/* True when thresholds are left to hammer merge (a shard of several). */
bool hm_shard_defers_thresholds(const struct hm_cli *cli);

/* The document's "shard" record (docs/output.md): index, count, run id,
 * options, start times (load_started_ns: CLOCK_REALTIME ns when the load
 * began, 0 if it never did), thresholds and this shard's share. */
json_t *hm_shard_json(const struct hm_cli *cli, int64_t load_started_ns);

void hm_shard_free(hm_shard *s);

#endif

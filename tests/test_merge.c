/* test_merge.c — merging runs' JSON documents (src/stats/merge.c), one
 * behaviour per argv[1]:
 *   exact    values split over 4 shards merge to the histogram object of
 *            one histogram fed every value (percentiles, max, mean, count
 *            and the V2 encoding itself), counts add up, wall time spans
 *            the shards, thresholds are evaluated on the merged run
 *   self     a run merged with itself: every count doubles; max, mean and
 *            every percentile stay exactly as they were
 *   refuse   different runs, options, shard counts, --passes or histogram
 *            ranges, a histogram without `hdr`, a broken `hdr`: refused
 *            with the reason
 *   generic  histograms and counters at paths the merge has never heard of
 *            (a later JSON key) merge by the same rules, so do the run's
 *            description (start, words, options) and a time series whose
 *            points carry latency summaries without histograms; missing
 *            shards fail the merged run
 *   passes   --passes documents merge pass by pass, changes recomputed */
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "base/hm_base.h"
#include "hm_test.h"
#include "stats/hdr_json.h"
#include "stats/merge.h"
#include "stats/results.h"

#define SHARDS 4
#define VALUES 20000

/* Deterministic latencies from 1 µs to beyond the histogram's range
 * (clamped), most of them small: what a load test records. */
static int64_t value_of(int i)
{
    uint64_t x = (uint64_t)i * 6364136223846793005ULL + 1442695040888963407ULL;
    x ^= x >> 29;
    int64_t v = (int64_t)(x % 5000) + 1;
    if (i % 10 == 0) v *= 97;
    if (i % 1000 == 0) v = (int64_t)(x % 4000000000ULL) + 1;
    return v;
}

/* The shard a value is recorded by: uneven on purpose. */
static int shard_of_value(int i)
{
    int r = i % 7;
    return r < 3 ? 0 : r < 5 ? 1 : r < 6 ? 2 : 3;
}

typedef struct fake_run {
    hm_results r;
    json_t *doc;
} fake_run;

static json_t *shard_record(int index, int count, const char *run_id, int concurrency,
                            double started, const char *threshold)
{
    json_t *th = json_array();
    if (threshold) json_array_append_new(th, json_string(threshold));
    return json_pack("{s:i, s:i, s:s, s:{s:s, s:i}, s:n, s:f, s:o}", "index", index, "count", count,
                     "run_id", run_id, "options", "scenario", "counter", "concurrency", concurrency,
                     "start_at", "started", started, "thresholds", th);
}

/* Shard `index` of a run: the values shard_of_value gives it, one failure
 * per 100 values, and its shard record. */
static void make_shard(fake_run *f, int index, const char *threshold)
{
    memset(&f->r, 0, sizeof(f->r));
    ASSERT_EQ(hm_thread_stats_init(&f->r.total), 0);
    hm_results *r = &f->r;
    r->scenario = "counter";
    r->pass = "run";
    r->target = "http://127.0.0.1:1/bench/counter";
    r->engine = "epoll";
    r->threads = 1;
    r->concurrency = 5;
    r->mode = "hammer";
    r->has_check = true;
    r->check_name = "net increment equals HTTP OK";
    r->check_passed = true;
    for (int i = 0; i < VALUES; i++) {
        if (shard_of_value(i) != index) continue;
        hm_hdr_record(&r->total.action_us, value_of(i));
        hm_hdr_record(&r->total.patch_us, value_of(i) * 3);
        r->total.sent++;
        r->total.ok++;
        r->total.by_status[200]++;
    }
    r->total.connects = 5;
    r->wall_seconds = 1.0 + 0.25 * index;
    r->total_is_informational = false;
    f->doc = hm_report_json(r);
    json_object_set_new(f->doc, "shard",
                        shard_record(index, SHARDS, "run-a", 20, 1000.0 + 0.01 * index, threshold));
}

static void free_shard(fake_run *f)
{
    hm_thread_stats_destroy(&f->r.total);
    json_decref(f->doc);
}

static json_t *merge_of(fake_run *f, int n, char *why, size_t len)
{
    hm_merge_input in[SHARDS * 2];
    static const char *const names[] = {"s0.json", "s1.json", "s2.json", "s3.json",
                                        "s4.json", "s5.json", "s6.json", "s7.json"};
    for (int i = 0; i < n; i++)
        in[i] = (hm_merge_input){f[i].doc, names[i]};
    return hm_results_merge(in, n, why, len);
}

static json_int_t int_at(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(o, a);
    if (b) v = json_object_get(v, b);
    ASSERT(json_is_integer(v));
    return json_integer_value(v);
}

static void check_exact(void)
{
    /* One process recording every value, the way a single run would. */
    hm_hdr all, patch_all;
    ASSERT_EQ(hm_hdr_init(&all, 1, HM_HDR_HIGHEST_US, 3), 0);
    ASSERT_EQ(hm_hdr_init(&patch_all, 1, HM_HDR_HIGHEST_US, 3), 0);
    for (int i = 0; i < VALUES; i++) {
        hm_hdr_record(&all, value_of(i));
        hm_hdr_record(&patch_all, value_of(i) * 3);
    }
    ASSERT_GT(hm_hdr_clamped(&all), 0); /* the range's edge is covered too */
    char p50_limit[64];
    snprintf(p50_limit, sizeof(p50_limit), "p50<=%lldus",
             (long long)hm_hdr_value_at_percentile(&all, 50));
    fake_run f[SHARDS];
    for (int i = 0; i < SHARDS; i++)
        make_shard(&f[i], i, p50_limit);
    char why[512];
    json_t *m = merge_of(f, SHARDS, why, sizeof(why));
    if (!m) HM_FAIL_("merge refused: %s", why);

    json_t *want = hm_hdr_json(&all), *want_patch = hm_hdr_json(&patch_all);
    json_t *got = json_object_get(json_object_get(m, "latency_us"), "action");
    json_t *got_patch = json_object_get(json_object_get(m, "latency_us"), "patch");
    const char *key;
    json_t *v;
    json_object_foreach(want, key, v)
    {
        if (!json_equal(v, json_object_get(got, key))) {
            char *a = json_dumps(v, JSON_ENCODE_ANY),
                 *b = json_dumps(json_object_get(got, key), JSON_ENCODE_ANY);
            HM_FAIL_("latency_us.action.%s: merged %s, one histogram %s", key, b, a);
        }
    }
    ASSERT(json_equal(want, got)); /* nothing more either */
    ASSERT(json_equal(want_patch, got_patch));
    ASSERT_EQ(int_at(got, "count", NULL), VALUES);
    printf("exact: 4 shards of %d values merge to one histogram's p50 %lld p99 %lld p999 %lld "
           "max %lld mean %.3f, and the same V2 encoding\n",
           VALUES, (long long)int_at(got, "p50", NULL), (long long)int_at(got, "p99", NULL),
           (long long)int_at(got, "p999", NULL), (long long)int_at(got, "max", NULL),
           json_real_value(json_object_get(got, "mean")));

    ASSERT_EQ(int_at(m, "actions", "sent"), VALUES);
    ASSERT_EQ(int_at(m, "actions", "ok"), VALUES);
    ASSERT_EQ(int_at(json_object_get(m, "actions"), "by_status", "200"), VALUES);
    ASSERT_EQ(int_at(m, "connections", "established"), 5 * SHARDS);
    ASSERT_EQ(int_at(m, "concurrency", NULL), 5 * SHARDS);
    ASSERT(json_is_true(json_object_get(m, "passed")));
    ASSERT(json_is_true(json_object_get(json_object_get(m, "check"), "passed")));
    /* Shard 3 started 30 ms after shard 0 and ran 1.75 s. */
    ASSERT_DBL_NEAR(json_real_value(json_object_get(m, "wall_seconds")), 0.03 + 1.75, 1e-9);
    ASSERT_DBL_NEAR(json_real_value(json_object_get(m, "throughput_rps")), VALUES / 1.78, 1e-6);
    json_t *sh = json_object_get(m, "shard");
    ASSERT_DBL_NEAR(json_real_value(json_object_get(sh, "start_skew_s")), 0.03, 1e-9);
    ASSERT_EQ(json_array_size(json_object_get(sh, "inputs")), SHARDS);
    ASSERT_EQ(json_array_size(json_object_get(sh, "missing")), 0);
    ASSERT_EQ(json_array_size(json_object_get(sh, "repeated")), 0);
    json_t *th = json_array_get(json_object_get(m, "thresholds"), 0);
    ASSERT_STREQ(json_string_value(json_object_get(th, "threshold")), p50_limit);
    ASSERT(json_is_true(json_object_get(th, "passed")));
    ASSERT_DBL_NEAR(json_real_value(json_object_get(th, "value")),
                    (double)hm_hdr_value_at_percentile(&all, 50), 0);
    json_decref(m);

    /* A threshold the merged run misses fails it, though every shard passed. */
    char tight[64];
    snprintf(tight, sizeof(tight), "p50<%lldus", (long long)hm_hdr_value_at_percentile(&all, 50));
    for (int i = 0; i < SHARDS; i++) {
        json_object_set_new(f[i].doc, "shard",
                            shard_record(i, SHARDS, "run-a", 20, 1000.0 + 0.01 * i, tight));
    }
    m = merge_of(f, SHARDS, why, sizeof(why));
    ASSERT(m);
    ASSERT(json_is_false(json_object_get(m, "passed")));
    printf("exact: thresholds are measured on the merged run (%s fails it)\n", tight);
    json_decref(m);
    json_decref(want);
    json_decref(want_patch);
    for (int i = 0; i < SHARDS; i++)
        free_shard(&f[i]);
    hm_hdr_destroy(&all);
    hm_hdr_destroy(&patch_all);
}

/* hammer's percentile rule is HdrHistogram's (Java's): the sample at
 * ceil(p/100 x N). Doubling every count doubles p/100 x N exactly, and
 * ceil(2x) names the same sample as ceil(x), so a run merged with itself
 * must report exactly its own percentiles. */
static void assert_doubled_percentile(const hm_hdr *once, double p, int64_t merged)
{
    int64_t same = hm_hdr_value_at_percentile(once, p);
    if (merged != same)
        HM_FAIL_("p%g: merged with itself %lld, alone %lld", p, (long long)merged, (long long)same);
}

static void check_self(void)
{
    fake_run f[1];
    make_shard(&f[0], 0, NULL);
    json_object_set_new(f[0].doc, "shard", shard_record(0, 1, "solo", 5, 1000.0, NULL));
    fake_run twice[2] = {f[0], f[0]};
    char why[512];
    json_t *m = merge_of(twice, 2, why, sizeof(why));
    if (!m) HM_FAIL_("merge refused: %s", why);
    json_t *one = f[0].doc;
    ASSERT_EQ(int_at(m, "actions", "sent"), 2 * int_at(one, "actions", "sent"));
    ASSERT_EQ(int_at(m, "actions", "ok"), 2 * int_at(one, "actions", "ok"));
    static const char *const kinds[] = {"action", "patch"};
    const hm_hdr *hists[] = {&f[0].r.total.action_us, &f[0].r.total.patch_us};
    int compared = 0;
    for (size_t k = 0; k < 2; k++) {
        json_t *a = json_object_get(json_object_get(one, "latency_us"), kinds[k]);
        json_t *b = json_object_get(json_object_get(m, "latency_us"), kinds[k]);
        ASSERT_EQ(int_at(b, "count", NULL), 2 * int_at(a, "count", NULL));
        ASSERT_EQ(int_at(b, "max", NULL), int_at(a, "max", NULL));
        ASSERT_DBL_NEAR(json_real_value(json_object_get(b, "mean")),
                        json_real_value(json_object_get(a, "mean")), 1e-9);
        static const struct {
            const char *key;
            double p;
        } fields[] = {{"p50", 50}, {"p90", 90}, {"p99", 99}, {"p999", 99.9}};
        for (size_t i = 0; i < HM_ARRAY_LEN(fields); i++, compared++)
            assert_doubled_percentile(hists[k], fields[i].p, int_at(b, fields[i].key, NULL));
        size_t i;
        json_t *pair;
        json_array_foreach(json_object_get(b, "percentiles"), i, pair)
        {
            compared++;
            assert_doubled_percentile(hists[k], json_number_value(json_array_get(pair, 0)),
                                      json_integer_value(json_array_get(pair, 1)));
        }
    }
    json_t *repeated = json_object_get(json_object_get(m, "shard"), "repeated");
    ASSERT_EQ(json_array_size(repeated), 1);
    printf("self: counts doubled (%lld sent); max, mean and all %d percentiles unchanged\n",
           (long long)int_at(m, "actions", "sent"), compared);
    json_decref(m);
    free_shard(&f[0]);
}

/* Merging a and b must fail with a reason containing `want`. */
static void expect_refusal(json_t *a, json_t *b, const char *want)
{
    hm_merge_input in[2] = {{a, "a.json"}, {b, "b.json"}};
    char why[512];
    json_t *m = hm_results_merge(in, 2, why, sizeof(why));
    if (m) HM_FAIL_("merged, but should have refused (%s)", want);
    if (!strstr(why, want)) HM_FAIL_("reason \"%s\" does not say \"%s\"", why, want);
    printf("refuse: %s\n", why);
}

static void check_refuse(void)
{
    fake_run f[2];
    make_shard(&f[0], 0, NULL);
    make_shard(&f[1], 1, NULL);
    json_t *a = f[0].doc, *b = json_deep_copy(f[1].doc);

    json_object_set_new(b, "shard", shard_record(1, SHARDS, "run-b", 20, 1000.0, NULL));
    expect_refusal(a, b, "different runs");
    json_object_set_new(b, "shard", shard_record(1, SHARDS, "run-a", 40, 1000.0, NULL));
    expect_refusal(a, b, "different options (concurrency: 20 vs 40)");
    json_object_set_new(b, "shard", shard_record(1, 3, "run-a", 20, 1000.0, NULL));
    expect_refusal(a, b, "one of 3 shards");
    json_object_set_new(b, "shard", shard_record(1, SHARDS, "run-a", 20, 1000.0, NULL));

    json_t *c = json_deep_copy(b);
    json_object_set_new(c, "scenario", json_string("io"));
    expect_refusal(a, c, "scenario differs");
    json_decref(c);

    c = json_deep_copy(b);
    json_object_del(json_object_get(json_object_get(c, "latency_us"), "action"), "hdr");
    expect_refusal(a, c, "latency_us.action has no \"hdr\"");
    json_decref(c);

    c = json_deep_copy(b);
    json_object_set_new(json_object_get(json_object_get(c, "latency_us"), "action"), "hdr",
                        json_string("HISTFAAAAAAA"));
    expect_refusal(a, c, "latency_us.action is not a valid HdrHistogram encoding");
    json_decref(c);

    /* A histogram of another precision cannot be added bucket by bucket. */
    hm_hdr coarse;
    ASSERT_EQ(hm_hdr_init(&coarse, 1, HM_HDR_HIGHEST_US, 2), 0);
    hm_hdr_record(&coarse, 1234);
    c = json_deep_copy(b);
    json_object_set_new(json_object_get(c, "latency_us"), "action", hm_hdr_json(&coarse));
    expect_refusal(a, c, "another histogram range or precision");
    json_decref(c);
    hm_hdr_destroy(&coarse);

    c = json_pack("{s:[O]}", "passes", b);
    expect_refusal(a, c, "ran --passes and a.json did not");
    json_decref(c);
    json_decref(b);
    free_shard(&f[0]);
    free_shard(&f[1]);
}

static void check_generic(void)
{
    /* Keys no hammer of today writes: a per-step histogram and counters. */
    hm_hdr steps[2];
    fake_run f[SHARDS];
    hm_hdr both;
    ASSERT_EQ(hm_hdr_init(&both, 1, HM_HDR_HIGHEST_US, 3), 0);
    for (int i = 0; i < 3; i++) { /* shard 3 is missing */
        make_shard(&f[i], i, NULL);
        hm_hdr *h = &steps[i % 2];
        if (i < 2) ASSERT_EQ(hm_hdr_init(h, 1, HM_HDR_HIGHEST_US, 3), 0);
        hm_hdr_reset(h);
        for (int v = 1; v <= 100 * (i + 1); v++) {
            hm_hdr_record(h, v * (i + 2));
            hm_hdr_record(&both, v * (i + 2));
        }
        json_t *step = json_pack("{s:{s:o, s:I}}", "login", "latency_us", hm_hdr_json(h), "count",
                                 (json_int_t)(i + 1));
        json_object_set_new(f[i].doc, "steps", step);
        json_object_set_new(f[i].doc, "error_reasons", json_pack("{s:i}", "reset by peer", i));
        json_object_set_new(f[i].doc, "sse", json_pack("{s:b, s:f}", "ok", 1, "ok_pct", 50.0 + i));
        /* A run's description: when it began, its words, its resolved options. */
        char started[32];
        snprintf(started, sizeof(started), "2026-12-01T09:30:0%d.000Z", 5 - i);
        json_object_set_new(f[i].doc, "started", json_string(started));
        json_object_set_new(f[i].doc, "command_line", json_pack("[s,s]", "--shard", started));
        json_object_set_new(f[i].doc, "options",
                            json_pack("{s:i, s:i, s:f, s:f, s:i}", "concurrency", 5, "actions",
                                      100 + i, "timeout_s", 5.0, "rate", 1.5, "observers", 1));
        /* A time series: shard i has 2 + i points, each with a summary of
         * its latency but no histogram. */
        json_t *series = json_array();
        for (int t = 0; t < 2 + i; t++)
            json_array_append_new(series,
                                  json_pack("{s:f, s:f, s:i, s:{s:i, s:i, s:i, s:i}}", "t",
                                            1.0 + t + 0.01 * i, "dt", 1.0, "sent", 10 * (i + 1),
                                            "latency_us", "count", 10 * (i + 1), "p50",
                                            100 * (i + 1), "min", 7 + i, "max", 1000 * (i + 1)));
        json_object_set_new(f[i].doc, "intervals", series);
    }
    char why[512];
    json_t *m = merge_of(f, 3, why, sizeof(why));
    if (!m) HM_FAIL_("merge refused: %s", why);
    json_t *login = json_object_get(json_object_get(m, "steps"), "login");
    json_t *want = hm_hdr_json(&both);
    ASSERT(json_equal(json_object_get(login, "latency_us"), want));
    ASSERT_EQ(int_at(login, "count", NULL), 1 + 2 + 3);
    ASSERT_EQ(int_at(m, "error_reasons", "reset by peer"), 0 + 1 + 2);
    ASSERT(json_is_true(json_object_get(json_object_get(m, "sse"), "ok")));
    ASSERT_DBL_NEAR(json_real_value(json_object_get(json_object_get(m, "sse"), "ok_pct")), 51.0,
                    1e-9);
    ASSERT_STREQ(json_string_value(json_object_get(m, "started")), "2026-12-01T09:30:03.000Z");
    ASSERT_STREQ(json_string_value(json_array_get(json_object_get(m, "command_line"), 1)),
                 "2026-12-01T09:30:05.000Z");
    json_t *opts = json_object_get(m, "options");
    ASSERT_EQ(int_at(opts, "concurrency", NULL), 15);
    ASSERT_EQ(int_at(opts, "actions", NULL), 303);
    ASSERT_EQ(int_at(opts, "observers", NULL), 1);
    ASSERT_DBL_NEAR(json_real_value(json_object_get(opts, "timeout_s")), 5.0, 0);
    ASSERT_DBL_NEAR(json_real_value(json_object_get(opts, "rate")), 4.5, 1e-12);
    json_t *series = json_object_get(m, "intervals");
    ASSERT_EQ(json_array_size(series), 4); /* the longest input's */
    json_t *p0 = json_array_get(series, 0), *p3 = json_array_get(series, 3);
    ASSERT_EQ(int_at(p0, "sent", NULL), 10 + 20 + 30);
    ASSERT_EQ(int_at(p3, "sent", NULL), 30); /* only shard 2 got that far */
    ASSERT_DBL_NEAR(json_real_value(json_object_get(p0, "t")), 1.01, 1e-9);
    ASSERT_DBL_NEAR(json_real_value(json_object_get(p0, "dt")), 1.0, 1e-12);
    json_t *l0 = json_object_get(p0, "latency_us");
    ASSERT_EQ(int_at(l0, "count", NULL), 60);
    ASSERT_EQ(int_at(l0, "min", NULL), 7);
    ASSERT_EQ(int_at(l0, "max", NULL), 3000);
    ASSERT(json_is_null(json_object_get(l0, "p50"))); /* no histogram: no exact p50 */
    json_t *inexact = json_object_get(json_object_get(m, "shard"), "inexact");
    ASSERT_EQ(json_array_size(inexact), 1);
    ASSERT_STREQ(json_string_value(json_array_get(inexact, 0)), "intervals[].latency_us");

    /* Shard 3 of 4 is missing: the merged run cannot pass. */
    json_t *missing = json_object_get(json_object_get(m, "shard"), "missing");
    ASSERT_EQ(json_array_size(missing), 1);
    ASSERT_EQ(json_integer_value(json_array_get(missing, 0)), 3);
    ASSERT(json_is_false(json_object_get(m, "passed")));
    printf("generic: steps.login.latency_us (count %lld) and error_reasons merged; the run's "
           "description; a time series of uneven length, its summaries without histograms "
           "kept to count, min and max; shard 3 missing fails the run\n",
           (long long)int_at(json_object_get(login, "latency_us"), "count", NULL));
    json_decref(want);
    json_decref(m);
    for (int i = 0; i < 3; i++)
        free_shard(&f[i]);
    hm_hdr_destroy(&steps[0]);
    hm_hdr_destroy(&steps[1]);
    hm_hdr_destroy(&both);
}

/* Failure examples and interrupts: counts add up, but a first example is
 * one shard's, whole (reason, where and bytes belong together), and the
 * first Ctrl-C is the earliest. */
static void check_examples(void)
{
    fake_run f[2];
    for (int i = 0; i < 2; i++) {
        make_shard(&f[i], i, NULL);
        hm_thread_stats *t = &f[i].r.total;
        hm_thread_stats_count(t, 0, HM_FAIL_PROTOCOL);
        hm_thread_stats_fail_example(t, HM_FAIL_PROTOCOL,
                                     i ? "Chunk size overflow" : "Expected HTTP/",
                                     i ? "GET /, connection 1" : "GET /, connection 0",
                                     i ? "HTTP/1.1 200 OK" : "\\x00GARBAGE");
        hm_thread_stats_sse_fail(t, HM_SSE_FAIL_STATUS, "answered HTTP 500", "SSE GET /_sse, VU 0",
                                 "HTTP/1.1 500 Internal Server Error");
        t->bytes_read = 1000 * (uint64_t)(i + 1);
        f[i].r.interrupted = true;
        f[i].r.interrupted_at_s = 3.5 - i;
        json_decref(f[i].doc);
        f[i].doc = hm_report_json(&f[i].r);
        json_object_set_new(f[i].doc, "shard",
                            shard_record(i, 2, "run-e", 20, 1000.0 + 0.01 * i, NULL));
    }
    char why[512];
    json_t *m = merge_of(f, 2, why, sizeof(why));
    if (!m) HM_FAIL_("merge refused: %s", why);
    json_t *proto = json_object_get(json_object_get(m, "error_reasons"), "protocol");
    ASSERT_STREQ(json_string_value(json_object_get(proto, "reason")), "Expected HTTP/");
    ASSERT_STREQ(json_string_value(json_object_get(proto, "where")), "GET /, connection 0");
    ASSERT_STREQ(json_string_value(json_object_get(proto, "bytes")), "\\x00GARBAGE");
    ASSERT_EQ(int_at(json_object_get(m, "errors"), "protocol", NULL), 2);
    json_t *sse = json_object_get(m, "sse");
    ASSERT_EQ(int_at(json_object_get(sse, "failures"), "status", NULL), 2);
    ASSERT_STREQ(json_string_value(json_object_get(json_object_get(sse, "first_failure"), "kind")),
                 "status");
    ASSERT_EQ(int_at(json_object_get(m, "bytes"), "read", NULL), 3000);
    ASSERT(json_is_true(json_object_get(m, "interrupted")));
    ASSERT_DBL_NEAR(json_real_value(json_object_get(m, "interrupted_at_s")), 2.5, 1e-12);
    printf("examples: error_reasons and sse.first_failure are the first shard's, whole; counts "
           "and bytes summed; interrupted_at_s the earliest\n");
    json_decref(m);
    for (int i = 0; i < 2; i++)
        free_shard(&f[i]);
}

static void check_passes(void)
{
    fake_run f[2][2]; /* [shard][pass] */
    json_t *docs[2];
    for (int s = 0; s < 2; s++) {
        make_shard(&f[s][0], s, NULL);
        make_shard(&f[s][1], s + 2, NULL); /* other values for the second pass */
        f[s][0].r.pass = "cold";
        f[s][1].r.pass = "warm";
        hm_results runs[2] = {f[s][0].r, f[s][1].r};
        docs[s] = hm_report_passes_json(runs, 2);
        for (int p = 0; p < 2; p++)
            json_object_set_new(json_array_get(json_object_get(docs[s], "passes"), p), "shard",
                                shard_record(s, 2, "run-p", 10, 1000.0 + p, NULL));
    }
    hm_merge_input in[2] = {{docs[0], "s0.json"}, {docs[1], "s1.json"}};
    char why[512];
    json_t *m = hm_results_merge(in, 2, why, sizeof(why));
    if (!m) HM_FAIL_("merge refused: %s", why);
    json_t *passes = json_object_get(m, "passes");
    ASSERT_EQ(json_array_size(passes), 2);
    for (int p = 0; p < 2; p++) {
        json_t *run = json_array_get(passes, p);
        ASSERT_EQ(int_at(run, "actions", "sent"),
                  (json_int_t)(f[0][p].r.total.sent + f[1][p].r.total.sent));
        ASSERT_STREQ(json_string_value(json_object_get(run, "pass")), p ? "warm" : "cold");
    }
    json_t *change = json_array_get(json_object_get(m, "changes"), 0);
    ASSERT_STREQ(json_string_value(json_object_get(change, "from")), "cold");
    double rps0 = json_real_value(json_object_get(json_array_get(passes, 0), "throughput_rps"));
    double rps1 = json_real_value(json_object_get(json_array_get(passes, 1), "throughput_rps"));
    ASSERT_DBL_NEAR(json_real_value(json_object_get(change, "throughput_pct")),
                    100.0 * (rps1 - rps0) / rps0, 1e-9);
    ASSERT(json_is_true(json_object_get(m, "passed")));
    printf("passes: cold and warm merged pass by pass, cold -> warm throughput %+.1f%%\n",
           json_real_value(json_object_get(change, "throughput_pct")));
    json_decref(m);
    for (int s = 0; s < 2; s++) {
        json_decref(docs[s]);
        free_shard(&f[s][0]);
        free_shard(&f[s][1]);
    }
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    if (!strcmp(what, "exact"))
        check_exact();
    else if (!strcmp(what, "self"))
        check_self();
    else if (!strcmp(what, "refuse"))
        check_refuse();
    else if (!strcmp(what, "generic"))
        check_generic();
    else if (!strcmp(what, "passes"))
        check_passes();
    else if (!strcmp(what, "examples"))
        check_examples();
    else
        HM_FAIL_("usage: test_merge exact|self|refuse|generic|passes|examples");
    return 0;
}

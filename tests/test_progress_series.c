/* The interval reporter's series, without a network: every sample and
 * count recorded while it runs reaches one of its points (the last,
 * partial one included, also after the threads detached), and the server
 * watch's fields (the slot issue 12's /_health sampler fills) land in the
 * points by name. */
#include "hm_test.h"
#include "stats/results.h"

#include <math.h>
#include <time.h>

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

int main(void)
{
    hm_thread_stats st[2];
    for (int i = 0; i < 2; i++)
        ASSERT_EQ(hm_thread_stats_init(&st[i]), 0);
    hm_live_gauges g = {0};
    hm_progress_options po = {
        .interval_ns = 100000000LL, .quiet = true, .unit = "actions", .gauges = &g};
    ASSERT_EQ(hm_progress_start(&po), 0);
    hm_progress_attach(st, 2, sizeof(st[0]));
    const char *names[] = {"contexts", "sse_streams"};
    int64_t recorded = 0;
    for (int round = 0; round < 5; round++) {
        double values[] = {10.0 + round, 3.0};
        hm_server_watch_publish(&g, 2, names, values);
        for (int k = 0; k < 100; k++) {
            hm_thread_stats_record_action(&st[k % 2], 100 + k);
            hm_thread_stats_count(&st[k % 2], k % 10 ? 200 : 503, HM_FAIL_NONE);
            recorded++;
        }
        hm_thread_stats_count(&st[0], 0, HM_FAIL_TIMEOUT);
        sleep_ms(70);
    }
    hm_progress_detach(); /* the run's threads end before the reporter stops */
    hm_interval_series s;
    hm_progress_stop(&s);
    ASSERT_GE(s.n, 3);
    uint64_t sent = 0, ok = 0, timeouts = 0;
    int64_t samples = 0;
    for (size_t i = 0; i < s.n; i++) {
        sent += s.points[i].sent;
        ok += s.points[i].ok;
        timeouts += s.points[i].errors[HM_FAIL_TIMEOUT];
        samples += s.points[i].count;
        ASSERT(s.points[i].dt > 0);
    }
    ASSERT_EQ(sent, (uint64_t)recorded + 5);
    ASSERT_EQ(ok, 450u);
    ASSERT_EQ(timeouts, 5u);
    ASSERT_EQ(samples, recorded);
    ASSERT_EQ(s.n_server, 2);
    ASSERT_STREQ(s.server_names[0], "contexts");
    ASSERT_STREQ(s.server_names[1], "sse_streams");
    ASSERT(s.points[s.n - 1].server[0] == 14.0);
    ASSERT(s.points[s.n - 1].server[1] == 3.0);
    ASSERT(s.points[0].server[0] >= 10.0);
    printf("%zu points summing to %llu sent, %lld samples; server watch fields in every point\n",
           s.n, (unsigned long long)sent, (long long)samples);
    hm_interval_series_free(&s);
    /* The metrics' totals keep what finished. */
    hm_live_totals t;
    hm_progress_live_totals(&t);
    ASSERT_EQ(t.sent, (uint64_t)recorded + 5);
    ASSERT_EQ(t.by_status[503], 50u);
    uint64_t in_buckets = 0;
    for (int b = 0; b <= HM_LIVE_BUCKETS; b++)
        in_buckets += t.bucket[HM_PHASE_ACTION][b];
    ASSERT_EQ(in_buckets, (uint64_t)recorded);
    for (int i = 0; i < 2; i++)
        hm_thread_stats_destroy(&st[i]);
    return 0;
}

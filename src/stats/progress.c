/* The interval reporter: a plain thread that wakes every interval, reads
 * the engine threads' live counters and swaps out their interval
 * histograms, and prints one line (or refreshes one on a terminal) and,
 * optionally, one JSON line. It never touches what the engine threads own
 * except through the atomics and the per-thread interval lock. */
#include "stats/hdr_log.h"
#include "stats/results.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static char *att_base;
static int att_n;
static size_t att_stride;

/* Samples of threads that detached since the last report: a run's last
 * partial interval must still reach the log (so its total matches). */
static hm_hdr carry;

static pthread_t reporter;
static atomic_bool stopping;
static bool running;
static hm_progress_options opts;

void hm_progress_attach(void *stats, int n, size_t stride)
{
    pthread_mutex_lock(&mu);
    att_base = stats;
    att_n = n;
    att_stride = stride;
    pthread_mutex_unlock(&mu);
}

/* Moves every attached thread's interval histogram into dst. Caller holds mu. */
static void drain_intervals(hm_hdr *dst)
{
    for (int i = 0; i < att_n; i++) {
        hm_thread_stats *t = (hm_thread_stats *)(void *)(att_base + (size_t)i * att_stride);
        while (atomic_flag_test_and_set_explicit(&t->interval_lock, memory_order_acquire)) {
        }
        if (dst->counts) hm_hdr_add(dst, &t->interval_us);
        hm_hdr_reset(&t->interval_us);
        atomic_flag_clear_explicit(&t->interval_lock, memory_order_release);
    }
}

void hm_progress_detach(void)
{
    pthread_mutex_lock(&mu);
    drain_intervals(&carry);
    att_base = NULL;
    att_n = 0;
    pthread_mutex_unlock(&mu);
}

/* Adds up what the attached threads show now; moves their interval
 * histograms into `interval`. */
static void collect(uint64_t *sent, uint64_t *ok, hm_hdr *interval)
{
    pthread_mutex_lock(&mu);
    for (int i = 0; i < att_n; i++) {
        hm_thread_stats *t = (hm_thread_stats *)(void *)(att_base + (size_t)i * att_stride);
        *sent += atomic_load_explicit(&t->live_sent, memory_order_relaxed);
        *ok += atomic_load_explicit(&t->live_ok, memory_order_relaxed);
    }
    drain_intervals(interval);
    hm_hdr_add(interval, &carry);
    hm_hdr_reset(&carry);
    pthread_mutex_unlock(&mu);
}

static void *report_loop(void *arg)
{
    hm_hdr interval;
    if (hm_hdr_init(&interval, 1, HM_HDR_HIGHEST_US, 3) < 0) return NULL;
    int64_t start = hm_now_ns(), next = start + opts.interval_ns, from = start;
    uint64_t prev_sent = 0, prev_ok = 0;
    void *prev_base = NULL;
    while (!atomic_load(&stopping)) {
        int64_t now = hm_now_ns();
        if (now < next) {
            struct timespec ts = {0, 20 * 1000000};
            nanosleep(&ts, NULL);
            continue;
        }
        next += opts.interval_ns;
        uint64_t sent = 0, ok = 0;
        hm_hdr_reset(&interval);
        collect(&sent, &ok, &interval);
        /* A new set of threads (sticky's next variant) starts from zero. */
        pthread_mutex_lock(&mu);
        if (att_base != prev_base) prev_sent = prev_ok = 0, prev_base = att_base;
        pthread_mutex_unlock(&mu);
        uint64_t d_sent = sent - prev_sent, d_ok = ok - prev_ok;
        prev_sent = sent;
        prev_ok = ok;
        double secs = (double)opts.interval_ns / 1e9, at = (double)(now - start) / 1e9;
        double rate = (double)d_sent / secs;
        double okp = d_sent ? 100.0 * (double)d_ok / (double)d_sent : 100.0;
        double p99 =
            hm_hdr_count(&interval) ? (double)hm_hdr_value_at_percentile(&interval, 99) : 0.0;
        long long sse = opts.gauges ? (long long)atomic_load(&opts.gauges->sse_open) : 0;
        long long rec = opts.gauges ? (long long)atomic_load(&opts.gauges->reconnects) : 0;
        if (opts.quiet) {
            /* lines off (-q); the JSON lines and the log still go out */
        } else if (opts.live_line) {
            printf(
                "\r[%7.1fs] %9.0f %s/s  OK %6.2f%%  p99 %8.3f ms  SSE open %lld  reconnects %lld ",
                at, rate, opts.unit, okp, p99 / 1000.0, sse, rec);
        } else {
            printf(
                "[%7.1fs] %9.0f %s/s  OK %6.2f%%  p99 %8.3f ms  SSE open %lld  reconnects %lld\n",
                at, rate, opts.unit, okp, p99 / 1000.0, sse, rec);
        }
        if (!opts.quiet) fflush(stdout);
        if (opts.hlog) hm_hlog_write(opts.hlog, opts.hlog_tag, from, now, &interval);
        from = now;
        if (opts.json) {
            fprintf(opts.json,
                    "{\"t\":%.3f,\"%s\":%llu,\"rate\":%.1f,\"ok_pct\":%.3f,\"p99_us\":%.0f,"
                    "\"sse_open\":%lld,\"reconnects\":%lld,\"total\":%llu}\n",
                    at, opts.unit, (unsigned long long)d_sent, rate, okp, p99, sse, rec,
                    (unsigned long long)sent);
            fflush(opts.json);
        }
    }
    if (opts.live_line) printf("\n");
    /* The tail since the last report, so the log adds up to the summary. */
    uint64_t sent = 0, ok = 0;
    hm_hdr_reset(&interval);
    collect(&sent, &ok, &interval);
    if (opts.hlog && hm_hdr_count(&interval))
        hm_hlog_write(opts.hlog, opts.hlog_tag, from, hm_now_ns(), &interval);
    hm_hdr_destroy(&interval);
    return NULL;
}

int hm_progress_start(const hm_progress_options *o)
{
    opts = *o;
    int rc = hm_hdr_init(&carry, 1, HM_HDR_HIGHEST_US, 3);
    if (rc < 0) return rc;
    atomic_store(&stopping, false);
    int e = pthread_create(&reporter, NULL, report_loop, NULL);
    running = e == 0;
    if (!running) hm_hdr_destroy(&carry);
    return -e;
}

void hm_progress_stop(void)
{
    if (!running) return;
    atomic_store(&stopping, true);
    pthread_join(reporter, NULL);
    running = false;
    pthread_mutex_lock(&mu);
    hm_hdr_destroy(&carry);
    pthread_mutex_unlock(&mu);
}

/* The interval reporter: a plain thread that wakes every interval, reads
 * the engine threads' live counters and swaps out their interval
 * histograms, and prints one line (or refreshes one on a terminal), writes
 * one JSON line and one HdrHistogram log line, and adds a point to the
 * pass's time series. When the pass ends it does the same once more for
 * the last, partial interval, so every output adds up to the summary.
 * At each interval's end it lets the server watch sample (before_tick)
 * before it writes the line; from the first Ctrl-C (it looks every
 * STOP_POLL_NS) the lines say what the run waits for. One function
 * (live_figures) computes what the line and the full-screen view show; the
 * view (opts.view) is also called between ticks, every view_ns.
 * It never touches what the engine threads own except through the atomics
 * and the per-thread interval lock. */
#include "stats/hdr_log.h"
#include "stats/results.h"

#include <math.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#define STOP_POLL_NS 100000000LL /* how soon the lines notice the first Ctrl-C */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static char *att_base;
static int att_n;
static size_t att_stride;

/* Samples of threads that detached since the last report: a run's last
 * partial interval must still reach the outputs (so their total matches). */
static hm_hdr carry;
/* Counters of threads that detached: in this pass (the interval lines'
 * totals), and since the process began (the metrics, which never go down). */
static hm_live_totals gone_pass, gone_life;

static pthread_t reporter;
static pthread_cond_t wake;
static bool stopping; /* under mu */
static bool running;
static hm_progress_options opts;

static hm_thread_stats *attached(int i)
{
    return (hm_thread_stats *)(void *)(att_base + (size_t)i * att_stride);
}

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
        hm_thread_stats *t = attached(i);
        hm_interval_recorder_take(&t->interval, dst);
    }
}

#define LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)

/* out += what thread t counted so far. */
static void add_thread(hm_live_totals *out, hm_thread_stats *t)
{
    out->sent += LOAD(t->live_sent);
    out->ok += LOAD(t->live_ok);
    for (int s = 0; s < HM_STATUS_MAX; s++)
        out->by_status[s] += LOAD(t->by_status[s]);
    for (int k = 0; k < HM_FAIL__COUNT; k++)
        out->by_fail[k] += LOAD(t->by_fail[k]);
    for (int p = 0; p < HM_PHASE__COUNT; p++) {
        for (int b = 0; b <= HM_LIVE_BUCKETS; b++)
            out->bucket[p][b] += LOAD(t->live_bucket[p][b]);
        out->sum_us[p] += LOAD(t->live_sum_us[p]);
    }
    out->bytes_read += LOAD(t->live_bytes_read);
    out->bytes_written += LOAD(t->live_bytes_written);
    out->in_flight += LOAD(t->live_in_flight);
}

static void add_totals(hm_live_totals *out, const hm_live_totals *in)
{
    out->sent += in->sent;
    out->ok += in->ok;
    for (int s = 0; s < HM_STATUS_MAX; s++)
        out->by_status[s] += in->by_status[s];
    for (int k = 0; k < HM_FAIL__COUNT; k++)
        out->by_fail[k] += in->by_fail[k];
    for (int p = 0; p < HM_PHASE__COUNT; p++) {
        for (int b = 0; b <= HM_LIVE_BUCKETS; b++)
            out->bucket[p][b] += in->bucket[p][b];
        out->sum_us[p] += in->sum_us[p];
    }
    out->bytes_read += in->bytes_read;
    out->bytes_written += in->bytes_written;
    out->in_flight += in->in_flight;
}

void hm_progress_detach(void)
{
    pthread_mutex_lock(&mu);
    drain_intervals(&carry);
    hm_live_totals gone = {0};
    for (int i = 0; i < att_n; i++)
        add_thread(&gone, attached(i));
    gone.in_flight = 0; /* a gauge: what finished has nothing in flight */
    add_totals(&gone_pass, &gone);
    add_totals(&gone_life, &gone);
    att_base = NULL;
    att_n = 0;
    pthread_mutex_unlock(&mu);
}

void hm_progress_live_totals(hm_live_totals *out)
{
    memset(out, 0, sizeof(*out));
    pthread_mutex_lock(&mu);
    add_totals(out, &gone_life);
    for (int i = 0; i < att_n; i++)
        add_thread(out, attached(i));
    pthread_mutex_unlock(&mu);
}

/* The pass's totals so far, leaving the interval histograms alone. */
static void peek(hm_live_totals *cur)
{
    memset(cur, 0, sizeof(*cur));
    pthread_mutex_lock(&mu);
    add_totals(cur, &gone_pass);
    for (int i = 0; i < att_n; i++)
        add_thread(cur, attached(i));
    pthread_mutex_unlock(&mu);
}

/* The newest failure reason any attached thread kept, and how long ago. */
static void latest_failure(char *buf, size_t len, double *ago_s, int64_t now)
{
    int64_t best = 0;
    buf[0] = 0;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < att_n; i++) {
        hm_thread_stats *t = attached(i);
        while (atomic_flag_test_and_set_explicit(&t->latest_lock, memory_order_acquire)) {
        }
        if (t->latest_ns > best) {
            best = t->latest_ns;
            snprintf(buf, len, "%s", t->latest);
        }
        atomic_flag_clear_explicit(&t->latest_lock, memory_order_release);
    }
    pthread_mutex_unlock(&mu);
    *ago_s = best ? (double)(now - best) / 1e9 : 0;
}

/* The pass's totals so far; moves the attached threads' interval
 * histograms (and the carry) into `interval`. */
static void collect(hm_live_totals *cur, hm_hdr *interval)
{
    memset(cur, 0, sizeof(*cur));
    pthread_mutex_lock(&mu);
    add_totals(cur, &gone_pass);
    for (int i = 0; i < att_n; i++)
        add_thread(cur, attached(i));
    drain_intervals(interval);
    hm_hdr_add(interval, &carry);
    hm_hdr_reset(&carry);
    pthread_mutex_unlock(&mu);
}

/* ---- the reporter thread ------------------------------------------------- */

typedef struct reporter_state {
    hm_hdr interval;           /* this tick's samples */
    hm_hdr acc;                /* the series point being built */
    hm_hdr run;                /* the pass's samples so far (the view's run figures) */
    hm_live_figures fig;       /* what the line and the view show */
    uint64_t seen_sent;        /* sent when done_at last moved */
    bool view_on, live_line;   /* the view draws; else the line refreshes (terminal) */
    int64_t next_view;         /* the view's next refresh */
    hm_live_totals prev, cur;  /* pass totals at the last tick, and now */
    int64_t start, from;       /* the pass's start, the last tick */
    hm_interval_point pt;      /* the series point being built */
    int pt_ticks, step_ticks;  /* ticks in it, ticks per point */
    double pt_from;            /* its start, seconds */
    hm_interval_series series; /* what the pass hands over */
    int64_t done_at;           /* the last tick whose interval completed a request */
    bool stop_said;            /* the first Ctrl-C was said */
    char line[640];            /* the last line, without its end (done/ETA, stopping) */
} reporter_state;

/* "1m05s", "42s", "1h02m". */
static void eta_text(char *buf, size_t len, double s)
{
    long long t = (long long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, len, "%lldh%02lldm", t / 3600, t % 3600 / 60);
    else if (t >= 60)
        snprintf(buf, len, "%lldm%02llds", t / 60, t % 60);
    else
        snprintf(buf, len, "%llds", t);
}

/* "  4000/5000  ETA 3s" or "  12s/30s  ETA 18s" when the run has an end. */
static void done_text(char *buf, size_t len, uint64_t sent, double at)
{
    buf[0] = 0;
    double eta = -1;
    char eb[32];
    if (opts.total > 0 && sent <= (uint64_t)opts.total) {
        snprintf(buf, len, "  %llu/%lld", (unsigned long long)sent, (long long)opts.total);
        if (sent > 0 && at > 0) eta = (double)((uint64_t)opts.total - sent) * at / (double)sent;
    }
    if (opts.duration_ns > 0) {
        double d = (double)opts.duration_ns / 1e9, left = d - at > 0 ? d - at : 0;
        if (!buf[0]) {
            eta_text(eb, sizeof(eb), at < d ? at : d);
            size_t n = strlen(buf);
            snprintf(buf + n, len - n, "  %s/", eb);
            eta_text(eb, sizeof(eb), d);
            n = strlen(buf);
            snprintf(buf + n, len - n, "%s", eb);
        }
        if (eta < 0 || left < eta) eta = left;
    }
    if (eta >= 0) {
        eta_text(eb, sizeof(eb), eta);
        size_t n = strlen(buf);
        snprintf(buf + n, len - n, "  ETA %s", eb);
    }
}

/* "  stopping: waiting for 4 in flight (up to 9 s)" once the first Ctrl-C
 * came: each request in flight then has at most --timeout left. */
static bool stopping_text(char *buf, size_t len, int64_t now, long long in_flight)
{
    int64_t at = opts.stop_ns ? atomic_load(opts.stop_ns) : 0;
    buf[0] = 0;
    if (!at) return false;
    if (in_flight <= 0) {
        snprintf(buf, len, "  stopping");
        return true;
    }
    double left = (double)(at + opts.timeout_ns - now) / 1e9;
    snprintf(buf, len, "  stopping: waiting for %lld in flight (up to %.0f s)", in_flight,
             left > 0 ? ceil(left) : 0);
    return true;
}

/* Says the first Ctrl-C at once, between ticks: on a terminal the last
 * line gets the stopping text, in line mode a line of its own. */
static void say_stop(reporter_state *st, int64_t now)
{
    hm_live_totals t;
    hm_progress_live_totals(&t);
    char stop[96];
    if (!stopping_text(stop, sizeof(stop), now, (long long)t.in_flight)) return;
    st->stop_said = true;
    double at = (double)(now - st->start) / 1e9;
    if (opts.quiet) return;
    if (st->live_line && st->line[0])
        printf("\r%s%s\033[K", st->line, stop);
    else if (st->live_line || (opts.lines && !st->view_on))
        printf("%s[%7.1fs] %s\n", st->live_line ? "\r" : "", at, stop + 2);
    fflush(stdout);
}

/* Fills f's live part (everything but the last interval's figures,
 * which tick sets) from the pass totals cur at now. */
static void live_figures(reporter_state *st, int64_t now, const hm_live_totals *cur, bool last)
{
    hm_live_figures *f = &st->fig;
    if (cur->sent != st->seen_sent) {
        st->seen_sent = cur->sent;
        st->done_at = now;
    }
    f->unit = opts.unit;
    f->at = (double)(now - st->start) / 1e9;
    f->last = last;
    f->totals = *cur;
    hm_live_gauges *g = opts.gauges;
    f->sse_open = g ? (int64_t)atomic_load(&g->sse_open) : 0;
    f->reconnects = g ? (int64_t)atomic_load(&g->reconnects) : 0;
    f->vus = g ? (int64_t)atomic_load(&g->vus) : 0;
    f->reloads = g ? (int64_t)atomic_load(&g->reloads) : 0;
    f->idle_s = floor((double)(now - st->done_at) / 1e9); /* at least this long */
    stopping_text(f->stopping, sizeof(f->stopping), now, (long long)cur->in_flight);
    done_text(f->progress, sizeof(f->progress), cur->sent, f->at);
    f->done_frac = -1;
    if (opts.total > 0) f->done_frac = (double)cur->sent / (double)opts.total;
    if (opts.duration_ns > 0) {
        double d = f->at / ((double)opts.duration_ns / 1e9);
        if (d > f->done_frac) f->done_frac = d;
    }
    if (f->done_frac > 1) f->done_frac = 1;
    f->n_server = g ? hm_server_watch_read(g, f->server_names, f->server) : 0;
    latest_failure(f->latest, sizeof(f->latest), &f->latest_ago_s, now);
}

/* The live line, without its end (progress or stopping). */
static void line_text(const hm_live_figures *f, char *buf, size_t len)
{
    char p99s[24], srv[96] = "", disrupt[80] = "", oks[16], idle[64] = "";
    /* Failures and reloads only when there are some: where an outage
     * began and ended shows as the lines that carry them. */
    uint64_t d_failed = f->d_sent - f->d_ok;
    if (d_failed || f->reloads) {
        int n = 0;
        if (d_failed)
            n = snprintf(disrupt, sizeof(disrupt), "  failed %llu", (unsigned long long)d_failed);
        if (f->reloads)
            snprintf(disrupt + n, sizeof(disrupt) - (size_t)n, "  reloads %lld",
                     (long long)f->reloads);
    }
    if (f->count)
        hm_format_us(p99s, sizeof(p99s), (double)f->p99, 8);
    else
        snprintf(p99s, sizeof(p99s), "%8s", "-");
    if (isnan(f->ok_pct))
        snprintf(oks, sizeof(oks), "%7s", "-");
    else
        snprintf(oks, sizeof(oks), "%6.2f%%", f->ok_pct);
    /* A server that accepts and never answers: nothing completes. */
    if (!f->d_sent && f->idle_s >= 1) {
        char ago[32];
        eta_text(ago, sizeof(ago), f->idle_s);
        snprintf(idle, sizeof(idle), "  nothing completed for %s", ago);
    }
    /* The server watch's latest sample: what the server holds for clients. */
    double s_ctx = hm_server_leaf_max(f->n_server, f->server_names, f->server, "contexts");
    double s_sse = hm_server_leaf_max(f->n_server, f->server_names, f->server, "sse");
    if (!isnan(s_ctx) || !isnan(s_sse)) {
        size_t k = (size_t)snprintf(srv, sizeof(srv), "  /_health");
        if (!isnan(s_ctx)) k += (size_t)snprintf(srv + k, sizeof(srv) - k, " contexts %.0f", s_ctx);
        if (!isnan(s_sse) && k < sizeof(srv))
            snprintf(srv + k, sizeof(srv) - k, " sse %.0f", s_sse);
    }
    snprintf(buf, len,
             "[%7.1fs] %9.0f %s/s  OK %s  p99 %s  in flight %lld%s  SSE open %lld  reconnects "
             "%lld%s%s",
             f->at, f->rate, f->unit, oks, p99s, (long long)f->totals.in_flight, idle,
             (long long)f->sse_open, (long long)f->reconnects, disrupt, srv);
}

/* Hands the figures to the view; when it cannot open, the line takes over. */
static void show_view(reporter_state *st)
{
    if (st->view_on && !opts.view(&st->fig, opts.view_arg)) {
        st->view_on = false;
        st->live_line = !opts.quiet;
    }
}

/* Between ticks: the view with the live figures of now. */
static void refresh_view(reporter_state *st, int64_t now)
{
    hm_live_totals cur;
    peek(&cur);
    live_figures(st, now, &cur, false);
    show_view(st);
}

/* The server watch's fields into pt, by the series' field names. */
static void note_server(reporter_state *st, hm_interval_point *pt)
{
    for (int i = 0; i < HM_SERVER_FIELDS; i++)
        pt->server[i] = NAN;
    if (!opts.gauges) return;
    char names[HM_SERVER_FIELDS][HM_SERVER_NAME_MAX];
    double values[HM_SERVER_FIELDS];
    int n = hm_server_watch_read(opts.gauges, names, values);
    hm_interval_series *s = &st->series;
    for (int i = 0; i < n; i++) {
        int k = 0;
        while (k < s->n_server && strcmp(s->server_names[k], names[i]))
            k++;
        if (k == s->n_server) {
            if (k == HM_SERVER_FIELDS) continue;
            memcpy(s->server_names[k], names[i], HM_SERVER_NAME_MAX);
            s->n_server++;
        }
        pt->server[k] = values[i];
    }
}

static void series_push(reporter_state *st)
{
    hm_interval_series *s = &st->series;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        hm_interval_point *p = hm_realloc(s->points, cap * sizeof(*p));
        if (!p) return; /* the series is a report's garnish: drop the point */
        s->points = p;
        s->cap = cap;
    }
    hm_interval_point *pt = &st->pt;
    int64_t c = hm_hdr_count(&st->acc);
    pt->count = c;
    pt->p50_us = c ? hm_hdr_value_at_percentile(&st->acc, 50) : 0;
    pt->p90_us = c ? hm_hdr_value_at_percentile(&st->acc, 90) : 0;
    pt->p99_us = c ? hm_hdr_value_at_percentile(&st->acc, 99) : 0;
    pt->max_us = c ? hm_hdr_max(&st->acc) : 0;
    s->points[s->n++] = *pt;
    if (s->n % HM_SERIES_STEP_POINTS == 0) st->step_ticks *= 2;
    memset(pt, 0, sizeof(*pt));
    hm_hdr_reset(&st->acc);
    st->pt_ticks = 0;
}

/* One report: the interval since the last one, to every output. */
static void tick(reporter_state *st, int64_t now, bool last)
{
    hm_hdr_reset(&st->interval);
    collect(&st->cur, &st->interval);
    /* Right after the counters: the server as the interval ends, so what it
     * counted covers every request the interval completed. */
    if (opts.before_tick) opts.before_tick(opts.before_tick_arg);
    const hm_live_totals *cur = &st->cur, *prev = &st->prev;
    uint64_t d_sent = cur->sent - prev->sent, d_ok = cur->ok - prev->ok;
    uint64_t d_fail[HM_FAIL__COUNT], d_failures = 0;
    for (int k = 0; k < HM_FAIL__COUNT; k++) {
        d_fail[k] = cur->by_fail[k] - prev->by_fail[k];
        d_failures += d_fail[k];
    }
    uint64_t d_read = cur->bytes_read - prev->bytes_read;
    int64_t count = hm_hdr_count(&st->interval);
    double dt = (double)(now - st->from) / 1e9, at = (double)(now - st->start) / 1e9;
    /* A run that ended right on a tick leaves nothing to say. */
    if (last && !d_sent && !count && !d_failures && dt < 0.05) {
        if (st->view_on) { /* the view closes on the last figures */
            live_figures(st, now, cur, true);
            show_view(st);
            if (st->line[0] && !opts.quiet) printf("%s\n", st->line);
            fflush(stdout);
        }
        return;
    }
    hm_live_figures *f = &st->fig;
    f->dt = dt;
    f->d_sent = d_sent;
    f->d_ok = d_ok;
    f->rate = dt > 0 ? (double)d_sent / dt : 0;
    f->ok_pct = d_sent ? 100.0 * (double)d_ok / (double)d_sent : NAN; /* none: no percentage */
    f->count = count;
    f->p50 = count ? hm_hdr_value_at_percentile(&st->interval, 50) : 0;
    f->p90 = count ? hm_hdr_value_at_percentile(&st->interval, 90) : 0;
    f->p99 = count ? hm_hdr_value_at_percentile(&st->interval, 99) : 0;
    f->max = count ? hm_hdr_max(&st->interval) : 0;
    hm_hdr_add(&st->run, &st->interval);
    int64_t rc = f->run_count = hm_hdr_count(&st->run);
    f->run_p50 = rc ? hm_hdr_value_at_percentile(&st->run, 50) : 0;
    f->run_p90 = rc ? hm_hdr_value_at_percentile(&st->run, 90) : 0;
    f->run_p99 = rc ? hm_hdr_value_at_percentile(&st->run, 99) : 0;
    f->run_max = rc ? hm_hdr_max(&st->run) : 0;
    live_figures(st, now, cur, last);
    double rate = f->rate, okp = f->ok_pct, p50 = (double)f->p50, p99 = (double)f->p99;
    long long sse = f->sse_open, rec = f->reconnects, vus = f->vus, reloads = f->reloads;
    const char *done = f->stopping[0] ? f->stopping : last ? "" : f->progress;
    line_text(f, st->line, sizeof(st->line));
    if (st->view_on) {
        show_view(st);
        /* The view closed at the last call: the line stays on the terminal. */
        if (last && !opts.quiet) printf("%s%s\n", st->line, done);
    } else if (opts.quiet) {
        /* lines off (-q); the JSON lines and the log still go out */
    } else if (st->live_line) {
        printf("\r%s%s\033[K", st->line, done);
        if (last) printf("\n");
    } else if (opts.lines) {
        printf("%s%s\n", st->line, done);
    }
    if (!opts.quiet) fflush(stdout);
    int ns = f->n_server;
    char(*sn)[HM_SERVER_NAME_MAX] = f->server_names;
    double *sv = f->server;
    if (opts.hlog && (count || !last))
        hm_hlog_write(opts.hlog, opts.hlog_tag, st->from, now, &st->interval);
    if (opts.json) {
        char okj[16] = "null";
        if (!isnan(okp)) snprintf(okj, sizeof(okj), "%.3f", okp);
        fprintf(opts.json,
                "{\"t\":%.3f,\"dt\":%.3f,\"%s\":%llu,\"ok\":%llu,\"failed\":%llu,\"rate\":%.1f,"
                "\"ok_pct\":%s,\"p50_us\":%.0f,\"p99_us\":%.0f,\"sse_open\":%lld,"
                "\"reconnects\":%lld,\"in_flight\":%lld,\"vus\":%lld,\"bytes_read\":%llu,"
                "\"total\":%llu,\"reloads\":%lld",
                at, dt, opts.unit, (unsigned long long)d_sent, (unsigned long long)d_ok,
                (unsigned long long)(d_sent - d_ok), rate, okj, p50, p99, sse, rec,
                (long long)cur->in_flight, vus, (unsigned long long)d_read,
                (unsigned long long)cur->sent, reloads);
        if (ns > 0) {
            fprintf(opts.json, ",\"server\":{");
            for (int i = 0; i < ns; i++)
                fprintf(opts.json, "%s\"%s\":%.17g", i ? "," : "", sn[i], sv[i]);
            fputc('}', opts.json);
        }
        fputs("}\n", opts.json);
        fflush(opts.json);
    }
    /* Into the series point being built. */
    hm_interval_point *pt = &st->pt;
    if (st->pt_ticks == 0) st->pt_from = (double)(st->from - st->start) / 1e9;
    pt->t = at;
    pt->dt = at - st->pt_from;
    pt->sent += d_sent;
    pt->ok += d_ok;
    for (int k = 0; k < HM_FAIL__COUNT; k++)
        pt->errors[k] += d_fail[k];
    pt->bytes_read += d_read;
    pt->sse_open = sse;
    pt->reconnects = rec;
    pt->vus = vus;
    pt->reloads = reloads;
    pt->in_flight = cur->in_flight;
    note_server(st, pt);
    hm_hdr_add(&st->acc, &st->interval);
    if (++st->pt_ticks >= st->step_ticks || last) series_push(st);
    st->prev = st->cur;
    st->from = now;
}

static void *report_loop(void *arg)
{
    reporter_state *st = arg;
    int64_t next = st->start + opts.interval_ns;
    pthread_mutex_lock(&mu);
    while (!stopping) {
        int64_t now = hm_now_ns();
        if (!st->stop_said && opts.stop_ns && atomic_load(opts.stop_ns)) {
            pthread_mutex_unlock(&mu);
            say_stop(st, now);
            pthread_mutex_lock(&mu);
            continue;
        }
        if (now < next && st->view_on && now >= st->next_view) {
            pthread_mutex_unlock(&mu);
            refresh_view(st, now);
            st->next_view = now + opts.view_ns;
            pthread_mutex_lock(&mu);
            continue;
        }
        if (now < next) {
            /* A signal handler cannot wake a condition: look for a Ctrl-C
             * every STOP_POLL_NS while waiting. */
            int64_t until = opts.stop_ns && !st->stop_said && next - now > STOP_POLL_NS
                                ? now + STOP_POLL_NS
                                : next;
            if (st->view_on && st->next_view < until) until = st->next_view;
            struct timespec ts = {(time_t)(until / 1000000000), (long)(until % 1000000000)};
            pthread_cond_timedwait(&wake, &mu, &ts);
            continue;
        }
        pthread_mutex_unlock(&mu);
        tick(st, now, false);
        next += opts.interval_ns;
        if (next <= now) next = now + opts.interval_ns; /* fell behind: do not burst */
        pthread_mutex_lock(&mu);
    }
    pthread_mutex_unlock(&mu);
    tick(st, hm_now_ns(), true);
    return NULL;
}

static reporter_state *state;

int hm_progress_start(const hm_progress_options *o)
{
    opts = *o;
    if (opts.interval_ns <= 0) opts.interval_ns = 1000000000LL;
    reporter_state *st = hm_calloc(1, sizeof(*st));
    if (!st) return -ENOMEM;
    int rc = hm_hdr_init(&carry, 1, HM_HDR_HIGHEST_US, 3);
    if (rc == 0) rc = hm_hdr_init(&st->interval, 1, HM_HDR_HIGHEST_US, 3);
    if (rc == 0) rc = hm_hdr_init(&st->acc, 1, HM_HDR_HIGHEST_US, 3);
    if (rc == 0) rc = hm_hdr_init(&st->run, 1, HM_HDR_HIGHEST_US, 3);
    if (rc < 0) goto fail;
    st->step_ticks = 1;
    st->fig.ok_pct = NAN; /* no interval yet */
    st->view_on = opts.view != NULL;
    st->live_line = opts.live_line && !st->view_on;
    if (opts.view_ns <= 0) opts.view_ns = 250000000LL;
    st->series.interval_s = (double)opts.interval_ns / 1e9;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&wake, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_lock(&mu);
    memset(&gone_pass, 0, sizeof(gone_pass));
    stopping = false;
    pthread_mutex_unlock(&mu);
    st->start = st->from = st->done_at = st->next_view = hm_now_ns();
    int e = pthread_create(&reporter, NULL, report_loop, st);
    if (e) {
        rc = -e;
        pthread_cond_destroy(&wake);
        goto fail;
    }
    state = st;
    running = true;
    return 0;
fail:
    hm_hdr_destroy(&carry);
    hm_hdr_destroy(&st->interval);
    hm_hdr_destroy(&st->acc);
    hm_hdr_destroy(&st->run);
    hm_free(st);
    return rc;
}

void hm_progress_stop(hm_interval_series *series)
{
    if (series) memset(series, 0, sizeof(*series));
    if (!running) return;
    pthread_mutex_lock(&mu);
    stopping = true;
    pthread_cond_signal(&wake);
    pthread_mutex_unlock(&mu);
    pthread_join(reporter, NULL);
    running = false;
    pthread_cond_destroy(&wake);
    pthread_mutex_lock(&mu);
    hm_hdr_destroy(&carry);
    pthread_mutex_unlock(&mu);
    reporter_state *st = state;
    state = NULL;
    if (series)
        *series = st->series;
    else
        hm_interval_series_free(&st->series);
    hm_hdr_destroy(&st->interval);
    hm_hdr_destroy(&st->acc);
    hm_hdr_destroy(&st->run);
    hm_free(st);
}

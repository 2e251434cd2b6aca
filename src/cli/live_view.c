/* The live view: one screen of the figures the interval reporter computes,
 * redrawn every call. Only formatting lives here: every figure comes from
 * hm_live_figures (progress.c), as the live line's do. */
#include "cli/live_view.h"

#include <curses.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static SCREEN *screen; /* NULL: closed */
static bool paused;

/* One row at y, cut at the screen's width (no wrapping). */
static void row(int y, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void row(int y, const char *fmt, ...)
{
    if (y >= LINES) return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    mvaddnstr(y, 0, buf, COLS > 0 ? COLS - 1 : 0);
}

static void heading(int y, const char *text)
{
    attron(A_BOLD);
    row(y, "%s", text);
    attroff(A_BOLD);
}

/* hm_format_us with "us" for "µs": the view runs in the C locale, where
 * curses draws a byte at a time (µ would come out as two cells). */
static void fmt_us(char *buf, size_t len, double us, int width)
{
    hm_format_us(buf, len, us, width);
    char *mu = strstr(buf, "\xc2\xb5");
    if (mu) {
        *mu = 'u';
        memmove(mu + 1, mu + 2, strlen(mu + 2) + 1);
    }
}

static void lat(char *buf, size_t len, int64_t us, bool any)
{
    if (any)
        fmt_us(buf, len, (double)us, 9);
    else
        snprintf(buf, len, "%9s", "-");
}

/* "p50 p90 p99 max" of one span. */
static void latency_row(int y, const char *span, int64_t n, int64_t p50, int64_t p90, int64_t p99,
                        int64_t max)
{
    char a[24], b[24], c[24], d[24];
    lat(a, sizeof(a), p50, n > 0);
    lat(b, sizeof(b), p90, n > 0);
    lat(c, sizeof(c), p99, n > 0);
    lat(d, sizeof(d), max, n > 0);
    row(y, "  %-20s %s %s %s %s  %10lld", span, a, b, c, d, (long long)n);
}

/* Bars of the whole pass's action latencies by live bucket, from the first
 * bucket with a sample to the last; at most `rows` rows. When they do not
 * fit, the fast end is folded into the first row (its "<=" bound holds for
 * all of them), so the rows still add up to every sample. */
static int histogram(int y, int rows, const hm_live_figures *f)
{
    uint64_t b[HM_LIVE_BUCKETS + 1];
    memcpy(b, f->totals.bucket[HM_PHASE_ACTION], sizeof(b));
    int lo = 0, hi = HM_LIVE_BUCKETS;
    while (lo <= HM_LIVE_BUCKETS && !b[lo])
        lo++;
    while (hi >= 0 && !b[hi])
        hi--;
    if (lo > hi) {
        row(y, "  no samples yet");
        return 1;
    }
    if (hi - lo + 1 > rows) { /* the slow end matters most */
        int first = hi - rows + 1;
        for (int i = lo; i < first; i++)
            b[first] += b[i];
        lo = first;
    }
    uint64_t top = 0;
    for (int i = lo; i <= hi; i++)
        if (b[i] > top) top = b[i];
    int width = COLS - 36;
    if (width > 60) width = 60;
    if (width < 4) width = 4;
    for (int i = lo; i <= hi; i++) {
        char le[24];
        if (i < HM_LIVE_BUCKETS)
            fmt_us(le, sizeof(le), (double)hm_live_bucket_le_us[i], 8);
        else
            snprintf(le, sizeof(le), "%8s", "more");
        int n = top ? (int)((double)b[i] * width / (double)top + 0.5) : 0;
        if (b[i] && !n) n = 1;
        char bar[64];
        memset(bar, '#', (size_t)n);
        bar[n] = 0;
        row(y + i - lo, "  %s %s %-*s %llu", i < HM_LIVE_BUCKETS ? "<=" : "  ", le, width, bar,
            (unsigned long long)b[i]);
    }
    return hi - lo + 1;
}

/* Status codes, then failures without a response, on as few rows as fit. */
static int counts_rows(int y, const hm_live_figures *f)
{
    char buf[512];
    size_t n = 0;
    for (int s = 0; s < HM_STATUS_MAX && n < sizeof(buf); s++)
        if (f->totals.by_status[s])
            n += (size_t)snprintf(buf + n, sizeof(buf) - n, "  %d %llu", s,
                                  (unsigned long long)f->totals.by_status[s]);
    row(y, "Status codes%s", n ? buf : "  none yet");
    n = 0;
    for (int k = 0; k < HM_FAIL__COUNT && n < sizeof(buf); k++)
        if (f->totals.by_fail[k])
            n += (size_t)snprintf(buf + n, sizeof(buf) - n, "  %s %llu",
                                  hm_fail_kind_name((hm_fail_kind)k),
                                  (unsigned long long)f->totals.by_fail[k]);
    row(y + 1, "No response %s", n ? buf : "  none");
    if (f->latest[0])
        row(y + 2, "Latest        %s (%.0fs ago)", f->latest, floor(f->latest_ago_s));
    else
        row(y + 2, "Latest        no failure");
    return 3;
}

static void draw(const hm_live_figures *f, const char *scenario)
{
    erase();
    char bar[64] = "";
    if (f->done_frac >= 0) {
        int w = 30, k = (int)(f->done_frac * w + 0.5);
        bar[0] = '[';
        for (int i = 0; i < w; i++)
            bar[1 + i] = i < k ? '#' : '.';
        snprintf(bar + 1 + w, sizeof(bar) - 1 - (size_t)w, "] %3.0f%%", 100 * f->done_frac);
    }
    attron(A_BOLD);
    row(0, "hammer %s   %.1fs  %s%s", scenario ? scenario : "", f->at, bar, f->progress);
    attroff(A_BOLD);
    char oks[16];
    if (isnan(f->ok_pct))
        snprintf(oks, sizeof(oks), "-");
    else
        snprintf(oks, sizeof(oks), "%.2f%%", f->ok_pct);
    const hm_live_totals *t = &f->totals;
    char span[32] = "(no interval yet)";
    if (f->dt > 0) snprintf(span, sizeof(span), "(last %.1fs)", f->dt);
    row(2, "Rate        %9.0f %s/s   OK %s   %s", f->rate, f->unit, oks, span);
    row(3, "So far      sent %llu   ok %llu   failed %llu", (unsigned long long)t->sent,
        (unsigned long long)t->ok, (unsigned long long)(t->sent - t->ok));
    row(4, "In flight   %lld   VUs %lld   SSE open %lld   reconnects %lld   reloads %lld",
        (long long)t->in_flight, (long long)f->vus, (long long)f->sse_open,
        (long long)f->reconnects, (long long)f->reloads);
    char idle[32];
    snprintf(idle, sizeof(idle), "%.0fs", f->idle_s > 0 ? f->idle_s : 0);
    row(5, "Idle        since last completion %s", idle);
    char head[128];
    snprintf(head, sizeof(head), "%-23s%9s %9s %9s %9s  %10s", "Latency", "p50", "p90", "p99",
             "max", "samples");
    heading(7, head);
    latency_row(8, "last interval", f->count, f->p50, f->p90, f->p99, f->max);
    latency_row(9, "run to last tick", f->run_count, f->run_p50, f->run_p90, f->run_p99,
                f->run_max);
    int y = 11;
    int srv_rows = 2 + (f->n_server + 2) / 3;
    int room = LINES - y - 1 - 3 - 1 - srv_rows - 2; /* counts, server, keys */
    if (room > 12) room = 12;
    if (room >= 2) {
        heading(y++, "Latency histogram (the run so far)");
        y += histogram(y, room - 1, f) + 1;
    }
    y += counts_rows(y, f) + 1;
    heading(y++, "Server");
    if (!f->n_server) row(y++, "  not watched (no /_health sample)");
    for (int i = 0; i < f->n_server; i += 3) {
        char buf[256];
        size_t n = 0;
        for (int j = i; j < i + 3 && j < f->n_server; j++) {
            /* A memory figure in bytes reads as one (11.42 MiB, not 1.19726e+07). */
            const char *nm = f->server_names[j];
            size_t len = strlen(nm);
            char v[32];
            if (len > 6 && !strcmp(nm + len - 6, "_bytes"))
                hm_format_bytes(v, sizeof(v), f->server[j]);
            else
                snprintf(v, sizeof(v), "%.6g", f->server[j]);
            n += (size_t)snprintf(buf + n, sizeof(buf) - n, "  %-24s %12s", nm, v);
        }
        row(y++, "%s", buf);
    }
    if (f->stopping[0]) {
        attron(A_BOLD);
        row(LINES - 2, "%s", f->stopping + 2);
        attroff(A_BOLD);
    }
    row(LINES - 1, "q quit (as Ctrl-C; again: abort)   p pause the screen%s",
        paused ? "   PAUSED (the run goes on)" : "");
}

/* Keys since the last call. */
static void keys(const hm_live_figures *f, const char *scenario)
{
    int ch;
    while ((ch = getch()) != ERR) {
        if (ch == 'q' || ch == 'Q') {
            raise(SIGINT); /* the Ctrl-C path: one interrupt per press */
        } else if (ch == 'p' || ch == 'P') {
            paused = !paused;
            draw(f, scenario); /* once, with the PAUSED mark */
            refresh();
        }
    }
}

bool hm_live_view_show(const hm_live_figures *f, void *arg)
{
    const char *scenario = arg;
    if (f->last) {
        if (screen) {
            endwin();
            delscreen(screen);
            screen = NULL;
        }
        return true;
    }
    if (!screen) {
        fflush(stdout);
        screen = newterm(NULL, stdout, stdin);
        if (!screen) return false;
        set_term(screen);
        cbreak(); /* keys at once; Ctrl-C still raises SIGINT */
        noecho();
        nodelay(stdscr, TRUE);
        curs_set(0);
        paused = false;
    }
    keys(f, scenario);
    if (paused) return true;
    draw(f, scenario);
    refresh();
    return true;
}

/* metrics.c — the --metrics-listen endpoint; see metrics.h. */
#include "cli/metrics.h"
#include "cli/server_resources.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/hm_base.h"
#include "base/hm_fail.h"
#include "proto/http1.h"

static struct {
    int listen_fd;
    int wake[2]; /* a byte on wake[1] ends the serving thread */
    pthread_t thread;
    bool running;
    char scenario[128], target[512];
    char run_id[80], shard[32]; /* "" when the run is not sharded */
    hm_live_gauges *gauges;
} srv = {.listen_fd = -1, .wake = {-1, -1}};

/* Splits HOST:PORT ([v6]:PORT) into host and port; 0 or -EINVAL. */
static int split_listen(const char *listen, char *host, size_t hlen, char *port, size_t plen)
{
    const char *colon;
    if (listen[0] == '[') {
        const char *close = strchr(listen, ']');
        if (!close || close[1] != ':') return -EINVAL;
        snprintf(host, hlen, "%.*s", (int)(close - listen - 1), listen + 1);
        colon = close + 1;
    } else {
        colon = strrchr(listen, ':');
        if (!colon || strchr(listen, ':') != colon) return -EINVAL;
        snprintf(host, hlen, "%.*s", (int)(colon - listen), listen);
    }
    const char *p = colon + 1;
    if (!*p || strspn(p, "0123456789") != strlen(p) || atol(p) > 65535) return -EINVAL;
    snprintf(port, plen, "%s", p);
    return 0;
}

int hm_metrics_parse_listen(const char *listen)
{
    char host[256], port[16];
    return split_listen(listen, host, sizeof(host), port, sizeof(port));
}

/* ---- the exposition ------------------------------------------------------- */

static void label_value(FILE *f, const char *v)
{
    for (; v && *v; v++) {
        if (*v == '\\' || *v == '"')
            fprintf(f, "\\%c", *v);
        else if (*v == '\n')
            fputs("\\n", f);
        else
            fputc(*v, f);
    }
}

/* The family's HELP and TYPE lines. OpenMetrics names a counter's family
 * without the _total its samples carry; the Prometheus text format names
 * it with. */
/* A gauge's sample, or NaN (as both text formats spell it) when unknown. */
static void gauge_or_nan(FILE *f, const char *name, bool known, double v)
{
    if (known)
        fprintf(f, "%s %.17g\n", name, v);
    else
        fprintf(f, "%s NaN\n", name);
}

static void family(FILE *f, bool om, const char *name, const char *type, const char *help)
{
    bool counter = !strcmp(type, "counter");
    const char *suffix = counter && !om ? "_total" : "";
    fprintf(f, "# HELP %s%s %s\n# TYPE %s%s %s\n", name, suffix, help, name, suffix, type);
}

/* Seconds for an le label, without an exponent: 0.00005, 0.25, 60. */
static void seconds(char *buf, size_t len, int64_t us)
{
    snprintf(buf, len, "%.6f", (double)us / 1e6);
    char *end = buf + strlen(buf) - 1;
    while (*end == '0')
        *end-- = 0;
    if (*end == '.') end[1] = '0';
}

/* Metric names allow [a-zA-Z0-9_:]; the server watch's fields are data. */
static void sanitized(char *out, size_t len, const char *name)
{
    size_t i = 0;
    for (; name[i] && i + 1 < len; i++) {
        char c = name[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        out[i] = ok ? c : '_';
    }
    out[i] = 0;
}

/* A server field counts something since the server started (requests
 * served, errors, restarts) rather than holding a level (contexts, SSE
 * streams, connected): told by its last word, as Prometheus names
 * counters. Such a field is exported as a counter. */
static bool server_field_is_cumulative(const char *field)
{
    static const char *const words[] = {"total",  "requests", "errors",    "failures",
                                        "served", "restarts", "reconnects"};
    const char *leaf = strrchr(field, '_');
    leaf = leaf ? leaf + 1 : field;
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (!strcmp(leaf, words[i])) return true;
    return false;
}

int hm_metrics_write(FILE *f, bool om)
{
    hm_live_totals *t = hm_calloc(1, sizeof(*t));
    if (!t) return -EIO;
    hm_progress_live_totals(t);

    family(f, om, "hammer_run_info", "gauge", "What this hammer runs (always 1).");
    fputs("hammer_run_info{version=\"" HM_VERSION "\",scenario=\"", f);
    label_value(f, srv.scenario);
    fputs("\",target=\"", f);
    label_value(f, srv.target);
    if (srv.shard[0]) {
        fputs("\",run_id=\"", f);
        label_value(f, srv.run_id);
        fputs("\",shard=\"", f);
        label_value(f, srv.shard);
    }
    fputs("\"} 1\n", f);

    family(f, om, "hammer_requests", "counter",
           "Requests (actions) sent and finished, with or without a response.");
    fprintf(f, "hammer_requests_total %llu\n", (unsigned long long)t->sent);
    family(f, om, "hammer_requests_ok", "counter",
           "Requests that succeeded and passed the scenario's checks (the summary's OK).");
    fprintf(f, "hammer_requests_ok_total %llu\n", (unsigned long long)t->ok);
    family(f, om, "hammer_responses", "counter", "Responses by HTTP status.");
    for (int s = 0; s < HM_STATUS_MAX; s++)
        if (t->by_status[s])
            fprintf(f, "hammer_responses_total{status=\"%d\"} %llu\n", s,
                    (unsigned long long)t->by_status[s]);
    family(f, om, "hammer_errors", "counter", "Requests that got no response, by kind.");
    for (int k = 1; k < HM_FAIL__COUNT; k++)
        fprintf(f, "hammer_errors_total{kind=\"%s\"} %llu\n", hm_fail_kind_name((hm_fail_kind)k),
                (unsigned long long)t->by_fail[k]);
    family(f, om, "hammer_read_bytes", "counter", "HTTP bytes read (after TLS).");
    fprintf(f, "hammer_read_bytes_total %llu\n", (unsigned long long)t->bytes_read);
    family(f, om, "hammer_written_bytes", "counter", "HTTP bytes written (before TLS).");
    fprintf(f, "hammer_written_bytes_total %llu\n", (unsigned long long)t->bytes_written);

    long long sse = 0, rec = 0, vus = 0;
    if (srv.gauges) {
        sse = (long long)atomic_load(&srv.gauges->sse_open);
        rec = (long long)atomic_load(&srv.gauges->reconnects);
        vus = (long long)atomic_load(&srv.gauges->vus);
    }
    family(f, om, "hammer_in_flight", "gauge", "Requests sent and not yet answered.");
    fprintf(f, "hammer_in_flight %lld\n", (long long)t->in_flight);
    family(f, om, "hammer_virtual_users", "gauge", "Virtual users (or senders) running.");
    fprintf(f, "hammer_virtual_users %lld\n", vus);
    family(f, om, "hammer_sse_streams_open", "gauge", "SSE streams open.");
    fprintf(f, "hammer_sse_streams_open %lld\n", sse);
    family(f, om, "hammer_sse_reconnects", "counter", "SSE streams reopened.");
    fprintf(f, "hammer_sse_reconnects_total %lld\n", rec);

    family(f, om, "hammer_latency_seconds", "histogram",
           "Latency by phase (action: sent to response complete, from the intended send time "
           "with -R).");
    for (int p = 0; p < HM_PHASE__COUNT; p++) {
        const char *phase = hm_phase_name((hm_phase)p);
        uint64_t cum = 0;
        for (int b = 0; b <= HM_LIVE_BUCKETS; b++) {
            cum += t->bucket[p][b];
            char le[32] = "+Inf";
            if (b < HM_LIVE_BUCKETS) seconds(le, sizeof(le), hm_live_bucket_le_us[b]);
            fprintf(f, "hammer_latency_seconds_bucket{phase=\"%s\",le=\"%s\"} %llu\n", phase, le,
                    (unsigned long long)cum);
        }
        fprintf(f, "hammer_latency_seconds_sum{phase=\"%s\"} %.6f\n", phase,
                (double)t->sum_us[p] / 1e6);
        fprintf(f, "hammer_latency_seconds_count{phase=\"%s\"} %llu\n", phase,
                (unsigned long long)cum);
    }

    if (srv.gauges) {
        char names[HM_SERVER_FIELDS][HM_SERVER_NAME_MAX];
        double values[HM_SERVER_FIELDS];
        int n = hm_server_watch_read(srv.gauges, names, values);
        char families[HM_SERVER_FIELDS][HM_SERVER_NAME_MAX];
        for (int i = 0; i < n; i++) {
            char field[HM_SERVER_NAME_MAX];
            sanitized(field, sizeof(field), names[i]);
            bool counter = server_field_is_cumulative(field);
            size_t flen = strlen(field);
            if (counter && flen > 6 && !strcmp(field + flen - 6, "_total"))
                field[flen - 6] = 0; /* the family's name; its sample gets _total back */
            /* x_requests and x_requests_total would be one family twice,
             * which fails the whole scrape: the first one is kept */
            bool seen = false;
            for (int j = 0; j < i && !seen; j++)
                seen = !strcmp(families[j], field);
            snprintf(families[i], sizeof(families[i]), "%s", seen ? "" : field);
            if (seen) continue;
            char name[HM_SERVER_NAME_MAX + 16];
            snprintf(name, sizeof(name), "hammer_server_%s", field);
            char help[HM_SERVER_NAME_MAX * 8 + 96];
            snprintf(help, sizeof(help),
                     "The server's own %.*s, as the server watch last read it%s.",
                     HM_SERVER_NAME_MAX - 1, names[i], counter ? " (it only grows)" : "");
            family(f, om, name, counter ? "counter" : "gauge", help);
            fprintf(f, "%s%s %.17g\n", name, counter ? "_total" : "", values[i]);
        }
    }
    /* The leak verdict on each source's samples so far (server_resources.h):
     * the processes by pid always there, NaN until the samples after the
     * warm-up can be fitted (a family that comes and goes breaks rules and
     * dashboards); the exporter's when --server-metrics is given. */
    for (int src = 0; src < HM_RES__SOURCES; src++) {
        hm_leak rss, fds;
        bool sampled = hm_server_resources_live((hm_res_source)src, &rss, &fds);
        if (src == HM_RES_EXPORTER && !sampled) continue;
        const char *pre = src == HM_RES_EXPORTER ? "hammer_server_exporter_" : "hammer_server_";
        const char *by = src == HM_RES_EXPORTER ? " by --server-metrics" : "";
        char name[96], help[160];
        snprintf(name, sizeof(name), "%sresident_slope_bytes_per_hour", pre);
        snprintf(help, sizeof(help),
                 "The server's RSS%s trend after the warm-up (least squares); NaN until fitted.",
                 by);
        family(f, om, name, "gauge", help);
        gauge_or_nan(f, name, rss.known, rss.slope_h);
        snprintf(name, sizeof(name), "%sresident_slope_ci95_bytes_per_hour", pre);
        family(f, om, name, "gauge",
               "Half the width of that slope's 95% confidence interval; NaN until fitted.");
        gauge_or_nan(f, name, rss.known, rss.half_h);
        snprintf(name, sizeof(name), "%sleak_warning", pre);
        snprintf(help, sizeof(help),
                 "1 while RSS or open fds%s grow clearly and materially (the leak WARNING).", by);
        family(f, om, name, "gauge", help);
        fprintf(f, "%s %d\n", name, (rss.known && rss.warning) || (fds.known && fds.warning));
    }
    if (om) fputs("# EOF\n", f);
    hm_free(t);
    return ferror(f) ? -EIO : 0;
}

/* ---- the server ------------------------------------------------------------- */

/* Scrapers served at once; one more is answered 503 and closed, so a flood
 * of stuck connections costs a bounded number of descriptors. */
#define SCRAPERS_MAX 16
/* From accept to the last byte of the answer: Prometheus' default
 * scrape_timeout. A whole-exchange bound, so a scraper dripping its
 * request a byte at a time is closed however often it sends. */
#define SCRAPE_DEADLINE_NS (10LL * 1000 * 1000 * 1000)

/* One scraper connection: its request being read, then its answer being
 * written. Owned by the serving thread. */
typedef struct scraper {
    int fd; /* -1: the slot is free */
    int64_t deadline_ns;
    hm_http_req_parser req;
    char *out; /* the whole answer (head and body); hm_alloc, hm_free */
    size_t out_len, out_off;
} scraper;

/* The answer as one buffer into s->out; false when it cannot be built. */
static bool answer(scraper *s, int status, const char *type, const char *body, size_t len)
{
    char head[512];
    hm_http_header h[] = {{"Content-Type", type}};
    ssize_t n =
        hm_http_write_response_head(head, sizeof(head), status, NULL, h, 1, (long long)len, false);
    if (n < 0 || !(s->out = hm_alloc((size_t)n + len))) return false;
    memcpy(s->out, head, (size_t)n);
    if (len) memcpy(s->out + n, body, len);
    s->out_len = (size_t)n + len;
    s->out_off = 0;
    return true;
}

static void answer_text(scraper *s, int status, const char *text)
{
    answer(s, status, "text/plain; charset=utf-8", text, strlen(text));
}

/* The request is complete: the metrics, or why not. */
static void answer_request(scraper *s)
{
    const hm_http_req_parser *p = &s->req;
    bool metrics = p->path.len == 8 && !memcmp(p->path.ptr, "/metrics", 8);
    bool root = p->path.len == 1 && p->path.ptr[0] == '/';
    if (!metrics && !root) {
        answer_text(s, 404, "hammer serves /metrics only\n");
        return;
    }
    const char *accept = hm_http_req_header(p, "Accept");
    bool om = accept && strstr(accept, "application/openmetrics-text");
    char *body = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&body, &len);
    if (!m) return;
    int rc = hm_metrics_write(m, om);
    if (fclose(m) == 0 && rc == 0)
        answer(s, 200,
               om ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                  : "text/plain; version=0.0.4; charset=utf-8",
               body, len);
    free(body);
}

static void scraper_close(scraper *s)
{
    if (s->fd < 0) return;
    close(s->fd);
    hm_http_req_free(&s->req);
    hm_free(s->out);
    *s = (scraper){.fd = -1};
}

/* Reads what is there; builds the answer once the request is whole.
 * false when the connection is done with (closed by the peer, or an answer
 * could not be built). */
static bool scraper_read(scraper *s)
{
    char buf[4096];
    for (;;) {
        ssize_t n = read(s->fd, buf, sizeof(buf));
        if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
        if (n == 0) return false; /* it left before asking */
        size_t consumed;
        int rc = hm_http_req_feed(&s->req, buf, (size_t)n, &consumed);
        if (rc == HM_HTTP_DONE)
            answer_request(s);
        else if (rc < 0)
            answer_text(s, 400, "bad request\n");
        else
            continue;
        return s->out != NULL;
    }
}

/* Writes what the socket takes; false when the answer is out (or cannot
 * go out). */
static bool scraper_write(scraper *s)
{
    while (s->out_off < s->out_len) {
        ssize_t w = send(s->fd, s->out + s->out_off, s->out_len - s->out_off, MSG_NOSIGNAL);
        if (w < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
        s->out_off += (size_t)w;
    }
    return false;
}

/* A new connection into a free slot, or 503 when every slot is taken. */
static void scraper_accept(scraper *slots)
{
    int fd = accept4(srv.listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;
    for (int i = 0; i < SCRAPERS_MAX; i++) {
        if (slots[i].fd >= 0) continue;
        scraper *s = &slots[i];
        s->fd = fd;
        s->deadline_ns = hm_now_ns() + SCRAPE_DEADLINE_NS;
        /* a scrape is a GET: no room for large heads or bodies */
        hm_http_limits lim = {.max_header_bytes = 16 * 1024, .max_body_bytes = 4096};
        hm_http_req_init(&s->req, &lim);
        return;
    }
    scraper busy = {.fd = fd}; /* a fresh socket takes the whole answer at once */
    answer_text(&busy, 503, "hammer: too many scrapers connected\n");
    if (busy.out) scraper_write(&busy);
    hm_free(busy.out);
    close(fd);
}

/* One thread, every scraper on its own: poll over the listening socket, the
 * wake pipe and each connection, so a slow or stuck scraper holds only its
 * own slot, until its deadline or the end of the run. */
static void *serve(void *arg)
{
    (void)arg;
    scraper slots[SCRAPERS_MAX];
    for (int i = 0; i < SCRAPERS_MAX; i++)
        slots[i] = (scraper){.fd = -1};
    for (;;) {
        struct pollfd pf[2 + SCRAPERS_MAX] = {{.fd = srv.listen_fd, .events = POLLIN},
                                              {.fd = srv.wake[0], .events = POLLIN}};
        int64_t now = hm_now_ns(), next = -1;
        for (int i = 0; i < SCRAPERS_MAX; i++) {
            scraper *s = &slots[i];
            pf[2 + i].fd = s->fd; /* -1: poll skips it */
            pf[2 + i].events = s->out ? POLLOUT : POLLIN;
            if (s->fd >= 0 && (next < 0 || s->deadline_ns < next)) next = s->deadline_ns;
        }
        int timeout_ms = next < 0 ? -1 : next <= now ? 0 : (int)((next - now) / 1000000 + 1);
        if (poll(pf, 2 + SCRAPERS_MAX, timeout_ms) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (pf[1].revents) break;
        now = hm_now_ns();
        for (int i = 0; i < SCRAPERS_MAX; i++) {
            scraper *s = &slots[i];
            if (s->fd < 0) continue;
            bool keep = true;
            if ((pf[2 + i].revents & (POLLIN | POLLHUP | POLLERR)) && !s->out)
                keep = scraper_read(s);
            if (keep && s->out) keep = scraper_write(s); /* the socket may take it now */
            if (!keep || now >= s->deadline_ns) scraper_close(s);
        }
        if (pf[0].revents & POLLIN) scraper_accept(slots);
    }
    for (int i = 0; i < SCRAPERS_MAX; i++) /* the run's end: whoever is still connected */
        scraper_close(&slots[i]);
    return NULL;
}

int hm_metrics_start(const hm_metrics_options *o, int *port, char *why, size_t whylen)
{
    char host[256], portbuf[16];
    if (split_listen(o->listen, host, sizeof(host), portbuf, sizeof(portbuf)) < 0) {
        snprintf(why, whylen, "--metrics-listen %s: expected HOST:PORT (e.g. 127.0.0.1:9464)",
                 o->listen);
        return -EINVAL;
    }
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICSERV},
                    *res = NULL;
    int g = getaddrinfo(host[0] ? host : NULL, portbuf, &hints, &res);
    if (g != 0) {
        snprintf(why, whylen, "--metrics-listen %s: %s", o->listen, gai_strerror(g));
        return -EINVAL;
    }
    int fd = -1, err = 0;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, 0);
        if (fd < 0) continue;
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, a->ai_addr, a->ai_addrlen) < 0 || listen(fd, 16) < 0) {
            err = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) {
        snprintf(why, whylen, "--metrics-listen %s: %s", o->listen, strerror(err ? err : EINVAL));
        return -(err ? err : EINVAL);
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    char ps[16];
    getnameinfo((struct sockaddr *)&ss, sl, NULL, 0, ps, sizeof(ps), NI_NUMERICSERV);
    *port = atoi(ps);
    if (pipe2(srv.wake, O_CLOEXEC) < 0) {
        err = errno;
        close(fd);
        snprintf(why, whylen, "--metrics-listen: %s", strerror(err));
        return -err;
    }
    srv.listen_fd = fd;
    srv.gauges = o->gauges;
    snprintf(srv.scenario, sizeof(srv.scenario), "%s", o->scenario ? o->scenario : "");
    snprintf(srv.target, sizeof(srv.target), "%s", o->target ? o->target : "");
    bool sharded = o->shard_count > 1;
    snprintf(srv.run_id, sizeof(srv.run_id), "%s", sharded && o->run_id ? o->run_id : "");
    if (sharded) snprintf(srv.shard, sizeof(srv.shard), "%d/%d", o->shard_index, o->shard_count);
    int e = pthread_create(&srv.thread, NULL, serve, NULL);
    if (e) {
        hm_metrics_stop();
        snprintf(why, whylen, "--metrics-listen: %s", strerror(e));
        return -e;
    }
    srv.running = true;
    return 0;
}

void hm_metrics_linger(int64_t ns, bool quiet, bool (*cut_short)(void))
{
    if (!srv.running || ns <= 0 || (cut_short && cut_short())) return;
    fflush(stdout); /* the summary is out before the wait */
    if (!quiet)
        fprintf(stderr, "hammer: metrics stay up for %.1f s (--metrics-linger; Ctrl-C ends it)\n",
                (double)ns / 1e9);
    int64_t end = hm_now_ns() + ns;
    for (int64_t now = hm_now_ns(); now < end && !(cut_short && cut_short()); now = hm_now_ns()) {
        int64_t step = end - now < 50000000 ? end - now : 50000000; /* Ctrl-C within 50 ms */
        struct timespec ts = {0, (long)step};
        nanosleep(&ts, NULL);
    }
}

void hm_metrics_stop(void)
{
    if (srv.running) {
        ssize_t w = write(srv.wake[1], "x", 1);
        (void)w;
        pthread_join(srv.thread, NULL);
        srv.running = false;
    }
    for (int i = 0; i < 2; i++)
        if (srv.wake[i] >= 0) close(srv.wake[i]), srv.wake[i] = -1;
    if (srv.listen_fd >= 0) close(srv.listen_fd);
    srv.listen_fd = -1;
}

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
    fputs("\"} 1\n", f);

    family(f, om, "hammer_requests", "counter",
           "Requests (actions) sent and finished, with or without a response.");
    fprintf(f, "hammer_requests_total %llu\n", (unsigned long long)t->sent);
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
        for (int i = 0; i < n; i++) {
            char name[HM_SERVER_NAME_MAX + 16], field[HM_SERVER_NAME_MAX];
            sanitized(field, sizeof(field), names[i]);
            snprintf(name, sizeof(name), "hammer_server_%s", field);
            char help[HM_SERVER_NAME_MAX + 64];
            snprintf(help, sizeof(help), "The server's own %s, as the server watch last read it.",
                     field);
            family(f, om, name, "gauge", help);
            fprintf(f, "%s %.17g\n", name, values[i]);
        }
    }
    hm_leak rss, fds; /* the leak verdict on the samples so far (server_resources.h) */
    hm_server_resources_live(&rss, &fds);
    if (rss.known) {
        family(f, om, "hammer_server_resident_slope_bytes_per_hour", "gauge",
               "The server's RSS trend after the warm-up (least squares).");
        fprintf(f, "hammer_server_resident_slope_bytes_per_hour %.17g\n", rss.slope_h);
        family(f, om, "hammer_server_resident_slope_ci95_bytes_per_hour", "gauge",
               "Half the width of that slope's 95% confidence interval.");
        fprintf(f, "hammer_server_resident_slope_ci95_bytes_per_hour %.17g\n", rss.half_h);
        family(f, om, "hammer_server_leak_warning", "gauge",
               "1 while RSS or open fds grow clearly and materially (the leak WARNING).");
        fprintf(f, "hammer_server_leak_warning %d\n", rss.warning || (fds.known && fds.warning));
    }
    if (om) fputs("# EOF\n", f);
    hm_free(t);
    return ferror(f) ? -EIO : 0;
}

/* ---- the server ------------------------------------------------------------- */

static void respond(int fd, int status, const char *type, const char *body, size_t len)
{
    char head[512];
    hm_http_header h[] = {{"Content-Type", type}};
    ssize_t n =
        hm_http_write_response_head(head, sizeof(head), status, NULL, h, 1, (long long)len, false);
    if (n < 0) return;
    if (write(fd, head, (size_t)n) != n) return;
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, body + off, len - off);
        if (w <= 0) return;
        off += (size_t)w;
    }
}

/* One request on fd (then the connection closes). */
static void serve_one(int fd)
{
    struct timeval tv = {2, 0}; /* a scraper that stalls does not hold the endpoint */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    hm_http_req_parser p;
    hm_http_req_init(&p, NULL);
    char buf[4096];
    int rc = HM_HTTP_NEED_MORE;
    while (rc == HM_HTTP_NEED_MORE) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n <= 0) break;
        size_t consumed;
        rc = hm_http_req_feed(&p, buf, (size_t)n, &consumed);
    }
    if (rc == HM_HTTP_DONE) {
        bool metrics = p.path.len == 8 && !memcmp(p.path.ptr, "/metrics", 8);
        bool root = p.path.len == 1 && p.path.ptr[0] == '/';
        const char *accept = hm_http_req_header(&p, "Accept");
        bool om = accept && strstr(accept, "application/openmetrics-text");
        if (metrics || root) {
            char *body = NULL;
            size_t len = 0;
            FILE *m = open_memstream(&body, &len);
            if (m) {
                hm_metrics_write(m, om);
                fclose(m);
                respond(fd, 200,
                        om ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                           : "text/plain; version=0.0.4; charset=utf-8",
                        body, len);
            }
            free(body);
        } else {
            static const char nf[] = "hammer serves /metrics only\n";
            respond(fd, 404, "text/plain; charset=utf-8", nf, sizeof(nf) - 1);
        }
    } else if (rc < 0) {
        static const char bad[] = "bad request\n";
        respond(fd, 400, "text/plain; charset=utf-8", bad, sizeof(bad) - 1);
    }
    hm_http_req_free(&p);
    close(fd);
}

static void *serve(void *arg)
{
    (void)arg;
    for (;;) {
        struct pollfd pf[2] = {{.fd = srv.listen_fd, .events = POLLIN},
                               {.fd = srv.wake[0], .events = POLLIN}};
        if (poll(pf, 2, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (pf[1].revents) break;
        if (!(pf[0].revents & POLLIN)) continue;
        int fd = accept4(srv.listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd >= 0) serve_one(fd);
    }
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
    int e = pthread_create(&srv.thread, NULL, serve, NULL);
    if (e) {
        hm_metrics_stop();
        snprintf(why, whylen, "--metrics-listen: %s", strerror(e));
        return -e;
    }
    srv.running = true;
    return 0;
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

/* How --metrics-listen serves its scrapers, and what docs/metrics.md says
 * about it, in one of four modes:
 *   drip    a client dripping its request a byte every 1.5 s while a
 *           normal scrape asks: the scrape is answered while the drip goes
 *           on, and a `-d 3s --timeout 1s` run exits within a bound
 *           derived from -d and --timeout, not when the drip stops;
 *   cap     16 connections that send nothing fill the endpoint: one more
 *           is told 503, a freed slot serves again, and a drip is closed
 *           by the whole-request deadline (10 s) however often it sends;
 *   linger  --metrics-linger: a scrape after the summary is printed gets
 *           the final counts (the JSON's actions.sent and ok), run_info
 *           carries --shard's run_id and shard, the wait ends by itself or
 *           at Ctrl-C;
 *   fields  a server whose /_health has fields that only grow: they are
 *           counters (x_requests, cpu_seconds_total: one _total, not two),
 *           a level stays a gauge, and x_requests beside x_requests_total
 *           makes one family, not a scrape Prometheus refuses;
 *   doc     every metric a real scrape has is in docs/metrics.md's list
 *           with the same type, every one listed is scraped, and every
 *           hammer_ name in deploy/prometheus's rules and rule tests is
 *           one of them.
 * argv: HAMMER MODE [DOCS_METRICS_MD DEPLOY_PROMETHEUS_DIR] */
#include "metrics_client.h"

#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static const char *hammer;
static char dir[] = "/tmp/hm_metrics_serve_XXXXXX";

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* GET /metrics from 127.0.0.1:port; the whole answer into buf. */
static size_t scrape(int port, char *buf, size_t cap)
{
    return metrics_get(port, "/metrics", NULL, buf, cap);
}

static int start_hammer(proc *p, char **extra)
{
    return metrics_start_hammer(p, hammer, extra);
}

/* ---- a client that drips its request ----------------------------------------- */

typedef struct drip {
    int port;
    int every_ms;       /* one byte per every_ms */
    double until;       /* now_s() when it gives up on its own */
    atomic_bool going;  /* still dripping: the endpoint has not closed it */
    atomic_int sent;    /* bytes taken */
    atomic_bool closed; /* the endpoint closed it (not the drip giving up) */
    double closed_at;   /* now_s() then */
    pthread_t thread;
} drip;

/* A request that never completes within the test: a header a byte at a
 * time, until the endpoint closes the connection or `until` passes. */
static void *drip_run(void *arg)
{
    drip *d = arg;
    int fd = metrics_connect(d->port);
    static const char head[] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
    for (size_t i = 0; now_s() < d->until; i++) {
        char c = i < sizeof(head) - 1 ? head[i] : 'x';
        if (send(fd, &c, 1, MSG_NOSIGNAL) != 1) break;
        atomic_fetch_add(&d->sent, 1);
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        if (poll(&pf, 1, d->every_ms) == 1) break; /* an answer or the close */
    }
    if (now_s() < d->until) {
        d->closed_at = now_s();
        atomic_store(&d->closed, true);
    }
    atomic_store(&d->going, false);
    close(fd);
    return NULL;
}

static void drip_start(drip *d, int port, int every_ms, double for_s)
{
    d->port = port;
    d->every_ms = every_ms;
    d->until = now_s() + for_s;
    atomic_store(&d->going, true);
    atomic_store(&d->sent, 0);
    atomic_store(&d->closed, false);
    ASSERT_EQ(pthread_create(&d->thread, NULL, drip_run, d), 0);
    while (atomic_load(&d->sent) == 0) /* connected, and dripping */
        usleep(10 * 1000);
}

/* ---- drip: a stuck scraper holds neither another one nor the run ------------- */

static void dripping(void)
{
    const double d_s = 3, timeout_s = 1;
    /* The run may take -d plus --timeout to drain, plus as much again for a
     * busy machine's set-up and summary; the drip outlasts that three times. */
    const double bound = 2 * (d_s + timeout_s), drip_for = 3 * bound;
    proc p;
    /* No server watch: after -d its grace (--watch-grace) waits for the
     * server's contexts on its own, which is not what this bounds. */
    char *extra[] = {"-q",       "-d",      "3s", "--timeout", "1s", "-c", "2", "--no-server-watch",
                     "scenario", "counter", NULL};
    int port = start_hammer(&p, extra);
    double t0 = now_s();
    static drip d;
    drip_start(&d, port, 1500, drip_for);
    static char buf[1 << 20];
    scrape(port, buf, sizeof(buf));
    bool drip_going_at_answer = atomic_load(&d.going);
    ASSERT(strstr(buf, "HTTP/1.1 200 "));
    ASSERT(metrics_value(buf, "hammer_virtual_users") >= 0);
    if (!drip_going_at_answer) HM_FAIL_("the scrape was answered only once the drip had stopped");
    int rc = proc_wait(&p, (int)(drip_for * 2));
    double took = now_s() - t0;
    pthread_join(d.thread, NULL);
    ASSERT_EQ(rc, 0);
    if (took > bound)
        HM_FAIL_("hammer -d 3s --timeout 1s took %.1f s to exit (bound %.0f s)", took, bound);
    ASSERT(atomic_load(&d.closed)); /* cut off by the run's end, not over on its own */
    printf("drip: a scrape answered while a client dripped its request (%d bytes so far); "
           "the run exited %.1f s after it began serving (bound %.0f s), the drip cut off\n",
           atomic_load(&d.sent), took, bound);
}

/* ---- cap: 16 at once, the 17th told; the deadline is the whole request ------- */

#define SCRAPERS_MAX 16 /* metrics.c's cap, stated in docs/metrics.md */
#define DEADLINE_S 10   /* likewise */

static void capped(void)
{
    proc p;
    char *extra[] = {"-q",   "-n",       "50",      "-c", "2", "--metrics-linger",
                     "120s", "scenario", "counter", NULL};
    int port = start_hammer(&p, extra);
    static char buf[1 << 20];
    do /* the run is over and the endpoint lingers */
        scrape(port, buf, sizeof(buf));
    while (metrics_value(buf, "hammer_requests_total") < 50 && (usleep(50 * 1000), true));
    int idle[SCRAPERS_MAX];
    for (int i = 0; i < SCRAPERS_MAX; i++)
        idle[i] = metrics_connect(port);
    usleep(200 * 1000); /* accepted: every slot held by a connection that sends nothing */
    scrape(port, buf, sizeof(buf));
    if (!strstr(buf, "HTTP/1.1 503 ") || !strstr(buf, "too many scrapers"))
        HM_FAIL_("a scrape past %d idle connections got:\n%.300s", SCRAPERS_MAX, buf);
    close(idle[0]);
    int tries = 0;
    do /* the endpoint frees the slot once it sees the close */
        scrape(port, buf, sizeof(buf)), tries++;
    while (strstr(buf, " 503 ") && (usleep(20 * 1000), true));
    ASSERT(strstr(buf, "HTTP/1.1 200 "));
    for (int i = 1; i < SCRAPERS_MAX; i++)
        close(idle[i]);

    /* A byte every 0.5 s: a per-read timeout never fires; the whole-request
     * deadline does. The drip gives up on its own after four deadlines. */
    static drip d;
    double t0 = now_s();
    drip_start(&d, port, 500, 4 * DEADLINE_S);
    pthread_join(d.thread, NULL);
    if (!atomic_load(&d.closed))
        HM_FAIL_("a client dripping a byte every 0.5 s was never closed (%d bytes in %.0f s)",
                 atomic_load(&d.sent), 4.0 * DEADLINE_S);
    double closed_after = d.closed_at - t0;
    ASSERT(closed_after >= DEADLINE_S * 0.9); /* the deadline, not the first idle moment */
    siginfo_t si = {0};
    ASSERT(waitid(P_PID, (id_t)p.pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == 0);
    scrape(port, buf, sizeof(buf));
    ASSERT(strstr(buf, "HTTP/1.1 200 "));
    kill(p.pid, SIGINT); /* Ctrl-C ends the linger */
    ASSERT_EQ(proc_wait(&p, 60), 0);
    printf("cap: %d idle connections, the next one told 503, a freed slot served again (after %d "
           "tries); a drip of %d bytes closed after %.1f s (deadline %d s)\n",
           SCRAPERS_MAX, tries, atomic_load(&d.sent), closed_after, DEADLINE_S);
}

/* ---- linger: the final counts, for a last scrape ------------------------------ */

static void lingering(void)
{
    char json[300];
    snprintf(json, sizeof(json), "%s/run.json", dir);
    proc p;
    /* shard 1 of 2 of a 600-action run: this process sends 300 */
    char *extra[] = {"-n",       "600",     "-c",     "4",  "--shard",          "1/2",
                     "--run-id", "soak-42", "--json", json, "--metrics-linger", "120s",
                     "scenario", "counter", NULL};
    int port = start_hammer(&p, extra);
    if (!proc_wait_output(&p, "metrics stay up for 120.0 s"))
        HM_FAIL_("hammer did not say it lingers:\n%s", p.out);
    if (!strstr(p.out, "Actions sent")) HM_FAIL_("no summary before the linger:\n%s", p.out);
    static char buf[1 << 20];
    scrape(port, buf, sizeof(buf));
    json_t *doc = load_json(json);
    long long sent = json_int_at(doc, "actions.sent"), ok = json_int_at(doc, "actions.ok");
    json_decref(doc);
    ASSERT_EQ(sent, 300);
    double scraped = metrics_value(buf, "hammer_requests_total");
    if (scraped != (double)sent)
        HM_FAIL_("the last scrape has hammer_requests_total %.0f, the JSON actions.sent %lld",
                 scraped, sent);
    ASSERT(metrics_value(buf, "hammer_requests_ok_total") == (double)ok);
    ASSERT(metrics_value(buf, "hammer_in_flight") == 0);
    const char *info = strstr(buf, "\nhammer_run_info{");
    ASSERT(info);
    char line[1024];
    snprintf(line, sizeof(line), "%.*s", (int)strcspn(info + 1, "\n"), info + 1);
    if (!strstr(line, ",run_id=\"soak-42\",shard=\"1/2\"} 1"))
        HM_FAIL_("run_info lacks --shard's labels: %s", line);
    kill(p.pid, SIGINT);
    ASSERT_EQ(proc_wait(&p, 60), 0);

    /* A short linger ends by itself, the run's exit status kept. */
    proc q;
    char *short_linger[] = {"-q", "-n",       "20",      "-c", "2", "--metrics-linger",
                            "1s", "scenario", "counter", NULL};
    start_hammer(&q, short_linger);
    ASSERT_EQ(proc_wait(&q, 60), 0);
    printf("linger: a scrape after the summary has hammer_requests_total %.0f = actions.sent, "
           "run_info has run_id and shard; Ctrl-C and the end of the linger both exit 0\n",
           scraped);
}

/* ---- fields: which server fields are counters ---------------------------------- */

/* One keep-alive connection of a tiny HTTP/1.1 server: /_health answers
 * with fields of both kinds, anything else 200 "ok". */
static void *tiny_conn(void *arg)
{
    int fd = (int)(intptr_t)arg;
    static const char health[] = "{\"status\":\"ok\",\"x_requests\":5,\"x_requests_total\":6,"
                                 "\"cpu_seconds_total\":1.5,\"queue_depth\":3}";
    char buf[8192];
    size_t len = 0;
    for (;;) {
        char *end = memmem(buf, len, "\r\n\r\n", 4);
        if (!end) {
            if (len == sizeof(buf)) break;
            ssize_t n = read(fd, buf + len, sizeof(buf) - len);
            if (n <= 0) break;
            len += (size_t)n;
            continue;
        }
        bool is_health = !strncmp(buf, "GET /_health", 12), head = !strncmp(buf, "HEAD ", 5);
        const char *body = is_health ? health : "ok";
        char out[512];
        int n =
            snprintf(out, sizeof(out),
                     "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %zu\r\n\r\n%s",
                     is_health ? "application/json" : "text/plain", strlen(body), head ? "" : body);
        if (send(fd, out, (size_t)n, MSG_NOSIGNAL) != n) break;
        size_t used = (size_t)(end + 4 - buf);
        memmove(buf, buf + used, len - used);
        len -= used;
    }
    close(fd);
    return NULL;
}

static void *tiny_server(void *arg)
{
    int lfd = (int)(intptr_t)arg;
    for (;;) {
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0) return NULL;
        pthread_t t;
        if (pthread_create(&t, NULL, tiny_conn, (void *)(intptr_t)fd) == 0)
            pthread_detach(t);
        else
            close(fd);
    }
}

static void server_fields(void)
{
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof(a);
    ASSERT_EQ(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
    ASSERT_EQ(listen(lfd, 64), 0);
    ASSERT_EQ(getsockname(lfd, (struct sockaddr *)&a, &al), 0);
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, tiny_server, (void *)(intptr_t)lfd), 0);
    pthread_detach(t); /* it ends when lfd closes; nothing waits for it */
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/", ntohs(a.sin_port));
    proc p;
    char *extra[] = {"-q",   "-n",       "20",  "-c", "1", "--url", url, "--metrics-linger",
                     "120s", "scenario", "get", NULL};
    int port = start_hammer(&p, extra);
    static char buf[1 << 20];
    do
        scrape(port, buf, sizeof(buf));
    while (metrics_value(buf, "hammer_requests_total") < 20 && (usleep(50 * 1000), true));
    kill(p.pid, SIGINT);
    ASSERT_EQ(proc_wait(&p, 60), 0);
    if (!strstr(buf, "\n# TYPE hammer_server_x_requests_total counter\n"))
        HM_FAIL_("x_requests is not a counter:\n%s", strstr(buf, "# HELP hammer_server_"));
    ASSERT(metrics_value(buf, "hammer_server_x_requests_total") == 5); /* the first of the two */
    const char *first = strstr(buf, "# TYPE hammer_server_x_requests_total ");
    ASSERT(!strstr(first + 1, "# TYPE hammer_server_x_requests_total "));
    ASSERT(strstr(buf, "\n# TYPE hammer_server_cpu_seconds_total counter\n"));
    ASSERT(metrics_value(buf, "hammer_server_cpu_seconds_total") == 1.5);
    ASSERT(!strstr(buf, "_total_total"));
    ASSERT(strstr(buf, "\n# TYPE hammer_server_queue_depth gauge\n"));
    ASSERT(metrics_value(buf, "hammer_server_queue_depth") == 3);
    close(lfd);
    printf("fields: x_requests and cpu_seconds_total are counters (one _total), queue_depth a "
           "gauge, x_requests_total beside x_requests left out\n");
}

/* ---- doc: docs/metrics.md's list is what a scrape has -------------------------- */

#define MAX_METRICS 64

typedef struct metric {
    char name[96], type[16];
} metric;

static int find_metric(const metric *m, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(m[i].name, name)) return i;
    return -1;
}

/* The rows of the doc's table: "| `name{labels}` | type | unit | meaning |". */
static int doc_metrics(const char *md, metric *m)
{
    int n = 0;
    for (const char *l = strstr(md, "\n| `hammer_"); l; l = strstr(l + 1, "\n| `hammer_")) {
        const char *name = l + 4;
        size_t len = strcspn(name, "{`");
        const char *bar = strchr(name, '|');
        ASSERT(bar && n < MAX_METRICS);
        const char *type = bar + 1;
        while (*type == ' ')
            type++;
        if (memchr(name, '<', len)) continue; /* a pattern: hammer_server_<field> */
        snprintf(m[n].name, sizeof(m[n].name), "%.*s", (int)len, name);
        snprintf(m[n].type, sizeof(m[n].type), "%.*s", (int)strcspn(type, " |"), type);
        n++;
    }
    return n;
}

/* Every hammer_ name in a Prometheus file (rules, rule tests) is listed;
 * histogram series (_bucket, _sum, _count) count as their family. */
static void names_listed(const char *path, const metric *m, int n)
{
    char *text = slurp(path);
    int seen = 0;
    for (const char *p = strstr(text, "hammer_"); p; p = strstr(p + 1, "hammer_")) {
        if (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == ':')) continue;
        char name[96];
        snprintf(name, sizeof(name), "%.*s",
                 (int)strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_"), p);
        if (find_metric(m, n, name) < 0) {
            size_t len = strlen(name);
            const char *suffix[] = {"_bucket", "_sum", "_count"};
            bool family = false;
            for (int s = 0; s < 3 && !family; s++) {
                size_t sl = strlen(suffix[s]);
                char base[96];
                if (len <= sl || strcmp(name + len - sl, suffix[s])) continue;
                snprintf(base, sizeof(base), "%.*s", (int)(len - sl), name);
                int k = find_metric(m, n, base);
                family = k >= 0 && !strcmp(m[k].type, "histogram");
            }
            if (!family) HM_FAIL_("%s uses %s, which hammer does not export", path, name);
        }
        seen++;
    }
    ASSERT_GT(seen, 0);
    free(text);
}

static void documented(const char *md_path, const char *deploy)
{
    proc p;
    /* The embedded bench_app is watched: its /_health fields are exported too. */
    char *extra[] = {"-q",   "-n",       "200",     "-c", "4", "--metrics-linger",
                     "120s", "scenario", "counter", NULL};
    int port = start_hammer(&p, extra);
    static char buf[1 << 20];
    do /* the run over, the server watch's last sample taken */
        scrape(port, buf, sizeof(buf));
    while ((metrics_value(buf, "hammer_requests_total") < 200 ||
            !strstr(buf, "# TYPE hammer_server_")) &&
           (usleep(100 * 1000), true));
    kill(p.pid, SIGINT);
    ASSERT_EQ(proc_wait(&p, 60), 0);

    static metric scraped[MAX_METRICS], doc[MAX_METRICS];
    int ns = 0;
    for (const char *l = strstr(buf, "\n# TYPE "); l; l = strstr(l + 1, "\n# TYPE ")) {
        ASSERT(ns < MAX_METRICS);
        if (sscanf(l + 8, "%95s %15s", scraped[ns].name, scraped[ns].type) == 2) ns++;
    }
    char *md = slurp(md_path);
    int nd = doc_metrics(md, doc);
    free(md);
    ASSERT_GT(ns, 10);
    for (int i = 0; i < ns; i++) {
        int k = find_metric(doc, nd, scraped[i].name);
        if (k < 0)
            HM_FAIL_("%s (%s) is exported but not in %s", scraped[i].name, scraped[i].type,
                     md_path);
        if (strcmp(doc[k].type, scraped[i].type))
            HM_FAIL_("%s is a %s, %s says %s", scraped[i].name, scraped[i].type, md_path,
                     doc[k].type);
    }
    for (int i = 0; i < nd; i++)
        if (find_metric(scraped, ns, doc[i].name) < 0)
            HM_FAIL_("%s lists %s, which a scrape of hammer does not have", md_path, doc[i].name);
    ASSERT(strstr(buf, "\n# TYPE hammer_server_workers_requests_total counter\n"));
    ASSERT(strstr(buf, "\n# TYPE hammer_server_connections_contexts gauge\n"));
    ASSERT(!strstr(buf, "shard=")); /* no --shard, no shard label */
    char path[600];
    snprintf(path, sizeof(path), "%s/hammer-rules.yml", deploy);
    names_listed(path, doc, nd);
    snprintf(path, sizeof(path), "%s/hammer-rules.test.yml", deploy);
    names_listed(path, doc, nd);
    printf("doc: the %d metrics of a real scrape are the %d listed, with their types; the "
           "rules and their tests use only those\n",
           ns, nd);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        HM_FAIL_("usage: %s HAMMER drip|cap|linger|fields|doc [METRICS_MD DEPLOY_DIR]", argv[0]);
    hammer = argv[1];
    ASSERT(mkdtemp(dir));
    if (!strcmp(argv[2], "drip"))
        dripping();
    else if (!strcmp(argv[2], "cap"))
        capped();
    else if (!strcmp(argv[2], "linger"))
        lingering();
    else if (!strcmp(argv[2], "fields"))
        server_fields();
    else if (!strcmp(argv[2], "doc") && argc == 5)
        documented(argv[3], argv[4]);
    else
        HM_FAIL_("unknown mode %s", argv[2]);
    char rm[400];
    snprintf(rm, sizeof(rm), "rm -rf '%s'", dir);
    if (system(rm) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return 0;
}

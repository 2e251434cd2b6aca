/* Every key the JSON document holds is listed in docs/output.md, and every
 * key listed there is written by some real run (rows marked *reserved* are
 * exempt from the second half: their writer comes later). The runs cover
 * -R and thresholds, the browser model, sticky's variants, --passes, get
 * with its request options, a server that fails requests, one whose SSE
 * stream answers 500, https, a plugin with --opt, and a flow with an
 * expectation.
 * argv: HAMMER DOCS/OUTPUT.MD MISBEHAVE_SERVER.PY BENCH_APP GEN_TEST_CERT.SH PLUGIN.so */
#include "run_util.h"

#include <ctype.h>
#include <stdbool.h>

#define MAX_KEYS 4096

typedef struct keyset {
    char *key[MAX_KEYS];
    bool open[MAX_KEYS];  /* emitted: an empty object or array (a prefix of a pattern suffices) */
    bool found[MAX_KEYS]; /* documented: seen in a run; emitted: documented */
    bool reserved[MAX_KEYS];
    int n;
} keyset;

static keyset documented, emitted;

static void add(keyset *s, const char *k, bool open, bool reserved)
{
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->key[i], k)) {
            s->open[i] = s->open[i] && open; /* seen filled once is enough */
            return;
        }
    ASSERT(s->n < MAX_KEYS);
    s->key[s->n] = strdup(k);
    s->open[s->n] = open;
    s->reserved[s->n] = reserved;
    s->n++;
}

/* Adds pattern p with its first {a,b,c} expanded (recursively). */
static void expand(const char *p, bool reserved)
{
    const char *lb = strchr(p, '{');
    if (!lb) {
        add(&documented, p, false, reserved);
        return;
    }
    const char *rb = strchr(lb, '}');
    ASSERT(rb);
    for (const char *alt = lb + 1; alt < rb;) {
        size_t n = strcspn(alt, ",}");
        char buf[512];
        snprintf(buf, sizeof(buf), "%.*s%.*s%s", (int)(lb - p), p, (int)n, alt, rb + 1);
        expand(buf, reserved);
        alt += n + 1;
    }
}

static void read_docs(const char *path)
{
    FILE *f = fopen(path, "r");
    ASSERT(f);
    char line[4096];
    bool in_json = false;
    while (fgets(line, sizeof(line), f)) {
        if (!strncmp(line, "## ", 3)) in_json = strstr(line, "## JSON") != NULL;
        if (!in_json || strncmp(line, "| `", 3)) continue;
        char *cell_end = strstr(line + 2, " |");
        ASSERT(cell_end);
        bool reserved = strstr(cell_end, "*reserved*") != NULL;
        *cell_end = 0;
        for (char *q = line + 2; (q = strchr(q, '`'));) {
            char *close = strchr(q + 1, '`');
            ASSERT(close);
            *close = 0;
            expand(q + 1, reserved);
            q = close + 1;
        }
    }
    fclose(f);
    ASSERT_GT(documented.n, 50);
}

static void walk(json_t *v, const char *path, bool root_of_passes);

static void walk_object(json_t *o, const char *path)
{
    if (json_object_size(o) == 0) {
        add(&emitted, path, true, false);
        return;
    }
    const char *k;
    json_t *child;
    json_object_foreach(o, k, child)
    {
        char p[512];
        snprintf(p, sizeof(p), "%s%s%s", path, *path ? "." : "", k);
        walk(child, p, false);
    }
}

static void walk(json_t *v, const char *path, bool root_of_passes)
{
    if (json_is_object(v)) {
        if (root_of_passes) {
            /* {"passes": [run documents], ...}: each element is a root */
            const char *k;
            json_t *child;
            json_object_foreach(v, k, child)
            {
                if (!strcmp(k, "passes")) {
                    add(&emitted, "passes", false, false);
                    size_t i;
                    json_t *run;
                    json_array_foreach(child, i, run) walk(run, "", false);
                } else {
                    walk(child, k, false);
                }
            }
            return;
        }
        walk_object(v, path);
    } else if (json_is_array(v) && json_array_size(v) && json_is_object(json_array_get(v, 0))) {
        char p[512];
        snprintf(p, sizeof(p), "%s[]", path);
        size_t i;
        json_t *el;
        json_array_foreach(v, i, el) walk(el, p, false);
    } else if (json_is_array(v) && !json_array_size(v)) {
        add(&emitted, path, true, false); /* an empty array: its elements are documented */
    } else {
        add(&emitted, path, false, false); /* a scalar, null, or an array of them */
    }
}

/* Does emitted path e match documented pattern d (segments; "<x>" is any
 * key)? An open (empty-object) e may match a prefix of d. */
static bool matches(const char *e, const char *d, bool open)
{
    for (;;) {
        size_t ne = strcspn(e, "."), nd = strcspn(d, ".");
        bool any = d[0] == '<';
        /* an empty array "x" stands for the documented "x[]..." */
        bool last_open = open && !e[ne];
        size_t nd_cmp = last_open && nd >= 2 && !strncmp(d + nd - 2, "[]", 2) ? nd - 2 : nd;
        if (!any && (ne != nd_cmp || strncmp(e, d, ne))) return false;
        e += ne;
        d += nd;
        if (!*e) return !*d || (open && *d == '.');
        if (!*d) return false;
        e++;
        d++;
    }
}

static void run_doc(char **args, const char *json, int want_rc)
{
    char *argv[40];
    int n = 0;
    for (; args[n]; n++)
        argv[n] = args[n];
    argv[n++] = NULL;
    unlink(json);
    proc p;
    int rc = proc_run(&p, argv, 120);
    if (want_rc >= 0 && rc != want_rc) HM_FAIL_("exit %d (want %d):\n%s", rc, want_rc, p.out);
    json_t *doc = load_json(json);
    walk(doc, "", json_object_get(doc, "passes") != NULL);
    json_decref(doc);
}

int main(int argc, char **argv)
{
    if (argc < 7)
        HM_FAIL_("usage: %s HAMMER OUTPUT.MD SERVER.PY BENCH_APP CERT.SH PLUGIN", argv[0]);
    char *hammer = argv[1];
    read_docs(argv[2]);
    char dir[] = "/tmp/hm_json_keys_XXXXXX", json[300], body[300];
    ASSERT(mkdtemp(dir));
    snprintf(json, sizeof(json), "%s/run.json", dir);
    snprintf(body, sizeof(body), "%s/body", dir);
    FILE *f = fopen(body, "w");
    fputs("x=1", f);
    fclose(f);

    /* Over HTTP/2 (h2c) too, for shard.options' http2 and streams. */
    char *rate[] = {hammer,   "-q",          "-R",       "2000",        "-n",
                    "400",    "-c",          "10",       "--http2",     "--streams",
                    "2",      "--threshold", "p99<10s",  "--threshold", "ok>=0%",
                    "--json", json,          "scenario", "counter",     NULL};
    run_doc(rate, json, 0);
    /* --watch-grace: the server watch's end check writes server_watch.end */
    char *browser[] = {hammer,          "-q", "--mode", "browser", "-n",       "60",      "-c", "4",
                       "--watch-grace", "1s", "--json", json,      "scenario", "counter", NULL};
    run_doc(browser, json, 0);
    /* A short soak: enough samples after the warm-up for server_resources.trends;
     * --server-metrics (a fixed exposition python3 serves) for server_exporter */
    char expo[320], mport_s[16], murl[96];
    snprintf(expo, sizeof(expo), "%s/metrics", dir);
    write_file(expo, "process_resident_memory_bytes 1e8\nprocess_open_fds 9\n");
    int mport = free_port();
    snprintf(mport_s, sizeof(mport_s), "%d", mport);
    snprintf(murl, sizeof(murl), "http://127.0.0.1:%d/metrics", mport);
    char *web_argv[] = {"/usr/bin/python3", "-m", "http.server", "--bind", "127.0.0.1",
                        "--directory",      dir,  mport_s,       NULL};
    proc web;
    proc_start(&web, web_argv);
    ASSERT(wait_port(mport, web.pid));
    char *soak[] = {
        hammer, "-q",     "-d", "3s",       "--interval", "250ms", "-c", "2", "--server-metrics",
        murl,   "--json", json, "scenario", "counter",    NULL};
    run_doc(soak, json, 0);
    kill(web.pid, SIGTERM);
    proc_wait(&web, 10);
    char *sticky[] = {hammer,   "-q", "-n",       "60",     "-c", "4",
                      "--json", json, "scenario", "sticky", NULL};
    run_doc(sticky, json, -1); /* legacy variants fail by design */
    char *passes[] = {hammer, "-q",     "--passes", "cold,warm", "-n",      "200", "-c",
                      "10",   "--json", json,       "scenario",  "counter", NULL};
    run_doc(passes, json, 0);

    /* A server that closes mid-body: errors by kind, in the intervals too;
     * get with its request options against the same server's flood path. */
    char *srv_argv[] = {"/usr/bin/python3", argv[3], "--mode", "close-mid-body", NULL};
    proc srv;
    proc_start(&srv, srv_argv);
    for (int i = 0; i < 100 && !strchr(srv.out, '\n'); i++)
        proc_read(&srv, 50);
    int port = atoi(srv.out);
    ASSERT_GT(port, 0);
    char url[80], flood[96];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
    snprintf(flood, sizeof(flood), "%s/flood", url);
    char *failing[] = {hammer,  "-q", "-n",     "40", "-c",       "2",       "--timeout", "2s",
                       "--url", url,  "--json", json, "scenario", "counter", NULL};
    run_doc(failing, json, 1);
    char *get[] = {hammer,   "-q", "-n",       "50",     "-c", "2",     "-m",
                   "POST",   "-H", "X-A: 1",   "--body", body, "--url", flood,
                   "--json", json, "scenario", "get",    NULL};
    run_doc(get, json, -1);
    kill(srv.pid, SIGTERM);
    proc_wait(&srv, 10);

    /* An SSE stream that answers 500: SSE failures and their first example. */
    char *sse_srv_argv[] = {"/usr/bin/python3", argv[3], "--mode", "all-500",
                            "--where",          "sse",   NULL};
    proc_start(&srv, sse_srv_argv);
    for (int i = 0; i < 100 && !strchr(srv.out, '\n'); i++)
        proc_read(&srv, 50);
    ASSERT_GT((port = atoi(srv.out)), 0);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
    char *sse_failing[] = {hammer,  "-q", "-n",     "20", "-c",       "2",       "--timeout", "2s",
                           "--url", url,  "--json", json, "scenario", "counter", NULL};
    run_doc(sse_failing, json, 1);
    kill(srv.pid, SIGTERM);
    proc_wait(&srv, 10);

    char *plugin[] = {hammer, "-q", "--plugin", argv[6], "--opt",    "k=v",          "-n", "20",
                      "-c",   "2",  "--json",   json,    "scenario", "double-click", NULL};
    run_doc(plugin, json, -1);

    /* A flow: its steps and its expectations. */
    char flow[300];
    snprintf(flow, sizeof(flow), "%s/flow.yaml", dir);
    f = fopen(flow, "w");
    fputs("name: keys\nsteps:\n  - page: /bench/counter\n  - expect: {status: 200}\n"
          "  - repeat: forever\n    steps:\n      - action: increment\n",
          f);
    fclose(f);
    char *flow_run[] = {hammer, "-q", "-n", "20", "-c", "2", "--json", json, "flow", flow, NULL};
    run_doc(flow_run, json, 0);

    /* https: the TLS handshake's latency. */
    char *gen[] = {"/bin/sh", argv[5], dir, NULL};
    proc p;
    if (proc_run(&p, gen, 60) != 0) HM_SKIP("cannot make test certificates: %s", p.out);
    char cert[350], key[350], port_s[16], https[80];
    snprintf(cert, sizeof(cert), "%s/server.pem", dir);
    snprintf(key, sizeof(key), "%s/server.key", dir);
    snprintf(port_s, sizeof(port_s), "%d", (port = free_port()));
    char *app_argv[] = {argv[4], "--port", port_s, "--tls-cert", cert, "--tls-key", key, NULL};
    proc app;
    proc_start(&app, app_argv);
    for (int i = 0; i < 100 && !strstr(app.out, "listening"); i++)
        proc_read(&app, 50);
    snprintf(https, sizeof(https), "https://127.0.0.1:%d", port);
    char *tls[] = {hammer,  "-q",  "-k",     "-n", "50",       "-c",      "2",
                   "--url", https, "--json", json, "scenario", "counter", NULL};
    run_doc(tls, json, 0);
    kill(app.pid, SIGTERM);
    proc_wait(&app, 10);

    int missing = 0, unused = 0;
    for (int i = 0; i < emitted.n; i++) {
        for (int k = 0; k < documented.n && !emitted.found[i]; k++)
            if (matches(emitted.key[i], documented.key[k], emitted.open[i])) {
                emitted.found[i] = true;
                if (!emitted.open[i]) documented.found[k] = true;
            }
        if (!emitted.found[i]) {
            fprintf(stderr, "emitted but not in docs/output.md: %s\n", emitted.key[i]);
            missing++;
        }
    }
    for (int k = 0; k < documented.n; k++) {
        for (int i = 0; i < emitted.n && !documented.found[k]; i++)
            if (!emitted.open[i] && matches(emitted.key[i], documented.key[k], false))
                documented.found[k] = true;
        if (!documented.found[k] && !documented.reserved[k]) {
            fprintf(stderr, "in docs/output.md but no run wrote it: %s\n", documented.key[k]);
            unused++;
        }
    }
    printf("%d keys documented, %d distinct paths emitted over 10 runs; %d undocumented, "
           "%d never written\n",
           documented.n, emitted.n, missing, unused);
    ASSERT_EQ(missing, 0);
    ASSERT_EQ(unused, 0);
    char cleanup[400];
    snprintf(cleanup, sizeof(cleanup), "rm -rf '%s'", dir);
    char *rm[] = {"/bin/sh", "-c", cleanup, NULL};
    proc_run(&p, rm, 30);
    return 0;
}

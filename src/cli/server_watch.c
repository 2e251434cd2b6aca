/* server_watch.c — /_health sampled before, during and after a pass
 * (server_watch.h). */
#include "cli/server_watch.h"

#include "proto/json_limit.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define HEALTH_PATH "/_health"
#define HEALTH_MAX_BODY (256 * 1024)
#define GRACE_STEP_NS 250000000LL /* between samples while waiting for the server */

/* One sample's numeric fields. */
typedef struct fields {
    int n;
    char names[HM_SERVER_FIELDS][HM_SERVER_NAME_MAX];
    double v[HM_SERVER_FIELDS];
} fields;

/* One sample: its outcome and, when it answered badly, why. */
typedef struct sample {
    hm_http_target target; /* the run's, without compression: /_health never needs it */
    int64_t timeout_ns;
    hm_http_conn *conn; /* a keep-alive connection to reuse, or NULL for a fresh one */
    fields f;
    int rc;       /* 0, or the failure's error */
    bool garbage; /* a wrong answer (not a connection failure): stop watching */
    char why[200];
} sample;

/* ---- /_health's JSON into fields ---------------------------------------- */

/* Identifiers name things, they do not count them. */
static bool is_identifier(const char *key)
{
    size_t n = strlen(key);
    return !strcmp(key, "id") || !strcmp(key, "worker") || (n > 3 && !strcmp(key + n - 3, "_id"));
}

/* The field named name, added (0) when new and there is room; -1 when not. */
static int field_at(fields *f, const char *name)
{
    if (strlen(name) >= HM_SERVER_NAME_MAX) return -1;
    /* Names go into JSON lines, dotted JSON paths and metric names as they are. */
    for (const char *p = name; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_')) return -1;
    for (int i = 0; i < f->n; i++)
        if (!strcmp(f->names[i], name)) return i;
    if (f->n == HM_SERVER_FIELDS) return -1;
    snprintf(f->names[f->n], HM_SERVER_NAME_MAX, "%s", name);
    f->v[f->n] = 0;
    return f->n++;
}

static bool numeric(json_t *v, double *out)
{
    if (json_is_number(v))
        *out = json_number_value(v);
    else if (json_is_boolean(v))
        *out = json_is_true(v) ? 1 : 0;
    else
        return false;
    return true;
}

static void flatten(json_t *o, const char *prefix, int depth, fields *f)
{
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v)
    {
        if (is_identifier(key)) continue;
        char name[128];
        snprintf(name, sizeof(name), "%s%s%s", prefix, prefix[0] ? "_" : "", key);
        double x;
        int k;
        if (numeric(v, &x)) {
            if ((k = field_at(f, name)) >= 0) f->v[k] = x;
        } else if (json_is_object(v) && depth < 3) {
            flatten(v, name, depth + 1, f);
        } else if (json_is_array(v) && depth < 3) {
            /* one object per worker (bench_app's "workers"): summed per field */
            size_t i;
            json_t *e;
            json_array_foreach(v, i, e)
            {
                const char *ek;
                json_t *ev;
                json_object_foreach(e, ek, ev)
                {
                    char en[160];
                    snprintf(en, sizeof(en), "%s_%s", name, ek);
                    if (!is_identifier(ek) && numeric(ev, &x) && (k = field_at(f, en)) >= 0)
                        f->v[k] += x;
                }
            }
        }
    }
}

bool hm_server_watch_is_held(const char *name)
{
    const char *leaf = strrchr(name, '_');
    leaf = leaf ? leaf + 1 : name;
    return !strcmp(leaf, "contexts") || !strcmp(leaf, "sse");
}

/* ---- one GET /_health ------------------------------------------------------ */

static void sample_coro(void *arg)
{
    sample *s = arg;
    hm_http_conn own, *c = s->conn;
    hm_http_limits lim = {.max_body_bytes = HEALTH_MAX_BODY};
    if (!c) {
        c = &own;
        hm_http_conn_init(c, &s->target, &lim);
    }
    char req[512];
    const hm_http_header h[] = {{"Accept", "application/json"}};
    ssize_t len = hm_http_write_request(req, sizeof(req), "GET", HEALTH_PATH, s->target.host_header,
                                        h, 1, NULL, 0);
    hm_http_xopts xo = {.idempotent = true, .deadline = hm_now_ns() + s->timeout_ns};
    s->rc = len < 0 ? (int)len : hm_http_conn_exchange(c, req, (size_t)len, &xo);
    memset(&s->f, 0, sizeof(s->f));
    if (s->rc < 0) {
        /* Bytes that make no response are an answer, and a wrong one. */
        s->garbage = c->resp_bytes > 0 && s->rc != -ECANCELED;
        snprintf(s->why, sizeof(s->why), "GET %s failed: %s", HEALTH_PATH,
                 hm_http_conn_fail_reason(c, s->rc));
    } else if (c->resp.status != 200) {
        s->rc = -HM_ESTATUS;
        s->garbage = true;
        snprintf(s->why, sizeof(s->why), "GET %s answered HTTP %d", HEALTH_PATH, c->resp.status);
    } else {
        json_t *j = NULL;
        const char *bad = NULL;
        int rc = hm_json_load_bounded(c->resp.body, c->resp.body_len, 0, &j, &bad);
        if (rc == 0 && json_is_object(j)) flatten(j, "", 0, &s->f);
        if (rc < 0 || !json_is_object(j) || s->f.n == 0) {
            s->rc = -HM_EPARSE;
            s->garbage = true;
            snprintf(s->why, sizeof(s->why), "GET %s answered %s", HEALTH_PATH,
                     rc < 0 || !json_is_object(j) ? "something that is not a JSON object"
                                                  : "a JSON object without numbers");
        }
        json_decref(j);
    }
    if (c == &own) hm_http_conn_free(c);
}

/* Samples /_health on a loop of the calling thread (epoll: cheap to make,
 * and the run's io_uring stays the run's). */
static void take_sample(sample *s)
{
    int rc = hm_run_on_temp_loop(HM_BACKEND_EPOLL, sample_coro, s);
    if (rc < 0) {
        s->rc = rc;
        snprintf(s->why, sizeof(s->why), "cannot create an event loop: %s", hm_strerror(rc));
    }
}

static void publish(hm_live_gauges *g, const fields *f)
{
    if (!g) return;
    const char *names[HM_SERVER_FIELDS];
    for (int i = 0; i < f->n; i++)
        names[i] = f->names[i];
    hm_server_watch_publish(g, f->n, names, f->v);
}

/* ---- during the pass ------------------------------------------------------- */

/* The watch of the pass running now. Written by begin and end on the main
 * thread, and by hm_server_watch_sample on the interval reporter's between
 * them (one sample at a time: the reporter calls it from its one thread). */
static struct {
    bool running;
    hm_server_watch_options o;
    sample s;
    char stopped[200]; /* why it stopped watching during the pass */
} w;

void hm_server_watch_sample(void *unused)
{
    (void)unused;
    if (!w.running || w.stopped[0]) return;
    take_sample(&w.s);
    if (w.s.rc == 0) {
        publish(w.o.gauges, &w.s.f);
    } else if (w.s.garbage) {
        /* Said once; a server that answers wrongly will not improve. */
        snprintf(w.stopped, sizeof(w.stopped), "%s", w.s.why);
        fprintf(stderr, "hammer: server watch stopped: %s\n", w.s.why);
    }
}

static void copy_fields(hm_server_report *rep, const fields *f)
{
    rep->n = f->n;
    for (int i = 0; i < f->n; i++) {
        memcpy(rep->names[i], f->names[i], HM_SERVER_NAME_MAX);
        rep->before[i] = f->v[i];
        rep->after[i] = NAN;
        rep->held[i] = hm_server_watch_is_held(f->names[i]);
    }
}

/* A health check answers in milliseconds; a server that does not should
 * not hold the run's start (or an interval's line) for a whole --timeout. */
static int64_t sample_timeout(int64_t timeout_ns, int64_t cap_ns)
{
    if (cap_ns > 2000000000LL) cap_ns = 2000000000LL;
    return timeout_ns < cap_ns ? timeout_ns : cap_ns;
}

int hm_server_watch_begin(const hm_server_watch_options *o, hm_server_report *rep)
{
    memset(rep, 0, sizeof(*rep));
    memset(&w, 0, sizeof(w));
    w.o = *o;
    w.s.target = *o->target;
    w.s.target.accept_encoding = NULL;
    w.s.timeout_ns = sample_timeout(o->timeout_ns, 2000000000LL);
    take_sample(&w.s);
    if (w.s.rc < 0) {
        snprintf(rep->stopped, sizeof(rep->stopped), "%s", w.s.why);
        fprintf(stderr, "hammer: not watching the server: %s (--no-server-watch silences this)\n",
                w.s.why);
        return w.s.rc;
    }
    rep->sampled = true;
    copy_fields(rep, &w.s.f);
    publish(o->gauges, &w.s.f);
    /* An interval's line waits for its sample: at most one interval. */
    w.s.timeout_ns = sample_timeout(o->timeout_ns, o->interval_ns);
    w.running = true;
    return 0;
}

/* ---- after the pass -------------------------------------------------------- */

typedef struct grace {
    hm_server_report *rep;
    const hm_server_watch_end_options *e;
    sample *s;
    int64_t deadline, ended;
    char said[200]; /* the wait message on the terminal, "" when none */
} grace;

/* What the last sample after the run says (hm_server_verdict). */
static hm_server_verdict classify(const hm_server_report *rep)
{
    double ctx = hm_server_report_left(rep, "contexts"), sse = hm_server_report_left(rep, "sse");
    if (ctx <= 0 && sse <= 0) return HM_SERVER_CAME_BACK;
    if (ctx > (double)rep->own_contexts || sse > (double)rep->own_streams) return HM_SERVER_GREW;
    /* Each stream holds its context; only a write would end either. */
    return ctx <= sse ? HM_SERVER_OPEN_STREAMS : HM_SERVER_KEPT;
}

static void note_after(hm_server_report *rep, const fields *f, double at_s)
{
    int k = rep->n_after < HM_SERVER_AFTER_MAX ? rep->n_after++ : HM_SERVER_AFTER_MAX - 1;
    rep->after_t[k] = at_s;
    for (int i = 0; i < rep->n; i++) {
        rep->after_v[k][i] = NAN;
        for (int j = 0; j < f->n; j++)
            if (!strcmp(f->names[j], rep->names[i])) rep->after[i] = rep->after_v[k][i] = f->v[j];
    }
}

/* "waiting up to 10 s for the server to release 20 contexts and 20 SSE
 * streams; Ctrl-C skips": on a terminal refreshed while it changes, in
 * line mode once. */
static void say_wait(grace *g)
{
    const hm_server_watch_end_options *e = g->e;
    if (!e->live_line && !e->lines) return;
    if (!e->live_line && g->said[0]) return;
    double ctx = hm_server_report_left(g->rep, "contexts");
    double sse = hm_server_report_left(g->rep, "sse");
    char what[120];
    int n = 0;
    what[0] = 0;
    if (ctx > 0) n = snprintf(what, sizeof(what), "%.0f context%s", ctx, ctx == 1 ? "" : "s");
    if (sse > 0 && n >= 0 && (size_t)n < sizeof(what))
        snprintf(what + n, sizeof(what) - (size_t)n, "%s%.0f SSE stream%s", n ? " and " : "", sse,
                 sse == 1 ? "" : "s");
    char msg[200];
    snprintf(msg, sizeof(msg), "waiting up to %.0f s for the server to release %s; Ctrl-C skips",
             g->rep->grace_s, what);
    if (!strcmp(msg, g->said)) return;
    snprintf(g->said, sizeof(g->said), "%s", msg);
    if (e->live_line)
        printf("\r%s\033[K", msg);
    else
        printf("%s\n", msg);
    fflush(stdout);
}

static void grace_coro(void *arg)
{
    grace *g = arg;
    hm_server_report *rep = g->rep;
    hm_http_conn c;
    hm_http_limits lim = {.max_body_bytes = HEALTH_MAX_BODY};
    hm_http_conn_init(&c, &g->s->target, &lim);
    g->s->conn = &c;
    for (;;) {
        sample_coro(g->s);
        int64_t now = hm_now_ns();
        if (g->s->rc == 0) {
            rep->waited_s = (double)(now - g->ended) / 1e9;
            note_after(rep, &g->s->f, rep->waited_s);
            rep->verdict = classify(rep);
            /* Back, or held by streams the server will not notice closing
             * however long it is given: nothing to wait for. */
            if (rep->verdict == HM_SERVER_CAME_BACK || rep->verdict == HM_SERVER_OPEN_STREAMS)
                break;
            rep->waited = true;
            say_wait(g);
        } else if (g->s->garbage) {
            snprintf(rep->stopped, sizeof(rep->stopped), "%s", g->s->why);
            break;
        }
        if (now >= g->deadline) break;
        int64_t step = g->deadline - now < GRACE_STEP_NS ? g->deadline - now : GRACE_STEP_NS;
        if (hm_coro_sleep(step) < 0) { /* Ctrl-C */
            rep->skipped = true;
            break;
        }
    }
    if (g->said[0] && g->e->live_line) {
        printf("\r\033[K");
        fflush(stdout);
    }
    hm_http_conn_free(&c);
    g->s->conn = NULL;
}

void hm_server_watch_end(hm_server_report *rep, const hm_server_watch_end_options *e)
{
    if (!w.running) return;
    int64_t ended = hm_now_ns();
    w.running = false;
    if (w.stopped[0]) snprintf(rep->stopped, sizeof(rep->stopped), "%s", w.stopped);
    if (!e->check || w.stopped[0] || atomic_load(&hm_stop_requested)) return;
    rep->checked = true;
    rep->grace_s = (double)e->grace_ns / 1e9;
    rep->own_contexts = e->own_contexts;
    rep->own_streams = e->own_streams;
    w.s.timeout_ns = sample_timeout(w.o.timeout_ns, 2000000000LL);
    grace g = {.rep = rep, .e = e, .s = &w.s, .deadline = ended + e->grace_ns, .ended = ended};
    int rc = hm_run_on_temp_loop(HM_BACKEND_EPOLL, grace_coro, &g);
    if (rc < 0 && !rep->skipped)
        snprintf(rep->stopped, sizeof(rep->stopped), "cannot create an event loop: %s",
                 hm_strerror(rc));
    rep->came_back = rep->verdict == HM_SERVER_CAME_BACK;
    if (rep->n_after == 0 && rep->stopped[0] == 0)
        snprintf(rep->stopped, sizeof(rep->stopped), "%s",
                 rep->skipped ? "Ctrl-C ended the wait before a sample answered"
                              : "no GET /_health after the run answered");
}

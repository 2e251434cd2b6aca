/* The browser load model (--mode browser, and every plugin scenario): -c
 * virtual users, each a coroutine that behaves like one Datastar tab. This
 * file also implements the plugin API's hammer_vu_* functions
 * (include/hammer/scenario.h); the built-in VU body below uses only them.
 * A VU has its own cookie jar
 * and session, loads the page, holds one SSE stream open with its
 * EventSource (load/event_source.h: reconnecting with backoff when it
 * ends, read by callbacks with no coroutine of its own), fires actions
 * one at a time carrying its last-seen
 * signal values as Datastar sends them, waits for the patch that shows the
 * effect, thinks (--think), and closes its session at the end. VUs loop
 * until -n actions are spent in total.
 *
 * Each VU is checked on each context it visits (its net increment must
 * equal its own HTTP OK there, and so on); the run passes when every VU
 * does. Per-thread aggregates are written only by that thread's VUs.
 * Flows drive VUs through via_browser.h as well. */
#include "load/via_browser.h"
#include "load/event_source.h"
#include "load/via_user.h"
#include "proto/via_client.h"

#include "proto/h2_client.h"
#include "proto/via_html.h"

#include "base/hm_reason.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The room of a VU's reasons (hm_reason_set's cap). */
#define FAIL_WHY_BYTES 200
#define LOAD_WHY_BYTES 150

typedef struct vu_totals {
    uint64_t vus, vus_passed, page_failed, streams_connected, reconnects, patches, swallowed;
    /* VUs that found the budget (-n) spent before their first page: no
     * work, nothing to judge; left out of vus and said on the check line. */
    uint64_t vus_idle;
    uint64_t patches_opening, patches_extra; /* events beside patches (hm_watch) */
    uint64_t applied;                        /* unanswered actions lost contexts showed anyway */
    int64_t baseline_sum, final_sum;
    char first_failure[256];
} vu_totals;

typedef struct browser_run {
    const hm_options *o;
    hm_thread_stats *stats;
    vu_totals *totals; /* one per thread */
    _Atomic int64_t claimed;
    atomic_int vus_left;
    _Atomic int start_err; /* a VU could not be started: the run fails */
    hm_liveness live;
    int64_t t_start, t_end;
    const hammer_scenario *body; /* the VU body, or NULL for the built-in tab */
    void *plugin_state;
    atomic_bool aborted; /* hm_vu_abort_run: the input does not fit the app */
    atomic_flag abort_claimed;
    char abort_why[512];
} browser_run;

typedef struct hammer_vu vu;
struct hammer_vu {
    browser_run *run;
    int thread, id;
    hm_cookie_jar jar;
    hm_via_page page;
    hm_http_conn conn; /* page load and actions, keep-alive */
    /* The EventSource: its stream's connection and the tab's view of the
     * page's stream (es.watch, whose on_event and user are the plugin's). */
    hm_event_source es;
    /* What wakes the tab, its only waiter, to look again at what it waits
     * for: a token given (below), the stream's first state, a patch, the
     * stream's end. */
    hm_event tab_ev;
    /* The small fields sit together, the flags in one byte: the record's
     * size decides its allocator bin, which a browser VU pays for
     * (bench/vu_memory.sh). */
    bool connected : 1;
    /* Context loss (a server restart, another worker): the page's context
     * is gone (400 Invalid context, or the stream's reload script or empty
     * 200); whether it reloaded the page meanwhile (trouble_ns below). */
    bool ctx_dead : 1, reloaded : 1;
    bool seen_state : 1; /* a page it left showed its state (the baseline) */
    bool failed : 1;
    bool left_page : 1; /* it left a page (whose counts are in its thread's totals) */
    /* The tab's waits (hammer_vu_wait_patch, hm_vu_wait): a token each,
     * given by a patch or hm_vu_wake (or a lost context), taken by the wait. */
    bool patch_token, wake_token;
    unsigned rng;
    int64_t patch_ns;    /* when the first patch after the last action's send came, 0: none */
    uint64_t ok;         /* HTTP OK actions on the current page */
    uint64_t unanswered; /* its actions sent whose connection broke before the answer */
    _Atomic int64_t sent_on_page; /* actions sent on the current page (its watch's) */
    char *html; /* the last page, for action look-ups by name (a flow's, a plugin's), or NULL */
    int64_t last_action_ns; /* send time of the last OK action, 0 if none */
    /* Why it failed, and why its last page load failed (for a tab the run
     * ends reloading): hm_reason.h strings, NULL until then. */
    char *fail_why, *load_why;
    /* Since when this VU has seen only failures (0: its last request went
     * well). */
    int64_t trouble_ns;
    char *path; /* the page the VU is on, to reload it */
};

/* A browser VU's record is what every tab pays for: it fits mimalloc's
 * 2048-byte bin (bench/vu_memory.sh; the next bin up is 2560). */
_Static_assert(sizeof(void *) != 8 || sizeof(struct hammer_vu) <= 2048,
               "a browser VU's record outgrew mimalloc's 2048-byte bin");

/* "SSE GET /_sse, VU N", the EventSource's place in failure reports,
 * made when one is written (a record would keep 40 bytes per VU for it):
 * SSE_WHERE(v) is valid until the end of the enclosing block. */
static const char *sse_where(const vu *v, char *buf, size_t size)
{
    snprintf(buf, size, "SSE GET /_sse, VU %d", v->id);
    return buf;
}
#define SSE_WHERE(v) sse_where((v), (char[40]){0}, 40)

/* Sets one of the tab's tokens (set already: a wake is pending). */
static void give_token(vu *v, bool *token)
{
    *token = true;
    hm_event_notify(&v->tab_ev);
}

/* Takes the token, waiting for it until deadline: 0, -ETIMEDOUT or
 * -ECANCELED. Only the tab's own coroutine waits. */
static int take_token(vu *v, bool *token, int64_t deadline)
{
    while (!*token) {
        int rc = hm_event_wait(&v->tab_ev, deadline);
        if (rc < 0) return rc;
    }
    *token = false;
    return 0;
}

#define VU_OF_ES(src) HM_CONTAINER_OF((src), vu, es)

static void on_patch(hm_watch *w, int64_t value, void *user)
{
    (void)value, (void)user; /* the watch's user is the plugin's */
    vu *v = VU_OF_ES(HM_CONTAINER_OF(w, hm_event_source, watch));
    /* action->patch ends here, when the stream shows it, not when the VU
     * looks: the patch often comes before the action's answer. */
    if (!v->patch_ns) v->patch_ns = hm_now_ns();
    give_token(v, &v->patch_token); /* wakes a tab waiting for anything */
}

/* A fresh view of a new page's stream; the plugin's event hook stays. */
static void watch_start(vu *v)
{
    const hm_options *o = v->run->o;
    hm_watch *w = &v->es.watch;
    void (*on_event)(hm_watch *, void *) = w->on_event;
    void *user = w->user;
    hm_watch_init(w, o->workload, o->signal ? o->signal : "");
    w->sse.lean = true; /* a tab's stream idles between patches */
    w->on_patch = on_patch;
    w->on_event = on_event;
    w->user = user;
    atomic_store(&v->sent_on_page, 0);
    w->actions_sent = &v->sent_on_page;
}

/* The first failure since the VU's last success starts a trouble episode. */
static void note_trouble(vu *v)
{
    if (!v->trouble_ns) v->trouble_ns = hm_now_ns();
}

/* The page's context is gone: counted once; a VU waiting for a patch is
 * woken (hammer_vu_wait_patch then says so). */
static void context_lost(vu *v)
{
    note_trouble(v);
    if (v->ctx_dead) return;
    v->ctx_dead = true;
    v->run->stats[v->thread].ctx_lost++;
    give_token(v, &v->patch_token);
    give_token(v, &v->wake_token); /* a flow's wait, too */
}

/* ---- the EventSource's hooks ------------------------------------------- */

/* The request of the EventSource's next stream, or NULL (said in the stats). */
static char *tab_sse_request(hm_event_source *es, size_t *len)
{
    vu *v = VU_OF_ES(es);
    const hm_options *o = v->run->o;
    char *cookie = hm_via_cookie_dup(&v->jar, &o->target, "/_sse");
    *len = 0;
    char *req = cookie ? hm_via_sse_request(&o->target, v->page.ctx, cookie, len) : NULL;
    hm_free(cookie);
    if (!req)
        hm_thread_stats_sse_fail(&v->run->stats[v->thread], HM_SSE_FAIL_OTHER,
                                 "cannot build the SSE request", SSE_WHERE(v), "");
    return req;
}

static void tab_sse_opened(hm_event_source *es)
{
    VU_OF_ES(es)->connected = true;
}

static void tab_sse_fed(hm_event_source *es, uint64_t events_before)
{
    /* hm_watch_wait_first_state waits for the first state or event. */
    if (es->watch.sse.events != events_before) hm_event_notify(&VU_OF_ES(es)->tab_ev);
}

static bool tab_sse_ended(hm_event_source *es, hm_sse_end end)
{
    vu *v = VU_OF_ES(es);
    if (end == HM_SSE_END_RETRY) {
        note_trouble(v);
        return true; /* a live tab reconnects */
    }
    /* A browser reloads the page; reconnecting to this one is pointless. */
    if (end == HM_SSE_END_LOST) context_lost(v);
    hm_event_notify(&v->tab_ev); /* whoever waits for the stream: it ended */
    return false;
}

static const char *tab_sse_where(const hm_event_source *es, char *buf, size_t size)
{
    return sse_where(VU_OF_ES(es), buf, size);
}

static const hm_event_source_hooks tab_sse = {
    .request = tab_sse_request,
    .opened = tab_sse_opened,
    .fed = tab_sse_fed,
    .ended = tab_sse_ended,
    .where = tab_sse_where,
};

static bool sse_alive(const void *v)
{
    return hm_event_source_running(&((const vu *)v)->es);
}

/* ---- the plugin API ----------------------------------------------------- */

const char *hammer_vu_route(const hammer_vu *v)
{
    return v->run->o->route;
}
const char *hammer_vu_action_name(const hammer_vu *v)
{
    return v->run->o->action;
}
const char *hammer_vu_signal_name(const hammer_vu *v)
{
    return v->run->o->signal;
}
int hammer_vu_id(const hammer_vu *v)
{
    return v->id;
}
const char *hammer_vu_ctx(const hammer_vu *v)
{
    return v->page.ctx;
}

/* The run is ending early: Ctrl-C, or the target stopped answering. */
static bool run_stopping(const browser_run *run)
{
    return atomic_load_explicit(&hm_stop_requested, memory_order_relaxed) ||
           atomic_load_explicit(&run->live.dead, memory_order_relaxed) ||
           atomic_load_explicit(&run->aborted, memory_order_relaxed) ||
           atomic_load_explicit(&run->start_err, memory_order_relaxed);
}

bool hammer_vu_next(hammer_vu *v)
{
    browser_run *run = v->run;
    if (run_stopping(run)) return false;
    return hm_budget_allows(run->o, atomic_fetch_add(&run->claimed, 1), run->t_start);
}

void hammer_vu_fail(hammer_vu *v, const char *why)
{
    if (!v->failed) hm_reason_set(&v->fail_why, FAIL_WHY_BYTES, "%.199s", why);
    v->failed = true;
}

int hammer_vu_sleep_ms(hammer_vu *v, int ms)
{
    if (run_stopping(v->run)) return -ECANCELED;
    if (hm_coro_sleep((int64_t)ms * 1000000) == -ECANCELED) return -ECANCELED;
    return run_stopping(v->run) ? -ECANCELED : 0;
}

/* Whether loading the page again may help: the server answered an error
 * status or the connection failed. A page that came but is unusable
 * (malformed, too deep, no context) comes the same way again. */
static bool reload_may_help(const vu *v, int rc)
{
    hm_fail_kind k = v->conn.fail;
    return rc == -HM_ESTATUS || k == HM_FAIL_CONNECT || k == HM_FAIL_TIMEOUT ||
           k == HM_FAIL_RESET || k == HM_FAIL_CLOSED;
}

/* The page just loaded is read: the VU keeps its HTML for what looks
 * actions up by name (a flow, a plugin), and the response's buffers go,
 * so a tab thinking holds no page it will not read again. */
static void keep_page(vu *v)
{
    hm_free(v->html);
    v->html = v->run->body ? hm_strndup(v->conn.resp.body, v->conn.resp.body_len) : NULL;
    hm_http_conn_release(&v->conn);
}

/* A page load's connect was refused: a failed connect attempt, with its
 * example. Apart so its buffer is on the stack only then (a VU's
 * coroutine stays within one stack page). */
static __attribute__((noinline)) void page_refused(vu *v, const char *path, int rc)
{
    hm_thread_stats *st = &v->run->stats[v->thread];
    char where[96];
    snprintf(where, sizeof(where), "page load GET %.60s, VU %d", path, v->id);
    hm_thread_stats_note_outcome(st, &v->conn, rc, where);
    hm_thread_stats_connect_failed(st);
    note_trouble(v);
}

/* Loads path as the VU's page. A load the server answered badly (not 200,
 * or cut mid-answer) is counted in page_failed. One it never answered is
 * the server away (a restart): a refused connect is a failed connect
 * attempt in the Disruption, as every sender's; a connection reset or
 * closed before any byte is a failed attempt of the reload that follows
 * (reload_failed), as the reloads' own are. It fails the VU too when
 * fail_vu is set or a reload cannot help, else the caller tries again. */
static int load_page(vu *v, const char *path, bool fail_vu)
{
    const hm_options *o = v->run->o;
    hm_thread_stats *st = &v->run->stats[v->thread];
    vu_totals *tot = &v->run->totals[v->thread];
    char why[256];
    hm_via_page_free(&v->page);
    if (path != v->path) { /* kept for a reload, also when this load fails */
        char *copy = hm_strdup(path);
        hm_free(v->path);
        v->path = copy;
        path = v->path;
    }
    int64_t t0 = hm_now_ns();
    int rc = hm_via_load_page(&v->conn, &v->jar, path, o->action, t0 + o->timeout_ns, &v->page, why,
                              sizeof(why));
    hm_thread_stats_note_conn(st, &v->conn);
    if (rc < 0 && rc != -HM_ENOTFOUND) {
        bool reloaded_next = !fail_vu && reload_may_help(v, rc); /* by reopen_page */
        if (v->conn.fail == HM_FAIL_CONNECT) {
            page_refused(v, path, rc);
        } else if (reloaded_next && v->conn.resp_bytes == 0) {
            hm_thread_stats_reload_failed(st); /* unanswered: the server is away */
        } else {
            tot->page_failed++;
        }
        hm_reason_set(&v->load_why, LOAD_WHY_BYTES, "%.149s", why);
        if (!reloaded_next) hammer_vu_fail(v, why);
        hm_http_conn_release(&v->conn);
        return rc;
    }
    hm_thread_stats_record(st, HM_PHASE_PAGE, (hm_now_ns() - t0) / 1000);
    keep_page(v);
    v->ctx_dead = false;
    if (rc < 0) hammer_vu_fail(v, why); /* the page lacks the context or the action */
    return v->conn.resp.status;
}

int hammer_vu_load_page(hammer_vu *v, const char *path)
{
    return load_page(v, path, true);
}

int hammer_vu_open_sse(hammer_vu *v, int timeout_ms)
{
    if (!v->page.ctx) return -HM_ENOTFOUND;
    if (!hm_event_source_running(&v->es)) hm_event_source_open(&v->es);
    int rc = hm_watch_wait_first_state(&v->es.watch, sse_alive, v, &v->tab_ev,
                                       hm_now_ns() + (int64_t)timeout_ms * 1000000);
    if (rc == -ETIMEDOUT && v->es.head.streaming && !run_stopping(v->run)) {
        /* Open, but silent: a stream that shows no state is a failed one. */
        char why[120];
        snprintf(why, sizeof(why), "no first state (%s) within %.3g s of opening",
                 v->run->o->signal && v->run->o->signal[0] ? v->run->o->signal : "signals",
                 timeout_ms / 1e3);
        hm_thread_stats_sse_fail(&v->run->stats[v->thread], HM_SSE_FAIL_TIMEOUT, why, SSE_WHERE(v),
                                 "");
    }
    return rc;
}

/* extra_json with each field that names one of the tab's signals renamed
 * to that signal's wire id (plugins know names, not ids); NULL when it is
 * no JSON object (hm_workload_body reports that). The caller frees it. */
static char *extra_as_wire(const vu *v, const char *extra_json)
{
    json_t *extra = json_loads(extra_json, 0, NULL);
    if (!json_is_object(extra)) {
        json_decref(extra);
        return NULL;
    }
    json_t *out = json_object();
    const char *key, *wkey;
    json_t *val, *wval;
    json_object_foreach(extra, key, val)
    {
        const char *wire = key;
        if (v->es.watch.signals && !json_object_get(v->es.watch.signals, key))
            json_object_foreach(v->es.watch.signals, wkey, wval)
            {
                if (hm_signal_name_matches(key, wkey)) {
                    wire = wkey;
                    break;
                }
            }
        json_object_set(out, wire, val);
    }
    char *dump = json_dumps(out, JSON_COMPACT);
    json_decref(out);
    json_decref(extra);
    char *copy = dump ? hm_strdup(dump) : NULL;
    free(dump);
    return copy;
}

/* An action's body, serialized on the loop's stack: jansson's dump (and
 * the printf under it) goes deeper than a VU's stack needs to be (one
 * page). */
typedef struct action_body {
    vu *v;
    const char *extra_json;
    char *body;
    int rc;
} action_body;

static void build_action_body(void *arg)
{
    action_body *ab = arg;
    vu *v = ab->v;
    const hm_options *o = v->run->o;
    char *wire_extra = ab->extra_json ? extra_as_wire(v, ab->extra_json) : NULL;
    ab->rc = hm_workload_body(o->workload, v->page.ctx,
                              wire_extra       ? wire_extra
                              : ab->extra_json ? ab->extra_json
                                               : o->signals_json,
                              v->es.watch.signals, true, &ab->body);
    hm_free(wire_extra);
}

int hammer_vu_action(hammer_vu *v, const char *name, const char *extra_json)
{
    browser_run *run = v->run;
    const hm_options *o = run->o;
    if (!v->page.ctx) return -HM_ENOTFOUND;
    char *url = NULL;
    if (name && (!o->action || strcmp(name, o->action))) {
        if (!v->html || hm_via_find_action(v->html, strlen(v->html), name, &url) < 0)
            return -HM_ENOTFOUND;
    }
    const char *action_url = url ? url : v->page.action_url;
    /* Named now: url is freed before the response is recorded. */
    char what[80];
    snprintf(what, sizeof(what), "action POST %.60s", action_url ? action_url : "(none)");
    action_body ab = {.v = v, .extra_json = extra_json};
    hm_call_on_loop_stack(build_action_body, &ab);
    char *body = ab.body;
    int rc = ab.rc;
    if (rc < 0 || !action_url) {
        hm_free(url);
        return rc < 0 ? rc : -HM_ENOTFOUND;
    }
    char *cookie = hm_via_cookie_dup(&v->jar, &o->target, action_url);
    size_t len = 0;
    char *req = cookie ? hm_via_action_request(&o->target, action_url, cookie, body, strlen(body),
                                               o->no_origin ? NULL : o->target.origin, &len)
                       : NULL;
    hm_free(cookie);
    hm_free(body);
    hm_free(url);
    if (!req) return -ENOMEM;
    v->patch_token = false; /* only patches after the send count */
    v->patch_ns = 0;        /* set by the SSE reader when this action's patch arrives */
    hm_thread_stats *st = &run->stats[v->thread];
    hm_backoff backoff = HM_BACKOFF_CONNECT;
    char where[96];
    snprintf(where, sizeof(where), "%.80s, VU %d", what, v->id);
    hm_request rq = {.timeout_ns = o->timeout_ns, .where = where};
    int64_t t0, t1;
    int status;
    for (;;) {
        t0 = hm_now_ns();
        hm_http_xopts xo = {.deadline = t0 + o->timeout_ns};
        hm_thread_stats_in_flight(st, 1);
        atomic_fetch_add(&v->sent_on_page, 1); /* before: its patch may beat its answer */
        rc = hm_http_conn_exchange(&v->conn, req, len, &xo);
        hm_thread_stats_in_flight(st, -1);
        t1 = hm_now_ns();
        /* Accounted as the sender pool accounts its own (a second Ctrl-C's
         * cancelled exchange is not counted). */
        bool stop = hm_request_account(&v->conn, &rq, rc, t0, t1, st, &run->live, &status);
        if (rc == -ECANCELED || !hm_request_unsent(&v->conn, status)) break;
        atomic_fetch_sub(&v->sent_on_page, 1);
        /* A refused connect: an attempt, not the action, which goes out
         * once a connect succeeds (as the sender pool's). */
        note_trouble(v);
        if (stop || run_stopping(run) || (o->duration_ns && t1 - run->t_start >= o->duration_ns) ||
            hm_coro_sleep(hm_backoff_next(&backoff)) == -ECANCELED)
            break;
    }
    hm_free(req);
    if (rc == -ECANCELED || hm_request_unsent(&v->conn, status)) {
        /* a second Ctrl-C (it never finished), or never sent */
        hm_http_conn_release(&v->conn);
        return rc;
    }
    bool ok = status >= 200 && status < 300;
    v->last_action_ns = ok ? t0 : 0;
    if (ok) {
        v->ok++;
        /* Back in business: a reload since the trouble began is a recovery. */
        if (v->trouble_ns && v->reloaded)
            hm_hdr_record(&st->recovery_us, (t1 - v->trouble_ns) / 1000);
        v->trouble_ns = 0;
        v->reloaded = false;
    } else {
        note_trouble(v);
        if (rc == 0 && hm_via_invalid_context(&v->conn)) context_lost(v);
        /* Sent, but no answer: the server may have applied it. */
        if (rc < 0 && v->conn.fail != HM_FAIL_CONNECT) v->unanswered++;
    }
    hm_http_conn_release(&v->conn); /* its status stays */
    return rc < 0 ? rc : v->conn.resp.status;
}

int hammer_vu_wait_patch(hammer_vu *v, int timeout_ms)
{
    if (!hm_event_source_running(&v->es)) return -ENOTCONN;
    if (run_stopping(v->run)) return -ECANCELED;
    int rc = take_token(v, &v->patch_token, hm_now_ns() + (int64_t)timeout_ms * 1000000);
    if (v->ctx_dead) return -ENOTCONN; /* woken because the context is gone */
    if (rc == 0 && v->last_action_ns)
        hm_thread_stats_record(&v->run->stats[v->thread], HM_PHASE_PATCH,
                               ((v->patch_ns ? v->patch_ns : hm_now_ns()) - v->last_action_ns) /
                                   1000);
    return rc;
}

int hammer_vu_signal_int(hammer_vu *v, const char *name, int64_t *out)
{
    return hm_signals_find_int(v->es.watch.signals, name, out) == 0 ? 0 : -ENOENT;
}

int hammer_vu_get(hammer_vu *v, const char *path)
{
    const hm_options *o = v->run->o;
    char *cookie = hm_via_cookie_dup(&v->jar, &o->target, path);
    char *req = NULL;
    ssize_t len = cookie ? hm_via_get_request(&o->target, path, cookie, &req) : -ENOMEM;
    hm_free(cookie);
    int rc = (int)len;
    if (len > 0) {
        hm_http_xopts xo = {.idempotent = true, .deadline = hm_now_ns() + o->timeout_ns};
        rc = hm_http_conn_exchange(&v->conn, req, (size_t)len, &xo);
    }
    hm_free(req);
    hm_http_conn_release(&v->conn); /* its status stays */
    return rc < 0 ? rc : v->conn.resp.status;
}

/* ---- what VU bodies inside hammer add (via_browser.h) -------------------- */

void hm_vu_on_event(hammer_vu *v, hm_vu_event_fn fn, void *user)
{
    v->es.watch.on_event = fn;
    v->es.watch.user = user;
}

int hm_vu_wait(hammer_vu *v, int64_t deadline)
{
    if (run_stopping(v->run)) return -ECANCELED;
    return take_token(v, &v->wake_token, deadline);
}

void hm_vu_wake(hammer_vu *v)
{
    give_token(v, &v->wake_token);
}

json_t *hm_vu_signals(hammer_vu *v)
{
    return v->es.watch.signals;
}

const char *hm_vu_page_html(const hammer_vu *v, size_t *len)
{
    *len = v->html ? strlen(v->html) : 0;
    return v->html;
}

int hm_vu_thread(const hammer_vu *v)
{
    return v->thread;
}

const hm_options *hm_vu_options(const hammer_vu *v)
{
    return v->run->o;
}

bool hm_vu_budget_left(hammer_vu *v)
{
    browser_run *run = v->run;
    return !run_stopping(run) && hm_budget_allows(run->o, atomic_load(&run->claimed), run->t_start);
}

void hm_vu_record_patch(hammer_vu *v, int64_t us)
{
    hm_thread_stats_record(&v->run->stats[v->thread], HM_PHASE_PATCH, us);
}

void hm_vu_abort_run(hammer_vu *v, const char *why)
{
    browser_run *run = v->run;
    if (!atomic_flag_test_and_set(&run->abort_claimed))
        snprintf(run->abort_why, sizeof(run->abort_why), "%s", why);
    atomic_store(&run->aborted, true);
    hammer_vu_fail(v, why);
}

void hm_vu_leave_page(hammer_vu *v)
{
    const hm_options *o = v->run->o;
    vu_totals *tot = &v->run->totals[v->thread];
    if (!v->page.ctx) return;
    /* Let the last patch land (each one wakes this wait), then close the
     * tab. */
    if (hm_event_source_running(&v->es) && v->ok && !v->ctx_dead) {
        int64_t until = hm_now_ns() + o->timeout_ns;
        char tmp[8];
        while (hm_event_source_running(&v->es) && hm_now_ns() < until &&
               !hm_watch_verdict(&v->es.watch, v->ok, tmp, 8) &&
               hm_interrupt_current() < HM_INTERRUPT_ABORT)
            hm_event_wait(&v->tab_ev, until);
    }
    hm_event_source_close(&v->es);
    /* A context the server lost has no session to close. */
    char *cookie = v->ctx_dead ? NULL : hm_via_cookie_dup(&v->jar, &o->target, "/_session/close");
    if (cookie) hm_via_close_session(&v->conn, v->page.ctx, cookie, hm_now_ns() + o->timeout_ns);
    hm_free(cookie);
    hm_http_conn_release(&v->conn);

    char verdict[256];
    v->seen_state = v->seen_state || v->es.watch.have_baseline;
    if (v->ctx_dead) {
        /* Its OK actions whose patch never came were swallowed with it. */
        uint64_t swallowed = 0;
        if (!v->failed && !hm_watch_verdict_lost(&v->es.watch, v->ok, v->unanswered, &swallowed,
                                                 verdict, sizeof(verdict)))
            hammer_vu_fail(v, verdict);
        v->run->stats[v->thread].swallowed += swallowed;
        tot->swallowed += swallowed;
        /* Unanswered actions the server applied before it lost the context. */
        int64_t net = v->es.watch.have_baseline ? v->es.watch.last - v->es.watch.baseline : 0;
        if (net > (int64_t)v->ok) tot->applied += (uint64_t)net - v->ok;
    } else if (!v->failed && !hm_watch_verdict(&v->es.watch, v->ok, verdict, sizeof(verdict))) {
        hammer_vu_fail(v, verdict);
    }
    v->left_page = true;
    tot->patches += v->es.watch.patches;
    tot->patches_opening += v->es.watch.opening;
    tot->patches_extra += v->es.watch.extra;
    tot->baseline_sum += v->es.watch.baseline;
    tot->final_sum += v->es.watch.last;
    hm_sse_note_events(&v->run->stats[v->thread], &v->es.watch, SSE_WHERE(v));
    hm_watch_free(&v->es.watch);
    watch_start(v);
    v->ok = 0;
    v->unanswered = 0;
    v->last_action_ns = 0;
    v->ctx_dead = false;
    hm_via_page_free(&v->page);
}

bool hm_vu_context_lost(const hammer_vu *v)
{
    return v->ctx_dead;
}

/* The run goes on for v: not stopping, and budget left. */
static bool vu_goes_on(void *arg)
{
    vu *v = arg;
    return !run_stopping(v->run) && hm_vu_budget_left(v);
}

/* Loads the VU's page again until it loads, with the reload back-off, as
 * a user pressing reload would; `cause` words a give-up. */
static int reload_page(vu *v, const char *cause)
{
    browser_run *run = v->run;
    const hm_options *o = run->o;
    hm_thread_stats *st = &run->stats[v->thread];
    if (!v->path) return -HM_ENOTFOUND;
    bool had_stream = hm_event_source_running(&v->es) || v->connected;
    note_trouble(v);
    hm_vu_leave_page(v);
    /* While the server is away (a restart), try again with backoff, as a
     * user pressing reload would; a target that stays dead ends the run
     * (liveness), one that answers but serves no page for --timeout ends
     * the VU. */
    char why[256];
    int rc = hm_via_reload_page(&v->conn, &v->jar, v->path, o->action, o, st, &run->live,
                                vu_goes_on, v, &v->page, why, sizeof(why));
    if (rc != 0 && why[0]) hm_reason_set(&v->load_why, LOAD_WHY_BYTES, "%.149s", why);
    if (rc != 0) hm_http_conn_release(&v->conn);
    if (rc == 0) {
        keep_page(v);
        st->reloads++;
        hm_gauge_reload(o);
        v->reloaded = true;
        if (had_stream) hammer_vu_open_sse(v, (int)(o->timeout_ns / 1000000));
        return 0;
    }
    if (rc == -ETIMEDOUT) {
        char msg[300];
        snprintf(msg, sizeof(msg), "%s and could not reload within --timeout: %.180s", cause, why);
        hammer_vu_fail(v, msg);
        return -ETIMEDOUT;
    }
    return -ECANCELED;
}

int hm_vu_reload(hammer_vu *v)
{
    return reload_page(v, "lost its context");
}

/* hm_vu_open_page after a failed load: reloads with the back-off. Apart
 * so its buffers are on the stack only then. */
static __attribute__((noinline)) int reopen_page(vu *v, int rc)
{
    if (v->run->o->no_reload) {
        hammer_vu_fail(v, "its page did not load (--no-reload: not reloaded)");
        return rc;
    }
    int reloaded = reload_page(v, "its page did not load");
    if (reloaded == 0) return v->conn.resp.status;
    if (reloaded == -ECANCELED) {
        char msg[200];
        snprintf(msg, sizeof(msg), "its page did not load before the run ended: %s",
                 hm_reason(v->load_why));
        hammer_vu_fail(v, msg);
    }
    return rc;
}

int hm_vu_open_page(hammer_vu *v, const char *path)
{
    int rc = load_page(v, path, false);
    if (rc >= 0 || rc == -HM_ENOTFOUND || !reload_may_help(v, rc)) return rc;
    return reopen_page(v, rc);
}

void hm_vu_new_user(hammer_vu *v)
{
    hm_vu_leave_page(v);
    hm_cookie_jar_free(&v->jar);
    hm_cookie_jar_init(&v->jar);
    hm_thread_stats_add_conn(&v->run->stats[v->thread], &v->conn);
    hm_http_conn_free(&v->conn);
    hm_http_conn_init(&v->conn, &v->run->o->target, NULL);
}

/* ---- the built-in tab ------------------------------------------------------ */

static int64_t think_ns(vu *v)
{
    const hm_options *o = v->run->o;
    if (o->think_max_ns <= o->think_min_ns) return o->think_min_ns;
    uint64_t span = (uint64_t)(o->think_max_ns - o->think_min_ns);
    return o->think_min_ns + (int64_t)((uint64_t)rand_r(&v->rng) * 1000003u % span);
}

/* When a think pause of ns ends: never past the end of -d, and now when
 * -n is spent already (the last action's pause would only delay the end). */
static int64_t think_until(const browser_run *run, int64_t ns)
{
    const hm_options *o = run->o;
    int64_t now = hm_now_ns(), until = now + ns;
    if (o->actions && atomic_load(&run->claimed) >= o->actions) return now;
    if (o->duration_ns && until > run->t_start + o->duration_ns)
        until = run->t_start + o->duration_ns;
    return until;
}

static int builtin_vu_body(hammer_vu *v, void *state)
{
    int timeout_ms = (int)(v->run->o->timeout_ns / 1000000);
    int status = hm_vu_open_page(v, hammer_vu_route(v));
    if (status != 200) return -HM_ESTATUS;
    /* A tab renders the stream's first state before the user clicks. */
    hammer_vu_open_sse(v, timeout_ms);
    while (hammer_vu_next(v)) {
        status = hammer_vu_action(v, NULL, NULL);
        /* The next click builds on what the tab shows, so wait for it. */
        if (status >= 200 && status < 300) hammer_vu_wait_patch(v, timeout_ms);
        /* The context is gone (php-via's reload script does this in a
         * browser): the same user, a new page and context. */
        if (v->ctx_dead && !v->run->o->no_reload && hm_vu_reload(v) < 0) break;
        int64_t t = think_ns(v);
        if (t > 0 && !run_stopping(v->run))
            hm_coro_sleep_until(think_until(v->run, t)); /* Ctrl-C ends it, too */
    }
    return 0;
}

/* ---- one VU's life -------------------------------------------------------- */

static void vu_coro(void *p)
{
    vu *v = p;
    browser_run *run = v->run;
    const hm_options *o = run->o;
    hm_thread_stats *st = &run->stats[v->thread];
    vu_totals *tot = &run->totals[v->thread];
    hm_cookie_jar_init(&v->jar);
    /* Over HTTP/2 a tab is one connection, as Chromium makes it: the page,
     * the EventSource and the actions are streams of it. */
    hm_h2_conn *h2 = NULL; /* es.conn.h2 from here */
    if (o->http2) hm_h2_conn_create(&h2, &o->target);
    hm_http_conn_init_shared(&v->conn, &o->target, NULL, h2);
    hm_event_source_init(&v->es, &o->target, h2, &tab_sse, st, o);
    watch_start(v);
    hm_event_init(&v->tab_ev);
    tot->vus++;
    hm_gauge_vus(o, 1);
    if (run->body)
        run->body->vu_body(v, run->plugin_state);
    else
        builtin_vu_body(v, NULL);

    hm_vu_leave_page(v);
    /* A stream the body opened without a page context (none to leave). */
    hm_event_source_close(&v->es);
    char verdict[256];
    /* A VU that visited no page at all (the run's budget was spent by the
     * others before it started: a busy machine starts threads late) did no
     * work: it is not judged. */
    bool idle = !v->path && !v->failed && v->ok == 0 && !v->left_page && !run_stopping(run) &&
                !hm_budget_allows(o, atomic_load(&run->claimed), run->t_start);
    if (idle) {
        tot->vus--;
        tot->vus_idle++;
    } else {
        /* A VU that never left a page is judged on what it has (nothing);
         * one whose every page was lost before showing its state checked
         * nothing. */
        if ((!v->left_page || !v->seen_state) && !v->failed &&
            !hm_watch_verdict(&v->es.watch, v->left_page ? 0 : v->ok, verdict, sizeof(verdict)))
            hammer_vu_fail(v, verdict);
        if (!v->failed)
            tot->vus_passed++;
        else if (!tot->first_failure[0])
            snprintf(tot->first_failure, sizeof(tot->first_failure), "VU %d: %.200s", v->id,
                     hm_reason(v->fail_why));
    }
    hm_sse_note_events(st, &v->es.watch, SSE_WHERE(v));
    tot->streams_connected += v->connected;
    tot->reconnects += v->es.reconnects;
    hm_thread_stats_add_conn(st, &v->conn);
    hm_gauge_vus(o, -1);
    hm_http_conn_free(&v->conn);
    h2 = v->es.conn.h2;
    hm_event_source_free(&v->es);
    hm_h2_conn_free(h2);
    hm_watch_free(&v->es.watch);
    hm_via_page_free(&v->page);
    hm_cookie_jar_free(&v->jar);
    hm_free(v->html);
    hm_free(v->path);
    hm_reason_clear(&v->fail_why);
    hm_reason_clear(&v->load_why);
    if (atomic_fetch_sub(&run->vus_left, 1) == 1) run->t_end = hm_now_ns();
    hm_free(v);
}

static void thread_main(hm_loop *loop, int idx, void *arg)
{
    browser_run *run = arg;
    int first = 0;
    for (int i = 0; i < idx; i++)
        first += hm_share(run->o->concurrency, run->o->threads, i);
    int mine = hm_share(run->o->concurrency, run->o->threads, idx);
    for (int i = 0; i < mine; i++) {
        vu *v = hm_calloc(1, sizeof(*v));
        int rc = v ? 0 : -ENOMEM;
        if (v) {
            v->run = run;
            v->thread = idx;
            v->id = first + i;
            v->rng = (unsigned)(first + i) * 2654435761u;
            if ((rc = hm_coro_spawn(loop, vu_coro, v, NULL)) < 0) hm_free(v);
        }
        if (rc < 0) {
            /* The run fails; the VUs that started finish their work. */
            int none = 0;
            atomic_compare_exchange_strong(&run->start_err, &none, rc);
            if (atomic_fetch_sub(&run->vus_left, 1) == 1) run->t_end = hm_now_ns();
        }
    }
}

int hm_via_browser_run(const hm_options *o, hm_results *r)
{
    return hm_via_browser_run_body(o, o->plugin, NULL, r);
}

int hm_via_browser_run_body(const hm_options *o, const hammer_scenario *body, void *state,
                            hm_results *r)
{
    browser_run run = {.o = o, .body = body, .plugin_state = state};
    char *probe = NULL;
    if (hm_workload_body(o->workload, "x", o->signals_json, NULL, true, &probe) < 0) {
        r->fatal = "--signals is not a JSON object";
        return -HM_EPARSE;
    }
    hm_free(probe);
    if (body && body->setup) {
        static char why[256];
        if (body->setup(o->plugin_opts, o->n_plugin_opts, &run.plugin_state, why, sizeof(why)) <
            0) {
            r->fatal = why[0] ? why : "plugin set-up failed";
            return -EINVAL;
        }
    }
    run.stats = hm_calloc((size_t)o->threads, sizeof(*run.stats));
    run.totals = hm_calloc((size_t)o->threads, sizeof(*run.totals));
    if (!run.stats || !run.totals) return -ENOMEM;
    for (int i = 0; i < o->threads; i++)
        hm_thread_stats_init(&run.stats[i]);
    atomic_store(&run.vus_left, o->concurrency);
    int rc = hm_scenario_engine_run(o, run.stats, sizeof(*run.stats), thread_main, &run, &run.live,
                                    &run.t_start, &run.t_end);

    vu_totals all = {0};
    for (int i = 0; i < o->threads; i++) {
        hm_thread_stats_merge(&r->total, &run.stats[i]);
        hm_thread_stats_destroy(&run.stats[i]);
        vu_totals *t = &run.totals[i];
        all.vus += t->vus;
        all.vus_passed += t->vus_passed;
        all.vus_idle += t->vus_idle;
        all.page_failed += t->page_failed;
        all.streams_connected += t->streams_connected;
        all.reconnects += t->reconnects;
        all.patches += t->patches;
        all.patches_opening += t->patches_opening;
        all.patches_extra += t->patches_extra;
        all.baseline_sum += t->baseline_sum;
        all.final_sum += t->final_sum;
        all.swallowed += t->swallowed;
        all.applied += t->applied;
        if (!all.first_failure[0] && t->first_failure[0])
            memcpy(all.first_failure, t->first_failure, sizeof(all.first_failure));
    }
    r->wall_seconds = (double)(run.t_end - run.t_start) / 1e9;
    rc = hm_run_note_end(r, rc, &run.live, atomic_load(&run.aborted) ? run.abort_why : NULL,
                         atomic_load(&run.start_err), "a virtual user");
    bool counting =
        o->workload->check == HM_CHECK_NET_INCREMENT || o->workload->check == HM_CHECK_SPREADSHEET;
    r->has_patches = true;
    r->patches_observed = all.patches;
    r->patches_opening = all.patches_opening;
    r->patches_extra = all.patches_extra;
    r->conns_extra_why = "new pages' SSE streams and new users' tabs";
    r->observers = o->concurrency;
    r->observers_connected = (int)all.streams_connected;
    r->has_check = true;
    r->check_passed = all.vus > 0 && all.vus_passed == all.vus && all.page_failed == 0;
    bool own_words = false;
    if (body && body->check) {
        char why[200] = "";
        if (!body->check(run.plugin_state, why, sizeof(why))) r->check_passed = false;
        /* The plugin's own words lead the detail, pass or fail. */
        if (why[0]) snprintf(all.first_failure, sizeof(all.first_failure), "%.199s", why);
        own_words = why[0] != 0;
    }
    if (body && body->teardown) body->teardown(run.plugin_state);
    char page_failures[64] = "";
    if (all.page_failed)
        snprintf(page_failures, sizeof(page_failures), "%llu page loads failed, ",
                 (unsigned long long)all.page_failed);
    snprintf(
        r->check_detail, sizeof(r->check_detail),
        "%llu/%llu VUs passed, %s%llu SSE reconnects%s%.160s", (unsigned long long)all.vus_passed,
        (unsigned long long)all.vus, page_failures, (unsigned long long)all.reconnects,
        all.first_failure[0] ? (own_words || (body && !body->check) ? "; " : "; first failure: ")
                             : "",
        all.first_failure);
    if (all.vus_idle) {
        size_t n = strlen(r->check_detail);
        snprintf(r->check_detail + n, sizeof(r->check_detail) - n,
                 "; %llu VUs not judged (the budget was spent before their first page)",
                 (unsigned long long)all.vus_idle);
    }
    r->signal_name = o->signal; /* as the hammer model names it, whether it counts or not */
    if (counting) {
        r->has_signal = true;
        r->baseline_known = r->final_known = true;
        r->baseline = all.baseline_sum;
        r->final_value = all.final_sum;
        /* OK actions a lost context swallowed never showed on any stream;
         * unanswered ones it applied did. */
        uint64_t checked = r->total.ok - all.swallowed + all.applied;
        /* The sum alone: the check's other criteria (VUs passed, page
         * loads) are the Check line's, not this one's. */
        r->matches_ok = all.final_sum - all.baseline_sum == (int64_t)checked;
        if (checked != r->total.ok) {
            r->ok_checked_known = true;
            r->ok_checked = checked;
        }
    }
    hm_free(run.stats);
    hm_free(run.totals);
    return rc;
}

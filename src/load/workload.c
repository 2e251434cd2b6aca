/* Decoding a php-via SSE stream into a workload's checks. */
#include "load/workload.h"

#include "base/hm_base.h"
#include "base/hm_reason.h"
#include "engine/engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int on_event(const hm_sse_event *ev, void *user);

/* The room of a watch's evidence (hm_reason_set's cap). */
#define BAD_EXAMPLE_BYTES 200
#define ERROR_BYTES 160
#define UNDECODABLE_WHY_BYTES 160

void hm_watch_init(hm_watch *w, const hm_workload *wl, const char *signal)
{
    memset(w, 0, sizeof(*w));
    w->w = wl;
    w->signal = signal;
    w->signals = json_object();
    hm_sse_parser_init(&w->sse, on_event, w);
    w->last_event_ns = hm_now_ns();
}

void hm_watch_restart(hm_watch *w)
{
    hm_sse_parser_reset(&w->sse);
    w->last_event_ns = hm_now_ns();
    w->comments_at_event = w->sse.comments;
    w->sent_at_open = w->actions_sent ? atomic_load(w->actions_sent) : 0;
}

/* Nothing watched: the patch event just decoded answers an action, opens
 * the stream, or is one more than the actions sent. */
static void count_unwatched(hm_watch *w)
{
    if (w->ev->kind != HM_DATASTAR_PATCH_SIGNALS && w->ev->kind != HM_DATASTAR_PATCH_ELEMENTS)
        return;
    int64_t sent = w->actions_sent ? atomic_load(w->actions_sent) : INT64_MAX;
    if ((int64_t)w->patches < sent)
        w->patches++;
    else if (sent == w->sent_at_open)
        w->opening++;
    else
        w->extra++;
}

typedef struct feed_job {
    hm_watch *w;
    const char *at;
    size_t len;
    int rc;
} feed_job;

static void feed_on_loop_stack(void *arg)
{
    feed_job *j = arg;
    j->rc = hm_sse_feed(&j->w->sse, j->at, j->len);
}

int hm_watch_feed(void *user, const char *at, size_t len)
{
    hm_watch *w = user;
    /* Datastar decoding (jansson) and the callbacks go deeper than an
     * EventSource's stack needs to (one page). */
    feed_job j = {w, at, len, 0};
    hm_call_on_loop_stack(feed_on_loop_stack, &j);
    int rc = j.rc;
    if (HM_UNLIKELY(rc < 0) && !hm_reason(w->error)[0]) {
        if (rc == -HM_ETOOBIG)
            hm_reason_set(&w->error, ERROR_BYTES, "SSE event or line over the %zu KiB limit",
                          w->sse.max_event >> 10);
        else
            hm_reason_set(&w->error, ERROR_BYTES, "SSE stream refused: %s", hm_strerror(rc));
    }
    return rc;
}

void hm_watch_free(hm_watch *w)
{
    hm_sse_parser_free(&w->sse);
    json_decref(w->signals);
    w->signals = NULL;
    hm_reason_clear(&w->bad_example);
    hm_reason_clear(&w->error);
    hm_reason_clear(&w->undecodable_why);
}

static size_t count_substr(const char *s, size_t len, const char *needle)
{
    size_t n = 0, nl = strlen(needle);
    for (const char *p = s; (p = memmem(p, len - (size_t)(p - s), needle, nl)); p += nl)
        n++;
    return n;
}

bool hm_table_well_formed(const char *html, size_t len)
{
    return count_substr(html, len, "<table") == 1 && count_substr(html, len, "</table>") == 1 &&
           count_substr(html, len, "<td") == 200 && count_substr(html, len, "</td>") == 200 &&
           count_substr(html, len, "<tr") >= 20;
}

static void note_bad(hm_watch *w, const char *fmt, long long a, long long b)
{
    if (!w->bad++) hm_reason_set(&w->bad_example, BAD_EXAMPLE_BYTES, fmt, a, b);
}

static void check_spreadsheet(hm_watch *w, int64_t count)
{
    int64_t view, focus;
    if (hm_signals_find_int(w->ev->signals, "viewRow", &view) < 0 ||
        hm_signals_find_int(w->ev->signals, "focusRow", &focus) < 0) {
        note_bad(w, "patch with count %lld lacks viewRow/focusRow%.0lld", count, 0);
        return;
    }
    /* Each action advances both rows by one, modulo 100, from 0. */
    if (view != count % 100 || focus != view)
        note_bad(w, "count %lld but viewRow %lld", count, view);
}

static void apply_event(hm_watch *w);
static void apply_value(hm_watch *w, int64_t v);

/* value_only: the event's value without decoding it, when the scan can
 * tell; false when the event must be decoded. */
static bool scanned(hm_watch *w, const hm_sse_event *ev)
{
    if (!w->value_only || !w->have_baseline || w->on_event || !w->signal || !w->signal[0] ||
        w->w->check == HM_CHECK_SPREADSHEET || w->w->check == HM_CHECK_TABLE)
        return false;
    int64_t v;
    switch (hm_datastar_scan_int(ev, w->signal, &v)) {
    case HM_DATASTAR_FOUND:
        apply_value(w, v);
        return true;
    case HM_DATASTAR_ABSENT:
        return true;
    case HM_DATASTAR_UNDECIDED:
        break;
    }
    return false;
}

static int on_event(const hm_sse_event *ev, void *user)
{
    hm_watch *w = user;
    w->last_event_ns = hm_now_ns();
    w->comments_at_event = w->sse.comments;
    static const char reload[] = "window.location.reload()";
    if (ev->data_len >= sizeof(reload) - 1 &&
        memmem(ev->data, ev->data_len, reload, sizeof(reload) - 1))
        w->reload_asked = true;
    if (scanned(w, ev)) return 0;
    hm_datastar_event decoded = {0};
    int rc = hm_datastar_decode(ev, &decoded);
    if (rc < 0) {
        /* The server sent what no client can use: an SSE protocol failure
         * (the stream goes on; later patches carry whole values). */
        if (!w->undecodable++)
            hm_reason_set(&w->undecodable_why, UNDECODABLE_WHY_BYTES,
                          "undecodable %.*s event (%zu bytes): %s",
                          (int)(ev->type_len < 40 ? ev->type_len : 40), ev->type, ev->data_len,
                          decoded.error ? decoded.error : hm_strerror(rc));
        hm_datastar_event_clear(&decoded);
        return 0;
    }
    w->ev = &decoded;
    apply_event(w);
    if ((!w->signal || !w->signal[0]) && w->w->check != HM_CHECK_TABLE) count_unwatched(w);
    if (w->on_event) w->on_event(w, w->user);
    w->ev = NULL;
    hm_datastar_event_clear(&decoded);
    return 0;
}

/* The watched signal's value v from one patch-signals event: the
 * baseline, the same count again, or a patch. */
static void apply_value(hm_watch *w, int64_t v)
{
    if (!w->have_baseline) {
        w->have_baseline = true;
        w->baseline = w->last = v;
        return;
    }
    bool counting = w->w->check == HM_CHECK_NET_INCREMENT || w->w->check == HM_CHECK_SPREADSHEET;
    if (counting && v == w->last) { /* the same count again: no action's effect */
        w->extra++;
        return;
    }
    w->patches++;
    w->last = v;
    w->last_patch_ns = hm_now_ns();
    if (w->w->check == HM_CHECK_CONSTANT && v != w->w->expected)
        note_bad(w, "patched value %lld, expected %lld", v, w->w->expected);
    if (w->w->check == HM_CHECK_SPREADSHEET) check_spreadsheet(w, v);
    if (w->on_patch) w->on_patch(w, v, w->user);
}

/* The workload's view of one decoded event (w->ev). */
static void apply_event(hm_watch *w)
{
    if (w->ev->kind == HM_DATASTAR_PATCH_SIGNALS) {
        json_object_update(w->signals, w->ev->signals);
        if (w->w->check == HM_CHECK_TABLE) return;
        int64_t v;
        if (hm_signals_find_int(w->ev->signals, w->signal, &v) == 0) apply_value(w, v);
    } else if (w->ev->kind == HM_DATASTAR_PATCH_ELEMENTS && w->w->check == HM_CHECK_TABLE) {
        const char *html = w->ev->elements ? w->ev->elements : "";
        size_t len = w->ev->elements ? w->ev->elements_len : 0;
        /* Scripts (the reload script) are elements too; only tables count. */
        if (!memmem(html, len, "<table", 6)) return;
        if (!hm_table_well_formed(html, len))
            note_bad(w, "malformed viewport table (%lld bytes)%.0lld", (long long)len, 0);
        if (!w->have_baseline) { /* the initial view */
            w->have_baseline = true;
            return;
        }
        w->patches++;
        w->last_patch_ns = hm_now_ns();
        if (w->on_patch) w->on_patch(w, (int64_t)w->patches, w->user);
    }
}

bool hm_watch_first_state(const hm_watch *w)
{
    return w->have_baseline || ((!w->signal || !w->signal[0]) && json_object_size(w->signals) > 0);
}

int hm_watch_wait_first_state(const hm_watch *w, bool (*alive)(const void *arg), const void *arg,
                              hm_event *ev, int64_t deadline)
{
    const int64_t quiet = 200 * 1000000LL; /* events but no signals: a page without any */
    bool watched = w->signal && w->signal[0];
    int64_t first_event = 0;
    while (!hm_watch_first_state(w) && alive(arg) && hm_now_ns() < deadline) {
        if (!watched && w->sse.events && !first_event) first_event = hm_now_ns();
        if (first_event && hm_now_ns() - first_event > quiet) return 0;
        if (hm_interrupt_current() != HM_INTERRUPT_NONE) return -ECANCELED;
        int64_t until =
            first_event && first_event + quiet + 1 < deadline ? first_event + quiet + 1 : deadline;
        if (hm_event_wait(ev, until) == -ECANCELED) return -ECANCELED;
    }
    return hm_watch_first_state(w) ? 0 : -ETIMEDOUT;
}

bool hm_watch_caught_up(const hm_watch *w, int64_t ok, int64_t now)
{
    if (w->w->check == HM_CHECK_NONE || ok <= 0) return true;
    if (!w->have_baseline) return false;
    switch (w->w->check) {
    case HM_CHECK_NET_INCREMENT:
    case HM_CHECK_SPREADSHEET:
        return w->last - w->baseline >= ok;
    default:
        return w->patches > 0 && now - w->last_patch_ns > HM_WATCH_QUIET_NS;
    }
}

bool hm_watch_verdict(const hm_watch *w, uint64_t ok_actions, char *why, size_t whylen)
{
    if (w->w->check == HM_CHECK_NONE) return true;
    if (!w->have_baseline) {
        snprintf(why, whylen, "no baseline: the SSE stream never showed %s",
                 w->w->check == HM_CHECK_TABLE ? "the viewport table" : w->signal);
        return false;
    }
    if (w->bad) {
        snprintf(why, whylen, "%llu bad patches, first: %s", (unsigned long long)w->bad,
                 hm_reason(w->bad_example));
        return false;
    }
    switch (w->w->check) {
    case HM_CHECK_NET_INCREMENT:
    case HM_CHECK_SPREADSHEET:
        if (w->last - w->baseline != (int64_t)ok_actions) {
            snprintf(why, whylen, "net increment %lld != HTTP OK %llu",
                     (long long)(w->last - w->baseline), (unsigned long long)ok_actions);
            return false;
        }
        return true;
    case HM_CHECK_NONE:
        return true;
    case HM_CHECK_CONSTANT:
    case HM_CHECK_TABLE:
        if (ok_actions > 0 && w->patches == 0) {
            snprintf(why, whylen, "no patch arrived for %llu OK actions",
                     (unsigned long long)ok_actions);
            return false;
        }
        return true;
    }
    return false;
}

bool hm_watch_verdict_lost(const hm_watch *w, uint64_t ok_actions, uint64_t unanswered,
                           uint64_t *swallowed, char *why, size_t whylen)
{
    *swallowed = 0;
    if (w->bad) {
        snprintf(why, whylen, "%llu bad patches, first: %s", (unsigned long long)w->bad,
                 hm_reason(w->bad_example));
        return false;
    }
    if (w->w->check != HM_CHECK_NET_INCREMENT && w->w->check != HM_CHECK_SPREADSHEET) return true;
    int64_t net = w->have_baseline ? w->last - w->baseline : 0;
    if (net > (int64_t)(ok_actions + unanswered)) {
        snprintf(why, whylen,
                 "net increment %lld > HTTP OK %llu + %llu unanswered on a lost context",
                 (long long)net, (unsigned long long)ok_actions, (unsigned long long)unanswered);
        return false;
    }
    *swallowed = net >= (int64_t)ok_actions ? 0 : ok_actions - (uint64_t)(net > 0 ? net : 0);
    return true;
}

static int build_body(const hm_workload *wl, const char *ctx, const char *extra_json,
                      json_t *signals, bool send_signals, char **out)
{
    json_t *body = json_object();
    /* What Datastar sends: every signal except those starting with '_'. */
    if (send_signals && signals) {
        const char *key;
        json_t *val;
        json_object_foreach(signals, key, val)
        {
            if (key[0] != '_') json_object_set(body, key, val);
        }
    }
    if (wl && wl->set_signal) {
        const char *wire = wl->set_signal, *key;
        json_t *val;
        if (signals) json_object_foreach(signals, key, val)
            {
                if (hm_signal_name_matches(wl->set_signal, key)) {
                    wire = key;
                    break;
                }
            }
        json_object_set_new(body, wire, json_string(wl->set_value));
    }
    if (extra_json && *extra_json) {
        json_error_t err;
        json_t *extra = json_loads(extra_json, 0, &err);
        if (!extra || !json_is_object(extra)) {
            json_decref(extra);
            json_decref(body);
            return -HM_EPARSE;
        }
        json_object_update(body, extra);
        json_decref(extra);
    }
    json_object_set_new(body, "via_ctx", json_string(ctx));
    char *s = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    if (!s) return -ENOMEM;
    *out = hm_strdup(s);
    free(s);
    return *out ? 0 : -ENOMEM;
}

typedef struct body_job {
    const hm_workload *wl;
    const char *ctx, *extra_json;
    json_t *signals;
    bool send_signals;
    char **out;
    int rc;
} body_job;

static void body_on_loop_stack(void *arg)
{
    body_job *j = arg;
    j->rc = build_body(j->wl, j->ctx, j->extra_json, j->signals, j->send_signals, j->out);
}

int hm_workload_body(const hm_workload *wl, const char *ctx, const char *extra_json,
                     json_t *signals, bool send_signals, char **out)
{
    /* jansson's parse and dump (and the printf under the dump) go deeper
     * than a virtual user's stack needs to: on the loop's stack, a VU
     * coroutine stays within one page. */
    body_job j = {wl, ctx, extra_json, signals, send_signals, out, 0};
    hm_call_on_loop_stack(body_on_loop_stack, &j);
    return j.rc;
}

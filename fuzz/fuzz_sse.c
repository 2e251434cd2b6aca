/* fuzz_sse.c — the SSE parser (src/proto/sse.h) and Datastar decoding
 * (src/proto/datastar.h) of one event stream, and the workload watch
 * (src/load/workload.h) that hammer's virtual users feed it to.
 *
 * The payload is an SSE response body. On a coroutine-sized stack it is
 * parsed fed whole and in the pieces the split bytes choose; every event
 * (type, data, id, retry) and its Datastar decoding (kind, fields, the
 * signals found by name) must be the same both ways, and wherever the scan
 * for one signal (hm_datastar_scan_int) decides an event it must say what
 * the decoding says. Then a hm_watch eats the stream as a virtual user's
 * does, and the action body a browser VU would send next is built from the
 * signals it merged; a second watch eats it as the hammer model's
 * observers do (value_only) and must count and check the same.
 *
 * Flags (byte 0):
 *   bit 0  small events (max_event 256) instead of the default 1 MiB
 *   bit 1  decode every event as datastar-patch-signals, whatever its type
 *   bit 2  decode every event as datastar-patch-elements (with bit 1: alternate)
 *   bit 3  the watch checks element patches (a table) instead of a counter */
#include "fuzz_common.h"

#include "base/hm_base.h"
#include "base/hm_reason.h"
#include "proto/datastar.h"
#include "proto/sse.h"
#include "load/workload.h"

#include <string.h>

enum { F_SMALL = 1, F_AS_SIGNALS = 2, F_AS_ELEMENTS = 4, F_TABLE = 8 };

typedef struct run {
    const hm_fuzz_input *in;
    bool split;
    hm_fuzz_log log;
    hm_datastar_event ev; /* reused across events: decoding into a used one is allowed */
    uint64_t n;
} run;

static void log_opt(hm_fuzz_log *l, const char *tag, const char *s, size_t len)
{
    if (!s) {
        hm_fuzz_log_printf(l, " %s=-", tag);
        return;
    }
    HM_FUZZ_CHECK(s[len] == '\0');
    hm_fuzz_log_bytes(l, tag, s, len);
}

static void log_found(hm_fuzz_log *l, json_t *signals, const char *name)
{
    int64_t v = 0;
    int rc = hm_signals_find_int(signals, name, &v);
    hm_fuzz_log_printf(l, " %s=%d/%lld", name, rc, (long long)v);
}

/* A decided scan answers as the decode (rc, out) and hm_signals_find_int. */
static void check_scan(const hm_sse_event *ev, int rc, const hm_datastar_event *out)
{
    static const char *const names[] = {"count", "a", "x_count", "a.count"};
    for (size_t i = 0; i < HM_ARRAY_LEN(names); i++) {
        int64_t fast = 0, slow = 0;
        hm_datastar_scan s = hm_datastar_scan_int(ev, names[i], &fast);
        if (s == HM_DATASTAR_UNDECIDED) continue;
        HM_FUZZ_CHECK(rc == 0 && out->kind == HM_DATASTAR_PATCH_SIGNALS);
        bool found = hm_signals_find_int(out->signals, names[i], &slow) == 0;
        HM_FUZZ_CHECK(found == (s == HM_DATASTAR_FOUND));
        HM_FUZZ_CHECK(!found || fast == slow);
    }
}

static int on_event(const hm_sse_event *sev, void *user)
{
    run *r = user;
    HM_FUZZ_CHECK(sev->type[sev->type_len] == '\0' && sev->data[sev->data_len] == '\0');
    HM_FUZZ_CHECK(sev->last_event_id[sev->last_event_id_len] == '\0');
    hm_fuzz_log_printf(&r->log, "\nevent retry=%lld", (long long)sev->retry_ms);
    hm_fuzz_log_bytes(&r->log, "type", sev->type, sev->type_len);
    hm_fuzz_log_bytes(&r->log, "data", sev->data, sev->data_len);
    hm_fuzz_log_bytes(&r->log, "id", sev->last_event_id, sev->last_event_id_len);

    hm_sse_event ev = *sev;
    uint8_t f = r->in->flags;
    const char *as = NULL;
    if ((f & F_AS_SIGNALS) && (f & F_AS_ELEMENTS))
        as = r->n % 2 ? "datastar-patch-elements" : "datastar-patch-signals";
    else if (f & F_AS_SIGNALS)
        as = "datastar-patch-signals";
    else if (f & F_AS_ELEMENTS)
        as = "datastar-patch-elements";
    if (as) {
        ev.type = as;
        ev.type_len = strlen(as);
    }
    r->n++;

    int rc = hm_datastar_decode(&ev, &r->ev);
    hm_fuzz_log_printf(&r->log, " decode=%d kind=%d", rc, r->ev.kind);
    check_scan(&ev, rc, &r->ev);
    if (rc < 0) return 0;
    if (r->ev.kind == HM_DATASTAR_PATCH_SIGNALS) {
        HM_FUZZ_CHECK(json_is_object(r->ev.signals));
        hm_fuzz_log_printf(&r->log, " keys=%zu oim=%d", json_object_size(r->ev.signals),
                           r->ev.only_if_missing);
        log_found(&r->log, r->ev.signals, "count");
        log_found(&r->log, r->ev.signals, "a.b.count");
    } else if (r->ev.kind == HM_DATASTAR_PATCH_ELEMENTS) {
        log_opt(&r->log, "sel", r->ev.selector, r->ev.selector ? strlen(r->ev.selector) : 0);
        log_opt(&r->log, "mode", r->ev.mode, r->ev.mode ? strlen(r->ev.mode) : 0);
        log_opt(&r->log, "wrap", r->ev.wrap, r->ev.wrap ? strlen(r->ev.wrap) : 0);
        log_opt(&r->log, "elements", r->ev.elements, r->ev.elements_len);
        hm_fuzz_log_printf(&r->log, " vt=%d", r->ev.use_view_transition);
    }
    return 0;
}

static void parse(run *r)
{
    const hm_fuzz_input *in = r->in;
    hm_sse_parser p;
    hm_sse_parser_init(&p, on_event, r);
    if (in->flags & F_SMALL) p.max_event = 256;
    size_t off = 0, piece = 0;
    int rc = 0;
    while (off < in->len && rc == 0) {
        size_t len = r->split ? hm_fuzz_piece(in, piece++, in->len - off) : in->len - off;
        rc = hm_sse_feed(&p, (const char *)in->data + off, len);
        off += len;
    }
    size_t idlen;
    const char *id = hm_sse_last_event_id(&p, &idlen);
    HM_FUZZ_CHECK(id[idlen] == '\0');
    hm_fuzz_log_printf(&r->log, "\nend rc=%d events=%llu comments=%llu retry=%lld", rc,
                       (unsigned long long)p.events, (unsigned long long)p.comments,
                       (long long)p.retry_ms);
    hm_fuzz_log_bytes(&r->log, "id", id, idlen);
    hm_sse_parser_free(&p);
    hm_datastar_event_clear(&r->ev);
}

static void feed_watch(const hm_fuzz_input *in, hm_watch *w, bool value_only)
{
    static const hm_workload counter = {.check = HM_CHECK_NET_INCREMENT};
    static const hm_workload table = {.check = HM_CHECK_TABLE};
    hm_watch_init(w, (in->flags & F_TABLE) ? &table : &counter, "count");
    w->value_only = value_only;
    size_t off = 0, piece = 0;
    while (off < in->len) {
        size_t len = hm_fuzz_piece(in, piece++, in->len - off);
        if (hm_watch_feed(w, (const char *)in->data + off, len) < 0) break;
        off += len;
    }
}

/* The stream as a virtual user's watch sees it, then the body of the next
 * action a browser VU sends (the merged signals echoed back); and as the
 * hammer model's observer sees it, with the same counts and checks. */
static void watch(const hm_fuzz_input *in)
{
    static const hm_workload counter = {.check = HM_CHECK_NET_INCREMENT};
    hm_watch w, v;
    feed_watch(in, &w, false);
    char *body = NULL;
    if (hm_workload_body(&counter, "ctx", NULL, w.signals, true, &body) == 0) hm_free(body);
    feed_watch(in, &v, true);
    HM_FUZZ_CHECK(v.have_baseline == w.have_baseline && v.baseline == w.baseline &&
                  v.last == w.last && v.patches == w.patches && v.extra == w.extra &&
                  v.opening == w.opening && v.sse.events == w.sse.events && v.bad == w.bad &&
                  v.undecodable == w.undecodable && v.reload_asked == w.reload_asked);
    /* Evidence strings exist only once there is evidence (hm_reason.h). */
    HM_FUZZ_CHECK(strcmp(hm_reason(v.bad_example), hm_reason(w.bad_example)) == 0 &&
                  strcmp(hm_reason(v.undecodable_why), hm_reason(w.undecodable_why)) == 0 &&
                  strcmp(hm_reason(v.error), hm_reason(w.error)) == 0);
    hm_watch_free(&w);
    hm_watch_free(&v);
}

static void both(void *arg)
{
    const hm_fuzz_input *in = arg;
    run whole = {.in = in}, split = {.in = in, .split = true};
    parse(&whole);
    parse(&split);
    hm_fuzz_log_same(&whole.log, &split.log, "whole and split parses");
    hm_fuzz_log_free(&whole.log);
    hm_fuzz_log_free(&split.log);
    watch(in);
}

HM_FUZZ_ENTRY(both)

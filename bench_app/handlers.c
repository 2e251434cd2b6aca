/* handlers.c — php-via's request handling for bench_app (v0.12.0, per
 * worker): routing, pages, actions, SSE streams, /_session/close and
 * /_health, and the route tables they serve from. Each behaviour names the
 * php-via source it follows; see docs/php-via.md.
 * The state they act on (contexts, signals, queues) is contexts.c's; what
 * PHP or OpenSwoole would do with bytes (cookies, forms, JSON) is
 * php_compat.c's.
 *
 * Views: a route's view is static HTML (page tail and sync event built
 * once) or a render function run for each page GET and each SSE sync, as
 * php-via re-runs a view on sync().
 *
 * SSE streams: a stream is a ba_stream on its connection coroutine's
 * stack. Its output is c->out: the queue appends each patch there while
 * the stream waits (ba_stream_deliver, called from inside the action that
 * queued it), which also writes it to the socket at once when that does
 * not block, as OpenSwoole does; whatever is left wakes the coroutine
 * through c->bell, which writes c->out, swapped into c->ev for the write so
 * deliveries can go on meanwhile. A peer watcher only marks the client
 * gone; the stream ends at its next write, as php-via's does.
 *
 * Workers: everything here runs on one worker's thread; the only shared
 * things are the worker's counters in app->ws and the other workers'
 * counters, which /_health reads.
 *
 * Memory: route tables are hm_alloc'd and owned by the app (freed by
 * ba_via_free); jansson values are per request and released before the
 * handler returns; per-request text goes to the connection's scratch
 * buffer. */
#include "bench_app/contexts.h"
#include "bench_app/php_compat.h"

#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/socket.h>

#define SESSION_COOKIE "via_session_id"

/* datastar-php 1.0's executeScript('window.location.reload()'). */
static const char RELOAD_EVENT[] =
    "event: datastar-patch-elements\n"
    "data: selector body\n"
    "data: mode append\n"
    "data: elements <script data-effect=\"el.remove()\">window.location.reload()</script>\n\n";

/* The page shell: a trimmed php-via shell.html (no stylesheet, no debug
 * sidebar) that still makes a browser open SSE and send the close beacon. */
static const char SHELL_TOP[] =
    "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"UTF-8\">\n"
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1.0\">\n"
    "<meta data-signals='";
static const char SHELL_AFTER_SIGNALS[] =
    "'>\n<meta data-indicator=\"_connecting\" "
    "data-on-interval__duration.15s.leading=\"!$_connecting && @get('/_sse')\">\n"
    "<meta data-init=\"window.addEventListener('beforeunload', (evt) => { "
    "navigator.sendBeacon('/_session/close', '";
static const char SHELL_AFTER_BEACON[] =
    "'); });\">\n<script type=\"module\" src=\"/datastar.js\"></script>\n</head>\n<body>\n"
    "<div class=\"container\" id=\"content\">\n";
static const char SHELL_BOTTOM[] = "\n</div>\n</body>\n</html>\n";

/* ---- reading the request ------------------------------------------------- */

static bool is_form(const hm_http_req_parser *r)
{
    static const char ct[] = "application/x-www-form-urlencoded";
    return r->hdr.content_type.ptr && r->hdr.content_type.len >= sizeof(ct) - 1 &&
           strncasecmp(r->hdr.content_type.ptr, ct, sizeof(ct) - 1) == 0;
}

/* php-via's Via::parseSignals(): ?datastar= first (even on POST; a bad value
 * means no signals, with no fallback), then a raw body that decodes to an
 * array/object, then the form field datastar. NULL = no signals. */
static json_t *read_signals(ba_conn *c)
{
    const hm_http_req_parser *r = &c->req;
    if (r->query.ptr && ba_php_form_get(r->query.ptr, r->query.len, "datastar", &c->scratch))
        return ba_php_json_decode(c->scratch.data, c->scratch.len);
    /* PHP's `if ($body)`: "" and "0" are false. */
    if (r->body_len && !(r->body_len == 1 && r->body[0] == '0')) {
        json_t *j = ba_php_json_decode(r->body, r->body_len);
        if (j) return j;
    }
    if (is_form(r) && ba_php_form_get(r->body, r->body_len, "datastar", &c->scratch))
        return ba_php_json_decode(c->scratch.data, c->scratch.len);
    return NULL;
}

/* The request's session as SessionManager reads it; "" and "0" count as
 * absent (PHP's `!$sessionId`). out has BA_SWOOLE_COOKIE_MAX bytes. */
static bool session_of(const ba_conn *c, char *out, size_t *olen)
{
    hm_http_str h = c->req.hdr.cookie;
    if (!ba_swoole_cookie_get(h.ptr, h.len, SESSION_COOKIE, out, olen)) return false;
    return *olen > 0 && !(*olen == 1 && out[0] == '0');
}

/* isSessionAuthorized(): the caller's session must be the context's (a
 * request without one gets a fresh id, which never matches). */
static bool session_matches(const ba_conn *c, const ba_ctx *ctx)
{
    char sess[BA_SWOOLE_COOKIE_MAX];
    size_t slen;
    return session_of(c, sess, &slen) && slen == ctx->session_len &&
           memcmp(sess, ctx->session, slen) == 0;
}

/* ---- responses ------------------------------------------------------------------ */

/* A body with OpenSwoole's default Content-Type (php-via sets none here;
 * ba_respond() adds it where OpenSwoole puts it). */
static int reply(ba_conn *c, int status, const char *text)
{
    int rc = ba_respond(c, status, NULL, 0, text, strlen(text), false);
    return rc < 0 ? BA_DROP : BA_NEXT;
}

/* bench_app's own limit (php-via has none): a signal value in the client's
 * JSON larger than max_signal_bytes (a string by its bytes, an array or
 * object by its compact JSON) would be kept in a context. True when root
 * holds one. */
static bool signal_too_big(const ba_app *app, const json_t *root)
{
    if (!json_is_object(root)) return false;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)root, key, v)
    {
        size_t n = 0;
        if (json_is_string(v))
            n = json_string_length(v);
        else if (json_is_array(v) || json_is_object(v))
            n = json_dumpb(v, NULL, 0, JSON_COMPACT | JSON_ENCODE_ANY);
        if (n > app->max_signal_bytes) return true;
    }
    return false;
}

/* datastar-php's ServerSentEventGenerator::headers(), in its order. */
static const hm_http_header SSE_HEADERS[] = {
    {"Cache-Control", "no-cache"},
    {"Content-Type", "text/event-stream"},
    {"X-Accel-Buffering", "no"},
};

/* ---- pages ----------------------------------------------------------------------- */

static const ba_route_rt *route_match(const ba_app *app, const char *path, size_t n)
{
    for (size_t i = 0; i < app->n_routes; i++)
        if (app->routes[i].path_len == n && memcmp(app->routes[i].def->path, path, n) == 0)
            return &app->routes[i];
    return NULL;
}

/* The expires of the session cookie OpenSwoole's cookie() writes: now + 30
 * days; formatted once per second. */
static const char *cookie_expires(ba_app *app)
{
    time_t now = time(NULL);
    if (now != app->cookie_sec || !app->cookie_expires[0]) {
        ba_swoole_cookie_date(now + 30 * 24 * 3600, app->cookie_expires);
        app->cookie_sec = now;
    }
    return app->cookie_expires;
}

/* RequestHandler::doHandlePage(): a new context bound to the session, the
 * shell with its data-signals meta tag, the session cookie (every time). */
static int handle_page(ba_conn *c, const ba_route_rt *rt)
{
    ba_app *app = c->app;
    char sess[BA_SWOOLE_COOKIE_MAX];
    size_t slen;
    if (!session_of(c, sess, &slen)) {
        if (ba_random_hex(app, sess, BA_SESSION_HEX / 2) < 0)
            return reply(c, 500, "Internal Server Error");
        slen = BA_SESSION_HEX;
    }
    ba_ctx *ctx = ba_ctx_create(app, rt, sess, slen);
    if (!ctx) return reply(c, 500, "Internal Server Error");

    /* scratch = Set-Cookie value, NUL, page body. */
    ba_buf *s = &c->scratch;
    s->len = 0;
    int rc = ba_buf_lit(s, SESSION_COOKIE "=");
    if (!rc) rc = ba_php_urlencode_append(s, ctx->session, ctx->session_len);
    if (!rc) rc = ba_buf_lit(s, "; expires=");
    if (!rc) rc = ba_buf_lit(s, cookie_expires(app));
    if (!rc) rc = ba_buf_lit(s, "; path=/; httponly; samesite=Lax");
    if (!rc) rc = ba_buf_append(s, "", 1);
    size_t body_off = s->len;
    if (!rc) rc = ba_buf_append(s, rt->page_a.data, rt->page_a.len);
    if (!rc) rc = ba_buf_append(s, ctx->hex, BA_CTX_HEX);
    if (!rc) rc = ba_buf_append(s, rt->page_b.data, rt->page_b.len);
    if (!rc) rc = ba_buf_append(s, ctx->hex, BA_CTX_HEX);
    if (!rc) rc = ba_buf_append(s, rt->page_c.data, rt->page_c.len);
    if (!rc && rt->def->render) {
        rc = rt->def->render(ctx, s);
        if (!rc) rc = ba_buf_lit(s, SHELL_BOTTOM);
    }
    if (rc) return reply(c, 500, "Internal Server Error");
    /* withBrotli(): sendCompressedPage() compresses when the request
     * accepts br, and says Vary either way. */
    hm_http_header h[4];
    size_t nh = 0;
    const char *body = s->data + body_off;
    size_t blen = s->len - body_off;
    h[nh++] = (hm_http_header){"Content-Type", "text/html; charset=utf-8"};
    if (app->opt.brotli && ba_accepts_br(c)) {
        c->ev.len = 0;
        if (ba_br_page(&c->ev, body, blen) < 0) return reply(c, 500, "Internal Server Error");
        body = c->ev.data;
        blen = c->ev.len;
        h[nh++] = (hm_http_header){"Content-Encoding", "br"};
    }
    if (app->opt.brotli) h[nh++] = (hm_http_header){"Vary", "Accept-Encoding"};
    h[nh++] = (hm_http_header){"Set-Cookie", s->data};
    rc = ba_respond(c, 200, h, nh, body, blen, false);
    return rc < 0 ? BA_DROP : BA_NEXT;
}

/* ---- actions --------------------------------------------------------------------- */

/* ActionHandler::isOriginAllowed() without an allowlist: Origin minus
 * http(s):// must equal Host; a missing Origin or Host passes in devMode. */
static bool origin_allowed(const ba_conn *c)
{
    hm_http_str o = c->req.hdr.origin, h = c->req.hdr.host;
    if (!o.ptr || !h.ptr) return c->app->opt.dev_mode;
    const char *p = o.ptr;
    size_t n = o.len;
    if (n >= 7 && memcmp(p, "http://", 7) == 0)
        p += 7, n -= 7;
    else if (n >= 8 && memcmp(p, "https://", 8) == 0)
        p += 8, n -= 8;
    return n == h.len && memcmp(p, h.ptr, n) == 0;
}

/* The checks of ActionHandler::handleAction(), in its order. */
static int handle_action(ba_conn *c, const char *aid, size_t aid_len)
{
    ba_app *app = c->app;
    json_t *root = read_signals(c);
    int ret;
    if (signal_too_big(app, root)) { /* as for a body over the limit */
        ret = reply(c, 413, "Payload Too Large");
        goto out;
    }
    if (!origin_allowed(c)) {
        ret = reply(c, 403, "Forbidden: untrusted origin");
        goto out;
    }
    /* $signals['via_ctx'] ?? $request->post['via_ctx']: only a missing or
     * null via_ctx falls back to the form field. */
    const char *cid = NULL;
    size_t cid_len = 0;
    bool bad_type = false;
    const json_t *v = json_is_object(root) ? json_object_get(root, "via_ctx") : NULL;
    if (v && json_is_string(v)) {
        cid = json_string_value(v);
        cid_len = json_string_length(v);
    } else if (v && !json_is_null(v)) {
        bad_type = true;
    } else if (is_form(&c->req) &&
               ba_php_form_get(c->req.body, c->req.body_len, "via_ctx", &c->scratch)) {
        cid = c->scratch.data;
        cid_len = c->scratch.len;
    }
    ba_ctx *ctx = NULL;
    if (!bad_type && cid && !(cid_len == 1 && cid[0] == '0'))
        ctx = ba_ctx_lookup(app, cid, cid_len);
    if (!ctx) {
        ret = reply(c, 400, "Invalid context");
        goto out;
    }
    if (!session_matches(c, ctx)) {
        ret = reply(c, 403, "Forbidden");
        goto out;
    }
    ba_inject_signals(ctx, root);
    const ba_action_def *act = NULL;
    for (size_t i = 0; i < ctx->route->def->n_actions; i++)
        if (ba_str_eq(aid, aid_len, ctx->route->def->actions[i].id))
            act = &ctx->route->def->actions[i];
    if (!act) { /* Context::executeAction() throws: caught as 500 */
        ret = reply(c, 500, "Action failed");
        goto out;
    }
    ctx->busy++;
    int rc = act->fn(ctx);
    ctx->busy--;
    if (rc < 0) {
        ret = reply(c, 500, "Action failed");
        goto out;
    }
    ret = reply(c, 200, "");
out:
    json_decref(root);
    return ret;
}

/* ---- SSE --------------------------------------------------------------------------- */

/* php-via's ssePollIntervalMs: how long SseHandler sleeps after a pop()
 * that found the channel closed (its stream was replaced). */
#define PHPVIA_POLL_NS (100 * 1000000LL)
/* A stream whose unwritten output passes this is blocked: patches then wait
 * in the queue (and the oldest drop) until the client reads again, as
 * OpenSwoole's send_yield blocks a write once php-via's 1 MB socket buffer
 * is full. */
#define SSE_OUT_MAX ((size_t)1 << 20)

/* Watches a streaming connection for the peer going away. What a client
 * sends meanwhile is discarded. When the peer goes while the stream waits
 * for its next patch, the socket closes at once, as OpenSwoole's reactor
 * closes the fd at the client's FIN; the stream itself (and /_health's
 * count of it) lives on until that patch, whose write fails in php-via. */
static void peer_watch(void *arg)
{
    ba_conn *c = arg;
    char buf[512];
    while (!c->reader_stop && !c->app->stopping) {
        ssize_t n = ba_watch_read(c, buf, sizeof(buf));
        if (n > 0) continue;           /* nothing a client may send now matters */
        if (n == -ECANCELED) continue; /* the loop condition decides */
        c->peer_gone = true;
        if (c->watch_cancels) {
            hm_coro_cancel(c->co); /* -ESRCH: it is ready and checks */
        } else if (c->stream_waits) {
            /* Nothing writes after peer_gone, and the stream is in no
             * socket operation; the connection's end then closes NULL,
             * which does nothing. */
            hm_sock_close(c->sock);
            c->sock = NULL;
        }
        break;
    }
    c->reader = NULL;
    hm_wg_done(&c->reader_wg);
}

void ba_peer_watch_start(ba_conn *c, bool cancel)
{
    /* An HTTP/2 stream has no socket to watch: h2.c marks it gone when the
     * client resets it or its connection ends. */
    if (c->h2s) return;
    c->reader_stop = c->peer_gone = false;
    c->watch_cancels = cancel;
    hm_wg_init(&c->reader_wg);
    hm_wg_add(&c->reader_wg, 1);
    if (hm_coro_spawn(c->app->loop, peer_watch, c, &c->reader) < 0) {
        c->reader = NULL; /* no early EOF detection; a failed write still ends it */
        hm_wg_done(&c->reader_wg);
    }
}

void ba_peer_watch_stop(ba_conn *c)
{
    if (c->h2s) return;
    c->reader_stop = true;
    /* A wait cancelled by the stop ticker just waits again: the socket must
     * not be closed while the watcher is still inside a read. */
    while (c->reader_wg.count > 0) {
        if (c->reader) hm_coro_cancel(c->reader);
        hm_wg_wait(&c->reader_wg, 0);
    }
}

/* One event as one HTTP chunk on the stream's output (with --brotli, the
 * event compressed and flushed: one chunk that decodes to exactly it). */
static int stream_append(ba_stream *st, const char *ev, size_t n)
{
    ba_buf *out = &st->c->out;
    size_t at = out->len;
    int rc = ba_br_chunk(st->br, st->c, out, ev, n);
    if (rc < 0) out->len = at;
    return rc;
}

static bool stream_blocked(const ba_stream *st)
{
    /* Over HTTP/2, bytes waiting for the client's window are unwritten too. */
    size_t unsent = st->c->h2s ? ba_h2_unsent(st->c) : 0;
    return st->c->out.len + st->c->ev.len + unsent > SSE_OUT_MAX;
}

void ba_stream_wake(ba_stream *st)
{
    hm_chan_try_push(st->c->bell, st); /* -EAGAIN: already rung */
}

/* OpenSwoole's push runs the waiting stream coroutine at once, which writes
 * the patch before the action goes on: so does this, without blocking, when
 * no write of the stream's own is in flight (it would be out of order) and
 * the stream is not TLS (its SSL is the stream's). What the socket does not
 * take stays in c->out for the stream's coroutine. False when the write
 * failed (the client is gone). */
static bool stream_write_now(ba_stream *st)
{
    ba_conn *c = st->c;
    if (c->h2s) return ba_h2_write_now(c); /* framed at once, written by its connection */
    if (c->tls || c->ev.len || !c->out.len) return true;
    return ba_send_now(c, &c->out);
}

bool ba_stream_deliver(ba_stream *st, const char *ev, size_t n)
{
    /* OpenSwoole's write to a client that went away fails: the stream ends
     * and takes this patch with it (php-via notices only now). */
    if (st->ended || st->c->peer_gone || stream_append(st, ev, n) < 0 || !stream_write_now(st)) {
        st->ended = true;
        ba_stream_wake(st);
        return false;
    }
    /* A stream that has output, or stops waiting because its writer is
     * blocked, runs again: to write, or to wait for the writer. */
    bool blocked = stream_blocked(st);
    if (st->c->out.len || blocked) ba_stream_wake(st);
    return !blocked;
}

/* The stream part of SseHandler::handleSSE() for a live, authorised
 * context: sync, then every patch as it is queued, until the server stops
 * or a write finds the client gone. */
static int sse_stream(ba_conn *c, ba_ctx *ctx, const hm_http_header *h, size_t nh, ba_br *br)
{
    ba_app *app = c->app;
    c->keep_alive = true; /* OpenSwoole's Connection: keep-alive */
    if (!c->bell && hm_chan_create(&c->bell, 1) < 0) return BA_DROP;
    void *tok;
    while (hm_chan_try_pop(c->bell, &tok) == 0) {
    }
    if (ba_respond_chunked_head(c, 200, h, nh) < 0) return BA_DROP;

    /* Cancel any pending cleanup (reconnection), then recreate the patch
     * channel: what was queued before is lost; a stream waiting in the old
     * one moves to the new one (contexts.h). */
    ba_ctx_cancel_cleanup(ctx);
    if (!ba_ctx_queue_replace(ctx)) return BA_DROP;
    ctx->sse_count++;
    app->sse_total++;
    ba_publish_counts(app);

    /* sync(): the view, then the TAB signals. First connect: all of them;
     * later: those changed since they were last queued (php-via's flags). */
    if (ctx->route->def->render) {
        /* The view rendered now, as php-via's sync() re-runs the view. */
        c->scratch.len = 0;
        if (ctx->route->def->render(ctx, &c->scratch) == 0)
            ba_patch_elements(ctx, NULL, c->scratch.data, c->scratch.len);
    } else {
        ba_buf *b = ba_queue_push_begin(ctx->queue);
        if (ba_buf_append(b, ctx->route->elements_event.data, ctx->route->elements_event.len) == 0)
            ba_queue_push_commit(ctx->queue);
    }
    ba_queue_signals(ctx, ctx->connected_once ? ctx->changed : ba_route_all_signals(ctx->route));
    ctx->connected_once = true;

    ba_stream st = {.c = c, .ctx = ctx, .br = br};
    ba_peer_watch_start(c, false);
    /* php-via's loop. Events reach c->out either here, popped from the
     * queue, or from ba_stream_deliver() while the stream waits in the
     * queue; c->ev holds what is being written meanwhile. */
    for (;;) {
        if (app->stopping || st.ended) break;
        /* What the queue holds joins the output first, so the head and the
         * sync go out in one write, as php-via's do. A stream woken by the
         * close of its old queue reads the new one only after its sleep. */
        while (!st.woken_closed && !stream_blocked(&st) &&
               ba_queue_pop_swap(ctx->queue, &c->scratch)) {
            if (stream_append(&st, c->scratch.data, c->scratch.len) < 0) st.ended = true;
        }
        if (st.ended) break;
        if (c->out.len) {
            if (c->peer_gone) break; /* the write would fail */
            ba_buf t = c->out;
            c->out = c->ev;
            c->ev = t;
            ssize_t r = ba_write(c, c->ev.data, c->ev.len, ba_deadline(app));
            c->ev.len = 0;
            if (r < 0) break;
            continue;
        }
        /* HTTP/2: what a delivery handed over waits for the client's window;
         * until it opens, this stream is a blocked writer. */
        if (c->h2s && ba_h2_unsent(c)) {
            if (c->peer_gone || ba_h2_drain(c, ba_deadline(app)) < 0) break;
            continue;
        }
        c->stream_waits = true;
        if (st.woken_closed) { /* pop() on the closed channel, then usleep() */
            st.woken_closed = false;
            hm_coro_sleep(app->poll_ns > 0 ? app->poll_ns : PHPVIA_POLL_NS);
        } else if (app->poll_ns > 0) { /* --sse-poll-ms: nothing there, sleep */
            hm_coro_sleep(app->poll_ns);
        } else {
            ba_queue_wait(ctx->queue, &st); /* pop(): blocks until a push or a close */
            hm_chan_pop(c->bell, &tok, 0);
        }
        c->stream_waits = false;
    }
    ba_queue_unwait(&st);
    ba_peer_watch_stop(c);
    c->out.len = 0; /* never written: the stream is over */
    ctx->sse_count--;
    app->sse_total--;
    ba_publish_counts(app);
    if (ctx->sse_count == 0) ba_ctx_schedule_cleanup(ctx);
    return BA_DROP;
}

/* SseHandler::handleSSE() up to the stream. */
static int handle_sse(ba_conn *c)
{
    ba_app *app = c->app;
    json_t *root = read_signals(c);
    if (signal_too_big(app, root)) {
        json_decref(root);
        return reply(c, 413, "Payload Too Large");
    }
    const json_t *v = json_is_object(root) ? json_object_get(root, "via_ctx") : NULL;
    if (ba_php_falsy(v)) { /* `if (!$contextId)` */
        json_decref(root);
        return reply(c, 400, "Invalid context");
    }
    /* A truthy non-string cannot name a context: the reload answer below. */
    const char *cid = json_is_string(v) ? json_string_value(v) : NULL;
    size_t cid_len = cid ? json_string_length(v) : 0;
    ba_ctx *ctx = cid ? ba_ctx_lookup(app, cid, cid_len) : NULL;
    if (!ctx && cid) {
        /* A context the cleanup took comes back when the same session asks
         * within the revival window (its TAB values from the query). */
        char sess[BA_SWOOLE_COOKIE_MAX];
        size_t slen;
        if (session_of(c, sess, &slen) &&
            (ctx = ba_ctx_revive(app, cid, cid_len, sess, slen, root)))
            ba_reload_forget(app, cid, cid_len);
    }
    if (!ctx) {
        /* Unknown or expired: the reload script as one chunk, then the end
         * of the body, on a connection that stays open; a repeat for the
         * same id within 5 minutes gets the headers and an empty body. The
         * reload is never compressed. */
        int rc;
        if (cid && ba_reload_sent(app, cid, cid_len)) {
            rc = ba_respond(c, 200, SSE_HEADERS, HM_ARRAY_LEN(SSE_HEADERS), "", 0, false);
        } else {
            if (cid) ba_reload_mark(app, cid, cid_len);
            rc = ba_respond_chunked_head(c, 200, SSE_HEADERS, HM_ARRAY_LEN(SSE_HEADERS));
            if (!rc) rc = ba_body_chunk(c, &c->out, RELOAD_EVENT, sizeof(RELOAD_EVENT) - 1);
            if (!rc) rc = ba_body_end(c);
        }
        json_decref(root);
        return rc < 0 ? BA_DROP : BA_NEXT;
    }
    json_decref(root); /* a live context reads only via_ctx */
    /* withBrotli(): the encoding headers go on before the session check,
     * so php-via's 403 says Content-Encoding: br over a plain body. */
    bool br = app->opt.brotli && ba_accepts_br(c);
    hm_http_header h[HM_ARRAY_LEN(SSE_HEADERS) + 2];
    size_t nh = HM_ARRAY_LEN(SSE_HEADERS);
    memcpy(h, SSE_HEADERS, sizeof(SSE_HEADERS));
    if (br) {
        h[nh++] = (hm_http_header){"Content-Encoding", "br"};
        h[nh++] = (hm_http_header){"Vary", "Accept-Encoding"};
    }
    if (!session_matches(c, ctx)) {
        int rc = ba_respond(c, 403, h, nh, "Forbidden", 9, false);
        return rc < 0 ? BA_DROP : BA_NEXT;
    }
    ba_br *enc = NULL;
    if (br && ba_br_new(&enc) < 0) return reply(c, 500, "Internal Server Error");
    int end =
        sse_stream(c, ctx, h, nh, enc); /* earlier pipelined answers go out with its first write */
    ba_br_free(enc);
    return end;
}

/* ---- /_session/close and /_health ------------------------------------------------ */

static int handle_session_close(ba_conn *c)
{
    ba_ctx *ctx = ba_ctx_lookup(c->app, c->req.body, c->req.body_len);
    if (ctx) ba_ctx_schedule_cleanup(ctx); /* deferred by the tick while SSE is open */
    return reply(c, 200, "");
}

/* RequestHandler::handleHealth(): "connections" counts the answering
 * worker's contexts and streams, as php-via's; bench_app adds "worker" (its
 * id) and "workers", every worker of the run with its counts. */
static json_t *workers_json(const ba_app *app)
{
    json_t *a = json_array();
    const ba_run *run = app->run;
    for (int w = 0; a && w < run->n_workers; w++) {
        const ba_wstats *ws = &run->stats[w];
        json_t *o =
            json_pack("{s:i, s:I, s:I, s:I}", "id", run->first_id + w, "contexts",
                      (json_int_t)atomic_load_explicit(&ws->contexts, memory_order_relaxed), "sse",
                      (json_int_t)atomic_load_explicit(&ws->sse, memory_order_relaxed), "requests",
                      (json_int_t)atomic_load_explicit(&ws->requests, memory_order_relaxed));
        if (!o || json_array_append_new(a, o) < 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static int handle_health(ba_conn *c)
{
    ba_app *app = c->app;
    json_t *ws = workers_json(app);
    json_t *j = ws ? json_pack("{s:s, s:s, s:{s:s, s:b}, s:{s:I, s:I}, s:i, s:o}", "status", "ok",
                               "version", HM_VERSION "-bench_app", "broker", "driver",
                               "InMemoryBroker", "connected", 1, "connections", "contexts",
                               (json_int_t)app->n_ctx, "sse", (json_int_t)app->sse_total, "worker",
                               app->run->first_id + app->worker, "workers", ws)
                   : NULL;
    char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    if (!s) return reply(c, 500, "Internal Server Error");
    const hm_http_header h[] = {{"Content-Type", "application/json"},
                                {"Cache-Control", "no-store"}};
    int rc = ba_respond(c, 200, h, HM_ARRAY_LEN(h), s, strlen(s), false);
    free(s); /* jansson's default allocator */
    return rc < 0 ? BA_DROP : BA_NEXT;
}

/* ---- routing ------------------------------------------------------------------------ */

/* RequestHandler::handleRequest() of v0.12.0, minus static files
 * (/datastar.js, /via.css answer 404 here), /_stats and the Dev Bar. */
int ba_via_handle(ba_conn *c)
{
    const hm_http_req_parser *r = &c->req;
    const char *path = r->path.ptr ? r->path.ptr : "";
    size_t plen = r->path.len;

    if (r->method == HTTP_HEAD) {
        /* handleHeadRequest(): a route answers 200 with no body, anything else 404. */
        if (route_match(c->app, path, plen)) {
            const hm_http_header h[] = {{"Content-Type", "text/html; charset=utf-8"}};
            return ba_respond(c, 200, h, 1, NULL, 0, true) < 0 ? BA_DROP : BA_NEXT;
        }
        return ba_respond(c, 404, NULL, 0, NULL, 0, true) < 0 ? BA_DROP : BA_NEXT;
    }
    if (ba_str_eq(path, plen, "/_sse")) return handle_sse(c);
    static const char act[] = "/_action/";
    if (plen > sizeof(act) - 1 && memcmp(path, act, sizeof(act) - 1) == 0) {
        if (r->method == HTTP_GET) {
            const hm_http_header h[] = {{"Allow", "POST"}};
            static const char body[] = "Method Not Allowed";
            return ba_respond(c, 405, h, 1, body, sizeof(body) - 1, false) < 0 ? BA_DROP : BA_NEXT;
        }
        return handle_action(c, path + sizeof(act) - 1, plen - (sizeof(act) - 1));
    }
    if (r->method == HTTP_POST && ba_str_eq(path, plen, "/_session/close"))
        return handle_session_close(c);
    if (r->method == HTTP_GET && ba_str_eq(path, plen, "/_health")) return handle_health(c);
    const ba_route_rt *rt = route_match(c->app, path, plen);
    if (rt) return handle_page(c, rt); /* any method but HEAD renders the page */
    return reply(c, 404, "Not Found");
}

/* ---- set-up and tear-down -------------------------------------------------------------- */

static int build_route(ba_route_rt *rt, const ba_route_def *def)
{
    rt->def = def;
    rt->path_len = strlen(def->path);
    if (rt->path_len == 0 || rt->path_len >= BA_ROUTE_MAX || def->n_signals > BA_MAX_SIGNALS)
        return -EINVAL;
    for (size_t i = 0; i < def->n_signals; i++) {
        if (strlen(def->signals[i].name) > 64) return -EINVAL;
        if (def->signals[i].type == BA_SIG_STR) rt->has_str = true;
    }
    if (!def->view && !def->render) return -EINVAL;

    /* SignalFactory's sanitising of "name_" + ctx id, minus the name and hex. */
    size_t k = 0;
    rt->wire_mid[k++] = '_';
    for (size_t i = 0; i < rt->path_len; i++) {
        unsigned char ch = (unsigned char)def->path[i];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                  (ch >= '0' && ch <= '9') || ch == '_';
        rt->wire_mid[k++] = ok ? (char)ch : '_';
    }
    rt->wire_mid[k++] = '_';
    rt->wire_mid[k++] = '_';
    rt->wire_mid[k] = '\0';
    rt->wire_mid_len = k;

    /* The meta tag's JSON is php-via's json_encode() output: jansson with
     * escaped slashes and ASCII only, compact. A placeholder stands for the
     * hex part, which needs no escaping, so each page just splices it in. */
    char id[BA_CTX_ID_MAX];
    snprintf(id, sizeof(id), "%s_/XXXXXXXXXXXXXXXX", def->path);
    json_t *j = json_pack("{s:s, s:b}", "via_ctx", id, "_disconnected", 0);
    char *js = j ? json_dumps(j, JSON_COMPACT | JSON_ESCAPE_SLASH | JSON_ENSURE_ASCII) : NULL;
    json_decref(j);
    if (!js) return -ENOMEM;
    static const char tail[] = "\",\"_disconnected\":false}";
    size_t jl = strlen(js);
    int rc = -EINVAL;
    if (jl > sizeof(tail) - 1 + BA_CTX_HEX && strcmp(js + jl - (sizeof(tail) - 1), tail) == 0) {
        size_t hex_at = jl - (sizeof(tail) - 1) - BA_CTX_HEX;
        rc = ba_buf_lit(&rt->page_a, SHELL_TOP);
        if (!rc) rc = ba_buf_append(&rt->page_a, js, hex_at);
        if (!rc) rc = ba_buf_lit(&rt->page_b, js + hex_at + BA_CTX_HEX);
        if (!rc) rc = ba_buf_lit(&rt->page_b, SHELL_AFTER_SIGNALS);
        if (!rc) rc = ba_buf_append(&rt->page_b, def->path, rt->path_len);
        if (!rc) rc = ba_buf_lit(&rt->page_b, "_/");
        if (!rc) rc = ba_buf_lit(&rt->page_c, SHELL_AFTER_BEACON);
        if (!def->render) { /* a static view: the whole page tail, and its sync event */
            if (!rc) rc = ba_buf_lit(&rt->page_c, def->view);
            if (!rc) rc = ba_buf_lit(&rt->page_c, SHELL_BOTTOM);
            if (!rc)
                rc = ba_elements_event_append(&rt->elements_event, NULL, def->view,
                                              strlen(def->view));
        }
    }
    free(js);
    return rc;
}

static void free_route(ba_route_rt *rt)
{
    ba_buf_free(&rt->page_a);
    ba_buf_free(&rt->page_b);
    ba_buf_free(&rt->page_c);
    ba_buf_free(&rt->elements_event);
}

int ba_via_init(ba_app *app)
{
    int rrc = ba_routes_init(app);
    if (rrc < 0) return rrc; /* ba_via_free() releases what was made */
    app->routes = hm_calloc(ba_n_routes, sizeof(*app->routes));
    if (!app->routes) return -ENOMEM;
    app->n_routes = ba_n_routes;
    for (size_t i = 0; i < ba_n_routes; i++) {
        int rc = build_route(&app->routes[i], &ba_routes[i]);
        if (rc < 0) return rc; /* ba_via_free() releases what was built */
    }
    return ba_contexts_init(app);
}

void ba_via_free(ba_app *app)
{
    ba_contexts_free(app);
    for (size_t i = 0; i < app->n_routes; i++)
        free_route(&app->routes[i]);
    hm_free(app->routes);
    app->routes = NULL;
    app->n_routes = 0;
    ba_routes_free(app);
}

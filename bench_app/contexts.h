/* contexts.h — php-via's per-worker state for bench_app (v0.12.0):
 * contexts and their map, the session each is bound to, TAB signals, patch
 * queues and the events that go into them, context cleanup. What
 * contexts.c offers handlers.c; routes.c sees only internal.h's signal
 * functions. Nothing outside bench_app/ may use it.
 *
 * Contexts: a page GET creates one (id "<route>_/<16 hex>") bound to the
 * request's session; it lives in a chained hash map until its cleanup runs.
 * As in php-via, cleanup is scheduled only when a context's last SSE stream
 * ends or on POST /_session/close; contexts of GETs that never open SSE stay
 * for the life of the run. A scheduled cleanup waits while a stream is open
 * or an action runs.
 *
 * Patch queues: one ring of 50 event buffers per context (php-via's
 * Channel(50)); a push to a full ring drops the oldest event. As in
 * OpenSwoole, a push hands the event straight to a stream waiting in
 * pop() (the first of them, which then waits again behind the others), so
 * events only accumulate in the ring while no stream waits: before the
 * first SSE connect, or while a stream's writer is blocked by a client
 * that does not read. An SSE connect replaces the context's queue; a
 * stream that waited in the old one is woken and, after php-via's poll
 * sleep, waits in the new one too, so two streams of one context take
 * turns with the patches, as in php-via. Slot buffers keep their capacity
 * and a stream swaps its own buffer with the slot it pops, so steady-state
 * actions and streams allocate nothing.
 *
 * Signals: TAB signals are ints or strings (ba_sig_type). Client values are
 * cast to the signal's type as PHP would ((int) / (string), php_compat.h)
 * and replace the server's without marking them changed; patches encode
 * them as php-via's json_encode() does (escaped slashes, \uXXXX for
 * non-ASCII).
 *
 * Ownership: everything here belongs to one worker's ba_app and is used
 * only on its thread. The app owns its contexts (ba_ctx_create; freed by
 * cleanup or ba_contexts_free); a context owns its session string, its
 * string signal buffers and its current queue; a stream holds no queue,
 * only its place in the waiters of the one it waits in (taken out before
 * that queue goes). A ba_ctx pointer stays valid until the context's cleanup,
 * which never runs while ctx->sse_count or ctx->busy is non-zero. The
 * worker's counts in app->ws are republished whenever they change. */
#ifndef BA_CONTEXTS_H
#define BA_CONTEXTS_H

#include "bench_app/internal.h"

#define BA_RELOAD_MARKS 100000 /* reload marks kept at most (php-via: no cap) */
#define BA_REVIVABLE_MAX 10000 /* Application::MAX_REVIVABLE */

#include <jansson.h>

/* Per-route data derived once from the route table (handlers.c builds it). */
struct ba_route_rt {
    const ba_route_def *def;
    size_t path_len;
    /* page = page_a + hex + page_b + hex + page_c */
    ba_buf page_a, page_b, page_c;
    /* "_" + sanitize(path) + "__": wire id = name + wire_mid + hex */
    char wire_mid[BA_ROUTE_MAX + 4];
    size_t wire_mid_len;
    ba_buf elements_event; /* the sync's datastar-patch-elements event (static views) */
    bool has_str;          /* some signal is a BA_SIG_STR */
};

typedef struct ba_stream ba_stream;

/* php-via's Channel(50) of one page context. */
typedef struct ba_queue {
    size_t head, len;
    uint64_t dropped;
    ba_stream *wait_head, *wait_tail; /* streams waiting in pop(), oldest first */
    ba_buf slot[BA_QUEUE_CAP];
} ba_queue;

/* One SSE stream of a context (handlers.c; on its connection coroutine's
 * stack for the stream's life). */
struct ba_stream {
    ba_conn *c;
    ba_ctx *ctx;
    ba_stream *wnext;     /* in waiting_on's waiters */
    ba_queue *waiting_on; /* the queue it waits in (pop), or NULL */
    bool woken_closed;    /* its queue was replaced while it waited (php-via's close()) */
    bool ended;           /* a delivery found the client gone (or out of memory) */
    ba_br *br;            /* --brotli: the stream's encoder, or NULL */
};

struct ba_ctx {
    ba_ctx *hnext;         /* hash chain */
    ba_ctx *pprev, *pnext; /* app->pending list */
    bool pending;
    int64_t cleanup_at;
    ba_app *app;
    const ba_route_rt *route;
    uint64_t hash;
    size_t id_len;
    char id[BA_CTX_ID_MAX];
    char hex[BA_CTX_HEX + 1];
    char *session; /* session_inline, or hm_alloc'd when longer */
    size_t session_len;
    char session_inline[BA_SESSION_HEX + 8];
    int64_t sig[BA_MAX_SIGNALS];
    ba_buf *str;      /* routes with string signals: one buffer per signal (BA_SIG_STR ones used) */
    uint32_t changed; /* bit i: signal i changed since it was last queued */
    bool connected_once; /* an SSE stream has synced it */
    int sse_count;
    int busy;        /* actions running (they may block): no cleanup meanwhile */
    ba_queue *queue; /* NULL until the first patch or stream */
};

_Static_assert(BA_MAX_SIGNALS < 32, "signal masks are uint32_t");

/* The mask with a bit for each of the route's TAB signals. */
static inline uint32_t ba_route_all_signals(const ba_route_rt *rt)
{
    return (1u << rt->def->n_signals) - 1;
}

/* ---- the context map -------------------------------------------------- */

/* Makes the app's (empty) context map. 0 or -ENOMEM. */
int ba_contexts_init(ba_app *app);
/* Frees every context and the map (the end of the run). */
void ba_contexts_free(ba_app *app);
/* The live context with this id, or NULL. */
ba_ctx *ba_ctx_lookup(ba_app *app, const char *id, size_t n);
/* A new context of route rt bound to the session (copied), with a fresh
 * random id and the route's initial signals, all marked changed; NULL when
 * out of memory or randomness. */
ba_ctx *ba_ctx_create(ba_app *app, const ba_route_rt *rt, const char *session, size_t slen);
/* Via::reviveContextFromClient(): a context the cleanup destroyed within
 * the revival window (revival_window_ms; cleanup takes the record, once)
 * comes back with the same id, route and session, fresh initial signals
 * (all marked changed) overwritten by the client's TAB values in signals,
 * when the requester's session is the context's. NULL otherwise (no
 * record, expired, another session, out of memory): the caller answers
 * with the reload script. A revival consumes the record. */
ba_ctx *ba_ctx_revive(ba_app *app, const char *id, size_t n, const char *session, size_t slen,
                      const json_t *signals);

/* SseHandler's $reloadedContextIds: context ids that were sent the reload
 * script in the last 5 minutes (bench_app keeps at most BA_RELOAD_MARKS,
 * dropping the oldest, and none longer than a context id of its own). */
bool ba_reload_sent(ba_app *app, const char *id, size_t n);
void ba_reload_mark(ba_app *app, const char *id, size_t n);
void ba_reload_forget(ba_app *app, const char *id, size_t n);
/* Application::scheduleContextCleanup(): cleanup_delay_ms from now,
 * replacing any earlier schedule. */
void ba_ctx_schedule_cleanup(ba_ctx *ctx);
/* Drops a scheduled cleanup (an SSE reconnect). */
void ba_ctx_cancel_cleanup(ba_ctx *ctx);
/* Publishes the worker's context and stream counts for /_health. */
void ba_publish_counts(ba_app *app);

/* Writes nbytes random bytes as 2 * nbytes lower-case hex digits and a NUL
 * to out. 0 or the negative errno getrandom() gave. */
int ba_random_hex(ba_app *app, char *out, size_t nbytes);

/* ---- patch queues ----------------------------------------------------- */

/* A context's queue, made on first use; NULL when out of memory. */
ba_queue *ba_ctx_queue(ba_ctx *ctx);
/* PatchManager::recreatePatchChannel(): the context gets a fresh, empty
 * queue. The old one's events are lost; streams waiting in it are woken
 * with woken_closed set (OpenSwoole's close() ends their pop()) and read
 * the new queue after php-via's poll sleep. NULL when out of memory (the
 * old queue stays). */
ba_queue *ba_ctx_queue_replace(ba_ctx *ctx);
/* The emptied slot the next event goes into; a full queue first drops its
 * oldest event (PatchManager::queuePatch()). ba_queue_push_commit() makes
 * it visible; without the commit the slot is simply reused. */
ba_buf *ba_queue_push_begin(ba_queue *q);
/* Channel::push(): a stream waiting in pop() takes the event at once (in
 * OpenSwoole the push resumes it, it writes the event and waits again,
 * all before push returns), so it never sits in the queue; with no stream
 * waiting it stays queued. */
void ba_queue_push_commit(ba_queue *q);
/* Pops the oldest event by swapping its buffer with *mine; false when empty. */
bool ba_queue_pop_swap(ba_queue *q, ba_buf *mine);
/* Puts a stream at the end of q's waiters (Channel::pop() with nothing
 * there) / takes it out of the queue it waits in, if any. */
void ba_queue_wait(ba_queue *q, ba_stream *st);
void ba_queue_unwait(ba_stream *st);

/* What a queue hands a waiting stream (handlers.c): appends the event to
 * the stream's output and wakes its coroutine. Returns true when the
 * stream waits again at once (its writer is not blocked), false when it
 * does not (output over its limit, client gone, stream ended). */
bool ba_stream_deliver(ba_stream *st, const char *ev, size_t n);
/* Wakes a stream's coroutine (its queue was replaced). */
void ba_stream_wake(ba_stream *st);

/* ---- events and signals ----------------------------------------------- */

/* Queues one datastar-patch-signals event holding the signals in mask
 * (php-via's syncSignals() with its changed set) and marks them synced; an
 * empty set queues nothing. 0 or -ENOMEM. */
int ba_queue_signals(ba_ctx *ctx, uint32_t mask);
/* Appends datastar-php's patchElements() event to b: event line, optional
 * selector, the HTML trimmed (PHP trim()) and split on \n, one data line
 * per line. 0 or -ENOMEM. */
int ba_elements_event_append(ba_buf *b, const char *selector, const char *html, size_t n);
/* SignalFactory::injectSignals(): the TAB values in the client's signals
 * (root, an object; anything else is ignored) replace ctx's without marking
 * them changed, cast to each signal's type. A non-empty object never
 * reaches a TAB signal (php-via's nestedToFlat() flattens it away). */
void ba_inject_signals(ba_ctx *ctx, const json_t *root);

#endif

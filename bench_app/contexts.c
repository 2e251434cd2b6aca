/* contexts.c — php-via's per-worker state for bench_app: random ids, patch
 * queues, TAB signals and the events that carry them, the context map,
 * sessions bound to contexts, and context cleanup (see contexts.h). Each
 * behaviour names the php-via source it follows; see
 * docs/php-via.md. */
#include "bench_app/contexts.h"
#include "bench_app/php_compat.h"

#include <inttypes.h>
#include <stdio.h>
#include <sys/random.h>

/* ---- random ids ----------------------------------------------------------- */

int ba_random_hex(ba_app *app, char *out, size_t nbytes)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < nbytes; i++) {
        if (app->rnd_pos == sizeof(app->rnd)) {
            size_t got = 0;
            while (got < sizeof(app->rnd)) {
                ssize_t k = getrandom(app->rnd + got, sizeof(app->rnd) - got, 0);
                if (k < 0 && errno == EINTR) continue;
                if (k < 0) return -errno;
                got += (size_t)k;
            }
            app->rnd_pos = 0;
        }
        uint8_t b = app->rnd[app->rnd_pos++];
        out[2 * i] = digits[b >> 4];
        out[2 * i + 1] = digits[b & 15];
    }
    out[2 * nbytes] = '\0';
    return 0;
}

/* ---- patch queues ----------------------------------------------------------- */

static void queue_free(ba_queue *q)
{
    if (!q) return;
    for (size_t i = 0; i < BA_QUEUE_CAP; i++)
        ba_buf_free(&q->slot[i]);
    hm_free(q);
}

ba_queue *ba_ctx_queue(ba_ctx *ctx)
{
    if (!ctx->queue) ctx->queue = hm_calloc(1, sizeof(*ctx->queue));
    return ctx->queue;
}

ba_queue *ba_ctx_queue_replace(ba_ctx *ctx)
{
    ba_queue *q = hm_calloc(1, sizeof(*q));
    if (!q) return NULL;
    ba_queue *old = ctx->queue;
    ctx->queue = q;
    if (old) {
        while (old->wait_head) {
            ba_stream *st = old->wait_head;
            ba_queue_unwait(st);
            st->woken_closed = true;
            ba_stream_wake(st);
        }
        queue_free(old);
    }
    return q;
}

ba_buf *ba_queue_push_begin(ba_queue *q)
{
    if (q->len == BA_QUEUE_CAP) {
        q->head = (q->head + 1) % BA_QUEUE_CAP;
        q->len--;
        q->dropped++;
    }
    ba_buf *b = &q->slot[(q->head + q->len) % BA_QUEUE_CAP];
    b->len = 0;
    return b;
}

void ba_queue_wait(ba_queue *q, ba_stream *st)
{
    if (st->waiting_on) return;
    st->waiting_on = q;
    st->wnext = NULL;
    if (q->wait_tail)
        q->wait_tail->wnext = st;
    else
        q->wait_head = st;
    q->wait_tail = st;
}

void ba_queue_unwait(ba_stream *st)
{
    ba_queue *q = st->waiting_on;
    if (!q) return;
    ba_stream **pp = &q->wait_head;
    ba_stream *prev = NULL;
    while (*pp && *pp != st) {
        prev = *pp;
        pp = &(*pp)->wnext;
    }
    if (*pp) *pp = st->wnext;
    if (q->wait_tail == st) q->wait_tail = prev;
    st->waiting_on = NULL;
    st->wnext = NULL;
}

void ba_queue_push_commit(ba_queue *q)
{
    q->len++;
    /* The event goes to the stream that has waited longest, which (unless
     * its writer is now blocked or its client gone) waits again behind the
     * others; pushed while nobody waits, it stays queued. */
    while (q->len && q->wait_head) {
        ba_stream *st = q->wait_head;
        ba_queue_unwait(st);
        ba_buf *ev = &q->slot[q->head];
        q->head = (q->head + 1) % BA_QUEUE_CAP;
        q->len--;
        if (ba_stream_deliver(st, ev->data, ev->len)) ba_queue_wait(q, st);
    }
}

bool ba_queue_pop_swap(ba_queue *q, ba_buf *mine)
{
    if (!q->len) return false;
    ba_buf *s = &q->slot[q->head];
    ba_buf t = *s;
    *s = *mine;
    *mine = t;
    q->head = (q->head + 1) % BA_QUEUE_CAP;
    q->len--;
    return true;
}

/* ---- signals ----------------------------------------------------------------- */

int64_t ba_signal_get(const ba_ctx *ctx, size_t idx)
{
    return ctx->sig[idx];
}

void ba_signal_set(ba_ctx *ctx, size_t idx, int64_t v)
{
    ctx->sig[idx] = v;
    ctx->changed |= 1u << idx; /* setValue() marks changed even when equal */
}

const char *ba_signal_str(const ba_ctx *ctx, size_t idx, size_t *len)
{
    const ba_buf *b = ctx->str ? &ctx->str[idx] : NULL;
    *len = b && b->data ? b->len : 0;
    return b && b->data ? b->data : "";
}

/* Stores a string value without marking it changed; the buffer keeps its
 * capacity, so only a longer value than ever before allocates. On -ENOMEM
 * the old value stays. */
static int str_store(ba_ctx *ctx, size_t idx, const char *s, size_t n)
{
    if (!ctx->str) return -EINVAL;
    ba_buf *b = &ctx->str[idx];
    size_t old = b->len;
    b->len = 0;
    int rc = ba_buf_reserve(b, n);
    if (rc) {
        b->len = old;
        return rc;
    }
    if (n) memcpy(b->data, s, n);
    b->len = n;
    b->data[n] = '\0';
    return 0;
}

int ba_signal_set_str(ba_ctx *ctx, size_t idx, const char *s, size_t n)
{
    int rc = str_store(ctx, idx, s, n);
    if (rc == 0) ctx->changed |= 1u << idx;
    return rc;
}

size_t ba_signal_wire_id(const ba_ctx *ctx, size_t idx, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%s%s%s", ctx->route->def->signals[idx].name, ctx->route->wire_mid,
                     ctx->hex);
    return n < 0 ? 0 : (size_t)n >= cap ? cap - 1 : (size_t)n;
}

ba_app *ba_ctx_app(const ba_ctx *ctx)
{
    return ctx->app;
}

int ba_queue_signals(ba_ctx *ctx, uint32_t mask)
{
    const ba_route_def *def = ctx->route->def;
    mask &= ba_route_all_signals(ctx->route);
    if (!mask) return 0;
    ba_queue *q = ba_ctx_queue(ctx);
    if (!q) return -ENOMEM;
    ba_buf *b = ba_queue_push_begin(q);
    int rc = ba_buf_lit(b, "event: datastar-patch-signals\ndata: signals {");
    bool first = true;
    for (size_t i = 0; i < def->n_signals && rc == 0; i++) {
        if (!(mask & (1u << i))) continue;
        /* Wire ids are [A-Za-z0-9_] only, so no JSON escaping is needed. */
        char id[160];
        size_t il = ba_signal_wire_id(ctx, i, id, sizeof(id));
        if (!first) rc = ba_buf_lit(b, ",");
        if (!rc) rc = ba_buf_lit(b, "\"");
        if (!rc) rc = ba_buf_append(b, id, il);
        if (!rc) rc = ba_buf_lit(b, "\":");
        if (rc) break;
        if (def->signals[i].type == BA_SIG_STR) {
            size_t sl;
            const char *sv = ba_signal_str(ctx, i, &sl);
            rc = ba_php_json_string_append(b, sv, sl);
        } else {
            char num[24];
            int k = snprintf(num, sizeof(num), "%" PRId64, ctx->sig[i]);
            rc = ba_buf_append(b, num, (size_t)k);
        }
        first = false;
    }
    if (rc == 0) rc = ba_buf_lit(b, "}\n\n");
    if (rc < 0) return rc;
    ba_queue_push_commit(q);
    ctx->changed &= ~mask;
    return 0;
}

int ba_elements_event_append(ba_buf *b, const char *selector, const char *html, size_t n)
{
    ba_php_trim(&html, &n);
    int rc = ba_buf_reserve(b, n + 64); /* most of it, at once */
    if (!rc) rc = ba_buf_lit(b, "event: datastar-patch-elements\n");
    if (!rc && selector) {
        rc = ba_buf_lit(b, "data: selector ");
        if (!rc) rc = ba_buf_lit(b, selector);
        if (!rc) rc = ba_buf_lit(b, "\n");
    }
    while (rc == 0) {
        const char *nl = memchr(html, '\n', n);
        size_t line = nl ? (size_t)(nl - html) : n;
        rc = ba_buf_lit(b, "data: elements ");
        if (!rc) rc = ba_buf_append(b, html, line);
        if (!rc) rc = ba_buf_lit(b, "\n");
        if (!nl) break;
        html += line + 1;
        n -= line + 1;
    }
    return rc ? rc : ba_buf_lit(b, "\n");
}

int ba_patch_elements(ba_ctx *ctx, const char *selector, const char *html, size_t n)
{
    ba_queue *q = ba_ctx_queue(ctx);
    if (!q) return -ENOMEM;
    ba_buf *b = ba_queue_push_begin(q);
    int rc = ba_elements_event_append(b, selector, html, n);
    if (rc < 0) return rc;
    ba_queue_push_commit(q);
    return 0;
}

int ba_sync_signals(ba_ctx *ctx)
{
    return ba_queue_signals(ctx, ctx->changed);
}

void ba_inject_signals(ba_ctx *ctx, const json_t *root)
{
    if (!json_is_object(root)) return;
    const ba_route_def *def = ctx->route->def;
    for (size_t i = 0; i < def->n_signals; i++) {
        char id[160];
        ba_signal_wire_id(ctx, i, id, sizeof(id));
        const json_t *v = json_object_get(root, id);
        if (!v || (json_is_object(v) && json_object_size(v) > 0)) continue; /* nestedToFlat() */
        if (def->signals[i].type == BA_SIG_STR) {
            char num[BA_PHP_FLOAT_STR_MAX];
            const char *str;
            size_t n = ba_php_string_of_json(v, num, &str);
            str_store(ctx, i, str, n); /* -ENOMEM keeps the old value */
        } else {
            ctx->sig[i] = ba_php_int_of_json(v);
        }
    }
}

/* ---- the context map ---------------------------------------------------------- */

static uint64_t hash_id(const char *s, size_t n)
{
    uint64_t h = 14695981039346656037ULL; /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        h ^= (uint8_t)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

ba_ctx *ba_ctx_lookup(ba_app *app, const char *id, size_t n)
{
    if (n == 0 || n >= BA_CTX_ID_MAX || !app->n_buckets) return NULL;
    uint64_t h = hash_id(id, n);
    for (ba_ctx *x = app->buckets[h & (app->n_buckets - 1)]; x; x = x->hnext)
        if (x->hash == h && x->id_len == n && memcmp(x->id, id, n) == 0) return x;
    return NULL;
}

static int map_grow(ba_app *app)
{
    size_t nb = app->n_buckets ? app->n_buckets * 2 : 1024;
    ba_ctx **b = hm_calloc(nb, sizeof(*b));
    if (!b) return -ENOMEM;
    for (size_t i = 0; i < app->n_buckets; i++) {
        ba_ctx *x = app->buckets[i];
        while (x) {
            ba_ctx *next = x->hnext;
            size_t j = x->hash & (nb - 1);
            x->hnext = b[j];
            b[j] = x;
            x = next;
        }
    }
    hm_free(app->buckets);
    app->buckets = b;
    app->n_buckets = nb;
    return 0;
}

void ba_publish_counts(ba_app *app)
{
    atomic_store_explicit(&app->ws->contexts, (int64_t)app->n_ctx, memory_order_relaxed);
    atomic_store_explicit(&app->ws->sse, app->sse_total, memory_order_relaxed);
}

void ba_ctx_cancel_cleanup(ba_ctx *ctx)
{
    if (!ctx->pending) return;
    if (ctx->pprev)
        ctx->pprev->pnext = ctx->pnext;
    else
        ctx->app->pending = ctx->pnext;
    if (ctx->pnext) ctx->pnext->pprev = ctx->pprev;
    ctx->pprev = ctx->pnext = NULL;
    ctx->pending = false;
}

void ba_ctx_schedule_cleanup(ba_ctx *ctx)
{
    ba_app *app = ctx->app;
    ctx->cleanup_at = hm_now_ns() + app->cleanup_ns;
    if (ctx->pending) return;
    ctx->pending = true;
    ctx->pprev = NULL;
    ctx->pnext = app->pending;
    if (app->pending) app->pending->pprev = ctx;
    app->pending = ctx;
}

static void ctx_free(ba_ctx *ctx)
{
    queue_free(ctx->queue); /* no stream waits in it: none is left */
    if (ctx->str) {
        for (size_t i = 0; i < ctx->route->def->n_signals; i++)
            ba_buf_free(&ctx->str[i]);
        hm_free(ctx->str);
    }
    if (ctx->session != ctx->session_inline) hm_free(ctx->session);
    hm_free(ctx);
}

/* ---- contexts that went: revival records and reload marks ---------------- */

/* A context id remembered after its context went: php-via's revival record
 * (route and session set) or a reload mark of SseHandler's. */
typedef struct ba_gone {
    struct ba_gone *hnext; /* hash chain */
    hm_dlink age;          /* in age order (= expiry order: one TTL per set) */
    uint64_t hash;
    int64_t expires; /* hm_now_ns() */
    const ba_route_rt *route;
    char *session; /* revival records: hm_alloc'd; NULL in reload marks */
    size_t session_len;
    size_t id_len;
    char id[BA_CTX_ID_MAX];
} ba_gone;

struct ba_gone_set {
    ba_gone **buckets;
    size_t n_buckets, n, max;
    hm_dlist by_age; /* oldest first */
    int64_t ttl_ns;
};

/* The oldest record, or NULL. */
static ba_gone *gone_oldest(const ba_gone_set *g)
{
    return g->by_age.head ? HM_CONTAINER_OF(g->by_age.head, ba_gone, age) : NULL;
}

static int gone_set_init(ba_gone_set **out, size_t max, int64_t ttl_ns)
{
    ba_gone_set *g = hm_calloc(1, sizeof(*g));
    if (!g) return -ENOMEM;
    g->n_buckets = 256;
    g->buckets = hm_calloc(g->n_buckets, sizeof(*g->buckets));
    if (!g->buckets) {
        hm_free(g);
        return -ENOMEM;
    }
    g->max = max;
    g->ttl_ns = ttl_ns;
    *out = g;
    return 0;
}

static void gone_remove(ba_gone_set *g, ba_gone *x)
{
    ba_gone **pp = &g->buckets[x->hash & (g->n_buckets - 1)];
    while (*pp != x)
        pp = &(*pp)->hnext;
    *pp = x->hnext;
    hm_dlist_remove(&g->by_age, &x->age);
    g->n--;
    hm_free(x->session);
    hm_free(x);
}

static void gone_expire(ba_gone_set *g, int64_t now)
{
    ba_gone *x;
    while ((x = gone_oldest(g)) && x->expires <= now)
        gone_remove(g, x);
}

static void gone_set_free(ba_gone_set *g)
{
    if (!g) return;
    while (!hm_dlist_empty(&g->by_age))
        gone_remove(g, gone_oldest(g));
    hm_free(g->buckets);
    hm_free(g);
}

/* The unexpired record of id, or NULL. */
static ba_gone *gone_find(ba_gone_set *g, const char *id, size_t n)
{
    if (!g || n == 0 || n >= BA_CTX_ID_MAX) return NULL;
    gone_expire(g, hm_now_ns());
    uint64_t h = hash_id(id, n);
    for (ba_gone *x = g->buckets[h & (g->n_buckets - 1)]; x; x = x->hnext)
        if (x->hash == h && x->id_len == n && memcmp(x->id, id, n) == 0) return x;
    return NULL;
}

/* A fresh record of id (replacing one there was), the newest; the oldest
 * go past the set's cap. NULL when the id is too long to be ours or out of
 * memory: then nothing is remembered. */
static ba_gone *gone_add(ba_gone_set *g, const char *id, size_t n)
{
    if (!g || n == 0 || n >= BA_CTX_ID_MAX) return NULL;
    ba_gone *old = gone_find(g, id, n);
    if (old) gone_remove(g, old);
    while (g->n >= g->max && !hm_dlist_empty(&g->by_age))
        gone_remove(g, gone_oldest(g));
    if (g->n >= g->n_buckets) { /* keep chains short: double the buckets */
        size_t nb = g->n_buckets * 2;
        ba_gone **b = hm_calloc(nb, sizeof(*b));
        if (b) {
            for (size_t i = 0; i < g->n_buckets; i++) {
                for (ba_gone *x = g->buckets[i], *next; x; x = next) {
                    next = x->hnext;
                    x->hnext = b[x->hash & (nb - 1)];
                    b[x->hash & (nb - 1)] = x;
                }
            }
            hm_free(g->buckets);
            g->buckets = b;
            g->n_buckets = nb;
        }
    }
    ba_gone *x = hm_calloc(1, sizeof(*x));
    if (!x) return NULL;
    memcpy(x->id, id, n);
    x->id_len = n;
    x->hash = hash_id(id, n);
    x->expires = hm_now_ns() + g->ttl_ns;
    size_t j = x->hash & (g->n_buckets - 1);
    x->hnext = g->buckets[j];
    g->buckets[j] = x;
    hm_dlist_push(&g->by_age, &x->age);
    g->n++;
    return x;
}

bool ba_reload_sent(ba_app *app, const char *id, size_t n)
{
    return gone_find(app->reloaded, id, n) != NULL;
}

void ba_reload_mark(ba_app *app, const char *id, size_t n)
{
    gone_add(app->reloaded, id, n);
}

void ba_reload_forget(ba_app *app, const char *id, size_t n)
{
    ba_gone *x = gone_find(app->reloaded, id, n);
    if (x) gone_remove(app->reloaded, x);
}

/* Application::recordRevivable(): taken when the cleanup destroys a
 * context (only then), for the revival window. */
static void record_revivable(ba_ctx *ctx)
{
    ba_gone *x = gone_add(ctx->app->revivable, ctx->id, ctx->id_len);
    if (!x) return;
    x->session = hm_alloc(ctx->session_len + 1);
    if (!x->session) {
        gone_remove(ctx->app->revivable, x);
        return;
    }
    memcpy(x->session, ctx->session, ctx->session_len + 1);
    x->session_len = ctx->session_len;
    x->route = ctx->route;
}

static void ctx_destroy(ba_ctx *ctx)
{
    ba_app *app = ctx->app;
    record_revivable(ctx);
    ba_ctx_cancel_cleanup(ctx);
    ba_ctx **pp = &app->buckets[ctx->hash & (app->n_buckets - 1)];
    while (*pp != ctx)
        pp = &(*pp)->hnext;
    *pp = ctx->hnext;
    app->n_ctx--;
    ba_publish_counts(app);
    ctx_free(ctx);
}

/* A context of route rt bound to the session, with the given hex (NULL: a
 * fresh random one that no live context has), the route's initial signals,
 * all marked changed, in the map. NULL when out of memory or randomness. */
static ba_ctx *ctx_make(ba_app *app, const ba_route_rt *rt, const char *hex, const char *session,
                        size_t slen)
{
    if (app->n_ctx >= app->n_buckets && map_grow(app) < 0) return NULL;
    ba_ctx *ctx = hm_calloc(1, sizeof(*ctx));
    if (!ctx) return NULL;
    ctx->app = app;
    ctx->route = rt;
    if (slen < sizeof(ctx->session_inline)) {
        ctx->session = ctx->session_inline;
    } else if (!(ctx->session = hm_alloc(slen + 1))) {
        hm_free(ctx);
        return NULL;
    }
    memcpy(ctx->session, session, slen);
    ctx->session[slen] = '\0';
    ctx->session_len = slen;
    for (;;) { /* a collision of 64 random bits is all but impossible; still */
        if (hex)
            memcpy(ctx->hex, hex, BA_CTX_HEX + 1);
        else if (ba_random_hex(app, ctx->hex, BA_CTX_HEX / 2) < 0) {
            ctx_free(ctx);
            return NULL;
        }
        memcpy(ctx->id, rt->def->path, rt->path_len);
        memcpy(ctx->id + rt->path_len, "_/", 2);
        memcpy(ctx->id + rt->path_len + 2, ctx->hex, BA_CTX_HEX);
        ctx->id_len = rt->path_len + 2 + BA_CTX_HEX;
        ctx->id[ctx->id_len] = '\0';
        if (hex || !ba_ctx_lookup(app, ctx->id, ctx->id_len)) break;
    }
    ctx->hash = hash_id(ctx->id, ctx->id_len);
    if (rt->has_str && !(ctx->str = hm_calloc(rt->def->n_signals, sizeof(*ctx->str)))) {
        ctx_free(ctx);
        return NULL;
    }
    for (size_t i = 0; i < rt->def->n_signals; i++) {
        const ba_signal_def *sd = &rt->def->signals[i];
        ctx->sig[i] = sd->initial;
        if (sd->type == BA_SIG_STR) {
            const char *init = sd->initial_str ? sd->initial_str : "";
            if (str_store(ctx, i, init, strlen(init)) < 0) {
                ctx_free(ctx);
                return NULL;
            }
        }
    }
    ctx->changed = ba_route_all_signals(rt); /* a new Signal starts changed */
    size_t j = ctx->hash & (app->n_buckets - 1);
    ctx->hnext = app->buckets[j];
    app->buckets[j] = ctx;
    app->n_ctx++;
    ba_publish_counts(app);
    return ctx;
}

ba_ctx *ba_ctx_create(ba_app *app, const ba_route_rt *rt, const char *session, size_t slen)
{
    return ctx_make(app, rt, NULL, session, slen);
}

ba_ctx *ba_ctx_revive(ba_app *app, const char *id, size_t n, const char *session, size_t slen,
                      const json_t *signals)
{
    ba_gone *x = gone_find(app->revivable, id, n);
    if (!x || !x->session) return NULL;
    if (x->session_len != slen || memcmp(x->session, session, slen) != 0) return NULL;
    /* The record's id is "<route>_/<16 hex>" (it was ours). */
    ba_ctx *ctx = ctx_make(app, x->route, x->id + x->id_len - BA_CTX_HEX, session, slen);
    if (!ctx) return NULL;
    ba_inject_signals(ctx, signals);
    gone_remove(app->revivable, x);
    return ctx;
}

int ba_contexts_init(ba_app *app)
{
    int rc = map_grow(app);
    /* SseHandler forgets a reload mark after 5 minutes; php-via keeps every
     * mark that long, bench_app at most BA_RELOAD_MARKS of them. */
    if (rc == 0) rc = gone_set_init(&app->reloaded, BA_RELOAD_MARKS, 300 * 1000000000LL);
    /* Application::MAX_REVIVABLE records, each for the revival window. */
    if (rc == 0 && app->opt.revival_window_ms > 0)
        rc = gone_set_init(&app->revivable, BA_REVIVABLE_MAX,
                           app->opt.revival_window_ms * 1000000LL);
    return rc;
}

void ba_contexts_free(ba_app *app)
{
    for (size_t i = 0; i < app->n_buckets; i++) {
        ba_ctx *x = app->buckets[i];
        while (x) {
            ba_ctx *next = x->hnext;
            ctx_free(x);
            x = next;
        }
    }
    hm_free(app->buckets);
    app->buckets = NULL;
    app->n_buckets = app->n_ctx = 0;
    app->pending = NULL;
    gone_set_free(app->reloaded);
    gone_set_free(app->revivable);
    app->reloaded = app->revivable = NULL;
}

void ba_via_tick(ba_app *app, int64_t now)
{
    if (app->reloaded) gone_expire(app->reloaded, now);
    if (app->revivable) gone_expire(app->revivable, now);
    ba_ctx *ctx = app->pending;
    while (ctx) {
        ba_ctx *next = ctx->pnext;
        if (now >= ctx->cleanup_at) {
            /* The active-SSE guard: reschedule while a stream is open. */
            if (ctx->sse_count > 0 || ctx->busy > 0)
                ctx->cleanup_at = now + app->cleanup_ns;
            else
                ctx_destroy(ctx);
        }
        ctx = next;
    }
}

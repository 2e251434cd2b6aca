/* contexts.c — php-via's per-worker state for bench_app: random ids, patch
 * queues, TAB signals and the events that carry them, the context map,
 * sessions bound to contexts, and context cleanup (see contexts.h). Each
 * behaviour names the php-via source it follows; see
 * /work/shared/docs/php-via-protocol.md. */
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

ba_queue *ba_queue_new(ba_app *app)
{
    ba_queue *q = hm_calloc(1, sizeof(*q));
    if (!q) return NULL;
    q->refs = 1;
    if (app->poll_ns == 0 && hm_chan_create(&q->bell, 1) < 0) {
        hm_free(q);
        return NULL;
    }
    return q;
}

void ba_queue_unref(ba_queue *q)
{
    if (!q || --q->refs > 0) return;
    for (size_t i = 0; i < BA_QUEUE_CAP; i++)
        ba_buf_free(&q->slot[i]);
    hm_chan_destroy(q->bell); /* no waiter: a waiting stream holds a reference */
    hm_free(q);
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

void ba_queue_push_commit(ba_queue *q)
{
    q->len++;
    if (q->bell) hm_chan_try_push(q->bell, q); /* -EAGAIN: already rung */
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

static ba_queue *ctx_queue(ba_ctx *ctx)
{
    if (!ctx->queue) ctx->queue = ba_queue_new(ctx->app);
    return ctx->queue;
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
    ba_queue *q = ctx_queue(ctx);
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
    ba_queue *q = ctx_queue(ctx);
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
    ba_queue_unref(ctx->queue);
    if (ctx->str) {
        for (size_t i = 0; i < ctx->route->def->n_signals; i++)
            ba_buf_free(&ctx->str[i]);
        hm_free(ctx->str);
    }
    if (ctx->session != ctx->session_inline) hm_free(ctx->session);
    hm_free(ctx);
}

int ba_contexts_init(ba_app *app)
{
    return map_grow(app);
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
}

static void ctx_destroy(ba_ctx *ctx)
{
    ba_app *app = ctx->app;
    ba_ctx_cancel_cleanup(ctx);
    ba_ctx **pp = &app->buckets[ctx->hash & (app->n_buckets - 1)];
    while (*pp != ctx)
        pp = &(*pp)->hnext;
    *pp = ctx->hnext;
    app->n_ctx--;
    ba_publish_counts(app);
    ctx_free(ctx);
}

ba_ctx *ba_ctx_create(ba_app *app, const ba_route_rt *rt, const char *session, size_t slen)
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
        if (ba_random_hex(app, ctx->hex, BA_CTX_HEX / 2) < 0) {
            ctx_free(ctx);
            return NULL;
        }
        memcpy(ctx->id, rt->def->path, rt->path_len);
        memcpy(ctx->id + rt->path_len, "_/", 2);
        memcpy(ctx->id + rt->path_len + 2, ctx->hex, BA_CTX_HEX);
        ctx->id_len = rt->path_len + 2 + BA_CTX_HEX;
        ctx->id[ctx->id_len] = '\0';
        if (!ba_ctx_lookup(app, ctx->id, ctx->id_len)) break;
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

void ba_via_tick(ba_app *app, int64_t now)
{
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

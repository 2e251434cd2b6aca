/* Channels, wait groups and events between the coroutines of one loop,
 * and latches across threads. Waiters are records on the waiting
 * coroutine's stack, linked into the object's queue; a deadline or a
 * cancel unlinks them, so nothing here allocates per wait. */
#include "engine/internal.h"

#include <sched.h>

typedef struct waiter {
    hm__op op;
    hm_dlink link;
    struct waitq *queue;
    void *item;
} waiter;

typedef struct waitq {
    hm_dlist waiters;
} waitq;

static void waitq_push(waitq *q, waiter *w)
{
    w->queue = q;
    hm_dlist_push(&q->waiters, &w->link);
}

static void waitq_remove(waiter *w)
{
    waitq *q = w->queue;
    if (!q) return;
    hm_dlist_remove(&q->waiters, &w->link);
    w->queue = NULL;
}

static waiter *waitq_pop(waitq *q)
{
    if (hm_dlist_empty(&q->waiters)) return NULL;
    waiter *w = HM_CONTAINER_OF(q->waiters.head, waiter, link);
    waitq_remove(w);
    return w;
}

static void waiter_cancel(hm_loop *loop, hm__op *op)
{
    waiter *w = HM_CONTAINER_OF(op, waiter, op);
    waitq_remove(w);
    hm__op_complete(loop, op, op->cancel_reason);
}

static int wait_on_as(waitq *q, waiter *w, int64_t deadline, bool soft)
{
    hm_loop *loop = hm_loop_current();
    if (!loop || !loop->current) return -EPERM; /* only coroutines can block */
    if (hm__take_cancel(loop)) return -ECANCELED;
    if (HM_UNLIKELY(loop->aborted)) {
        hm_coro_yield();
        return -ECANCELED;
    }
    w->op = (hm__op){.cancel = waiter_cancel, .soft = soft};
    waitq_push(q, w);
    return (int)hm__op_wait(loop, &w->op, deadline);
}

static int wait_on(waitq *q, waiter *w, int64_t deadline)
{
    return wait_on_as(q, w, deadline, true);
}

static void wake(waiter *w, int res)
{
    hm__op_complete(w->op.co->loop, &w->op, res);
}

/* ---- channels ----------------------------------------------------------- */

struct hm_chan {
    void **buf;
    size_t cap, head, len;
    bool closed;
    waitq pushers, poppers;
};

int hm_chan_create(hm_chan **out, size_t capacity)
{
    if (capacity == 0) return -EINVAL;
    hm_chan *ch = hm_calloc(1, sizeof(*ch));
    if (!ch) return -ENOMEM;
    ch->buf = hm_calloc(capacity, sizeof(void *));
    if (!ch->buf) {
        hm_free(ch);
        return -ENOMEM;
    }
    ch->cap = capacity;
    *out = ch;
    return 0;
}

int hm_chan_try_push(hm_chan *ch, void *item)
{
    if (ch->closed) return -EPIPE;
    waiter *w = waitq_pop(&ch->poppers);
    if (w) { /* a popper waits, so the buffer is empty: hand over directly */
        w->item = item;
        wake(w, 0);
        return 0;
    }
    if (ch->len == ch->cap) return -EAGAIN;
    ch->buf[(ch->head + ch->len) % ch->cap] = item;
    ch->len++;
    return 0;
}

int hm_chan_push(hm_chan *ch, void *item, int64_t deadline)
{
    int rc = hm_chan_try_push(ch, item);
    if (rc != -EAGAIN) return rc;
    waiter w = {.item = item};
    return wait_on(&ch->pushers, &w, deadline);
}

int hm_chan_try_pop(hm_chan *ch, void **item)
{
    if (ch->len == 0) return ch->closed ? -EPIPE : -EAGAIN;
    *item = ch->buf[ch->head];
    ch->head = (ch->head + 1) % ch->cap;
    ch->len--;
    /* A slot opened: move the oldest blocked pusher's item in. */
    waiter *w = waitq_pop(&ch->pushers);
    if (w) {
        ch->buf[(ch->head + ch->len) % ch->cap] = w->item;
        ch->len++;
        wake(w, 0);
    }
    return 0;
}

int hm_chan_pop(hm_chan *ch, void **item, int64_t deadline)
{
    int rc = hm_chan_try_pop(ch, item);
    if (rc != -EAGAIN) return rc;
    waiter w = {0};
    rc = wait_on(&ch->poppers, &w, deadline);
    if (rc == 0) *item = w.item;
    return rc;
}

size_t hm_chan_len(const hm_chan *ch)
{
    return ch->len;
}

void hm_chan_close(hm_chan *ch)
{
    if (ch->closed) return;
    ch->closed = true;
    waiter *w;
    while ((w = waitq_pop(&ch->poppers)))
        wake(w, -EPIPE);
    while ((w = waitq_pop(&ch->pushers)))
        wake(w, -EPIPE);
}

void hm_chan_destroy(hm_chan *ch)
{
    if (!ch) return;
    hm_free(ch->buf);
    hm_free(ch);
}

/* ---- wait groups -------------------------------------------------------- */

_Static_assert(sizeof(((hm_waitgroup *)0)->waitq_) == sizeof(waitq), "waitq layout");
#define WG_QUEUE(wg) ((waitq *)(void *)(wg)->waitq_)

void hm_wg_init(hm_waitgroup *wg)
{
    wg->count = 0;
    wg->waitq_[0] = wg->waitq_[1] = NULL;
}

void hm_wg_add(hm_waitgroup *wg, int64_t n)
{
    wg->count += n;
}

void hm_wg_done(hm_waitgroup *wg)
{
    if (--wg->count > 0) return;
    waiter *w;
    while ((w = waitq_pop(WG_QUEUE(wg))))
        wake(w, 0);
}

int hm_wg_wait(hm_waitgroup *wg, int64_t deadline)
{
    if (wg->count <= 0) return 0;
    waiter w = {0};
    return wait_on(WG_QUEUE(wg), &w, deadline);
}

/* ---- events --------------------------------------------------------------- */

_Static_assert(sizeof(((hm_event *)0)->waitq_) == sizeof(waitq), "waitq layout");
#define EV_QUEUE(ev) ((waitq *)(void *)(ev)->waitq_)

void hm_event_init(hm_event *ev)
{
    ev->waitq_[0] = ev->waitq_[1] = NULL;
}

int hm_event_wait(hm_event *ev, int64_t deadline)
{
    waiter w = {0};
    return wait_on(EV_QUEUE(ev), &w, deadline);
}

int hm_event_wait_io(hm_event *ev, int64_t deadline)
{
    waiter w = {0};
    return wait_on_as(EV_QUEUE(ev), &w, deadline, false);
}

void hm_event_notify(hm_event *ev)
{
    waiter *w;
    while ((w = waitq_pop(EV_QUEUE(ev))))
        wake(w, 0);
}

/* ---- latches: across threads ----------------------------------------------- */

/* A waiter of a latch, on its coroutine's stack. Once the latch opens, the
 * opener takes it off the list under the lock; a waiter on another loop is
 * then completed by a post to that loop, so the record must live until the
 * post has run even if its deadline fired meanwhile. */
typedef struct latch_waiter {
    hm__op op;
    hm_post post;
    hm_loop *loop;
    struct latch_waiter *next;
    bool listed;
} latch_waiter;

static void latch_lock(hm_latch *l)
{
    while (atomic_exchange_explicit(&l->lock_, 1, memory_order_acquire))
        sched_yield();
}

static void latch_unlock(hm_latch *l)
{
    atomic_store_explicit(&l->lock_, 0, memory_order_release);
}

void hm_latch_init(hm_latch *l, int64_t count)
{
    atomic_init(&l->count, count);
    atomic_init(&l->lock_, 0);
    l->waiters_ = NULL;
}

static void latch_posted(hm_post *p)
{
    latch_waiter *w = HM_CONTAINER_OF(p, latch_waiter, post);
    hm__op_complete(w->loop, &w->op, 0);
}

void hm_latch_count_down(hm_latch *l, int64_t n)
{
    int64_t before = atomic_fetch_sub_explicit(&l->count, n, memory_order_acq_rel);
    if (before <= 0 || before - n > 0) return;
    latch_lock(l);
    latch_waiter *w = l->waiters_;
    l->waiters_ = NULL;
    for (latch_waiter *x = w; x; x = x->next)
        x->listed = false;
    latch_unlock(l);
    hm_loop *here = hm_loop_current();
    while (w) {
        latch_waiter *next = w->next; /* w may be gone once completed */
        if (w->loop == here) {
            hm__op_complete(here, &w->op, 0);
        } else {
            w->post.fn = latch_posted;
            hm_loop_post(w->loop, &w->post);
        }
        w = next;
    }
}

static void latch_cancel(hm_loop *loop, hm__op *op)
{
    latch_waiter *w = HM_CONTAINER_OF(op, latch_waiter, op);
    hm_latch *l = op->wait_link;
    latch_lock(l);
    bool listed = w->listed;
    if (listed) {
        latch_waiter **pp = (latch_waiter **)&l->waiters_;
        while (*pp != w)
            pp = &(*pp)->next;
        *pp = w->next;
        w->listed = false;
    }
    latch_unlock(l);
    /* Not listed: the opener has it, and its completion is on the way. */
    if (listed) hm__op_complete(loop, op, op->cancel_reason);
}

int hm_latch_wait(hm_latch *l, int64_t deadline)
{
    hm_loop *loop = hm_loop_current();
    if (!loop || !loop->current) return -EPERM;
    if (hm__take_cancel(loop)) return -ECANCELED;
    if (hm_latch_open(l)) return 0;
    if (HM_UNLIKELY(loop->aborted)) {
        hm_coro_yield();
        return -ECANCELED;
    }
    latch_waiter w = {.loop = loop};
    w.op = (hm__op){.cancel = latch_cancel, .soft = true, .wait_link = l};
    latch_lock(l);
    if (hm_latch_open(l)) {
        latch_unlock(l);
        return 0;
    }
    w.next = l->waiters_;
    w.listed = true;
    l->waiters_ = &w;
    latch_unlock(l);
    int rc = (int)hm__op_wait(loop, &w.op, deadline);
    return rc < 0 && hm_latch_open(l) && rc != -ECANCELED ? 0 : rc;
}

/* test_event_source.c — the one SSE follower (load/event_source.h) against
 * a scripted server on the same loop, as a browser tab and the hammer
 * model's observers use it:
 *  - a stream the server ends is to be retried after the back-off, and
 *    hm_event_source_hurry starts that retry at once (a reload published
 *    a new context); a retry that connected counts one reconnect;
 *  - a 400 means the context is lost: the source stops and says so;
 *  - opened again for a new context, its first stream is no reconnect;
 *  - closing it cuts the stream in progress (ended: cut), and its
 *    connection's counters move into the stats on free.
 * No step is timed: the waits are on the hooks' events, and the back-off
 * is made a minute long, so a retry goes only when hurried (the timer's
 * own retry is the misbehave suite's sse_no_final_blank, both models). */
#include "engine_test_util.h"
#include "load/event_source.h"

#include <stdio.h>
#include <string.h>

#define LIT(s) s, sizeof(s) - 1

static hm_sock *listener;
static int accepted;
static char asked[4][64];  /* each connection's request line */
static hm_latch served[4]; /* the server answered connection i */

/* What the server answers connection i: a stream it ends at once, the
 * same, php-via's 400 for a lost context, a stream held open. */
static const char *const replies[4] = {
    ("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
     "event: datastar-patch-signals\ndata: signals {\"count\":1}\n\n"),
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n",
    "HTTP/1.1 400 Bad Request\r\nContent-Length: 15\r\n\r\nInvalid context",
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n: held open\n\n",
};

static void serve(void *arg)
{
    (void)arg;
    for (int i = 0; i < 4; i++) {
        hm_sock *s;
        if (hm_sock_accept(listener, &s, 0) < 0) return;
        accepted++;
        char buf[2048];
        ssize_t n = hm_sock_read(s, buf, sizeof(buf) - 1, 0);
        if (n > 0) {
            buf[n] = '\0';
            snprintf(asked[i], sizeof(asked[i]), "%.*s", (int)strcspn(buf, "\r"), buf);
            hm_sock_write(s, replies[i], strlen(replies[i]), 0, NULL);
        }
        hm_latch_count_down(&served[i], 1);
        if (i == 3) {
            /* Held open until the client goes. */
            while (hm_sock_read(s, buf, sizeof(buf), 0) > 0) {
            }
        }
        hm_sock_close(s);
    }
}

/* The owner: which context it follows, and what the hooks saw. */
typedef struct owner {
    hm_event_source es;
    int ctx;
    hm_event ev;
    hm_sse_end ends[8];
    int n_ends, opened;
} owner;

#define OWNER_OF(src) HM_CONTAINER_OF((src), owner, es)

static char *request(hm_event_source *es, size_t *len)
{
    char buf[128];
    int n = snprintf(buf, sizeof(buf), "GET /_sse?ctx=%d HTTP/1.1\r\nHost: t\r\n\r\n",
                     OWNER_OF(es)->ctx);
    char *req = hm_alloc((size_t)n);
    memcpy(req, buf, (size_t)n);
    *len = (size_t)n;
    return req;
}

static void opened(hm_event_source *es)
{
    OWNER_OF(es)->opened++;
}

static void fed(hm_event_source *es, uint64_t events_before)
{
    (void)events_before;
    hm_event_notify(&OWNER_OF(es)->ev);
}

static bool ended(hm_event_source *es, hm_sse_end end)
{
    owner *ow = OWNER_OF(es);
    ow->ends[ow->n_ends++] = end;
    hm_event_notify(&ow->ev);
    return true; /* a retry follows a failure; any other end stops it anyway */
}

static const char *where(const hm_event_source *es, char *buf, size_t size)
{
    snprintf(buf, size, "SSE GET /_sse, test %d", OWNER_OF(es)->ctx);
    return buf;
}

static const hm_event_source_hooks hooks = {
    .request = request, .opened = opened, .fed = fed, .ended = ended, .where = where};

/* Waits (on the hooks' event) until the source has seen n ends. */
static void wait_ends(owner *ow, int n)
{
    while (ow->n_ends < n)
        ASSERT_EQ(hm_event_wait(&ow->ev, 0), 0);
}

static void tests(void *arg)
{
    (void)arg;
    struct sockaddr_in a = loopback_addr(0);
    ASSERT_EQ(hm_sock_listen(&listener, (struct sockaddr *)&a, sizeof(a), 16), 0);
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/", hm_sock_local_port(listener));
    hm_http_target target;
    ASSERT_EQ(hm_http_target_from_url(url, &target, NULL), 0);
    for (int i = 0; i < 4; i++)
        hm_latch_init(&served[i], 1);
    ASSERT_EQ(hm_coro_spawn(NULL, serve, NULL, NULL), 0);

    hm_thread_stats st;
    ASSERT_EQ(hm_thread_stats_init(&st), 0);
    hm_options o = {.timeout_ns = 5000000000LL};
    hm_workload wl = {0};
    owner ow = {.ctx = 1};
    hm_event_init(&ow.ev);
    hm_event_source_init(&ow.es, &target, NULL, &hooks, &st, &o);
    hm_watch_init(&ow.es.watch, &wl, "");

    /* A minute's back-off: only hurry starts a retry here. */
    ow.es.backoff = (hm_backoff){60000000000LL, 60000, 60000};

    printf("a stream the server ends waits out the back-off\n");
    hm_event_source_open(&ow.es);
    wait_ends(&ow, 1);
    ASSERT_EQ(ow.ends[0], HM_SSE_END_RETRY);
    ASSERT_EQ(ow.opened, 1);
    ASSERT_EQ(st.sse_opened, 1);
    ASSERT_EQ(st.sse_fail[HM_SSE_FAIL_CLOSED], 1);
    ASSERT_EQ(ow.es.watch.sse.events, 1); /* the stream's event */
    ASSERT(hm_event_source_running(&ow.es));
    ASSERT(!hm_http_conn_busy(&ow.es.conn)); /* waiting out the back-off */

    printf("hurried, the retry goes at once and counts a reconnect\n");
    hm_event_source_hurry(&ow.es);
    ASSERT(hm_http_conn_busy(&ow.es.conn)); /* started now, not by the timer */
    wait_ends(&ow, 2);
    ASSERT_EQ(ow.ends[1], HM_SSE_END_RETRY);
    ASSERT_EQ(accepted, 2);
    ASSERT_EQ(st.sse_fail[HM_SSE_FAIL_CLOSED], 2);
    ASSERT_EQ(ow.es.reconnects, 1); /* the retry that connected */
    ASSERT_EQ(st.reconnects, 1);

    printf("a new context: the next retry follows it at once\n");
    ASSERT(!hm_http_conn_busy(&ow.es.conn));
    ow.ctx = 2;
    hm_event_source_hurry(&ow.es);
    ASSERT(hm_http_conn_busy(&ow.es.conn));

    printf("a 400 means the context is lost: the source stops\n");
    wait_ends(&ow, 3);
    ASSERT_EQ(ow.ends[2], HM_SSE_END_LOST);
    ASSERT(!hm_event_source_running(&ow.es));
    ASSERT_STREQ(asked[2], "GET /_sse?ctx=2 HTTP/1.1");
    ASSERT_EQ(ow.es.reconnects, 2);                /* the hurried retry connected too */
    ASSERT_EQ(st.sse_fail[HM_SSE_FAIL_STATUS], 0); /* a loss, not a failure */

    printf("opened for a new context: its first stream is no reconnect\n");
    ow.ctx = 3;
    hm_event_source_open(&ow.es);
    ASSERT_EQ(hm_latch_wait(&served[3], 0), 0);
    while (ow.opened < 3)
        ASSERT_EQ(hm_event_wait(&ow.ev, 0), 0);
    ASSERT_STREQ(asked[3], "GET /_sse?ctx=3 HTTP/1.1");
    ASSERT(hm_event_source_running(&ow.es));
    ASSERT_EQ(ow.es.reconnects, 2);
    ASSERT_EQ(st.reconnects, 2);

    printf("closing cuts the stream in progress\n");
    hm_event_source_close(&ow.es);
    ASSERT_EQ(ow.n_ends, 4);
    ASSERT_EQ(ow.ends[3], HM_SSE_END_CUT);
    ASSERT(!hm_event_source_running(&ow.es));
    ASSERT_EQ(st.sse_opened, 3);
    hm_event_source_free(&ow.es);
    ASSERT_EQ(st.connects, 4); /* every stream had a connection of its own */
    ASSERT_EQ(st.reconnects, 2);
    ASSERT(st.bytes_read > 0);
    hm_watch_free(&ow.es.watch);
    hm_thread_stats_destroy(&st);
    hm_sock_close(listener);
}

int main(int argc, char **argv)
{
    hm_loop_options lo = test_loop_options(argc, argv);
    run_on_loop(&lo, tests, NULL);
    printf("ok\n");
    return 0;
}

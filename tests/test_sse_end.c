/* test_sse_end.c — what an SSE stream's head and end mean to both of
 * hammer's followers (the browser tab's EventSource, the hammer model's
 * observer): hm_sse_head_read and hm_sse_stream_end (load/request.h), on
 * response heads parsed by the real parser. A 200 opens a stream
 * (sse.opened); php-via's empty 200, its reload script and a 400 mean the
 * context is lost; any other end is a failure noted and retried; the
 * run's own cut is a cut. A stream's head says nothing about the next
 * one: after an empty 200, a refused connect is retried, not a loss. */
#include "hm_test.h"

#include "load/request.h"
#include "proto/http_client.h"

#include <string.h>

static hm_thread_stats st;
static hm_options opts = {.timeout_ns = 1000000000};
static hm_sse_head head;

static int on_headers(void *user, hm_http_resp_parser *p)
{
    (void)user;
    return hm_sse_head_read(&head, p, &st, &opts);
}

/* c's response to a stream request is `wire`: its head read as a follower
 * reads it. Returns the headers callback's verdict as the stream's rc
 * would carry it (0 streaming, -HM_ESTATUS refused). */
static int answer(hm_http_conn *c, const char *wire)
{
    hm_sse_head_begin(&head);
    hm_http_resp_begin(&c->resp, false);
    hm_http_resp_set_callbacks(&c->resp, on_headers, NULL, NULL);
    size_t used;
    int rc = hm_http_resp_feed(&c->resp, wire, strlen(wire), &used);
    return rc == -ECANCELED || rc == -HM_ESTATUS || head.status != 200 ? -HM_ESTATUS : 0;
}

int main(void)
{
    hm_http_target t;
    char *path = NULL;
    ASSERT_EQ(hm_http_target_from_url("http://127.0.0.1:9/", &t, &path), 0);
    hm_http_conn c;
    hm_http_conn_init(&c, &t, NULL);
    hm_workload wl = {0};
    hm_watch w;
    hm_watch_init(&w, &wl, "");
    ASSERT_EQ(hm_thread_stats_init(&st), 0);

    /* A live stream the server then ends: opened, a "closed" failure, retried. */
    ASSERT_EQ(answer(&c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"), 0);
    ASSERT(head.streaming);
    ASSERT_EQ(st.sse_opened, 1);
    ASSERT_EQ(hm_sse_stream_end(&head, 0, &c, &w, &st, &opts, "here"), HM_SSE_END_RETRY);
    ASSERT(!head.streaming);
    ASSERT_EQ(st.sse_fail[HM_SSE_FAIL_CLOSED], 1);

    /* php-via's empty 200 for a context it does not have: lost, no failure. */
    ASSERT_EQ(answer(&c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"), 0);
    ASSERT(head.empty);
    ASSERT_EQ(hm_sse_stream_end(&head, 0, &c, &w, &st, &opts, "here"), HM_SSE_END_LOST);
    ASSERT_EQ(st.sse_fail[HM_SSE_FAIL_CLOSED], 1);

    /* The next stream's connect is refused: nothing of the empty 200 is
     * left, so it is a failure to retry, not another loss. */
    hm_sse_head_begin(&head);
    c.fail = HM_FAIL_CONNECT;
    ASSERT_EQ(hm_sse_stream_end(&head, -ECONNREFUSED, &c, &w, &st, &opts, "here"),
              HM_SSE_END_RETRY);
    ASSERT_EQ(st.sse_fail[HM_SSE_FAIL_CONNECT], 1);
    c.fail = HM_FAIL_NONE;

    /* A 400 (no such context) is a loss; a 403 is a status failure, retried. */
    ASSERT_EQ(answer(&c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"), -HM_ESTATUS);
    ASSERT(!head.streaming);
    ASSERT_EQ(hm_sse_stream_end(&head, -HM_ESTATUS, &c, &w, &st, &opts, "here"), HM_SSE_END_LOST);
    ASSERT_EQ(answer(&c, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n"), -HM_ESTATUS);
    ASSERT_EQ(hm_sse_stream_end(&head, -HM_ESTATUS, &c, &w, &st, &opts, "here"), HM_SSE_END_RETRY);
    ASSERT_EQ(st.sse_fail[HM_SSE_FAIL_STATUS], 1);
    ASSERT_EQ(st.sse_opened, 2); /* only the 200s opened a stream */

    /* The run cuts a live stream: a cut, no failure. */
    ASSERT_EQ(answer(&c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"), 0);
    ASSERT_EQ(hm_sse_stream_end(&head, -ECANCELED, &c, &w, &st, &opts, "here"), HM_SSE_END_CUT);
    ASSERT(!head.streaming);
    uint64_t fails = 0;
    for (int k = 0; k < HM_SSE_FAIL__COUNT; k++)
        fails += st.sse_fail[k];
    ASSERT_EQ(fails, 3);

    hm_watch_free(&w);
    hm_http_conn_free(&c);
    hm_thread_stats_destroy(&st);
    hm_free(path);
    printf("SSE ends: 200 opens; empty 200, 400 lost; closed, refused, 403 retried; a cut "
           "is a cut; a head does not outlive its stream\n");
    return 0;
}

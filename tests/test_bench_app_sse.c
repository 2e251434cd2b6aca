/* bench_app SSE (GET /_sse): the stream's headers, the first sync (the
 * view, then every TAB signal), one signals patch per action, the client's
 * TAB value replacing the server's, /_health's counts while a stream is
 * open, the answers for no context (400), an unknown one (the reload
 * script) and someone else's session (403), and a reconnect that replaces
 * the context's queue (the new stream gets the view and what comes next,
 * the old one goes silent). argv[1]: the engine backend. */
#include "bench_app_client.h"

/* Reads a stream that must end by itself. */
static sse *sse_finished(int port, const char *ctx, const char *cookie_line)
{
    sse *s = sse_open(port, ctx, cookie_line);
    sse_read_to_end(s);
    return s;
}

int main(int argc, char **argv)
{
    hm_bench_app_options o = ba_test_options(ba_test_begin(argc, argv, true));
    int port;
    pid_t pid = start_server(&o, &port);
    page p1, other;
    get_page(port, NULL, &p1);
    get_page(port, NULL, &other);
    resp r;
    for (int i = 0; i < 2; i++) {
        action(port, "increment", &p1, NULL, -1, &r);
        ASSERT_EQ(r.status, 200);
    }

    char wire[128], ev[4096];
    wire_id(&p1, wire, sizeof(wire));
    sse *s = sse_open(port, p1.ctx, p1.cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    ASSERT_EQ(status_of(s), 200);
    ASSERT(sse_has_header(s, "Content-Type: text/event-stream"));
    ASSERT(sse_has_header(s, "Cache-Control: no-cache"));
    ASSERT(sse_has_header(s, "X-Accel-Buffering: no"));
    ASSERT(sse_has_header(s, "Connection: keep-alive"));
    ASSERT(sse_has_header(s, "Transfer-Encoding: chunked"));
    sse_event(s, 0, ev, sizeof(ev));
    ASSERT_STREQ(ev, ELEMENTS_EVENT);
    sse_event(s, 1, ev, sizeof(ev));
    ASSERT_EQ(signal_in(ev, wire), 2);
    ASSERT(!strstr(s->data, "\nid:") && !strstr(s->data, "\nretry:") && s->data[0] != ':');

    conn *kc = conn_open(port); /* keep-alive: several actions on one connection */
    action_on(kc, "increment", &p1, NULL, -1, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT(r.keep_alive);
    ASSERT_EQ(sse_wait(s, 3, IO_TIMEOUT_MS), 3);
    sse_event(s, 2, ev, sizeof(ev));
    ASSERT_EQ(signal_in(ev, wire), 3);
    /* The client's TAB value replaces the server's before the action. */
    action_on(kc, "increment", &p1, NULL, 41, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT_EQ(sse_wait(s, 4, IO_TIMEOUT_MS), 4);
    sse_event(s, 3, ev, sizeof(ev));
    ASSERT_EQ(signal_in(ev, wire), 42);
    conn_close(kc);
    ASSERT_EQ(sse_wait(s, 5, 200), 4); /* nothing else */
    printf("SSE headers, initial sync, one patch per action, client overwrite: ok\n");

    json_t *h = health(port);
    ASSERT_STREQ(json_string_value(json_object_get(h, "status")), "ok");
    ASSERT_STREQ(json_string_value(json_object_get(h, "version")), HM_VERSION "-bench_app");
    json_t *b = json_object_get(h, "broker");
    ASSERT_STREQ(json_string_value(json_object_get(b, "driver")), "InMemoryBroker");
    ASSERT(json_is_true(json_object_get(b, "connected")));
    json_t *cn = json_object_get(h, "connections");
    ASSERT_EQ(json_integer_value(json_object_get(cn, "contexts")), 2);
    ASSERT_EQ(json_integer_value(json_object_get(cn, "sse")), 1);
    ASSERT_EQ(json_integer_value(json_object_get(h, "worker")), 0);
    json_t *ws = json_object_get(h, "workers");
    ASSERT_EQ(json_array_size(ws), 1);
    ASSERT_EQ(worker_count(h, 0, "contexts"), 2);
    ASSERT_EQ(worker_count(h, 0, "sse"), 1);
    json_decref(h);
    printf("/_health with a stream open: ok\n");

    /* No via_ctx, an unknown context, someone else's session. */
    sse *bad = sse_finished(port, NULL, p1.cookie_hdr);
    ASSERT_EQ(status_of(bad), 400);
    ASSERT_STREQ(bad->data, "Invalid context");
    sse_close(bad);
    bad = sse_finished(port, "/bench/counter_/00000000deadbeef", p1.cookie_hdr);
    ASSERT_EQ(status_of(bad), 200);
    ASSERT(sse_has_header(bad, "Content-Type: text/event-stream"));
    ASSERT_STREQ(bad->data,
                 "event: datastar-patch-elements\ndata: selector body\ndata: mode append\n"
                 "data: elements <script data-effect=\"el.remove()\">"
                 "window.location.reload()</script>\n\n");
    sse_close(bad);
    bad = sse_finished(port, p1.ctx, other.cookie_hdr);
    ASSERT_EQ(status_of(bad), 403);
    ASSERT(sse_has_header(bad, "Content-Type: text/event-stream"));
    ASSERT_STREQ(bad->data, "Forbidden");
    sse_close(bad);
    printf("SSE 400, unknown-context reload, 403: ok\n");

    /* A second stream replaces the queue: it gets the view (no signals
     * changed since the last patch) and the next patch; the first goes
     * silent. */
    sse *s2 = sse_open(port, p1.ctx, p1.cookie_hdr);
    ASSERT_EQ(sse_wait(s2, 1, IO_TIMEOUT_MS), 1);
    sse_event(s2, 0, ev, sizeof(ev));
    ASSERT_STREQ(ev, ELEMENTS_EVENT);
    ASSERT_EQ(sse_wait(s2, 2, 200), 1);
    ASSERT_EQ(health_count(port, "sse"), 2);
    action(port, "increment", &p1, NULL, -1, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT_EQ(sse_wait(s2, 2, IO_TIMEOUT_MS), 2);
    sse_event(s2, 1, ev, sizeof(ev));
    ASSERT_EQ(signal_in(ev, wire), 43);
    ASSERT_EQ(sse_wait(s, 5, 300), 4);
    sse_close(s);
    sse_close(s2);
    wait_health_count(port, "sse", 0);
    printf("SSE reconnect replaces the queue, the old stream goes silent: ok\n");
    stop_server(pid);
    return 0;
}

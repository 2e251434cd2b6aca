/* bench_app SSE (GET /_sse), as real php-via v0.12.0 does it: the
 * stream's headers, the first sync (the view, then every TAB signal), one
 * signals patch per action, the client's TAB value replacing the server's,
 * /_health's counts while a stream is open; the answers for no context
 * (400), an unknown one (the reload script and the end of the body on a
 * connection that stays open; a repeat within 5 minutes: an empty 200) and
 * someone else's session (403); a reconnect while the old stream is open
 * (the new stream gets the view, then the two take turns with the
 * patches); a client that vanished (its socket closed at once, as
 * OpenSwoole closes the fd at the client's FIN, but the stream noticed only
 * at its next write, which loses that patch); and revival (a context the
 * cleanup took comes back for its session, seeded with the client's
 * values). argv[1]: the engine backend. */
#include "bench_app_client.h"

/* Sockets of the server at port (IPv4, as the tests connect) that the
 * peer has closed and the server has not: TCP state CLOSE_WAIT (08). */
static int close_waits(int port)
{
    FILE *f = fopen("/proc/net/tcp", "r");
    ASSERT(f != NULL);
    char line[512];
    int n = 0;
    unsigned local_port, state;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, " %*d: %*8[0-9A-Fa-f]:%x %*8[0-9A-Fa-f]:%*x %x", &local_port, &state) ==
                2 &&
            (int)local_port == port && state == 0x08)
            n++;
    fclose(f);
    return n;
}

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
    static const char reload[] =
        "event: datastar-patch-elements\ndata: selector body\ndata: mode append\n"
        "data: elements <script data-effect=\"el.remove()\">window.location.reload()</script>\n\n";
    char target[1024], q[256], enc[768];
    snprintf(q, sizeof(q), "{\"via_ctx\":\"/bench/counter_/00000000deadbeef\"}");
    url_encode(q, enc, sizeof(enc));
    snprintf(target, sizeof(target), "/_sse?datastar=%s", enc);
    conn *rc = conn_open(port);
    conn_req(rc, "GET", target, p1.cookie_hdr, NULL, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT(has_header(&r, "Content-Type: text/event-stream"));
    ASSERT(has_header(&r, "Transfer-Encoding: chunked"));
    ASSERT(has_header(&r, "Connection: keep-alive"));
    ASSERT_STREQ(r.body, reload);
    ASSERT(r.keep_alive);
    /* The same id again within 5 minutes, on the same connection: the
     * headers and an empty body (php-via's $reloadedContextIds). */
    conn_req(rc, "GET", target, p1.cookie_hdr, NULL, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT(has_header(&r, "Content-Type: text/event-stream"));
    ASSERT(has_header(&r, "Content-Length: 0"));
    ASSERT_EQ(r.body_len, 0);
    conn_req(rc, "GET", "/_health", NULL, NULL, &r); /* the connection still serves */
    ASSERT_EQ(r.status, 200);
    conn_close(rc);
    bad = sse_finished(port, "/bench/counter_/00000000cafebabe", p1.cookie_hdr);
    ASSERT_EQ(status_of(bad), 200);
    ASSERT_STREQ(bad->data, reload);
    sse_close(bad);
    bad = sse_finished(port, p1.ctx, other.cookie_hdr);
    ASSERT_EQ(status_of(bad), 403);
    ASSERT(sse_has_header(bad, "Content-Type: text/event-stream"));
    ASSERT_STREQ(bad->data, "Forbidden");
    sse_close(bad);
    printf("SSE 400, unknown-context reload then an empty 200, 403: ok\n");

    /* A second stream while the first is open: it gets the view (no
     * signals changed since the last patch); the first, woken from the
     * queue it waited in, waits in the new one after php-via's poll sleep
     * (100 ms), behind the second. From then on the two take turns. */
    sse *s2 = sse_open(port, p1.ctx, p1.cookie_hdr);
    ASSERT_EQ(sse_wait(s2, 1, IO_TIMEOUT_MS), 1);
    sse_event(s2, 0, ev, sizeof(ev));
    ASSERT_STREQ(ev, ELEMENTS_EVENT);
    ASSERT_EQ(sse_wait(s2, 2, 200), 1);
    ASSERT_EQ(health_count(port, "sse"), 2);
    sse *both[2] = {s, s2};
    size_t seen[2] = {4, 1};
    long long next = 43;
    int owners[64], n_owned = 0, first_s = -1;
    int64_t until = now_ms() + IO_TIMEOUT_MS;
    while (n_owned < 64 && (first_s < 0 || n_owned < first_s + 4)) {
        ASSERT_LT(now_ms(), until);
        action(port, "increment", &p1, NULL, -1, &r);
        ASSERT_EQ(r.status, 200);
        int got = -1;
        int64_t wait_until = now_ms() + IO_TIMEOUT_MS;
        while (got < 0 && now_ms() < wait_until) {
            for (int k = 0; k < 2 && got < 0; k++) {
                sse_pump(both[k], now_ms() + 5);
                if (sse_count(both[k]) > seen[k]) got = k;
            }
        }
        ASSERT_GE(got, 0);
        sse_event(both[got], seen[got], ev, sizeof(ev));
        ASSERT_EQ(signal_in(ev, wire), next);
        seen[got]++;
        next++;
        if (got == 0 && first_s < 0) first_s = n_owned;
        owners[n_owned++] = got;
        usleep(20000); /* lets the old stream finish its sleep and join */
    }
    ASSERT_GE(first_s, 1); /* the new stream got the first patch */
    for (int i = first_s + 1; i < n_owned; i++)
        ASSERT_EQ(owners[i], 1 - owners[i - 1]);
    ASSERT_EQ(sse_count(s) + sse_count(s2), 4 + 1 + (size_t)n_owned);
    printf("a reconnect while the old stream is open: the two take turns: ok\n");

    /* The first stream's client goes away: /_health lists it until its
     * next write, which fails and takes its patch along. */
    int last = owners[n_owned - 1];
    sse_close(s);
    int64_t closed_by = now_ms() + IO_TIMEOUT_MS;
    while (close_waits(port) > 0 && now_ms() < closed_by)
        usleep(10000);
    ASSERT_EQ(close_waits(port), 0); /* the server closed its end */
    ASSERT_EQ(health_count(port, "sse"), 2);
    if (last == 0) { /* s2 is next in line */
        action(port, "increment", &p1, NULL, -1, &r);
        ASSERT_EQ(sse_wait(s2, seen[1] + 1, IO_TIMEOUT_MS), seen[1] + 1);
        sse_event(s2, seen[1]++, ev, sizeof(ev));
        ASSERT_EQ(signal_in(ev, wire), next++);
        ASSERT_EQ(health_count(port, "sse"), 2);
    }
    action(port, "increment", &p1, NULL, -1, &r); /* s's turn: lost */
    next++;
    wait_health_count(port, "sse", 1);
    ASSERT_EQ(sse_wait(s2, seen[1] + 1, 200), seen[1]);
    action(port, "increment", &p1, NULL, -1, &r);
    ASSERT_EQ(sse_wait(s2, seen[1] + 1, IO_TIMEOUT_MS), seen[1] + 1);
    sse_event(s2, seen[1]++, ev, sizeof(ev));
    ASSERT_EQ(signal_in(ev, wire), next++);
    printf("a vanished client is noticed at its stream's next write: ok\n");

    /* Revival: the last stream goes, the cleanup (200 ms) takes the
     * context; an SSE reconnect of its session within the window brings it
     * back with the same id, seeded with the value the client sends. */
    sse_close(s2);
    notice_closed_streams(port, &p1, "increment", 0);
    wait_health_count(port, "contexts", 1);
    action(port, "increment", &p1, NULL, -1, &r);
    ASSERT_EQ(r.status, 400);
    char json[512];
    snprintf(json, sizeof(json), "{\"via_ctx\":\"%s\",\"%s\":77,\"_disconnected\":false}", p1.ctx,
             wire);
    bad = sse_open_query(port, json, other.cookie_hdr); /* another session: reload */
    sse_read_to_end(bad);
    ASSERT_STREQ(bad->data, reload);
    sse_close(bad);
    sse *rv = sse_open_query(port, json, p1.cookie_hdr);
    ASSERT_EQ(sse_wait(rv, 2, IO_TIMEOUT_MS), 2);
    ASSERT_EQ(status_of(rv), 200);
    sse_event(rv, 0, ev, sizeof(ev));
    ASSERT_STREQ(ev, ELEMENTS_EVENT);
    sse_event(rv, 1, ev, sizeof(ev));
    ASSERT_EQ(signal_in(ev, wire), 77);
    ASSERT_EQ(health_count(port, "contexts"), 2);
    action(port, "increment", &p1, NULL, -1, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT_EQ(sse_wait(rv, 3, IO_TIMEOUT_MS), 3);
    sse_event(rv, 2, ev, sizeof(ev));
    ASSERT_EQ(signal_in(ev, wire), 78);
    sse_close(rv);
    printf("revival within the window, with the client's value: ok\n");
    stop_server(pid);

    /* Without revival (--revival-window-ms 0) the same reconnect reloads. */
    o.revival_window_ms = 0;
    pid = start_server(&o, &port);
    get_page(port, NULL, &p1);
    rv = sse_open(port, p1.ctx, p1.cookie_hdr);
    ASSERT_EQ(sse_wait(rv, 2, IO_TIMEOUT_MS), 2);
    sse_close(rv);
    notice_closed_streams(port, &p1, "increment", 0);
    wait_health_count(port, "contexts", 0);
    rv = sse_finished(port, p1.ctx, p1.cookie_hdr);
    ASSERT_STREQ(rv->data, reload);
    sse_close(rv);
    stop_server(pid);
    printf("no revival with --revival-window-ms 0: ok\n");
    return 0;
}

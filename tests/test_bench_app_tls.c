/* bench_app over HTTPS (TLS 1.3, ALPN http/1.1, a certificate from the
 * test's own CA): the page, actions on one keep-alive TLS connection,
 * pipelined requests in one record, a 300 KiB body over many records, the
 * HTTP framing cases (each answer, close_notify, then the close), SSE
 * sync and patches, the live spreadsheet's multi-KiB events, and a
 * stream's end seen through TLS. argv[1]: the engine backend. */
#include "bench_app_client.h"

static pid_t start_tls(hm_backend_kind backend, int *port)
{
    hm_bench_app_options o = ba_test_options(backend);
    o.tls_cert = g_cert;
    o.tls_key = g_key;
    return start_server(&o, port);
}

static void requests(int port, page *pg)
{
    get_page(port, NULL, pg); /* the whole page, checked */
    resp r;
    conn *kc = conn_open(port);
    ASSERT_EQ(SSL_version(ssl_of(kc->fd)), TLS1_3_VERSION);
    action_on(kc, "increment", pg, NULL, -1, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT(r.keep_alive);
    action_on(kc, "increment", pg, NULL, -1, &r); /* the same TLS connection */
    ASSERT_EQ(r.status, 200);
    static const char two[] = "GET /_health HTTP/1.1\r\nHost: x\r\n\r\n"
                              "GET /_health HTTP/1.1\r\nHost: x\r\n\r\n";
    send_all(kc->fd, two, strlen(two)); /* pipelined in one record */
    for (int i = 0; i < 2; i++) {
        read_resp(kc, false, &r);
        ASSERT_EQ(r.status, 200);
        ASSERT(strstr(r.body, "\"status\":\"ok\""));
    }
    /* Some 20 records: 300 signals of 1 KiB (each under --max-signal-bytes). */
    static char big[310 << 10];
    size_t k = (size_t)snprintf(big, sizeof(big), "{\"via_ctx\":\"%s\"", pg->ctx);
    for (int i = 0; i < 300; i++) {
        k += (size_t)snprintf(big + k, sizeof(big) - k, ",\"pad%d\":\"", i);
        memset(big + k, 'x', 1024);
        k += 1024;
        big[k++] = '"';
    }
    memcpy(big + k, "}", 2);
    char hdrs[512];
    snprintf(hdrs, sizeof(hdrs), "Content-Type: application/json\r\n%s", pg->cookie_hdr);
    conn_req(kc, "POST", "/_action/increment", hdrs, big, &r);
    ASSERT_EQ(r.status, 200);
    conn_close(kc);
    printf("TLS: page, actions on a keep-alive connection, pipelining, a 300 KiB body: ok\n");
    check_http_framing(port, 1); /* the answer, close_notify, then the close */
}

static void streams(int port, const page *pg)
{
    resp r;
    char wire[128], ev[4096];
    wire_id(pg, wire, sizeof(wire));
    sse *s = sse_open(port, pg->ctx, pg->cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    ASSERT_EQ(status_of(s), 200);
    ASSERT(sse_has_header(s, "Content-Type: text/event-stream"));
    sse_event(s, 0, ev, sizeof(ev));
    ASSERT_STREQ(ev, ELEMENTS_EVENT);
    sse_event(s, 1, ev, sizeof(ev));
    ASSERT_EQ(signal_in(ev, wire), 3);
    for (int i = 0; i < 3; i++) {
        action(port, "increment", pg, NULL, -1, &r);
        ASSERT_EQ(r.status, 200);
        ASSERT_EQ(sse_wait(s, 3 + (size_t)i, IO_TIMEOUT_MS), 3 + (size_t)i);
        sse_event(s, 2 + (size_t)i, ev, sizeof(ev));
        ASSERT_EQ(signal_in(ev, wire), 4 + i);
    }
    ASSERT_EQ(health_count(port, "sse"), 1);
    sse_close(s); /* close_notify: the stream ends at its next write */
    notice_closed_streams(port, pg, "increment", 0);

    /* The live spreadsheet: multi-line events of several KiB. */
    static char html[65536], lev[65536];
    char sel[64], dir[160], fields[256];
    page lv;
    get_route(port, "/examples/spreadsheet", NULL, &lv, &r);
    s = sse_open(port, lv.ctx, lv.cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    sse_event(s, 0, lev, sizeof(lev));
    ASSERT_GE(elements_of(lev, html, sizeof(html), sel, sizeof(sel)), 22);
    check_sheet_div(html);
    wire_of(&lv, "direction", dir, sizeof(dir));
    snprintf(fields, sizeof(fields), ",\"%s\":\"PageDown\"", dir);
    conn *kc = conn_open(port);
    act(kc, "navigate", &lv, fields, &r);
    conn_close(kc);
    ASSERT_EQ(sse_wait(s, 4, IO_TIMEOUT_MS), 4);
    sse_event(s, 2, lev, sizeof(lev));
    ASSERT_GE(elements_of(lev, html, sizeof(html), sel, sizeof(sel)), 22);
    ASSERT_STREQ(sel, "#sheet");
    ASSERT_EQ(focus_row_label(html), 21);
    sse_close(s);
    printf("TLS: SSE sync and patches, the live spreadsheet's tables, stream end: ok\n");
}

int main(int argc, char **argv)
{
    hm_backend_kind backend = ba_test_begin(argc, argv, true);
    make_pki();
    int port;
    pid_t pid = start_tls(backend, &port);
    g_tls = client_ctx(0, NULL, 0, false);
    page pg;
    requests(port, &pg);
    streams(port, &pg);
    stop_server(pid);
    SSL_CTX_free(g_tls);
    g_tls = NULL;
    return 0;
}

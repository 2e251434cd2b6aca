/* bench_app actions (POST /_action/<id>), checked in ActionHandler's order:
 * GET 405, HEAD 404, untrusted Origin 403 (a missing Origin passes only in
 * devMode), unknown or missing context 400, someone else's session 403, an
 * unknown action 500, success 200 with an empty body; the signals (and
 * via_ctx) read from ?datastar=, a JSON body, a form field datastar or a
 * form field via_ctx, a bad ?datastar= meaning none; hostile JSON nesting
 * refused. Each 200 increments the counter, which /_health and the next SSE
 * sync confirm. argv[1]: the engine backend. */
#include "bench_app_client.h"

static void outcomes(int port, const page *p1, int *done)
{
    resp r;
    req1(port, "GET", "/_action/increment", NULL, NULL, &r);
    ASSERT_EQ(r.status, 405);
    ASSERT_STREQ(r.body, "Method Not Allowed");
    ASSERT(has_header(&r, "Allow: POST"));
    req1(port, "HEAD", "/_action/increment", NULL, NULL, &r);
    ASSERT_EQ(r.status, 404);
    ASSERT_EQ(r.body_len, 0);

    page nocookie = *p1;
    nocookie.cookie_hdr[0] = '\0';
    action(port, "increment", &nocookie, NULL, -1, &r);
    ASSERT_EQ(r.status, 403);
    ASSERT_STREQ(r.body, "Forbidden");
    page other = *p1;
    snprintf(other.cookie_hdr, sizeof(other.cookie_hdr), "Cookie: via_session_id=%032d\r\n", 7);
    action(port, "increment", &other, NULL, -1, &r);
    ASSERT_EQ(r.status, 403);

    page unknown = *p1;
    snprintf(unknown.ctx, sizeof(unknown.ctx), "/bench/counter_/0123456789abcdef");
    action(port, "increment", &unknown, NULL, -1, &r);
    ASSERT_EQ(r.status, 400);
    ASSERT_STREQ(r.body, "Invalid context");
    req1(port, "POST", "/_action/increment", p1->cookie_hdr, "{}", &r);
    ASSERT_EQ(r.status, 400);
    ASSERT_STREQ(r.body, "Invalid context");
    req1(port, "POST", "/_action/increment", p1->cookie_hdr, "not json at all", &r);
    ASSERT_EQ(r.status, 400);

    action(port, "increment", p1, "Origin: http://evil.example\r\n", -1, &r);
    ASSERT_EQ(r.status, 403);
    ASSERT_STREQ(r.body, "Forbidden: untrusted origin");
    char origin[128];
    snprintf(origin, sizeof(origin), "Origin: http://127.0.0.1:%d\r\n", port);
    action(port, "increment", p1, origin, -1, &r);
    ASSERT_EQ(r.status, 200);
    ++*done;

    action(port, "nope", p1, NULL, -1, &r);
    ASSERT_EQ(r.status, 500);
    ASSERT_STREQ(r.body, "Action failed");

    action(port, "increment", p1, NULL, -1, &r); /* devMode: no Origin passes */
    ASSERT_EQ(r.status, 200);
    ASSERT_EQ(r.body_len, 0);
    ASSERT_STREQ(r.ctype, "text/html");
    ++*done;
    printf("action outcomes (405, 404, 403 session, 400, 403 origin, 500, 200): ok\n");
}

static void signal_sources(int port, const page *p1, int *done)
{
    /* Signals from ?datastar= (even on POST), a form field datastar, a form
     * field via_ctx. */
    resp r;
    char json[256], enc[512], target[600], body[700];
    snprintf(json, sizeof(json), "{\"via_ctx\":\"%s\"}", p1->ctx);
    url_encode(json, enc, sizeof(enc));
    snprintf(target, sizeof(target), "/_action/increment?x=1&datastar=%s", enc);
    req1(port, "POST", target, p1->cookie_hdr, "", &r);
    ASSERT_EQ(r.status, 200);
    ++*done;
    char hdrs[512];
    snprintf(hdrs, sizeof(hdrs), "%sContent-Type: application/x-www-form-urlencoded\r\n",
             p1->cookie_hdr);
    snprintf(body, sizeof(body), "a=b&datastar=%s", enc);
    req1(port, "POST", "/_action/increment", hdrs, body, &r);
    ASSERT_EQ(r.status, 200);
    ++*done;
    url_encode(p1->ctx, enc, sizeof(enc));
    snprintf(body, sizeof(body), "via_ctx=%s", enc);
    req1(port, "POST", "/_action/increment", hdrs, body, &r);
    ASSERT_EQ(r.status, 200);
    ++*done;
    /* A bad ?datastar= means no signals at all (no fallback to the body). */
    req1(port, "POST", "/_action/increment?datastar=%7Bbroken", p1->cookie_hdr, json, &r);
    ASSERT_EQ(r.status, 400);

    /* Hostile JSON nesting: refused, not a crash. */
    static char deep[200001];
    memset(deep, '[', sizeof(deep) - 1);
    req1(port, "POST", "/_action/increment", p1->cookie_hdr, deep, &r);
    ASSERT_EQ(r.status, 400);
    /* 60 levels, under the limit: parsed inside a coroutine's stack. */
    char nest[1024] = "";
    for (int i = 0; i < 60; i++)
        strcat(nest, "{\"a\":");
    strcat(nest, "1");
    for (int i = 0; i < 60; i++)
        strcat(nest, "}");
    req1(port, "POST", "/_action/increment", p1->cookie_hdr, nest, &r);
    ASSERT_EQ(r.status, 400);
    printf("signals from ?datastar=, the JSON body, form fields; bad ?datastar=; hostile "
           "nesting: ok\n");
}

/* Every 200 above ran the action once: the first sync says so. */
static void check_count(int port, const page *p1, int done)
{
    char wire[128], ev[4096];
    wire_id(p1, wire, sizeof(wire));
    sse *s = sse_open(port, p1->ctx, p1->cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    sse_event(s, 1, ev, sizeof(ev));
    ASSERT_EQ(signal_in(ev, wire), done);
    sse_close(s);
    printf("count = %d, one per 200: ok\n", done);
}

/* devMode off: an action without Origin is refused; with a matching one
 * (http or https) it runs. */
static void no_dev_mode(hm_backend_kind backend)
{
    hm_bench_app_options o = ba_test_options(backend);
    o.dev_mode = false;
    int port;
    pid_t pid = start_server(&o, &port);
    page p;
    get_page(port, NULL, &p);
    resp r;
    action(port, "increment", &p, NULL, -1, &r);
    ASSERT_EQ(r.status, 403);
    ASSERT_STREQ(r.body, "Forbidden: untrusted origin");
    char origin[128];
    snprintf(origin, sizeof(origin), "Origin: https://127.0.0.1:%d\r\n", port);
    action(port, "increment", &p, origin, -1, &r);
    ASSERT_EQ(r.status, 200);
    check_count(port, &p, 1);
    stop_server(pid);
    printf("devMode off: no Origin 403, a matching https Origin 200: ok\n");
}

int main(int argc, char **argv)
{
    hm_backend_kind backend = ba_test_begin(argc, argv, true);
    hm_bench_app_options o = ba_test_options(backend);
    int port;
    pid_t pid = start_server(&o, &port);
    page p1;
    get_page(port, NULL, &p1);
    int done = 0;
    outcomes(port, &p1, &done);
    signal_sources(port, &p1, &done);
    check_count(port, &p1, done);
    stop_server(pid);
    no_dev_mode(backend);
    return 0;
}

/* bench_app pages: every GET of a route makes a new context bound to the
 * request's session (a fresh one, or the cookie's, even one the client
 * chose, url-decoded as OpenSwoole reads it and url-encoded as it writes
 * it back), the page's shell and meta tag, the session cookie and its
 * expires; HEAD answers without a context; unknown paths and static files
 * answer 404. argv[1]: the engine backend. */
#include "bench_app_client.h"

int main(int argc, char **argv)
{
    hm_bench_app_options o = ba_test_options(ba_test_begin(argc, argv, true));
    int port;
    pid_t pid = start_server(&o, &port);

    page p1, p2;
    get_page(port, NULL, &p1); /* the whole page is checked */
    ASSERT_EQ(strlen(p1.session), 32);
    ASSERT(is_hex(p1.session, 32));
    get_page(port, p1.cookie_hdr, &p2);
    ASSERT(strcmp(p1.ctx, p2.ctx) != 0);  /* every GET: a new context */
    ASSERT_STREQ(p2.session, p1.session); /* the cookie's session is adopted */
    page own;
    get_page(port, "Cookie: a=b; via_session_id=chosen-by-client; c=d\r\n", &own);
    ASSERT_STREQ(own.session, "chosen-by-client"); /* unvalidated */
    /* OpenSwoole url-decodes cookie values (the last one wins) and
     * url-encodes the value it sets. */
    page enc;
    get_page(port, "Cookie: via_session_id=x; via_session_id=\"a%20b%2Fc\"\r\n", &enc);
    ASSERT_STREQ(enc.session, "a+b%2Fc");
    resp r;
    action(port, "increment", &enc, NULL, -1, &r); /* the cookie as set works */
    ASSERT_EQ(r.status, 200);
    /* "" and "0" are no session: a fresh one. */
    page fresh;
    get_page(port, "Cookie: via_session_id=0\r\n", &fresh);
    ASSERT_EQ(strlen(fresh.session), 32);
    ASSERT_EQ(health_count(port, "contexts"), 5);
    printf("pages: a context per GET, session cookie fresh / adopted / url-decoded and "
           "re-encoded: ok\n");

    req1(port, "HEAD", "/bench/counter", NULL, NULL, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT_EQ(r.body_len, 0);
    ASSERT_STREQ(r.ctype, "text/html; charset=utf-8");
    ASSERT_STREQ(r.cookie, "");
    ASSERT_EQ(health_count(port, "contexts"), 5); /* HEAD makes no context */
    req1(port, "HEAD", "/nope", NULL, NULL, &r);
    ASSERT_EQ(r.status, 404);
    ASSERT_EQ(r.body_len, 0);
    req1(port, "GET", "/nope", NULL, NULL, &r);
    ASSERT_EQ(r.status, 404);
    ASSERT_STREQ(r.body, "Not Found");
    req1(port, "GET", "/datastar.js", NULL, NULL, &r);
    ASSERT_EQ(r.status, 404);
    ASSERT_EQ(via_worker(r.head), 0); /* every response names its worker */
    printf("HEAD without a context, 404 for unknown paths and static files: ok\n");
    stop_server(pid);
    return 0;
}

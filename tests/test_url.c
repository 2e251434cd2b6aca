/* URL parsing, Host/Origin/request-target formatting, resolution of literal
 * addresses and localhost, and encodeURIComponent-compatible encoding. */
#include "base/hm_base.h"
#include "hm_test.h"
#include "proto/url.h"

#include <arpa/inet.h>
#include <netinet/in.h>

static void test_defaults(void)
{
    hm_url u;
    ASSERT_EQ(hm_url_parse("http://example.com", &u), 0);
    ASSERT(!u.tls);
    ASSERT(!u.ipv6);
    ASSERT_STREQ(u.host, "example.com");
    ASSERT_EQ(u.port, 80);
    ASSERT_STREQ(u.path, "/");
    ASSERT_STREQ(u.query, "");
    hm_url_free(&u);
    ASSERT(u.host == NULL);

    ASSERT_EQ(hm_url_parse("https://example.com/", &u), 0);
    ASSERT(u.tls);
    ASSERT_EQ(u.port, 443);
    ASSERT_EQ(hm_url_default_port(&u), 443);
    hm_url_free(&u);

    /* An empty port means the default, as in browsers. */
    ASSERT_EQ(hm_url_parse("http://h:/x", &u), 0);
    ASSERT_EQ(u.port, 80);
    ASSERT_STREQ(u.path, "/x");
    hm_url_free(&u);
}

static void test_full(void)
{
    hm_url u;
    char buf[128];
    ASSERT_EQ(hm_url_parse("HTTPS://Example.COM:8443/a/B?x=1&y=%20#frag?not", &u), 0);
    ASSERT(u.tls);
    ASSERT_STREQ(u.host, "example.com"); /* host lower-cased, path untouched */
    ASSERT_EQ(u.port, 8443);
    ASSERT_STREQ(u.path, "/a/B");
    ASSERT_STREQ(u.query, "x=1&y=%20");
    ASSERT_EQ(hm_url_host_header(&u, buf, sizeof(buf)), 16);
    ASSERT_STREQ(buf, "example.com:8443");
    ASSERT_EQ(hm_url_origin(&u, buf, sizeof(buf)), 24);
    ASSERT_STREQ(buf, "https://example.com:8443");
    ASSERT_EQ(hm_url_request_target(&u, buf, sizeof(buf)), 14);
    ASSERT_STREQ(buf, "/a/B?x=1&y=%20");
    hm_url_free(&u);

    /* Query without a path; fragment without a query. */
    ASSERT_EQ(hm_url_parse("http://h?q=1", &u), 0);
    ASSERT_STREQ(u.path, "/");
    ASSERT_STREQ(u.query, "q=1");
    ASSERT_EQ(hm_url_request_target(&u, buf, sizeof(buf)), 5);
    ASSERT_STREQ(buf, "/?q=1");
    hm_url_free(&u);
    ASSERT_EQ(hm_url_parse("http://h/p#f", &u), 0);
    ASSERT_STREQ(u.path, "/p");
    ASSERT_STREQ(u.query, "");
    ASSERT_EQ(hm_url_request_target(&u, buf, sizeof(buf)), 2);
    ASSERT_STREQ(buf, "/p");
    hm_url_free(&u);
}

static void test_host_and_origin(void)
{
    hm_url u;
    char buf[64];

    /* Default port is omitted, a non-default one kept, per scheme. */
    ASSERT_EQ(hm_url_parse("http://127.0.0.1:80/", &u), 0);
    ASSERT_EQ(hm_url_host_header(&u, buf, sizeof(buf)), 9);
    ASSERT_STREQ(buf, "127.0.0.1");
    ASSERT_EQ(hm_url_origin(&u, buf, sizeof(buf)), 16);
    ASSERT_STREQ(buf, "http://127.0.0.1");
    hm_url_free(&u);

    ASSERT_EQ(hm_url_parse("http://h:443/", &u), 0);
    ASSERT_EQ(hm_url_host_header(&u, buf, sizeof(buf)), 5);
    ASSERT_STREQ(buf, "h:443");
    hm_url_free(&u);

    ASSERT_EQ(hm_url_parse("https://h:443/", &u), 0);
    ASSERT_EQ(hm_url_host_header(&u, buf, sizeof(buf)), 1);
    ASSERT_STREQ(buf, "h");
    ASSERT_EQ(hm_url_origin(&u, buf, sizeof(buf)), 9);
    ASSERT_STREQ(buf, "https://h");
    hm_url_free(&u);

    /* IPv6 literal with a port: stored bare, re-bracketed on output. */
    ASSERT_EQ(hm_url_parse("http://[::1]:8080/bench/counter?x", &u), 0);
    ASSERT(u.ipv6);
    ASSERT_STREQ(u.host, "::1");
    ASSERT_EQ(u.port, 8080);
    ASSERT_STREQ(u.path, "/bench/counter");
    ASSERT_STREQ(u.query, "x");
    ASSERT_EQ(hm_url_host_header(&u, buf, sizeof(buf)), 10);
    ASSERT_STREQ(buf, "[::1]:8080");
    ASSERT_EQ(hm_url_origin(&u, buf, sizeof(buf)), 17);
    ASSERT_STREQ(buf, "http://[::1]:8080");
    hm_url_free(&u);

    ASSERT_EQ(hm_url_parse("https://[2001:DB8::1]", &u), 0);
    ASSERT_STREQ(u.host, "2001:db8::1");
    ASSERT_EQ(u.port, 443);
    ASSERT_STREQ(u.path, "/");
    ASSERT_EQ(hm_url_origin(&u, buf, sizeof(buf)), 21);
    ASSERT_STREQ(buf, "https://[2001:db8::1]");
    hm_url_free(&u);

    /* Too small: -ENOSPC and an empty, terminated buffer. */
    ASSERT_EQ(hm_url_parse("http://example.com:8080/", &u), 0);
    ASSERT_EQ(hm_url_host_header(&u, buf, 17), 16);
    ASSERT_EQ(hm_url_host_header(&u, buf, 16), -ENOSPC);
    ASSERT_STREQ(buf, "");
    ASSERT_EQ(hm_url_origin(&u, buf, 24), 23);
    ASSERT_EQ(hm_url_origin(&u, buf, 23), -ENOSPC);
    ASSERT_STREQ(buf, "");
    ASSERT_EQ(hm_url_origin(&u, buf, 5), -ENOSPC);
    ASSERT_EQ(hm_url_request_target(&u, buf, 1), -ENOSPC);
    hm_url_free(&u);
}

static void test_ports(void)
{
    hm_url u;
    ASSERT_EQ(hm_url_parse("http://h:1/", &u), 0);
    ASSERT_EQ(u.port, 1);
    hm_url_free(&u);
    ASSERT_EQ(hm_url_parse("http://h:65535", &u), 0);
    ASSERT_EQ(u.port, 65535);
    hm_url_free(&u);

    static const char *const bad[] = {
        "http://h:0/",     "http://h:65536/", "http://h:99999999999999999999/",
        "http://h:8a/",    "http://h:-1/",    "http://h:80:90/",
        "http://[::1]:0/", "http://[::1]x/",
    };
    for (size_t i = 0; i < HM_ARRAY_LEN(bad); i++) {
        int rc = hm_url_parse(bad[i], &u);
        if (rc != -HM_EPARSE) HM_FAIL_("%s: got %d", bad[i], rc);
        ASSERT(u.host == NULL); /* failed parse leaves a zeroed url */
        hm_url_free(&u);
    }
}

static void test_rejects(void)
{
    static const char *const bad[] = {
        "",
        "ftp://h/",
        "ws://h/",
        "http//h/",
        "http:/h/",
        "//h/",
        "/path",
        "http:///path",
        "http://?q",
        "http://user@h/",
        "http://user:pw@h/",
        "http://[::1/",
        "http://[]/",
        "http://[zz::1]/",
        "http://::1/",
        "http://a b/",
        "http://h/a b",
        "http://h/\x01",
        "http://h/caf\xc3\xa9",
        "http://h^/",
    };
    hm_url u;
    for (size_t i = 0; i < HM_ARRAY_LEN(bad); i++) {
        int rc = hm_url_parse(bad[i], &u);
        if (rc != -HM_EPARSE) HM_FAIL_("\"%s\": got %d", bad[i], rc);
        hm_url_free(&u);
    }
    hm_url_free(NULL);
}

static void test_resolve(void)
{
    hm_url u;
    struct sockaddr_storage ss;
    socklen_t len = 0;

    ASSERT_EQ(hm_url_parse("http://127.0.0.1:8080/", &u), 0);
    ASSERT_EQ(hm_url_resolve(&u, &ss, &len), 0);
    ASSERT_EQ(ss.ss_family, AF_INET);
    ASSERT_EQ(len, sizeof(struct sockaddr_in));
    const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ss;
    ASSERT_EQ(ntohs(s4->sin_port), 8080);
    ASSERT_EQ(ntohl(s4->sin_addr.s_addr), 0x7f000001);
    hm_url_free(&u);

    ASSERT_EQ(hm_url_parse("https://[::1]/", &u), 0);
    ASSERT_EQ(hm_url_resolve(&u, &ss, &len), 0);
    ASSERT_EQ(ss.ss_family, AF_INET6);
    ASSERT_EQ(len, sizeof(struct sockaddr_in6));
    const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&ss;
    ASSERT_EQ(ntohs(s6->sin6_port), 443);
    ASSERT(IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr));
    hm_url_free(&u);

    /* A name goes through getaddrinfo; localhost is in /etc/hosts. */
    ASSERT_EQ(hm_url_parse("http://localhost:9000/", &u), 0);
    ASSERT_EQ(hm_url_resolve(&u, &ss, &len), 0);
    ASSERT(ss.ss_family == AF_INET || ss.ss_family == AF_INET6);
    if (ss.ss_family == AF_INET)
        ASSERT_EQ(ntohs(((struct sockaddr_in *)&ss)->sin_port), 9000);
    else
        ASSERT_EQ(ntohs(((struct sockaddr_in6 *)&ss)->sin6_port), 9000);
    hm_url_free(&u);
}

static void test_encode_component(void)
{
    char out[256];
    const char *json = "{\"via_ctx\":\"/bench/counter_/3f2a\"}";
    const char *want = "%7B%22via_ctx%22%3A%22%2Fbench%2Fcounter_%2F3f2a%22%7D";
    ASSERT_EQ(hm_url_encode_component(json, strlen(json), out, sizeof(out)), (int)strlen(want));
    ASSERT_STREQ(out, want);

    /* encodeURIComponent keeps exactly these; UTF-8 bytes become %XX each. */
    const char *keep = "AZaz09-_.!~*'()";
    ASSERT_EQ(hm_url_encode_component(keep, strlen(keep), out, sizeof(out)), (int)strlen(keep));
    ASSERT_STREQ(out, keep);
    const char *mixed = "a b&c=d/\xc3\xa9?#+,;:@$[]";
    const char *mixed_want = "a%20b%26c%3Dd%2F%C3%A9%3F%23%2B%2C%3B%3A%40%24%5B%5D";
    ASSERT_EQ(hm_url_encode_component(mixed, strlen(mixed), out, sizeof(out)),
              (int)strlen(mixed_want));
    ASSERT_STREQ(out, mixed_want);

    /* Only n bytes are read, so an embedded NUL is encoded too. */
    ASSERT_EQ(hm_url_encode_component("a\0b", 3, out, sizeof(out)), 5);
    ASSERT_STREQ(out, "a%00b");
    ASSERT_EQ(hm_url_encode_component("", 0, out, 1), 0);
    ASSERT_STREQ(out, "");

    /* The terminating NUL must fit as well. */
    ASSERT_EQ(hm_url_encode_component("ab/", 3, out, 6), 5);
    ASSERT_EQ(hm_url_encode_component("ab/", 3, out, 5), -ENOSPC);
    ASSERT_STREQ(out, "");
    ASSERT_EQ(hm_url_encode_component("ab", 2, out, 2), -ENOSPC);
    ASSERT_EQ(hm_url_encode_component("", 0, out, 0), -ENOSPC);
}

int main(void)
{
    test_defaults();
    test_full();
    test_host_and_origin();
    test_ports();
    test_rejects();
    test_resolve();
    test_encode_component();
    puts("url: ok");
    return 0;
}

/* Cookie jar: php-via's session cookies in all three shapes, the date
 * formats, Max-Age/Expires rules, path and domain matching, replacement,
 * expiry and the order of the Cookie header. */
#include "base/hm_base.h"
#include "hm_test.h"
#include "proto/cookie.h"

#include <stdbool.h>

#define NOW 1700000000 /* 2023-11-14, before every future date used here */
#define T_2030_12_28_10_00 1924682400

static int set(hm_cookie_jar *jar, const char *v, const char *host, const char *path, bool tls,
               int64_t now)
{
    return hm_cookie_jar_set(jar, v, strlen(v), host, path, tls, now);
}

/* Cookie header for host/path at now; the buffer is static for brevity. */
static const char *header(const hm_cookie_jar *jar, const char *host, const char *path, bool tls,
                          int64_t now)
{
    static char buf[512];
    int n = hm_cookie_jar_header(jar, host, path, tls, now, buf, sizeof(buf));
    if (n < 0) HM_FAIL_("header: %d", n);
    if ((size_t)n != strlen(buf)) HM_FAIL_("header length %d for \"%s\"", n, buf);
    return buf;
}

static const hm_cookie *find(const hm_cookie_jar *jar, const char *name)
{
    for (size_t i = 0; i < jar->len; i++)
        if (strcmp(jar->items[i].name, name) == 0) return &jar->items[i];
    return NULL;
}

static void test_openswoole_session_cookie(void)
{
    hm_cookie_jar jar;
    hm_cookie_jar_init(&jar);
    const char *sc = "via_session_id=0123456789abcdef0123456789abcdef; "
                     "expires=Sat, 28-Dec-2030 10:00:00 GMT; path=/; httponly; samesite=Lax";
    ASSERT_EQ(set(&jar, sc, "127.0.0.1", "/bench/counter", false, NOW), 0);
    ASSERT_EQ(jar.len, 1);
    const hm_cookie *c = &jar.items[0];
    ASSERT_STREQ(c->name, "via_session_id");
    ASSERT_STREQ(c->value, "0123456789abcdef0123456789abcdef");
    ASSERT_STREQ(c->domain, "127.0.0.1");
    ASSERT_STREQ(c->path, "/");
    ASSERT_EQ(c->expires_s, T_2030_12_28_10_00);
    ASSERT(c->host_only);
    ASSERT(c->http_only);
    ASSERT(!c->secure);
    ASSERT(!c->partitioned);
    ASSERT_EQ(c->samesite, HM_SAMESITE_LAX);
    ASSERT_STREQ(hm_cookie_jar_get(&jar, "via_session_id"), "0123456789abcdef0123456789abcdef");
    ASSERT(hm_cookie_jar_get(&jar, "other") == NULL);

    ASSERT_STREQ(header(&jar, "127.0.0.1", "/_action/increment", false, NOW),
                 "via_session_id=0123456789abcdef0123456789abcdef");
    ASSERT_STREQ(header(&jar, "127.0.0.1", "/_sse?datastar=%7B%7D", true, NOW),
                 "via_session_id=0123456789abcdef0123456789abcdef");
    /* Host-only: not for another host, nor a subdomain. */
    ASSERT_STREQ(header(&jar, "127.0.0.2", "/", false, NOW), "");
    ASSERT_STREQ(header(&jar, "x.127.0.0.1", "/", false, NOW), "");
    /* Gone the second it expires. */
    ASSERT_STREQ(header(&jar, "127.0.0.1", "/", false, T_2030_12_28_10_00 - 1),
                 "via_session_id=0123456789abcdef0123456789abcdef");
    ASSERT_STREQ(header(&jar, "127.0.0.1", "/", false, T_2030_12_28_10_00), "");
    hm_cookie_jar_free(&jar);
    ASSERT_EQ(jar.len, 0);
    hm_cookie_jar_free(&jar); /* idempotent */
}

static void test_secure_variants(void)
{
    hm_cookie_jar jar;
    hm_cookie_jar_init(&jar);
    const char *sc =
        "__Host-via_session_id=fedcba9876543210fedcba9876543210; "
        "expires=Sat, 28-Dec-2030 10:00:00 GMT; path=/; secure; httponly; samesite=Lax";
    /* RFC 6265bis: a Secure cookie from a plain-http response is refused. */
    ASSERT_EQ(set(&jar, sc, "localhost", "/", false, NOW), -EPERM);
    ASSERT_EQ(jar.len, 0);
    ASSERT_EQ(set(&jar, sc, "localhost", "/", true, NOW), 0);
    ASSERT(jar.items[0].secure);
    ASSERT_STREQ(header(&jar, "localhost", "/", true, NOW),
                 "__Host-via_session_id=fedcba9876543210fedcba9876543210");
    ASSERT_STREQ(header(&jar, "localhost", "/", false, NOW), ""); /* never over plain http */

    /* Prefix rules: __Host- needs Secure, no Domain and Path=/; __Secure- needs Secure. */
    ASSERT_EQ(set(&jar, "__Host-a=1; Path=/", "localhost", "/", true, NOW), -EPERM);
    ASSERT_EQ(set(&jar, "__Host-a=1; Secure; Path=/x", "localhost", "/", true, NOW), -EPERM);
    ASSERT_EQ(
        set(&jar, "__Host-a=1; Secure; Path=/; Domain=localhost", "localhost", "/", true, NOW),
        -EPERM);
    ASSERT_EQ(set(&jar, "__host-a=1; Secure", "localhost", "/deep/page", true, NOW), -EPERM);
    ASSERT_EQ(set(&jar, "__Secure-b=1", "localhost", "/", true, NOW), -EPERM);
    ASSERT_EQ(set(&jar, "__Secure-b=1; Secure; Path=/p", "localhost", "/", true, NOW), 0);
    ASSERT_EQ(jar.len, 2);

    /* withEmbeddable's hand-written header. */
    const char *emb = "via_session_id=0123456789abcdef0123456789abcdef; Path=/; Max-Age=2592000; "
                      "HttpOnly; SameSite=None; Secure; Partitioned";
    ASSERT_EQ(set(&jar, emb, "app.example", "/", true, NOW), 0);
    const hm_cookie *c = find(&jar, "via_session_id");
    ASSERT(c != NULL);
    ASSERT(c->secure && c->http_only && c->partitioned);
    ASSERT_EQ(c->samesite, HM_SAMESITE_NONE);
    ASSERT_EQ(c->expires_s, NOW + 2592000);
    ASSERT_STREQ(header(&jar, "app.example", "/", false, NOW), "");
    ASSERT_STREQ(header(&jar, "app.example", "/", true, NOW),
                 "via_session_id=0123456789abcdef0123456789abcdef");
    hm_cookie_jar_free(&jar);
}

static void test_date_formats(void)
{
    static const char *const dates[] = {
        "Sat, 28 Dec 2030 10:00:00 GMT",     /* RFC 1123 */
        "Sat, 28-Dec-2030 10:00:00 GMT",     /* Netscape / OpenSwoole */
        "Saturday, 28-Dec-30 10:00:00 GMT",  /* RFC 850, two-digit year */
        "Sat, 28 Dec 30 10:00:00 GMT",       /* two-digit year */
        "Sat Dec 28 10:00:00 2030",          /* asctime */
        "  sat, 28-dec-2030 10:00:00 gmt  ", /* case and spacing */
        "28 Dec 2030 10:00:00 GMT",          /* no weekday */
        "Sat, 28 Dec 2030 10:00:00 UTC",
    };
    for (size_t i = 0; i < HM_ARRAY_LEN(dates); i++) {
        hm_cookie_jar jar;
        hm_cookie_jar_init(&jar);
        char sc[128];
        snprintf(sc, sizeof(sc), "d=1; Expires=%s", dates[i]);
        ASSERT_EQ(set(&jar, sc, "h", "/", false, NOW), 0);
        ASSERT_EQ(jar.len, 1);
        if (jar.items[0].expires_s != T_2030_12_28_10_00)
            HM_FAIL_("\"%s\" -> %" PRId64, dates[i], jar.items[0].expires_s);
        hm_cookie_jar_free(&jar);
    }

    /* An unparseable date is ignored, leaving a session cookie. */
    hm_cookie_jar jar;
    hm_cookie_jar_init(&jar);
    ASSERT_EQ(set(&jar, "d=1; expires=soon", "h", "/", false, NOW), 0);
    ASSERT_EQ(jar.items[0].expires_s, HM_COOKIE_SESSION);
    ASSERT_EQ(
        set(&jar, "e=1; expires=Sat, 28-Dec-2030 10:00:00 GMT trailing", "h", "/", false, NOW), 0);
    ASSERT_EQ(find(&jar, "e")->expires_s, HM_COOKIE_SESSION);
    hm_cookie_jar_free(&jar);
}

static void test_max_age_and_deletion(void)
{
    hm_cookie_jar jar;
    hm_cookie_jar_init(&jar);

    /* Max-Age wins over Expires whichever comes first. */
    ASSERT_EQ(
        set(&jar, "a=1; Max-Age=100; Expires=Thu, 01 Jan 1970 00:00:00 GMT", "h", "/", false, NOW),
        0);
    ASSERT_EQ(find(&jar, "a")->expires_s, NOW + 100);
    ASSERT_EQ(
        set(&jar, "b=1; Expires=Sat, 28-Dec-2030 10:00:00 GMT; max-age=50", "h", "/", false, NOW),
        0);
    ASSERT_EQ(find(&jar, "b")->expires_s, NOW + 50);
    /* The last Max-Age counts; a malformed one is ignored. */
    ASSERT_EQ(set(&jar, "c=1; Max-Age=10; Max-Age=20; Max-Age=x1", "h", "/", false, NOW), 0);
    ASSERT_EQ(find(&jar, "c")->expires_s, NOW + 20);
    ASSERT_EQ(jar.len, 3);

    /* Max-Age=0 and negative delete; so does an Expires in the past. */
    ASSERT_EQ(set(&jar, "a=gone; Max-Age=0", "h", "/", false, NOW), 0);
    ASSERT(hm_cookie_jar_get(&jar, "a") == NULL);
    ASSERT_EQ(set(&jar, "b=gone; Max-Age=-1; Expires=Sat, 28-Dec-2030 10:00:00 GMT", "h", "/",
                  false, NOW),
              0);
    ASSERT(hm_cookie_jar_get(&jar, "b") == NULL);
    ASSERT_EQ(set(&jar, "c=; expires=Thu, 01 Jan 1970 00:00:00 GMT", "h", "/", false, NOW), 0);
    ASSERT(hm_cookie_jar_get(&jar, "c") == NULL);
    ASSERT_EQ(jar.len, 0);
    /* An already expired cookie that matches nothing is simply not stored. */
    ASSERT_EQ(set(&jar, "z=1; Max-Age=0", "h", "/", false, NOW), 0);
    ASSERT_EQ(jar.len, 0);

    /* Deletion needs the same domain and path. */
    ASSERT_EQ(set(&jar, "p=1; Path=/x", "h", "/", false, NOW), 0);
    ASSERT_EQ(set(&jar, "p=1; Max-Age=0", "h", "/", false, NOW), 0);
    ASSERT_EQ(jar.len, 1);
    ASSERT_EQ(set(&jar, "p=1; Max-Age=0; Path=/x", "h", "/", false, NOW), 0);
    ASSERT_EQ(jar.len, 0);
    hm_cookie_jar_free(&jar);
}

static void test_expiry_by_now(void)
{
    hm_cookie_jar jar;
    hm_cookie_jar_init(&jar);
    ASSERT_EQ(set(&jar, "e=1; Max-Age=10", "h", "/", false, 1000), 0);
    ASSERT_EQ(set(&jar, "s=1", "h", "/", false, 1000), 0);
    ASSERT_STREQ(header(&jar, "h", "/", false, 1009), "e=1; s=1");
    ASSERT_STREQ(header(&jar, "h", "/", false, 1010), "s=1");
    ASSERT_STREQ(hm_cookie_jar_get(&jar, "e"), "1"); /* still held until the next set */
    ASSERT_EQ(set(&jar, "t=1", "h", "/", false, 2000), 0);
    ASSERT(hm_cookie_jar_get(&jar, "e") == NULL);
    ASSERT_EQ(jar.len, 2);
    hm_cookie_jar_free(&jar);
}

static void test_paths(void)
{
    hm_cookie_jar jar;
    hm_cookie_jar_init(&jar);
    ASSERT_EQ(set(&jar, "p=1; Path=/a", "h", "/", false, NOW), 0);
    ASSERT_STREQ(header(&jar, "h", "/a", false, NOW), "p=1");
    ASSERT_STREQ(header(&jar, "h", "/a/b", false, NOW), "p=1");
    ASSERT_STREQ(header(&jar, "h", "/a?x=1", false, NOW), "p=1");
    ASSERT_STREQ(header(&jar, "h", "/ab", false, NOW), "");
    ASSERT_STREQ(header(&jar, "h", "/", false, NOW), "");
    ASSERT_STREQ(header(&jar, "h", "/b/a", false, NOW), "");
    hm_cookie_jar_free(&jar);

    hm_cookie_jar_init(&jar);
    ASSERT_EQ(set(&jar, "q=1; Path=/a/", "h", "/", false, NOW), 0);
    ASSERT_STREQ(header(&jar, "h", "/a/b", false, NOW), "q=1");
    ASSERT_STREQ(header(&jar, "h", "/a/", false, NOW), "q=1");
    ASSERT_STREQ(header(&jar, "h", "/a", false, NOW), "");
    hm_cookie_jar_free(&jar);

    /* Default path (§5.1.4): the request path up to its last '/'. */
    hm_cookie_jar_init(&jar);
    ASSERT_EQ(set(&jar, "d=1", "h", "/x/y/z?q=/w/v", false, NOW), 0);
    ASSERT_STREQ(jar.items[0].path, "/x/y");
    ASSERT_EQ(set(&jar, "e=1", "h", "/x", false, NOW), 0);
    ASSERT_STREQ(find(&jar, "e")->path, "/");
    ASSERT_EQ(set(&jar, "f=1; Path=relative", "h", "/x/y/z", false, NOW), 0);
    ASSERT_STREQ(find(&jar, "f")->path, "/x/y");
    ASSERT_EQ(set(&jar, "g=1; Path=", "h", "/x/", false, NOW), 0);
    ASSERT_STREQ(find(&jar, "g")->path, "/x");
    ASSERT_STREQ(header(&jar, "h", "/x/yz", false, NOW), "g=1; e=1");
    hm_cookie_jar_free(&jar);
}

static void test_domains(void)
{
    hm_cookie_jar jar;
    hm_cookie_jar_init(&jar);
    ASSERT_EQ(set(&jar, "d=1; Domain=.Example.COM", "www.example.com", "/", false, NOW), 0);
    ASSERT(!jar.items[0].host_only);
    ASSERT_STREQ(jar.items[0].domain, "example.com");
    ASSERT_STREQ(header(&jar, "example.com", "/", false, NOW), "d=1");
    ASSERT_STREQ(header(&jar, "a.b.Example.com", "/", false, NOW), "d=1");
    ASSERT_STREQ(header(&jar, "badexample.com", "/", false, NOW), "");

    /* A Domain that does not cover the request host is refused. */
    ASSERT_EQ(set(&jar, "x=1; Domain=other.com", "www.example.com", "/", false, NOW), -EPERM);
    ASSERT_EQ(set(&jar, "x=1; Domain=www.example.com", "example.com", "/", false, NOW), -EPERM);
    ASSERT_EQ(set(&jar, "x=1; Domain=0.0.1", "127.0.0.1", "/", false, NOW), -EPERM);
    ASSERT_EQ(jar.len, 1);

    /* Empty Domain is ignored: host-only. */
    ASSERT_EQ(set(&jar, "h=1; Domain=", "WWW.example.com", "/", false, NOW), 0);
    const hm_cookie *c = find(&jar, "h");
    ASSERT(c->host_only);
    ASSERT_STREQ(c->domain, "www.example.com");
    ASSERT_STREQ(header(&jar, "www.example.com", "/", false, NOW), "d=1; h=1");
    ASSERT_STREQ(header(&jar, "a.www.example.com", "/", false, NOW), "d=1");
    hm_cookie_jar_free(&jar);
}

static void test_replacement_and_order(void)
{
    hm_cookie_jar jar;
    hm_cookie_jar_init(&jar);
    ASSERT_EQ(set(&jar, "x=1", "h", "/", false, NOW), 0);
    ASSERT_EQ(set(&jar, "y=2", "h", "/", false, NOW), 0);
    ASSERT_EQ(set(&jar, "x=3; HttpOnly", "h", "/", false, NOW), 0);
    ASSERT_EQ(jar.len, 2);
    ASSERT(find(&jar, "x")->http_only); /* attributes replaced too */
    /* Replacement keeps the creation time, so x stays first. */
    ASSERT_STREQ(header(&jar, "h", "/", false, NOW), "x=3; y=2");
    /* Same name, other path: a second cookie. */
    ASSERT_EQ(set(&jar, "x=4; Path=/a", "h", "/", false, NOW), 0);
    ASSERT_EQ(jar.len, 3);

    /* Longer paths first, then older first. */
    ASSERT_EQ(set(&jar, "long=1; Path=/a/b", "h", "/", false, NOW), 0);
    ASSERT_EQ(set(&jar, "mid=1; Path=/a", "h", "/", false, NOW), 0);
    ASSERT_STREQ(header(&jar, "h", "/a/b/c", false, NOW), "long=1; x=4; mid=1; x=3; y=2");
    ASSERT_STREQ(header(&jar, "h", "/a", false, NOW), "x=4; mid=1; x=3; y=2");

    /* Header buffer too small: -ENOSPC, buffer emptied. */
    char small[12];
    ASSERT_EQ(hm_cookie_jar_header(&jar, "h", "/a/b", false, NOW, small, sizeof(small)), -ENOSPC);
    ASSERT_STREQ(small, "");
    ASSERT_EQ(hm_cookie_jar_header(&jar, "h", "/", false, NOW, small, 9), 8);
    ASSERT_STREQ(small, "x=3; y=2");
    ASSERT_EQ(hm_cookie_jar_header(&jar, "h", "/", false, NOW, small, 8), -ENOSPC);
    ASSERT_EQ(hm_cookie_jar_header(&jar, "nobody", "/", false, NOW, small, 1), 0);
    ASSERT_EQ(hm_cookie_jar_header(&jar, "nobody", "/", false, NOW, small, 0), -ENOSPC);
    hm_cookie_jar_free(&jar);
}

static void test_parsing(void)
{
    hm_cookie_jar jar;
    hm_cookie_jar_init(&jar);
    ASSERT_EQ(set(&jar, "novalue", "h", "/", false, NOW), -HM_EPARSE);
    ASSERT_EQ(set(&jar, "=v", "h", "/", false, NOW), -HM_EPARSE);
    ASSERT_EQ(set(&jar, "  =v; Path=/", "h", "/", false, NOW), -HM_EPARSE);
    ASSERT_EQ(set(&jar, "", "h", "/", false, NOW), -HM_EPARSE);
    ASSERT_EQ(set(&jar, "a=b\x01", "h", "/", false, NOW), -HM_EPARSE);
    /* A control byte in an attribute drops the whole cookie too (a NUL in
     * Domain used to be stored, cutting the domain short). */
    static const char nul_domain[] = "ip=1; Domain=127.0.0.1\0.evil";
    ASSERT_EQ(
        hm_cookie_jar_set(&jar, nul_domain, sizeof(nul_domain) - 1, "127.0.0.1", "/", false, NOW),
        -HM_EPARSE);
    ASSERT_EQ(set(&jar, "p=1; Path=/a\x1f", "h", "/", false, NOW), -HM_EPARSE);
    ASSERT_EQ(set(&jar, "t=1;\tPath=/t", "h", "/", false, NOW), 0); /* HTAB is allowed */
    ASSERT_STREQ(find(&jar, "t")->path, "/t");
    ASSERT_EQ(set(&jar, "t=; Max-Age=0; Path=/t", "h", "/", false, NOW), 0);
    ASSERT_EQ(jar.len, 0);

    /* Whitespace trimmed around name, value and attributes; '=' in values kept. */
    ASSERT_EQ(set(&jar, " \tsp  =  v v=x  ;  PATH = /p ;SECURE;  ;junk", "h", "/", true, NOW), 0);
    const hm_cookie *c = &jar.items[0];
    ASSERT_STREQ(c->name, "sp");
    ASSERT_STREQ(c->value, "v v=x");
    ASSERT_STREQ(c->path, "/p");
    ASSERT(c->secure);
    ASSERT_EQ(c->samesite, HM_SAMESITE_DEFAULT);
    ASSERT_EQ(set(&jar, "e=", "h", "/", false, NOW), 0); /* empty value is fine */
    ASSERT_STREQ(hm_cookie_jar_get(&jar, "e"), "");

    /* Only len bytes are read: the Path beyond them is not seen. */
    const char *sc = "k=v; Path=/deep";
    ASSERT_EQ(hm_cookie_jar_set(&jar, sc, 3, "h", "/", false, NOW), 0);
    ASSERT_STREQ(find(&jar, "k")->path, "/");
    ASSERT_STREQ(find(&jar, "k")->value, "v");
    hm_cookie_jar_free(&jar);
}

static void test_put(void)
{
    hm_cookie_jar jar;
    hm_cookie_jar_init(&jar);
    ASSERT_EQ(
        hm_cookie_jar_put(&jar, "via_session_id", "00000000000000000000000000000001", "127.0.0.1"),
        0);
    ASSERT_STREQ(header(&jar, "127.0.0.1", "/bench/counter", false, NOW),
                 "via_session_id=00000000000000000000000000000001");
    ASSERT_STREQ(header(&jar, "localhost", "/", false, NOW), "");

    /* The server's Set-Cookie for the same cookie replaces it in place. */
    ASSERT_EQ(set(&jar,
                  "via_session_id=00000000000000000000000000000001; expires=Sat, 28-Dec-2030 "
                  "10:00:00 GMT; path=/; httponly; samesite=Lax",
                  "127.0.0.1", "/bench/counter", false, NOW),
              0);
    ASSERT_EQ(jar.len, 1);
    ASSERT_EQ(jar.items[0].expires_s, T_2030_12_28_10_00);
    ASSERT_EQ(hm_cookie_jar_put(&jar, "via_session_id", "2", "127.0.0.1"), 0);
    ASSERT_EQ(jar.len, 1);
    ASSERT_STREQ(hm_cookie_jar_get(&jar, "via_session_id"), "2");

    /* A prefixed name is only ever sent over TLS. */
    ASSERT_EQ(hm_cookie_jar_put(&jar, "__Host-via_session_id", "s", "127.0.0.1"), 0);
    ASSERT(find(&jar, "__Host-via_session_id")->secure);
    ASSERT_STREQ(header(&jar, "127.0.0.1", "/", false, NOW), "via_session_id=2");
    ASSERT_STREQ(header(&jar, "127.0.0.1", "/", true, NOW),
                 "via_session_id=2; __Host-via_session_id=s");

    ASSERT_EQ(hm_cookie_jar_put(&jar, "", "v", "h"), -HM_EPARSE);
    ASSERT_EQ(hm_cookie_jar_put(&jar, "a=b", "v", "h"), -HM_EPARSE);
    ASSERT_EQ(hm_cookie_jar_put(&jar, "a", "v;w", "h"), -HM_EPARSE);
    ASSERT_EQ(hm_cookie_jar_put(&jar, "a", "v", ""), -HM_EPARSE);
    ASSERT_EQ(jar.len, 2);
    hm_cookie_jar_free(&jar);
}

/* Issue 11: more Set-Cookies than fit in a 4 KiB buffer used to leave the
 * Cookie header empty (via_session_id included) without a word. */
static void test_many_cookies_all_sent(void)
{
    hm_cookie_jar jar;
    hm_cookie_jar_init(&jar);
    ASSERT_EQ(
        hm_cookie_jar_put(&jar, "via_session_id", "0123456789abcdef0123456789abcdef", "127.0.0.1"),
        0);
    char sc[128];
    for (int i = 0; i < 1000; i++) {
        snprintf(sc, sizeof(sc), "c%03d=%020d; Path=/", i, i);
        ASSERT_EQ(set(&jar, sc, "127.0.0.1", "/", false, NOW), 0);
        ASSERT(jar.error == NULL);
    }
    ASSERT_EQ(jar.len, 1001);
    char *h = hm_cookie_jar_header_dup(&jar, "127.0.0.1", "/bench/counter", false, NOW);
    ASSERT(h != NULL);
    ASSERT(strlen(h) > 4096);
    ASSERT_EQ(strncmp(h, "via_session_id=0123456789abcdef0123456789abcdef; c000=", 54), 0);
    ASSERT(strstr(h, "; c999=00000000000000000999") != NULL);
    /* A buffer of HM_COOKIE_HEADER_MAX always fits; a small one says so. */
    char *buf = hm_alloc(HM_COOKIE_HEADER_MAX);
    ASSERT(buf != NULL);
    ASSERT_EQ(hm_cookie_jar_header(&jar, "127.0.0.1", "/", false, NOW, buf, HM_COOKIE_HEADER_MAX),
              (int)strlen(h));
    ASSERT_STREQ(buf, h);
    char small[4096];
    ASSERT_EQ(hm_cookie_jar_header(&jar, "127.0.0.1", "/", false, NOW, small, sizeof(small)),
              -ENOSPC);
    hm_free(buf);
    hm_free(h);
    h = hm_cookie_jar_header_dup(&jar, "localhost", "/", false, NOW);
    ASSERT_STREQ(h, "");
    hm_free(h);
    hm_cookie_jar_free(&jar);
}

static void test_bounds(void)
{
    hm_cookie_jar jar;
    hm_cookie_jar_init(&jar);
    ASSERT_EQ(hm_cookie_jar_put(&jar, "via_session_id", "s", "h"), 0);
    /* Fill with 1 KiB values until the jar refuses, naming its limit. */
    char sc[1200], value[1001];
    memset(value, 'v', 1000);
    value[1000] = '\0';
    int i, rc = 0;
    for (i = 0; i < 1000 && rc == 0; i++) {
        snprintf(sc, sizeof(sc), "big%d=%s", i, value);
        rc = set(&jar, sc, "h", "/", false, NOW);
    }
    ASSERT_EQ(rc, -HM_ETOOBIG);
    ASSERT(strstr(jar.error, "64 KiB") != NULL);
    ASSERT(jar.bytes <= HM_COOKIE_JAR_MAX_BYTES);
    size_t len = jar.len;
    ASSERT(len > 50 && len < 70);
    /* Nothing was evicted, and the refused cookie is not there. */
    ASSERT_STREQ(hm_cookie_jar_get(&jar, "via_session_id"), "s");
    snprintf(sc, sizeof(sc), "big%d", i - 1);
    ASSERT(hm_cookie_jar_get(&jar, sc) == NULL);
    /* Replacing in place at the same size still works; growing does not. */
    snprintf(sc, sizeof(sc), "big0=%s", value);
    sc[6] = 'w';
    ASSERT_EQ(set(&jar, sc, "h", "/", false, NOW), 0);
    ASSERT(jar.error == NULL);
    ASSERT_EQ(hm_cookie_jar_get(&jar, "big0")[1], 'w');
    /* Deleting makes room again. */
    ASSERT_EQ(set(&jar, "big0=; Max-Age=0", "h", "/", false, NOW), 0);
    ASSERT_EQ(jar.len, len - 1);
    snprintf(sc, sizeof(sc), "again=%s", value);
    ASSERT_EQ(set(&jar, sc, "h", "/", false, NOW), 0);
    ASSERT_EQ(hm_cookie_jar_put(&jar, "more", value, "h"), -HM_ETOOBIG);
    ASSERT(strstr(jar.error, "64 KiB") != NULL);
    hm_cookie_jar_free(&jar);
    ASSERT_EQ(jar.bytes, 0);

    /* The count bound: 3000 cookies, then a clear refusal. */
    hm_cookie_jar_init(&jar);
    for (i = 0; i < HM_COOKIE_JAR_MAX_COOKIES; i++) {
        snprintf(sc, sizeof(sc), "%d=", i);
        ASSERT_EQ(set(&jar, sc, "h", "/", false, NOW), 0);
    }
    ASSERT_EQ(set(&jar, "one-more=1", "h", "/", false, NOW), -HM_ETOOBIG);
    ASSERT(strstr(jar.error, "3000 cookies") != NULL);
    ASSERT_EQ(jar.len, HM_COOKIE_JAR_MAX_COOKIES);
    ASSERT_EQ(set(&jar, "0=replaced", "h", "/", false, NOW), 0); /* replacing adds none */
    char *h = hm_cookie_jar_header_dup(&jar, "h", "/", false, NOW);
    ASSERT(h != NULL && strlen(h) < HM_COOKIE_HEADER_MAX);
    ASSERT_EQ(strncmp(h, "0=replaced; 1=; 2=", 18), 0);
    hm_free(h);
    hm_cookie_jar_free(&jar);

    /* One cookie's name and value: 4096 bytes at most (RFC 6265bis). */
    hm_cookie_jar_init(&jar);
    static char huge[4200];
    memset(huge, 'x', sizeof(huge) - 1);
    huge[0] = 'n';
    huge[1] = '=';
    huge[4097] = '\0'; /* "n=" + 4095 bytes: 4096 in all */
    ASSERT_EQ(set(&jar, huge, "h", "/", false, NOW), 0);
    huge[4097] = 'x';
    huge[4098] = '\0';
    ASSERT_EQ(set(&jar, huge, "h", "/", false, NOW), -HM_ETOOBIG);
    ASSERT(strstr(jar.error, "4096") != NULL);
    ASSERT_EQ(strlen(hm_cookie_jar_get(&jar, "n")), 4095);
    /* An attribute value over 1024 bytes is ignored, not the cookie. */
    char path_attr[1100] = "p=1; Path=/";
    memset(path_attr + strlen(path_attr), 'a', 1020);
    ASSERT_EQ(set(&jar, path_attr, "h", "/x/y", false, NOW), 0);
    ASSERT_EQ(strlen(find(&jar, "p")->path), 1021);
    strcat(path_attr, "aaaa");
    path_attr[0] = 'q';
    ASSERT_EQ(set(&jar, path_attr, "h", "/x/y", false, NOW), 0);
    ASSERT_EQ(jar.len, 3);
    ASSERT_STREQ(find(&jar, "q")->path, "/x"); /* the default path */
    hm_cookie_jar_free(&jar);
}

static void test_error_reasons(void)
{
    hm_cookie_jar jar;
    hm_cookie_jar_init(&jar);
    ASSERT(jar.error == NULL);
    ASSERT_EQ(set(&jar, "novalue", "h", "/", false, NOW), -HM_EPARSE);
    ASSERT(strstr(jar.error, "name=value") != NULL);
    ASSERT_EQ(set(&jar, "a=1; Domain=other.org", "h.example.com", "/", false, NOW), -EPERM);
    ASSERT(strstr(jar.error, "Domain") != NULL);
    ASSERT_EQ(set(&jar, "a=1; Secure", "h", "/", false, NOW), -EPERM);
    ASSERT(strstr(jar.error, "Secure") != NULL);
    ASSERT_EQ(set(&jar, "a=1", "h", "/", false, NOW), 0);
    ASSERT(jar.error == NULL);
    hm_cookie_jar_free(&jar);
}

int main(void)
{
    test_openswoole_session_cookie();
    test_secure_variants();
    test_date_formats();
    test_max_age_and_deletion();
    test_expiry_by_now();
    test_paths();
    test_domains();
    test_replacement_and_order();
    test_parsing();
    test_put();
    test_many_cookies_all_sent();
    test_bounds();
    test_error_reasons();
    puts("cookie: ok");
    return 0;
}

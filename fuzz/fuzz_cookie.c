/* fuzz_cookie.c — Set-Cookie parsing and the cookie jar (src/proto/cookie.h):
 * many Set-Cookie headers from several hosts and paths over time, then the
 * Cookie header for every request a virtual user could make.
 *
 * The payload is lines ('\n'); each is one Set-Cookie value after a
 * selector byte: bits 0-1 the request host, bits 2-3 its path, bit 4 a
 * secure channel, bits 5-7 how far the clock has moved (days). After each
 * line the jar is within its bounds and a refusal has a reason; every 32
 * lines and at the end all its invariants hold (header order, lower-case
 * domains, paths starting with '/', no control bytes, the bytes it counts).
 * Then every Cookie header is built three ways, into HM_COOKIE_HEADER_MAX
 * bytes (which must always fit), a tight buffer and
 * hm_cookie_jar_header_dup, which must agree.
 *
 * Flags (byte 0):
 *   bit 0  a line is hm_cookie_jar_put's "name=value" (hammer's own cookie)
 *          instead of a server's Set-Cookie */
#include "fuzz_common.h"

#include "base/hm_base.h"
#include "proto/cookie.h"

#include <stdlib.h>
#include <string.h>

enum { F_PUT = 1 };

static const char *const hosts[] = {"example.com", "sub.example.com", "127.0.0.1", "localhost"};
static const char *const paths[] = {"/", "/a/b", "/_action/increment?x=1", ""};
static const int64_t t0 = 1767225600; /* 2026-01-01 */

static bool has_ctl(const char *s)
{
    for (; *s; s++)
        if (((unsigned char)*s < 0x20 && *s != '\t') || *s == 0x7f) return true;
    return false;
}

/* Every invariant; `lookups` also finds each cookie by name (quadratic, so
 * only once per input). */
static void check_jar(const hm_cookie_jar *jar, bool lookups)
{
    HM_FUZZ_CHECK(jar->len <= jar->cap && jar->len <= HM_COOKIE_JAR_MAX_COOKIES);
    HM_FUZZ_CHECK(jar->bytes <= HM_COOKIE_JAR_MAX_BYTES);
    size_t bytes = 0;
    for (size_t i = 0; i < jar->len; i++) {
        const hm_cookie *c = &jar->items[i];
        bytes += strlen(c->name) + strlen(c->value) + strlen(c->domain) + strlen(c->path) + 4;
        HM_FUZZ_CHECK(strlen(c->name) + strlen(c->value) <= HM_COOKIE_MAX_NAME_VALUE);
        HM_FUZZ_CHECK(c->name[0] && !has_ctl(c->name) && !has_ctl(c->value));
        HM_FUZZ_CHECK(c->path[0] == '/');
        for (const char *d = c->domain; *d; d++)
            HM_FUZZ_CHECK(!(*d >= 'A' && *d <= 'Z'));
        if (lookups) HM_FUZZ_CHECK(hm_cookie_jar_get(jar, c->name) != NULL);
        if (i == 0) continue;
        const hm_cookie *prev = &jar->items[i - 1];
        size_t pl = strlen(prev->path), cl = strlen(c->path);
        /* RFC 6265 §5.4 order: longer paths first, then earlier creation. */
        HM_FUZZ_CHECK(pl > cl || (pl == cl && prev->created < c->created));
    }
    HM_FUZZ_CHECK(bytes == jar->bytes);
}

static void headers(const hm_cookie_jar *jar, int64_t now)
{
    enum { ROOMY = HM_COOKIE_HEADER_MAX };
    char *big = malloc(ROOMY), small[64];
    HM_FUZZ_CHECK(big);
    for (size_t h = 0; h < HM_ARRAY_LEN(hosts); h++)
        for (size_t p = 0; p < HM_ARRAY_LEN(paths); p++)
            for (int secure = 0; secure < 2; secure++) {
                int n = hm_cookie_jar_header(jar, hosts[h], paths[p], secure, now, big, ROOMY);
                HM_FUZZ_CHECK(n >= 0 && (size_t)n == strlen(big));
                char *dup = hm_cookie_jar_header_dup(jar, hosts[h], paths[p], secure, now);
                HM_FUZZ_CHECK(dup && strcmp(dup, big) == 0);
                hm_free(dup);
                int m = hm_cookie_jar_header(jar, hosts[h], paths[p], secure, now, small,
                                             sizeof(small));
                if ((size_t)n < sizeof(small))
                    HM_FUZZ_CHECK(m == n && strcmp(small, big) == 0);
                else
                    HM_FUZZ_CHECK(m == -ENOSPC && small[0] == '\0');
            }
    free(big);
}

static void body(void *arg)
{
    const hm_fuzz_input *in = arg;
    hm_cookie_jar jar;
    hm_cookie_jar_init(&jar);
    const char *p = (const char *)in->data, *end = p + in->len;
    int64_t now = t0;
    size_t lines = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = nl ? nl : end;
        if (line_end > p) {
            unsigned sel = (unsigned char)*p;
            const char *v = p + 1;
            size_t vl = (size_t)(line_end - v);
            now += (int64_t)(sel >> 5) * 86400;
            const char *host = hosts[sel & 3], *path = paths[(sel >> 2) & 3];
            int rc;
            if (in->flags & F_PUT) {
                char *line = strndup(v, vl);
                HM_FUZZ_CHECK(line);
                char *eq = strchr(line, '=');
                if (eq) *eq = '\0';
                rc = hm_cookie_jar_put(&jar, line, eq ? eq + 1 : "", host);
                free(line);
            } else {
                rc = hm_cookie_jar_set(&jar, v, vl, host, path, sel & 16, now);
            }
            HM_FUZZ_CHECK(rc == 0 || rc == -HM_EPARSE || rc == -EPERM || rc == -HM_ETOOBIG);
            HM_FUZZ_CHECK((rc == 0) == (jar.error == NULL));
            HM_FUZZ_CHECK(jar.len <= HM_COOKIE_JAR_MAX_COOKIES);
            HM_FUZZ_CHECK(jar.bytes <= HM_COOKIE_JAR_MAX_BYTES);
            if (++lines % 32 == 0) check_jar(&jar, false);
        }
        p = line_end + 1;
    }
    check_jar(&jar, true);
    headers(&jar, now);
    hm_cookie_jar_free(&jar);
}

HM_FUZZ_ENTRY(body)

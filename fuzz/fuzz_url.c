/* fuzz_url.c — URL parsing and formatting (src/proto/url.h).
 *
 * The payload, up to its first NUL, is a URL (hammer takes them from the
 * command line, profiles and pages). A parsed URL must survive a round
 * trip: its origin plus its request target parse back to the same URL;
 * every formatter gives -ENOSPC for a buffer one byte short and the same
 * text for one that fits. The whole payload is also percent-encoded, and
 * decoding that must give it back. */
#include "fuzz_common.h"

#include "base/hm_base.h"
#include "proto/url.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*fmt_fn)(const hm_url *u, char *buf, size_t cap);

/* Formats into a roomy buffer, then checks the exact and one-short sizes. */
static int format_checked(fmt_fn fn, const hm_url *u, char *out, size_t cap)
{
    int n = fn(u, out, cap);
    HM_FUZZ_CHECK(n >= 0 && (size_t)n == strlen(out));
    char *exact = malloc((size_t)n + 1);
    HM_FUZZ_CHECK(exact);
    HM_FUZZ_CHECK(fn(u, exact, (size_t)n + 1) == n && strcmp(exact, out) == 0);
    HM_FUZZ_CHECK(fn(u, exact, (size_t)n) == -ENOSPC);
    HM_FUZZ_CHECK(fn(u, exact, 0) == -ENOSPC);
    free(exact);
    return n;
}

static int hex_val(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static void check_encode(const uint8_t *in, size_t n)
{
    size_t cap = 3 * n + 1;
    char *enc = malloc(cap);
    HM_FUZZ_CHECK(enc);
    int m = hm_url_encode_component((const char *)in, n, enc, cap);
    HM_FUZZ_CHECK(m >= 0 && (size_t)m == strlen(enc));
    HM_FUZZ_CHECK(hm_url_encode_component((const char *)in, n, enc + cap - 1, 1) ==
                  (n ? -ENOSPC : 0));
    size_t j = 0;
    for (int i = 0; i < m; i++, j++) {
        uint8_t c;
        if (enc[i] == '%') {
            HM_FUZZ_CHECK(i + 2 < m && hex_val(enc[i + 1]) >= 0 && hex_val(enc[i + 2]) >= 0);
            c = (uint8_t)(hex_val(enc[i + 1]) * 16 + hex_val(enc[i + 2]));
            i += 2;
        } else {
            c = (uint8_t)enc[i];
            HM_FUZZ_CHECK(strchr("-_.!~*'()", c) || (c >= '0' && c <= '9') ||
                          (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'));
        }
        HM_FUZZ_CHECK(j < n && in[j] == c);
    }
    HM_FUZZ_CHECK(j == n);
    free(enc);
}

static void body(void *arg)
{
    const hm_fuzz_input *in = arg;
    const char *text = (const char *)in->data; /* NUL-terminated by the input helper */
    hm_url u;
    int rc = hm_url_parse(text, &u);
    HM_FUZZ_CHECK(rc == 0 || rc == -HM_EPARSE);
    if (rc == 0) {
        HM_FUZZ_CHECK(u.port > 0 && u.path[0] == '/' && u.host[0]);
        size_t cap = strlen(text) + 64;
        char *origin = malloc(cap), *target = malloc(cap), *host = malloc(cap);
        char *again = malloc(2 * cap);
        HM_FUZZ_CHECK(origin && target && host && again);
        format_checked(hm_url_host_header, &u, host, cap);
        format_checked(hm_url_origin, &u, origin, cap);
        format_checked(hm_url_request_target, &u, target, cap);
        snprintf(again, 2 * cap, "%s%s", origin, target);
        hm_url v;
        HM_FUZZ_CHECK(hm_url_parse(again, &v) == 0);
        HM_FUZZ_CHECK(u.tls == v.tls && u.ipv6 == v.ipv6 && u.port == v.port);
        HM_FUZZ_CHECK(!strcmp(u.host, v.host) && !strcmp(u.path, v.path) &&
                      !strcmp(u.query, v.query));
        hm_url_free(&v);
        free(origin);
        free(target);
        free(host);
        free(again);
    }
    hm_url_free(&u);
    hm_url_free(&u); /* freeing twice is allowed: it zeroes */
    check_encode(in->data, in->len);
}

HM_FUZZ_ENTRY(body)

/* http1_write.c — the HTTP/1.1 serializers (http1.h): requests, response
 * heads and chunks written into the caller's buffer, allocating nothing. */
#include "proto/http1.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

/* ---- serializers ---- */

/* Output cursor: once something does not fit, every later write is dropped
 * and the result is -ENOSPC, so callers check once at the end. */
typedef struct {
    char *p, *end;
    bool full;
} writer;

static void w_mem(writer *w, const void *s, size_t n)
{
    if (w->full || (size_t)(w->end - w->p) < n) {
        w->full = true;
        return;
    }
    if (n) memcpy(w->p, s, n);
    w->p += n;
}

#define W_LIT(w, s) w_mem((w), (s), sizeof(s) - 1)

static void w_dec(writer *w, unsigned long long v)
{
    char tmp[24];
    char *e = tmp + sizeof(tmp), *s = e;
    do {
        *--s = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    w_mem(w, s, (size_t)(e - s));
}

static void w_hex(writer *w, unsigned long long v)
{
    char tmp[24];
    char *e = tmp + sizeof(tmp), *s = e;
    do {
        *--s = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    w_mem(w, s, (size_t)(e - s));
}

static ssize_t w_result(const writer *w, const char *buf)
{
    return w->full ? -ENOSPC : (ssize_t)(w->p - buf);
}

/* Length of s if it contains none of bad (and is non-empty when must_have),
 * else -1: one pass both measures and validates. */
static ssize_t checked_len(const char *s, const char *bad, bool must_have)
{
    if (!s) return -1;
    size_t n = strcspn(s, bad);
    if (s[n] != '\0' || (must_have && n == 0)) return -1;
    return (ssize_t)n;
}

/* "Name: value\r\n" for each header; false on a name or value that would
 * break the message. */
static bool w_headers(writer *w, const hm_http_header *hs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        ssize_t nl = checked_len(hs[i].name, "\r\n: \t", true);
        ssize_t vl = checked_len(hs[i].value, "\r\n", false);
        if (nl < 0 || vl < 0) return false;
        w_mem(w, hs[i].name, (size_t)nl);
        W_LIT(w, ": ");
        w_mem(w, hs[i].value, (size_t)vl);
        W_LIT(w, "\r\n");
    }
    return true;
}

static bool has_header(const hm_http_header *hs, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (hs[i].name && strcasecmp(hs[i].name, name) == 0) return true;
    return false;
}

ssize_t hm_http_write_request(char *buf, size_t cap, const char *method, const char *path_and_query,
                              const char *host_header, const hm_http_header *extra, size_t n_extra,
                              const char *body, size_t body_len)
{
    ssize_t ml = checked_len(method, "\r\n \t", true);
    ssize_t tl = checked_len(path_and_query, "\r\n \t", true);
    ssize_t hl = host_header ? checked_len(host_header, "\r\n", true) : 0;
    if (ml < 0 || tl < 0 || hl < 0 || (body_len && !body)) return -EINVAL;

    writer w = {buf, buf + cap, false};
    w_mem(&w, method, (size_t)ml);
    W_LIT(&w, " ");
    w_mem(&w, path_and_query, (size_t)tl);
    W_LIT(&w, " HTTP/1.1\r\n");
    if (host_header) {
        W_LIT(&w, "Host: ");
        w_mem(&w, host_header, (size_t)hl);
        W_LIT(&w, "\r\n");
    }
    if (!w_headers(&w, extra, n_extra)) return -EINVAL;
    bool wants_length = body || body_len || strcmp(method, "POST") == 0 ||
                        strcmp(method, "PUT") == 0 || strcmp(method, "PATCH") == 0;
    if (wants_length && !has_header(extra, n_extra, "Content-Length") &&
        !has_header(extra, n_extra, "Transfer-Encoding")) {
        W_LIT(&w, "Content-Length: ");
        w_dec(&w, body_len);
        W_LIT(&w, "\r\n");
    }
    W_LIT(&w, "\r\n");
    w_mem(&w, body, body_len);
    return w_result(&w, buf);
}

ssize_t hm_http_write_response_head(char *buf, size_t cap, int status, const char *reason,
                                    const hm_http_header *headers, size_t n,
                                    long long content_length, bool keep_alive)
{
    if (status < 100 || status > 999 || content_length < HM_HTTP_LEN_NONE) return -EINVAL;
    if (!reason) reason = hm_http_reason(status);
    ssize_t rl = checked_len(reason, "\r\n", false);
    if (rl < 0) return -EINVAL;

    writer w = {buf, buf + cap, false};
    W_LIT(&w, "HTTP/1.1 ");
    w_dec(&w, (unsigned long long)status);
    W_LIT(&w, " ");
    w_mem(&w, reason, (size_t)rl);
    W_LIT(&w, "\r\n");
    if (!w_headers(&w, headers, n)) return -EINVAL;
    if (content_length >= 0) {
        W_LIT(&w, "Content-Length: ");
        w_dec(&w, (unsigned long long)content_length);
        W_LIT(&w, "\r\n");
    } else if (content_length == HM_HTTP_LEN_CHUNKED) {
        W_LIT(&w, "Transfer-Encoding: chunked\r\n");
    }
    if (!keep_alive) W_LIT(&w, "Connection: close\r\n");
    W_LIT(&w, "\r\n");
    return w_result(&w, buf);
}

ssize_t hm_http_write_chunk_head(char *buf, size_t cap, size_t len)
{
    writer w = {buf, buf + cap, false};
    w_hex(&w, len);
    W_LIT(&w, "\r\n");
    return w_result(&w, buf);
}

ssize_t hm_http_write_chunk(char *buf, size_t cap, const char *data, size_t len)
{
    if (len == 0) return 0;
    writer w = {buf, buf + cap, false};
    w_hex(&w, len);
    W_LIT(&w, "\r\n");
    w_mem(&w, data, len);
    W_LIT(&w, "\r\n");
    return w_result(&w, buf);
}

ssize_t hm_http_write_last_chunk(char *buf, size_t cap)
{
    writer w = {buf, buf + cap, false};
    W_LIT(&w, "0\r\n\r\n");
    return w_result(&w, buf);
}

const char *hm_http_reason(int status)
{
    switch (status) {
    case 100:
        return "Continue";
    case 101:
        return "Switching Protocols";
    case 103:
        return "Early Hints";
    case 200:
        return "OK";
    case 201:
        return "Created";
    case 202:
        return "Accepted";
    case 204:
        return "No Content";
    case 206:
        return "Partial Content";
    case 301:
        return "Moved Permanently";
    case 302:
        return "Found";
    case 303:
        return "See Other";
    case 304:
        return "Not Modified";
    case 307:
        return "Temporary Redirect";
    case 308:
        return "Permanent Redirect";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 406:
        return "Not Acceptable";
    case 408:
        return "Request Timeout";
    case 409:
        return "Conflict";
    case 410:
        return "Gone";
    case 411:
        return "Length Required";
    case 413:
        return "Content Too Large";
    case 414:
        return "URI Too Long";
    case 415:
        return "Unsupported Media Type";
    case 422:
        return "Unprocessable Content";
    case 429:
        return "Too Many Requests";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 501:
        return "Not Implemented";
    case 502:
        return "Bad Gateway";
    case 503:
        return "Service Unavailable";
    case 504:
        return "Gateway Timeout";
    case 505:
        return "HTTP Version Not Supported";
    default:
        return "Unknown";
    }
}

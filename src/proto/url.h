/* url.h — absolute http/https URLs: parsing, the Host and Origin values a
 * browser derives from them, one-time address resolution, and
 * encodeURIComponent-style percent-encoding.
 *
 * Memory: hm_url_parse fills an hm_url whose strings it allocates with
 * hm_alloc; the caller owns them and releases them with hm_url_free. The
 * formatting helpers write into caller-owned buffers, always NUL-terminated
 * when cap > 0, and never allocate. */
#ifndef HM_PROTO_URL_H
#define HM_PROTO_URL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

typedef struct hm_url {
    bool tls;      /* scheme is https */
    bool ipv6;     /* host is an IPv6 literal (stored without brackets) */
    uint16_t port; /* explicit port, or 80 / 443 */
    char *host;    /* lower-cased; no brackets */
    char *path;    /* starts with '/'; "/" when the URL has none */
    char *query;   /* text after '?' without it; "" when absent */
} hm_url;

/* Parses an absolute http:// or https:// URL into *out (zeroed first, so it
 * is always safe to hm_url_free). The fragment is dropped. Returns 0,
 * -HM_EPARSE (other scheme, userinfo, bad host, port outside 1..65535,
 * spaces, control or non-ASCII bytes) or -ENOMEM. An empty port ("h:/")
 * means the default. */
int hm_url_parse(const char *text, hm_url *out);

/* Frees the strings of *u and zeroes it; NULL and zeroed urls are fine. */
void hm_url_free(hm_url *u);

/* Returns the scheme's default port: 443 for https, else 80. */
uint16_t hm_url_default_port(const hm_url *u);

/* Writes the Host header value ("host", or "host:port" when the port is not
 * the default; IPv6 re-bracketed). Returns its length or -ENOSPC. */
int hm_url_host_header(const hm_url *u, char *buf, size_t cap);

/* Writes the Origin a browser sends for pages of this URL
 * ("https://host" or "http://host:8080"; default port omitted, IPv6
 * bracketed, no path). Returns its length or -ENOSPC. */
int hm_url_origin(const hm_url *u, char *buf, size_t cap);

/* Writes the request-target of an origin-form request line: path, then
 * "?query" when the query is not empty. Returns its length or -ENOSPC. */
int hm_url_request_target(const hm_url *u, char *buf, size_t cap);

/* Resolves host and port to one socket address (the first getaddrinfo
 * answer, TCP). Numeric hosts are converted without any lookup. Blocking:
 * call once at start-up, not per connection. Returns 0, -ENXIO (name not
 * found), -EAGAIN (temporary DNS failure), -ENOMEM or another -errno. */
int hm_url_resolve(const hm_url *u, struct sockaddr_storage *ss, socklen_t *len);

/* Percent-encodes n bytes of in like JavaScript's encodeURIComponent (keeps
 * A-Z a-z 0-9 - _ . ! ~ * ' ( ), upper-case hex for the rest) into out,
 * NUL-terminated. Returns the encoded length or -ENOSPC. */
int hm_url_encode_component(const char *in, size_t n, char *out, size_t cap);

#endif

#include "proto/url.h"

#include "base/hm_base.h"

#include <arpa/inet.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Characters RFC 3986 allows in a reg-name host (unreserved, sub-delims and
 * the '%' of pct-encoding). */
static bool host_char_ok(unsigned char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
    return c != '\0' && strchr("-._~!$&'()*+,;=%", c) != NULL;
}

static void lower_ascii(char *s)
{
    for (; *s; s++)
        if (*s >= 'A' && *s <= 'Z') *s = (char)(*s - 'A' + 'a');
}

/* Accepts an empty port as the default, as RFC 3986 §6.2.3 and WHATWG do. */
static int parse_port(const char *p, size_t n, uint16_t dflt, uint16_t *out)
{
    if (n == 0) {
        *out = dflt;
        return 0;
    }
    unsigned long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') return -HM_EPARSE;
        v = v * 10 + (unsigned long)(p[i] - '0');
        if (v > 65535) return -HM_EPARSE;
    }
    if (v == 0) return -HM_EPARSE;
    *out = (uint16_t)v;
    return 0;
}

int hm_url_parse(const char *text, hm_url *out)
{
    memset(out, 0, sizeof(*out));
    if (!text) return -HM_EPARSE;

    /* A request line cannot carry these raw; better a clear error here. */
    for (const unsigned char *c = (const unsigned char *)text; *c; c++)
        if (*c <= 0x20 || *c >= 0x7f) return -HM_EPARSE;

    const char *p;
    if (strncasecmp(text, "http://", 7) == 0) {
        p = text + 7;
    } else if (strncasecmp(text, "https://", 8) == 0) {
        out->tls = true;
        p = text + 8;
    } else {
        return -HM_EPARSE;
    }
    uint16_t dflt = out->tls ? 443 : 80;

    size_t auth_len = strcspn(p, "/?#");
    const char *auth = p, *auth_end = p + auth_len;
    if (memchr(auth, '@', auth_len)) return -HM_EPARSE;

    const char *host, *host_end, *port_text = NULL;
    if (auth < auth_end && *auth == '[') {
        host = auth + 1;
        host_end = memchr(host, ']', (size_t)(auth_end - host));
        if (!host_end || host_end == host) return -HM_EPARSE;
        const char *after = host_end + 1;
        if (after < auth_end) {
            if (*after != ':') return -HM_EPARSE;
            port_text = after + 1;
        }
        char tmp[INET6_ADDRSTRLEN + 1];
        struct in6_addr a6;
        size_t hl = (size_t)(host_end - host);
        if (hl >= sizeof(tmp)) return -HM_EPARSE;
        memcpy(tmp, host, hl);
        tmp[hl] = '\0';
        if (inet_pton(AF_INET6, tmp, &a6) != 1) return -HM_EPARSE;
        out->ipv6 = true;
    } else {
        host = auth;
        host_end = memchr(auth, ':', auth_len);
        if (host_end) {
            port_text = host_end + 1;
        } else {
            host_end = auth_end;
        }
        if (host_end == host) return -HM_EPARSE;
        for (const char *c = host; c < host_end; c++)
            if (!host_char_ok((unsigned char)*c)) return -HM_EPARSE;
    }

    int rc;
    if (port_text) {
        rc = parse_port(port_text, (size_t)(auth_end - port_text), dflt, &out->port);
        if (rc < 0) return rc;
    } else {
        out->port = dflt;
    }

    const char *rest = auth_end;
    size_t path_len = strcspn(rest, "?#");
    const char *query = NULL;
    size_t query_len = 0;
    if (rest[path_len] == '?') {
        query = rest + path_len + 1;
        query_len = strcspn(query, "#");
    }

    out->host = hm_strndup(host, (size_t)(host_end - host));
    out->path = path_len ? hm_strndup(rest, path_len) : hm_strdup("/");
    out->query = query ? hm_strndup(query, query_len) : hm_strdup("");
    if (!out->host || !out->path || !out->query) {
        hm_url_free(out);
        return -ENOMEM;
    }
    lower_ascii(out->host);
    return 0;
}

void hm_url_free(hm_url *u)
{
    if (!u) return;
    hm_free(u->host);
    hm_free(u->path);
    hm_free(u->query);
    memset(u, 0, sizeof(*u));
}

uint16_t hm_url_default_port(const hm_url *u)
{
    return u->tls ? 443 : 80;
}

/* snprintf wrapper: length on success; on overflow empties buf (cap > 0
 * is checked by the callers) and returns -ENOSPC. */
static int fit(int n, char *buf, size_t cap)
{
    if (n < 0 || (size_t)n >= cap) {
        buf[0] = '\0';
        return n < 0 ? -EINVAL : -ENOSPC;
    }
    return n;
}

int hm_url_host_header(const hm_url *u, char *buf, size_t cap)
{
    const char *lb = u->ipv6 ? "[" : "", *rb = u->ipv6 ? "]" : "";
    if (cap == 0) return -ENOSPC;
    if (u->port == hm_url_default_port(u))
        return fit(snprintf(buf, cap, "%s%s%s", lb, u->host, rb), buf, cap);
    return fit(snprintf(buf, cap, "%s%s%s:%u", lb, u->host, rb, (unsigned)u->port), buf, cap);
}

int hm_url_origin(const hm_url *u, char *buf, size_t cap)
{
    if (cap == 0) return -ENOSPC;
    const char *scheme = u->tls ? "https://" : "http://";
    size_t sl = strlen(scheme);
    if (sl >= cap) return -ENOSPC;
    memcpy(buf, scheme, sl);
    int n = hm_url_host_header(u, buf + sl, cap - sl);
    if (n < 0) {
        buf[0] = '\0';
        return n;
    }
    return (int)sl + n;
}

int hm_url_request_target(const hm_url *u, char *buf, size_t cap)
{
    if (cap == 0) return -ENOSPC;
    if (u->query && u->query[0])
        return fit(snprintf(buf, cap, "%s?%s", u->path, u->query), buf, cap);
    return fit(snprintf(buf, cap, "%s", u->path), buf, cap);
}

static int gai_to_errno(int gai)
{
    switch (gai) {
    case EAI_NONAME:
    case EAI_FAIL:
#ifdef EAI_NODATA
    case EAI_NODATA:
#endif
        return -ENXIO;
    case EAI_AGAIN:
        return -EAGAIN;
    case EAI_MEMORY:
        return -ENOMEM;
    case EAI_SYSTEM:
        return errno ? -errno : -EIO;
    default:
        return -EINVAL;
    }
}

int hm_url_resolve(const hm_url *u, struct sockaddr_storage *ss, socklen_t *len)
{
    memset(ss, 0, sizeof(*ss));
    /* Literal addresses skip getaddrinfo, and with it NSS and resolv.conf. */
    if (u->ipv6) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
        if (inet_pton(AF_INET6, u->host, &s6->sin6_addr) != 1) return -EINVAL;
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons(u->port);
        *len = sizeof(*s6);
        return 0;
    }
    struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
    if (inet_pton(AF_INET, u->host, &s4->sin_addr) == 1) {
        s4->sin_family = AF_INET;
        s4->sin_port = htons(u->port);
        *len = sizeof(*s4);
        return 0;
    }

    char service[8];
    snprintf(service, sizeof(service), "%u", (unsigned)u->port);
    struct addrinfo hints = {
        .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    errno = 0;
    int gai = getaddrinfo(u->host, service, &hints, &res);
    if (gai != 0) return gai_to_errno(gai);
    if (!res || res->ai_addrlen > sizeof(*ss)) {
        freeaddrinfo(res);
        return -ENXIO;
    }
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    *len = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

static bool uri_component_unreserved(unsigned char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
    return c != '\0' && strchr("-_.!~*'()", c) != NULL;
}

int hm_url_encode_component(const char *in, size_t n, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    if (cap > INT_MAX) cap = INT_MAX; /* so the length always fits the int result */
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)in[i];
        if (uri_component_unreserved(c)) {
            if (o + 1 >= cap) goto nospace;
            out[o++] = (char)c;
        } else {
            if (o + 3 >= cap) goto nospace;
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    if (o >= cap) goto nospace;
    out[o] = '\0';
    return (int)o;
nospace:
    if (cap > 0) out[0] = '\0';
    return -ENOSPC;
}

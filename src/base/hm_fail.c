/* Names of the failure kinds, and the kind of an error code (see hm_fail.h). */
#include "base/hm_fail.h"

#include "base/hm_base.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const fail_names[HM_FAIL__COUNT] = {
    "none", "connect", "timeout", "reset", "closed", "protocol", "tls", "other",
};

const char *hm_fail_kind_name(hm_fail_kind k)
{
    return (unsigned)k < HM_FAIL__COUNT ? fail_names[k] : "other";
}

hm_fail_kind hm_fail_of_error(int err)
{
    switch (-err) {
    case ETIMEDOUT:
        return HM_FAIL_TIMEOUT;
    case ECONNRESET:
    case EPIPE:
        return HM_FAIL_RESET;
    case HM_ECLOSED:
        return HM_FAIL_CLOSED;
    case HM_EPROTO_HTTP:
    case HM_ETOOBIG:
        return HM_FAIL_PROTOCOL;
    case HM_ETLS:
        return HM_FAIL_TLS;
    default:
        return HM_FAIL_OTHER;
    }
}

const char *hm_tls_fail_name(hm_tls_fail f)
{
    switch (f) {
    case HM_TLS_VERIFY:
        return "tls_verify";
    case HM_TLS_HANDSHAKE:
        return "tls_handshake";
    case HM_TLS_EOF:
        return "tls_eof";
    case HM_TLS_PROTOCOL:
        return "tls_protocol";
    default:
        return "none";
    }
}

static const char *const sse_fail_names[HM_SSE_FAIL__COUNT] = {
    "none", "status", "protocol", "closed", "timeout", "connect", "reset", "other",
};

const char *hm_sse_fail_name(hm_sse_fail k)
{
    return (unsigned)k < HM_SSE_FAIL__COUNT ? sse_fail_names[k] : "other";
}

hm_sse_fail hm_sse_fail_of(hm_fail_kind k)
{
    switch (k) {
    case HM_FAIL_CONNECT:
        return HM_SSE_FAIL_CONNECT;
    case HM_FAIL_TIMEOUT:
        return HM_SSE_FAIL_TIMEOUT;
    case HM_FAIL_RESET:
        return HM_SSE_FAIL_RESET;
    case HM_FAIL_CLOSED:
        return HM_SSE_FAIL_CLOSED;
    case HM_FAIL_PROTOCOL:
        return HM_SSE_FAIL_PROTOCOL;
    default:
        return HM_SSE_FAIL_OTHER;
    }
}

static void copy_field(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

bool hm_fail_example_keep(hm_fail_example *ex, const char *reason, const char *where,
                          const char *bytes)
{
    if (ex->reason[0]) return false;
    copy_field(ex->reason, sizeof(ex->reason), reason && reason[0] ? reason : "unknown");
    copy_field(ex->where, sizeof(ex->where), where);
    copy_field(ex->bytes, sizeof(ex->bytes), bytes);
    return true;
}

size_t hm_escape_bytes(const char *in, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    size_t take = n < HM_EVIDENCE_BYTES ? n : HM_EVIDENCE_BYTES;
    for (size_t i = 0; i < take; i++) {
        unsigned char ch = (unsigned char)in[i];
        char esc[5];
        switch (ch) {
        case '\r':
            memcpy(esc, "\\r", 3);
            break;
        case '\n':
            memcpy(esc, "\\n", 3);
            break;
        case '\t':
            memcpy(esc, "\\t", 3);
            break;
        case '"':
            memcpy(esc, "\\\"", 3);
            break;
        case '\\':
            memcpy(esc, "\\\\", 3);
            break;
        default:
            if (ch >= 0x20 && ch < 0x7f) {
                esc[0] = (char)ch;
                esc[1] = 0;
            } else {
                snprintf(esc, sizeof(esc), "\\x%02x", ch);
            }
        }
        size_t el = strlen(esc);
        if (o + el + 4 > cap) break; /* room for "..." and the NUL */
        memcpy(out + o, esc, el);
        o += el;
    }
    if (take < n && o + 4 <= cap) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    if (cap) out[o < cap ? o : cap - 1] = 0;
    return o;
}

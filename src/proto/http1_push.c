/* Responses pushed as fields (HTTP/2's head and DATA frames) into the
 * same hm_http_resp_parser the HTTP/1.1 bytes feed (http1.h): the same
 * limits, decoding, discard and 1xx rules. */
#include "proto/http1.h"
#include "proto/http1_internal.h"

#include "base/hm_base.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

/* ---- responses pushed as fields (HTTP/2) ---- */

/* The current push cannot go on: the sticky error, or a push out of order. */
static int push_check(hm_http_resp_parser *p, bool head_done)
{
    hm_http_core_ *c = &p->c_;
    if (c->err) return c->err;
    if (c->state == ST_DONE || c->in_headers_done != head_done) {
        c->err = -HM_EPROTO_HTTP;
        c->reason = head_done ? "body before the response head" : "header field after the head";
        c->state = ST_FAILED;
        return c->err;
    }
    return 0;
}

/* Turns a recorded error into the push's result. */
static int push_failed(hm_http_core_ *c)
{
    c->state = ST_FAILED;
    return c->err ? c->err : -HM_EPROTO_HTTP;
}

int hm_http_resp_push_field(hm_http_resp_parser *p, const char *name, size_t nlen,
                            const char *value, size_t vlen)
{
    hm_http_core_ *c = &p->c_;
    if (HM_UNLIKELY(c->state != ST_PARTIAL || c->err)) {
        int rc = push_check(p, false);
        if (rc) return rc;
        c->state = ST_PARTIAL;
        c->msg_begun = true;
        c->pushed = true;
    } else if (HM_UNLIKELY(c->in_headers_done)) {
        return push_check(p, false);
    }
    c->head_bytes += nlen + vlen + 4;
    if (HM_UNLIKELY(c->head_bytes > c->lim.max_header_bytes)) {
        h1_fail(c, -HM_ETOOBIG, "header section over the size limit");
        return push_failed(c);
    }
    if (nlen == 14 && strncasecmp(name, "content-length", 14) == 0) {
        uint64_t v = 0;
        bool ok = vlen > 0 && vlen <= 19;
        for (size_t i = 0; ok && i < vlen; i++) {
            ok = value[i] >= '0' && value[i] <= '9';
            v = v * 10 + (uint64_t)(value[i] - '0');
        }
        if (!ok || (p->has_content_length && p->content_length != v)) {
            c->err = -HM_EPROTO_HTTP;
            c->reason = "bad content-length";
            return push_failed(c);
        }
        p->has_content_length = true;
        p->content_length = v;
        return 0;
    }
    /* Most fields are of no interest: only these lengths can match. */
    if (nlen != 8 && nlen != 10 && nlen != 12 && nlen != 16) return 0;
    int id = h1_match_header(name, nlen, FOR_RESP);
    if (id == HID_NONE) return 0;
    if (c->n_hdrs == c->hdrs_cap) {
        size_t ncap = c->hdrs_cap ? c->hdrs_cap * 2 : 16;
        hm_http_hdr_ *nh = hm_realloc(c->hdrs, ncap * sizeof(*nh));
        if (!nh) {
            h1_fail(c, -ENOMEM, "out of memory");
            return push_failed(c);
        }
        c->hdrs = nh;
        c->hdrs_cap = ncap;
    }
    uint32_t off = (uint32_t)c->arena.len;
    if (h1_arena_append(c, value, vlen) || h1_arena_append(c, "", 1)) return push_failed(c);
    c->hdrs[c->n_hdrs++] = (hm_http_hdr_){.val_off = off, .val_len = (uint32_t)vlen, .id = id};
    return 0;
}

int hm_http_resp_push_head(hm_http_resp_parser *p, int status, uint8_t http_major)
{
    hm_http_core_ *c = &p->c_;
    int rc = push_check(p, false);
    if (rc) return rc;
    c->state = ST_PARTIAL;
    c->msg_begun = true;
    c->pushed = true;
    if (status < 100 || status > 999) {
        c->err = -HM_EPROTO_HTTP;
        c->reason = "bad status";
        return push_failed(c);
    }
    if (status / 100 == 1) { /* informational: its fields are dropped, the answer follows */
        if (++c->interim > HM_HTTP_MAX_INTERIM) {
            h1_fail(c, -HM_EPROTO_HTTP,
                    "more than 16 informational (1xx) responses before the answer");
            return push_failed(c);
        }
        h1_core_clear_msg(c);
        h1_resp_clear_results(p);
        return 0;
    }
    c->in_headers_done = true;
    p->status = status;
    p->http_major = http_major;
    p->http_minor = 0;
    p->keep_alive = true; /* the stream ends, the connection stays */
    if (h1_resp_head_done(p) == HPE_USER) return push_failed(c);
    return 0;
}

int hm_http_resp_push_body(hm_http_resp_parser *p, const char *data, size_t len)
{
    hm_http_core_ *c = &p->c_;
    int rc = push_check(p, true);
    if (rc) return rc;
    if (len == 0 || p->head_ || p->status == 204 || p->status == 304) return 0;
    return h1_body_bytes(c, data, len) ? push_failed(c) : 0;
}

int hm_http_resp_push_end(hm_http_resp_parser *p)
{
    hm_http_core_ *c = &p->c_;
    int rc = push_check(p, true);
    if (rc) return rc;
    if (p->coding) {
        rc = hm_content_decoder_end(p->dec_);
        hm_content_decoder_free(p->dec_);
        if (rc < 0) {
            h1_fail(c, rc, p->dec_->why);
            return push_failed(c);
        }
    }
    p->body = c->body.len ? c->body.data : "";
    p->body_len = c->body.len;
    c->done = true;
    c->state = ST_DONE;
    return HM_HTTP_DONE;
}

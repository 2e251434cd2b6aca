/* http1.c — the HTTP/1.1 parsers (http1.h): llhttp callbacks that collect
 * what hammer needs, shared by the response and the request parser. The
 * serializers are in http1_write.c. */
#include "proto/http1.h"
#include "proto/http1_internal.h"

#include "base/hm_base.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* hm_http_resp_push_field looks names up only for the lengths of the
 * FOR_RESP entries (8, 10, 12, 16): keep it in step with this table. */

static const struct {
    const char *name;
    uint8_t len;
    uint8_t id;
    uint8_t dir;
} interesting[] = {
    {"Content-Type", 12, HID_CONTENT_TYPE, FOR_RESP | FOR_REQ},
    {"Set-Cookie", 10, HID_SET_COOKIE, FOR_RESP},
    {"Location", 8, HID_LOCATION, FOR_RESP},
    {"X-Via-Worker", 12, HID_X_VIA_WORKER, FOR_RESP},
    {"Connection", 10, HID_CONNECTION, FOR_RESP | FOR_REQ},
    {"Host", 4, HID_HOST, FOR_REQ},
    {"Cookie", 6, HID_COOKIE, FOR_REQ},
    {"Origin", 6, HID_ORIGIN, FOR_REQ},
    {"Content-Length", 14, HID_CONTENT_LENGTH, FOR_REQ},
    {"Datastar-Request", 16, HID_DATASTAR_REQUEST, FOR_REQ},
    {"Accept", 6, HID_ACCEPT, FOR_REQ},
    {"Upgrade", 7, HID_UPGRADE, FOR_REQ},
    {"Content-Encoding", 16, HID_CONTENT_ENCODING, FOR_RESP},
};

/* Comparing the length first rejects almost every name without touching it. */
int h1_match_header(const char *name, size_t len, uint8_t dir)
{
    for (size_t i = 0; i < HM_ARRAY_LEN(interesting); i++)
        if (interesting[i].len == len && (interesting[i].dir & dir) &&
            strncasecmp(interesting[i].name, name, len) == 0)
            return interesting[i].id;
    return HID_NONE;
}

/* ---- shared parser core ---- */

static hm_http_core_ *core_of(llhttp_t *h)
{
    return HM_CONTAINER_OF(h, hm_http_core_, llh);
}

static hm_http_resp_parser *resp_of(hm_http_core_ *c)
{
    return HM_CONTAINER_OF(c, hm_http_resp_parser, c_);
}

static hm_http_req_parser *req_of(hm_http_core_ *c)
{
    return HM_CONTAINER_OF(c, hm_http_req_parser, c_);
}

/* Records our own error and makes llhttp stop; feed reports c->err. */
int h1_fail(hm_http_core_ *c, int err, const char *reason)
{
    c->err = err;
    c->reason = reason;
    return HPE_USER;
}

static int head_count(hm_http_core_ *c, size_t n)
{
    c->head_bytes += n;
    if (HM_UNLIKELY(c->head_bytes > c->lim.max_header_bytes))
        return h1_fail(c, -HM_ETOOBIG, "header section over the size limit");
    return 0;
}

int h1_arena_append(hm_http_core_ *c, const char *s, size_t n)
{
    if (HM_UNLIKELY(hm_buf_append(&c->arena, s, n) != 0))
        return h1_fail(c, -ENOMEM, "out of memory");
    return 0;
}

/* Appends a NUL-terminated copy of arena[off, off+n) to the arena; returns
 * the copy's offset via *out. Offsets, since the arena may move. */
static int arena_copy_self(hm_http_core_ *c, size_t off, size_t n, uint32_t *out)
{
    if (hm_buf_reserve(&c->arena, n + 1)) return h1_fail(c, -ENOMEM, "out of memory");
    memcpy(c->arena.data + c->arena.len, c->arena.data + off, n);
    *out = (uint32_t)c->arena.len;
    c->arena.len += n;
    c->arena.data[c->arena.len++] = '\0';
    return 0;
}

/* Forgets the current message, keeping every buffer's capacity. */
void h1_core_clear_msg(hm_http_core_ *c)
{
    c->arena.len = 0;
    c->body.len = 0;
    c->n_hdrs = 0;
    c->head_bytes = 0;
    c->in_headers_done = false;
    c->in_field = false;
    c->cur_store = false;
    c->name_long = false;
    c->name_len = 0;
    c->cur_id = HID_NONE;
    c->done = false;
}

static void core_init(hm_http_core_ *c, llhttp_type_t type, const hm_http_limits *lim,
                      const llhttp_settings_t *cbs)
{
    memset(c, 0, sizeof(*c));
    llhttp_init(&c->llh, type, cbs);
    if (lim) c->lim = *lim;
    if (!c->lim.max_header_bytes) c->lim.max_header_bytes = HM_HTTP_DEFAULT_MAX_HEADER_BYTES;
    if (!c->lim.max_body_bytes) c->lim.max_body_bytes = HM_HTTP_DEFAULT_MAX_BODY_BYTES;
    /* Arena offsets are 32-bit; the arena never exceeds about twice the limit. */
    if (c->lim.max_header_bytes > UINT32_MAX / 4) c->lim.max_header_bytes = UINT32_MAX / 4;
    c->store_all = type == HTTP_REQUEST;
    c->state = ST_FRESH;
}

/* The message's head: its header arena and index. */
static void core_free_head(hm_http_core_ *c)
{
    hm_buf_free(&c->arena);
    hm_free(c->hdrs);
    c->hdrs = NULL;
    c->hdrs_cap = c->n_hdrs = 0;
}

static void core_free(hm_http_core_ *c)
{
    core_free_head(c);
    hm_buf_free(&c->body);
}

static void req_clear_results(hm_http_req_parser *p);
static int resp_headers_complete(hm_http_resp_parser *p, llhttp_t *h);
static int req_headers_complete(hm_http_req_parser *p, llhttp_t *h);

static int cb_message_begin(llhttp_t *h)
{
    hm_http_core_ *c = core_of(h);
    h1_core_clear_msg(c);
    c->msg_begun = true;
    if (h->type == HTTP_RESPONSE)
        h1_resp_clear_results(resp_of(c));
    else
        req_clear_results(req_of(c));
    return 0;
}

static int cb_status(llhttp_t *h, const char *at, size_t len)
{
    (void)at;
    return head_count(core_of(h), len);
}

/* The request target is the first thing stored, so it sits at arena offset 0. */
static int cb_url(llhttp_t *h, const char *at, size_t len)
{
    hm_http_core_ *c = core_of(h);
    int rc = head_count(c, len);
    return rc ? rc : h1_arena_append(c, at, len);
}

/* Splits the target into path and query, each NUL-terminated: the target's
 * own NUL ends the query (or the path when there is no '?'); other ends need
 * a copy. */
static int cb_url_complete(llhttp_t *h)
{
    hm_http_core_ *c = core_of(h);
    hm_http_req_parser *p = req_of(c);
    size_t tlen = c->arena.len;
    if (h1_arena_append(c, "", 1)) return HPE_USER;
    const char *t = c->arena.data;
    size_t plen = strcspn(t, "?#");
    p->has_query_ = t[plen] == '?';
    if (plen == tlen) {
        p->path_off_ = 0;
    } else if (arena_copy_self(c, 0, plen, &p->path_off_)) {
        return HPE_USER;
    }
    p->path_len_ = (uint32_t)plen;
    if (p->has_query_) {
        size_t qoff = plen + 1;
        size_t qlen = strcspn(c->arena.data + qoff, "#");
        p->query_off_ = (uint32_t)qoff;
        if (qoff + qlen != tlen && arena_copy_self(c, qoff, qlen, &p->query_off_)) return HPE_USER;
        p->query_len_ = (uint32_t)qlen;
    }
    return 0;
}

static int cb_header_field(llhttp_t *h, const char *at, size_t len)
{
    hm_http_core_ *c = core_of(h);
    int rc = head_count(c, len);
    if (rc) return rc;
    if (!c->in_field) {
        c->in_field = true;
        c->name_len = 0;
        c->name_long = false;
        c->cur_name_off = (uint32_t)c->arena.len;
    }
    if (c->in_headers_done) return 0; /* a trailer: counted, not kept */
    if (c->store_all) return h1_arena_append(c, at, len);
    /* Response side: only names that can match are worth keeping. */
    if (!c->name_long) {
        if (c->name_len + len > sizeof(c->name)) {
            c->name_long = true;
        } else {
            memcpy(c->name + c->name_len, at, len);
            c->name_len = (uint8_t)(c->name_len + len);
        }
    }
    return 0;
}

static int cb_header_field_complete(llhttp_t *h)
{
    hm_http_core_ *c = core_of(h);
    bool had_span = c->in_field;
    c->in_field = false;
    c->cur_store = false;
    int rc = head_count(c, 4); /* ": " and CRLF */
    if (rc) return rc;
    if (c->in_headers_done) return 0;
    if (!had_span) { /* empty name: llhttp rejects it, but stay consistent */
        c->name_len = 0;
        c->name_long = false;
        c->cur_name_off = (uint32_t)c->arena.len;
    }
    if (c->store_all) {
        size_t nlen = c->arena.len - c->cur_name_off;
        if (h1_arena_append(c, "", 1)) return HPE_USER;
        c->cur_name_len = (uint32_t)nlen;
        c->cur_id = h1_match_header(c->arena.data + c->cur_name_off, nlen, FOR_REQ);
        c->cur_store = true;
    } else {
        c->cur_id = c->name_long ? HID_NONE : h1_match_header(c->name, c->name_len, FOR_RESP);
        c->cur_name_len = 0;
        c->cur_store = c->cur_id != HID_NONE;
    }
    c->cur_val_off = (uint32_t)c->arena.len;
    return 0;
}

static int cb_header_value(llhttp_t *h, const char *at, size_t len)
{
    hm_http_core_ *c = core_of(h);
    int rc = head_count(c, len);
    if (rc) return rc;
    return c->cur_store ? h1_arena_append(c, at, len) : 0;
}

static int cb_header_value_complete(llhttp_t *h)
{
    hm_http_core_ *c = core_of(h);
    if (!c->cur_store) return 0;
    c->cur_store = false;
    /* llhttp drops leading whitespace but keeps trailing whitespace. */
    while (c->arena.len > c->cur_val_off &&
           (c->arena.data[c->arena.len - 1] == ' ' || c->arena.data[c->arena.len - 1] == '\t'))
        c->arena.len--;
    size_t vlen = c->arena.len - c->cur_val_off;
    if (h1_arena_append(c, "", 1)) return HPE_USER;
    if (c->n_hdrs == c->hdrs_cap) {
        /* A response keeps only the headers hammer reads (a handful); a
         * request keeps every one. */
        size_t ncap = c->hdrs_cap ? c->hdrs_cap * 2 : c->store_all ? 16 : 4;
        hm_http_hdr_ *nh = hm_realloc(c->hdrs, ncap * sizeof(*nh));
        if (!nh) return h1_fail(c, -ENOMEM, "out of memory");
        c->hdrs = nh;
        c->hdrs_cap = ncap;
    }
    c->hdrs[c->n_hdrs++] = (hm_http_hdr_){
        .name_off = c->cur_name_off,
        .name_len = c->cur_name_len,
        .val_off = c->cur_val_off,
        .val_len = (uint32_t)vlen,
        .id = c->cur_id,
    };
    return 0;
}

static int cb_headers_complete(llhttp_t *h)
{
    hm_http_core_ *c = core_of(h);
    c->in_headers_done = true;
    if (h->type == HTTP_RESPONSE) return resp_headers_complete(resp_of(c), h);
    return req_headers_complete(req_of(c), h);
}

/* Body bytes (decoded, when a coding applies) into the callback or the buffer. */
static int body_sink(hm_http_core_ *c, const char *at, size_t len)
{
    if (c->llh.type == HTTP_RESPONSE) {
        hm_http_resp_parser *p = resp_of(c);
        if (p->on_body_) {
            int rc = p->on_body_(p->user_, at, len);
            return rc < 0 ? h1_fail(c, rc, "body callback failed") : 0;
        }
    }
    if (HM_UNLIKELY(len > c->lim.max_body_bytes - c->body.len))
        return h1_fail(c, -HM_ETOOBIG,
                       c->llh.type == HTTP_RESPONSE && resp_of(c)->coding
                           ? "decoded body over the size limit"
                           : "body over the size limit");
    if (HM_UNLIKELY(hm_buf_append(&c->body, at, len) != 0))
        return h1_fail(c, -ENOMEM, "out of memory");
    return 0;
}

/* The decoder's output: body_sink's HPE_USER becomes an error it passes back. */
static int decoded_sink(void *user, const char *at, size_t len)
{
    hm_http_core_ *c = user;
    return body_sink(c, at, len) ? (c->err ? c->err : -HM_EPROTO_HTTP) : 0;
}

/* Body bytes as they arrive, through the decoder when a coding applies:
 * 0, or HPE_USER with c->err. llhttp's and HTTP/2's pushed bodies alike. */
int h1_body_bytes(hm_http_core_ *c, const char *at, size_t len)
{
    if (c->llh.type == HTTP_RESPONSE) {
        hm_http_resp_parser *p = resp_of(c);
        if (p->coding) {
            uint64_t out0 = p->dec_->out_bytes;
            /* Buffered, the body limit bounds the total; streamed, what
             * one feed may expand to. */
            size_t max_out = p->on_body_ ? c->lim.max_body_bytes : 0;
            int rc = hm_content_decoder_feed(p->dec_, at, len, max_out, decoded_sink, c);
            p->coded_in += len;
            p->decoded_out += p->dec_->out_bytes - out0;
            if (rc < 0) return c->err ? HPE_USER : h1_fail(c, rc, p->dec_->why);
            return 0;
        }
    }
    return body_sink(c, at, len);
}

static int cb_body(llhttp_t *h, const char *at, size_t len)
{
    return h1_body_bytes(core_of(h), at, len);
}

static int cb_message_complete(llhttp_t *h)
{
    hm_http_core_ *c = core_of(h);
    const char *body = c->body.len ? c->body.data : "";
    if (h->type == HTTP_RESPONSE) {
        hm_http_resp_parser *p = resp_of(c);
        int st = h->status_code;
        if (st / 100 == 1 && st != 101) {
            /* Informational: llhttp calls it a message; the caller waits on,
             * but not forever. */
            if (++c->interim > HM_HTTP_MAX_INTERIM)
                return h1_fail(c, -HM_EPROTO_HTTP,
                               "more than 16 informational (1xx) responses before the answer");
            c->msg_begun = false;
            return 0;
        }
        if (p->coding) {
            int rc = hm_content_decoder_end(p->dec_);
            hm_content_decoder_free(p->dec_);
            if (rc < 0) return h1_fail(c, rc, p->dec_->why);
        }
        p->keep_alive = llhttp_should_keep_alive(h) && !c->in_finish;
        p->upgrade = h->upgrade;
        p->body = body;
        p->body_len = c->body.len;
    } else {
        hm_http_req_parser *p = req_of(c);
        p->keep_alive = llhttp_should_keep_alive(h);
        p->upgrade = h->upgrade;
        p->body = body;
        p->body_len = c->body.len;
    }
    c->done = true;
    /* Pausing here makes llhttp_execute return at the message's last byte,
     * which llhttp_get_error_pos reports; llhttp_finish needs no pause. */
    return c->in_finish ? 0 : HPE_PAUSED;
}

static const llhttp_settings_t settings = {
    .on_message_begin = cb_message_begin,
    .on_url = cb_url,
    .on_status = cb_status,
    .on_header_field = cb_header_field,
    .on_header_value = cb_header_value,
    .on_headers_complete = cb_headers_complete,
    .on_body = cb_body,
    .on_message_complete = cb_message_complete,
    .on_url_complete = cb_url_complete,
    .on_header_field_complete = cb_header_field_complete,
    .on_header_value_complete = cb_header_value_complete,
};

/* A response whose headers nobody reads (a flood's): llhttp still checks
 * every byte and the header section is still counted against its limit,
 * but no name is matched and no value stored. */
static int cb_lean_count(llhttp_t *h, const char *at, size_t len)
{
    (void)at;
    return head_count(core_of(h), len);
}

static int cb_lean_line(llhttp_t *h)
{
    return head_count(core_of(h), 4); /* ": " and CRLF, as cb_header_field_complete */
}

static const llhttp_settings_t lean_settings = {
    .on_message_begin = cb_message_begin,
    .on_status = cb_status,
    .on_header_field = cb_lean_count,
    .on_header_value = cb_lean_count,
    .on_headers_complete = cb_headers_complete,
    .on_body = cb_body,
    .on_message_complete = cb_message_complete,
    .on_header_field_complete = cb_lean_line,
};

/* Runs llhttp over one feed and turns its answer into ours. */
static int core_exec(hm_http_core_ *c, const char *data, size_t len, size_t *consumed)
{
    *consumed = 0;
    if (c->err) return c->err;
    /* llhttp must not see an empty buffer: it would restart a pending span
     * at data (possibly NULL) and lose it. */
    if (len == 0) return HM_HTTP_NEED_MORE;
    c->state = ST_PARTIAL;
    llhttp_errno_t e = llhttp_execute(&c->llh, data, len);
    if (HM_LIKELY(e == HPE_OK)) {
        *consumed = len;
        return HM_HTTP_NEED_MORE;
    }
    uintptr_t pos = (uintptr_t)llhttp_get_error_pos(&c->llh);
    uintptr_t start = (uintptr_t)data;
    *consumed = pos >= start && pos <= start + len ? (size_t)(pos - start) : len;
    if ((e == HPE_PAUSED || e == HPE_PAUSED_UPGRADE) && c->done) {
        c->state = ST_DONE;
        return HM_HTTP_DONE;
    }
    if (!c->err) {
        c->err = -HM_EPROTO_HTTP;
        c->reason = NULL; /* llhttp's own reason applies */
    }
    c->state = ST_FAILED;
    return c->err;
}

static const char *core_reason(const hm_http_core_ *c)
{
    if (!c->err) return NULL;
    if (c->reason) return c->reason;
    const char *r = llhttp_get_error_reason(&c->llh);
    return r ? r : hm_strerror(c->err);
}

/* ---- response parser ---- */

void h1_resp_clear_results(hm_http_resp_parser *p)
{
    p->status = 0;
    p->http_major = p->http_minor = 0;
    p->keep_alive = p->upgrade = p->chunked = p->has_content_length = false;
    p->content_length = 0;
    memset(&p->hdr, 0, sizeof(p->hdr));
    p->n_set_cookie = 0;
    p->body = "";
    p->body_len = 0;
    p->coding = HM_CODING_IDENTITY;
    if (p->dec_) hm_content_decoder_free(p->dec_);
}

/* The results of a complete head (status and framing set): the headers
 * callers read by name, then the on_headers callback, then room for a
 * buffered body of known length. 1 when no body follows, 0 when one may,
 * or HPE_USER with the error recorded. */

static int resp_headers_complete(hm_http_resp_parser *p, llhttp_t *h)
{
    int st = h->status_code;
    /* RFC 9110 §15: a status is 100-599; 000 or 999 has no class a client
     * could act on, so the response is malformed, not a status to count. */
    if (st < 100 || st > 599)
        return h1_fail(&p->c_, -HM_EPROTO_HTTP, "a status outside 100-599 (RFC 9110 §15)");
    /* 1xx: no body; skipped at message complete, its headers dropped at the
     * next message begin. */
    if (st / 100 == 1 && st != 101) return 1;

    p->status = st;
    p->http_major = h->http_major;
    p->http_minor = h->http_minor;
    p->chunked = (h->flags & F_CHUNKED) != 0;
    p->has_content_length = (h->flags & F_CONTENT_LENGTH) != 0;
    p->content_length = p->has_content_length ? h->content_length : 0;
    p->upgrade = h->upgrade;
    p->keep_alive = llhttp_should_keep_alive(h); /* provisional; final at DONE */
    return h1_resp_head_done(p);
}

int h1_resp_head_done(hm_http_resp_parser *p)
{
    hm_http_core_ *c = &p->c_;
    int st = p->status;
    size_t n_sc = 0;
    for (size_t i = 0; i < c->n_hdrs; i++)
        n_sc += c->hdrs[i].id == HID_SET_COOKIE;
    if (n_sc > p->set_cookie_cap_) {
        size_t ncap = p->set_cookie_cap_ ? p->set_cookie_cap_ : 4;
        while (ncap < n_sc)
            ncap *= 2;
        hm_http_str *ns = hm_realloc(p->set_cookie, ncap * sizeof(*ns));
        if (!ns) return h1_fail(c, -ENOMEM, "out of memory");
        p->set_cookie = ns;
        p->set_cookie_cap_ = (uint32_t)ncap;
    }
    p->n_set_cookie = 0;
    for (size_t i = 0; i < c->n_hdrs; i++) {
        const hm_http_hdr_ *e = &c->hdrs[i];
        hm_http_str v = {c->arena.data + e->val_off, e->val_len};
        hm_http_str *slot = NULL;
        switch (e->id) {
        case HID_SET_COOKIE:
            p->set_cookie[p->n_set_cookie++] = v;
            continue;
        case HID_CONTENT_TYPE:
            slot = &p->hdr.content_type;
            break;
        case HID_LOCATION:
            slot = &p->hdr.location;
            break;
        case HID_X_VIA_WORKER:
            slot = &p->hdr.x_via_worker;
            break;
        case HID_CONNECTION:
            slot = &p->hdr.connection;
            break;
        case HID_CONTENT_ENCODING:
            slot = &p->hdr.content_encoding;
            break;
        default:
            continue;
        }
        if (!slot->ptr) *slot = v;
    }

    /* HEAD, 204 and 304 have no body whatever Content-Length says. */
    bool no_body = p->head_ || st == 204 || st == 304;
    /* The coding is read before on_headers, which may drop the head
     * (hm_http_resp_drop_head); a coding that cannot be decoded fails the
     * response after it, as ever. */
    int coding_rc = 0;
    const char *coding_why = "out of memory";
    if (!no_body && p->decode_ && p->hdr.content_encoding.ptr) {
        /* The decoder (and its words) exists from the first coded body on. */
        hm_coding coding;
        if (!p->dec_ && !(p->dec_ = hm_calloc(1, sizeof(*p->dec_)))) {
            coding_rc = -ENOMEM;
        } else if (hm_coding_parse(p->hdr.content_encoding.ptr, p->hdr.content_encoding.len,
                                   &coding) < 0) {
            /* The decoder's why outlives the response, as its own errors do. */
            snprintf(p->dec_->why, sizeof(p->dec_->why),
                     "Content-Encoding \"%.*s\": a coding hammer does not decode (it decodes "
                     "one of gzip, deflate, br)",
                     (int)(p->hdr.content_encoding.len > 40 ? 40 : p->hdr.content_encoding.len),
                     p->hdr.content_encoding.ptr);
            coding_rc = -HM_EPROTO_HTTP;
            coding_why = p->dec_->why;
        } else if (coding && hm_content_decoder_start(p->dec_, coding) < 0) {
            coding_rc = -ENOMEM;
        } else {
            p->coding = coding;
        }
    }
    if (p->on_headers_) {
        int rc = p->on_headers_(p->user_, p);
        if (rc < 0) return h1_fail(c, rc, "headers callback failed");
    }
    if (coding_rc) return h1_fail(c, coding_rc, coding_why);
    if (!no_body && !p->on_body_ && p->has_content_length) {
        if (p->content_length > c->lim.max_body_bytes)
            return h1_fail(c, -HM_ETOOBIG, "body over the size limit");
        if (hm_buf_reserve(&c->body, (size_t)p->content_length))
            return h1_fail(c, -ENOMEM, "out of memory");
    }
    return no_body ? 1 : 0; /* 1: llhttp skips the body */
}

void hm_http_resp_init(hm_http_resp_parser *p, const hm_http_limits *lim)
{
    memset(p, 0, sizeof(*p));
    core_init(&p->c_, HTTP_RESPONSE, lim, &settings);
    h1_resp_clear_results(p);
}

void hm_http_resp_begin(hm_http_resp_parser *p, bool head_request)
{
    hm_http_core_ *c = &p->c_;
    if (c->pushed)
        c->pushed = false; /* llhttp saw none of it: nothing to resume or reset */
    else if (c->state == ST_DONE && hm_http_resp_reusable(p) &&
             llhttp_get_errno(&c->llh) == HPE_PAUSED)
        llhttp_resume(&c->llh); /* same connection, right after the last message */
    else if (c->state != ST_FRESH)
        llhttp_reset(&c->llh); /* abandoned, failed, closed or upgraded: new connection */
    c->state = ST_FRESH;
    c->err = 0;
    c->reason = NULL;
    c->msg_begun = false;
    c->interim = 0;
    h1_core_clear_msg(c);
    h1_resp_clear_results(p);
    p->head_ = head_request;
}

void hm_http_resp_set_decoding(hm_http_resp_parser *p, bool on)
{
    p->decode_ = on;
}

void hm_http_resp_set_lean(hm_http_resp_parser *p, bool lean)
{
    p->c_.llh.settings = (void *)(lean ? &lean_settings : &settings);
}

void hm_http_resp_set_callbacks(hm_http_resp_parser *p, hm_http_resp_headers_fn on_headers,
                                hm_http_body_fn on_body, void *user)
{
    p->on_headers_ = on_headers;
    p->on_body_ = on_body;
    p->user_ = user;
}

/* Fails a feed that arrives after the connection's last message. */
static int after_last(hm_http_core_ *c, size_t *consumed, const char *reason)
{
    *consumed = 0;
    c->err = -HM_EPROTO_HTTP;
    c->reason = reason;
    c->state = ST_FAILED;
    return c->err;
}

int hm_http_resp_feed(hm_http_resp_parser *p, const char *data, size_t len, size_t *consumed)
{
    if (p->c_.state == ST_DONE) {
        /* llhttp would silently drop bytes after Connection: close. */
        if (!p->keep_alive || p->upgrade)
            return after_last(&p->c_, consumed, "data after the connection's last response");
        hm_http_resp_begin(p, false);
    }
    return core_exec(&p->c_, data, len, consumed);
}

int hm_http_resp_finish(hm_http_resp_parser *p)
{
    hm_http_core_ *c = &p->c_;
    if (c->err) return c->err;
    if (c->state != ST_DONE && c->msg_begun) {
        c->in_finish = true;
        llhttp_finish(&c->llh); /* its result is implied by c->done and c->err */
        c->in_finish = false;
        if (c->done) {
            c->state = ST_DONE; /* keep_alive is false, so begin restarts llhttp */
            return HM_HTTP_DONE;
        }
        if (c->err) {
            c->state = ST_FAILED;
            return c->err;
        }
    }
    c->err = -HM_ECLOSED;
    c->reason = "connection closed before the response was complete";
    c->state = ST_FAILED;
    return c->err;
}

const char *hm_http_resp_error_reason(const hm_http_resp_parser *p)
{
    return core_reason(&p->c_);
}

void hm_http_resp_drop_head(hm_http_resp_parser *p)
{
    core_free_head(&p->c_);
    hm_free(p->set_cookie);
    p->set_cookie = NULL;
    p->set_cookie_cap_ = 0;
    p->n_set_cookie = 0;
    memset(&p->hdr, 0, sizeof(p->hdr));
}

void hm_http_resp_release(hm_http_resp_parser *p)
{
    hm_http_resp_drop_head(p);
    hm_buf_free(&p->c_.body);
    if (p->dec_) {
        hm_content_decoder_free(p->dec_);
        /* A failure's reason may be the decoder's words: they stay. */
        if (p->c_.reason != p->dec_->why) {
            hm_free(p->dec_);
            p->dec_ = NULL;
        }
    }
    p->body = "";
    p->body_len = 0;
}

void hm_http_resp_free(hm_http_resp_parser *p)
{
    hm_http_resp_release(p);
    hm_free(p->dec_); /* kept by the release for a reason in its words */
    p->dec_ = NULL;
    h1_resp_clear_results(p);
}

/* ---- request parser ---- */

static void req_clear_results(hm_http_req_parser *p)
{
    p->method = 0;
    p->method_name = "";
    p->http_major = p->http_minor = 0;
    p->keep_alive = p->upgrade = p->chunked = p->has_content_length = false;
    p->content_length = 0;
    p->target = p->path = p->query = (hm_http_str){0};
    memset(&p->hdr, 0, sizeof(p->hdr));
    p->body = "";
    p->body_len = 0;
    p->path_off_ = p->path_len_ = p->query_off_ = p->query_len_ = 0;
    p->has_query_ = false;
}

static int req_headers_complete(hm_http_req_parser *p, llhttp_t *h)
{
    hm_http_core_ *c = &p->c_;
    p->method = h->method;
    p->method_name = llhttp_method_name((llhttp_method_t)h->method);
    p->http_major = h->http_major;
    p->http_minor = h->http_minor;
    p->chunked = (h->flags & F_CHUNKED) != 0;
    p->has_content_length = (h->flags & F_CONTENT_LENGTH) != 0;
    p->content_length = p->has_content_length ? h->content_length : 0;
    p->keep_alive = llhttp_should_keep_alive(h);
    p->upgrade = h->upgrade;

    /* The arena no longer moves (trailers are not kept): views are stable. */
    const char *a = c->arena.data;
    if (a) {
        p->target = (hm_http_str){a, strlen(a)};
        p->path = (hm_http_str){a + p->path_off_, p->path_len_};
        if (p->has_query_) p->query = (hm_http_str){a + p->query_off_, p->query_len_};
    }
    for (size_t i = 0; i < c->n_hdrs; i++) {
        const hm_http_hdr_ *e = &c->hdrs[i];
        hm_http_str *slot;
        switch (e->id) {
        case HID_HOST:
            slot = &p->hdr.host;
            break;
        case HID_COOKIE:
            slot = &p->hdr.cookie;
            break;
        case HID_ORIGIN:
            slot = &p->hdr.origin;
            break;
        case HID_CONTENT_TYPE:
            slot = &p->hdr.content_type;
            break;
        case HID_CONNECTION:
            slot = &p->hdr.connection;
            break;
        case HID_DATASTAR_REQUEST:
            slot = &p->hdr.datastar_request;
            break;
        case HID_ACCEPT:
            slot = &p->hdr.accept;
            break;
        case HID_UPGRADE:
            slot = &p->hdr.upgrade;
            break;
        default:
            continue;
        }
        if (!slot->ptr) *slot = (hm_http_str){a + e->val_off, e->val_len};
    }

    if (p->has_content_length) {
        if (p->content_length > c->lim.max_body_bytes)
            return h1_fail(c, -HM_ETOOBIG, "body over the size limit");
        if (hm_buf_reserve(&c->body, (size_t)p->content_length))
            return h1_fail(c, -ENOMEM, "out of memory");
    }
    return 0;
}

void hm_http_req_init(hm_http_req_parser *p, const hm_http_limits *lim)
{
    memset(p, 0, sizeof(*p));
    core_init(&p->c_, HTTP_REQUEST, lim, &settings);
    req_clear_results(p);
}

int hm_http_req_feed(hm_http_req_parser *p, const char *data, size_t len, size_t *consumed)
{
    hm_http_core_ *c = &p->c_;
    if (c->state == ST_DONE) {
        if (p->upgrade)
            return after_last(c, consumed, "connection was upgraded: no more HTTP requests");
        /* llhttp would silently drop bytes after Connection: close. */
        if (!p->keep_alive) return after_last(c, consumed, "data after Connection: close");
        llhttp_resume(&c->llh);
        c->state = ST_FRESH;
        h1_core_clear_msg(c);
        req_clear_results(p);
    }
    return core_exec(c, data, len, consumed);
}

const char *hm_http_req_header(const hm_http_req_parser *p, const char *name)
{
    const hm_http_core_ *c = &p->c_;
    size_t n = strlen(name);
    for (size_t i = 0; i < c->n_hdrs; i++) {
        const hm_http_hdr_ *e = &c->hdrs[i];
        if (e->name_len == n && strncasecmp(c->arena.data + e->name_off, name, n) == 0)
            return c->arena.data + e->val_off;
    }
    return NULL;
}

size_t hm_http_req_header_count(const hm_http_req_parser *p)
{
    return p->c_.n_hdrs;
}

int hm_http_req_header_at(const hm_http_req_parser *p, size_t i, hm_http_str *name,
                          hm_http_str *value)
{
    const hm_http_core_ *c = &p->c_;
    if (i >= c->n_hdrs) return -ERANGE;
    const hm_http_hdr_ *e = &c->hdrs[i];
    if (name) *name = (hm_http_str){c->arena.data + e->name_off, e->name_len};
    if (value) *value = (hm_http_str){c->arena.data + e->val_off, e->val_len};
    return 0;
}

const char *hm_http_req_error_reason(const hm_http_req_parser *p)
{
    return core_reason(&p->c_);
}

void hm_http_req_reset(hm_http_req_parser *p)
{
    hm_http_core_ *c = &p->c_;
    llhttp_reset(&c->llh);
    c->state = ST_FRESH;
    c->err = 0;
    c->reason = NULL;
    c->msg_begun = false;
    h1_core_clear_msg(c);
    req_clear_results(p);
}

void hm_http_req_free(hm_http_req_parser *p)
{
    core_free(&p->c_);
    req_clear_results(p);
}

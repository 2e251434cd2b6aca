/* sse.c — WHATWG event-stream interpretation as an incremental push parser. */
#include "proto/sse.h"

#include "base/hm_base.h"

#include <string.h>

static const unsigned char utf8_bom[3] = {0xEF, 0xBB, 0xBF};

void hm_sse_parser_init(hm_sse_parser *p, hm_sse_event_fn on_event, void *user)
{
    memset(p, 0, sizeof(*p));
    p->on_event = on_event;
    p->user = user;
    p->max_event = HM_SSE_DEFAULT_MAX_EVENT;
    p->retry_ms = -1;
}

void hm_sse_parser_free(hm_sse_parser *p)
{
    hm_buf_free(&p->line_);
    hm_buf_free(&p->data_);
    hm_buf_free(&p->type_);
    hm_buf_free(&p->id_);
    hm_buf_free(&p->last_id_);
    memset(p, 0, sizeof(*p));
    p->retry_ms = -1;
}

void hm_sse_parser_reset(hm_sse_parser *p)
{
    p->line_.len = 0;
    p->data_.len = 0;
    p->type_.len = 0;
    p->skip_lf_ = false;
    p->bom_done_ = false;
    p->bom_seen_ = 0;
    p->err_ = 0;
    if (p->id_dirty_) {
        /* An id: of an event that never completed belongs to the dropped stream. */
        p->id_.len = 0;
        if (p->last_id_.data && hm_buf_set(&p->id_, p->last_id_.data, p->last_id_.len) != 0)
            p->id_.len = 0;
        p->id_dirty_ = false;
    }
}

size_t hm_sse_pending(const hm_sse_parser *p)
{
    return p->line_.len + p->data_.len;
}

const char *hm_sse_last_event_id(const hm_sse_parser *p, size_t *len)
{
    if (len) *len = p->last_id_.data ? p->last_id_.len : 0;
    return p->last_id_.data ? p->last_id_.data : "";
}

static int dispatch(hm_sse_parser *p)
{
    /* The last event ID string is committed even when nothing is dispatched. */
    if (p->id_dirty_) {
        int rc = hm_buf_set(&p->last_id_, p->id_.data ? p->id_.data : "", p->id_.len);
        if (rc) return rc;
        p->id_dirty_ = false;
    }
    if (p->data_.len == 0) {
        p->type_.len = 0;
        return 0;
    }
    /* Drop the data buffer's final "\n"; its byte becomes the terminator. */
    p->data_.len--;
    p->data_.data[p->data_.len] = '\0';

    hm_sse_event ev = {
        .type = p->type_.len ? p->type_.data : "message",
        .type_len = p->type_.len ? p->type_.len : 7,
        .data = p->data_.data,
        .data_len = p->data_.len,
        .retry_ms = p->retry_ms,
    };
    ev.last_event_id = hm_sse_last_event_id(p, &ev.last_event_id_len);

    p->events++;
    int rc = p->on_event ? p->on_event(&ev, p->user) : 0;
    p->data_.len = 0;
    p->type_.len = 0;
    if (p->lean) {
        hm_buf_free(&p->data_);
        hm_buf_free(&p->type_);
    }
    return rc < 0 ? rc : 0;
}

static bool field_is(const char *f, size_t n, const char *name)
{
    return n == strlen(name) && memcmp(f, name, n) == 0;
}

/* Parses a retry: value: ASCII digits only, at least one; saturates. */
static bool parse_retry(const char *v, size_t n, int64_t *out)
{
    if (n == 0) return false;
    int64_t r = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9') return false;
        int d = v[i] - '0';
        r = r > (INT64_MAX - d) / 10 ? INT64_MAX : r * 10 + d;
    }
    *out = r;
    return true;
}

/* Interprets one complete line (without its line end). */
static int process_line(hm_sse_parser *p, const char *line, size_t len)
{
    if (len > p->max_event) return -HM_ETOOBIG;
    if (len == 0) return dispatch(p);
    if (line[0] == ':') {
        p->comments++;
        return 0;
    }

    const char *colon = memchr(line, ':', len);
    size_t flen = colon ? (size_t)(colon - line) : len;
    const char *val = colon ? colon + 1 : line + len;
    size_t vlen = colon ? len - flen - 1 : 0;
    if (vlen && *val == ' ') {
        val++;
        vlen--;
    }

    if (field_is(line, flen, "data")) {
        if (p->data_.len + vlen + 1 > p->max_event) return -HM_ETOOBIG;
        int rc = hm_buf_reserve(&p->data_, vlen + 1);
        if (rc) return rc;
        hm_buf_append(&p->data_, val, vlen); /* cannot fail: room reserved */
        hm_buf_append(&p->data_, "\n", 1);
    } else if (field_is(line, flen, "event")) {
        return hm_buf_set(&p->type_, val, vlen);
    } else if (field_is(line, flen, "id")) {
        if (vlen && memchr(val, '\0', vlen)) return 0;
        int rc = hm_buf_set(&p->id_, val, vlen);
        if (rc) return rc;
        p->id_dirty_ = true;
    } else if (field_is(line, flen, "retry")) {
        int64_t r;
        if (parse_retry(val, vlen, &r)) p->retry_ms = r;
    }
    /* Any other field is ignored. */
    return 0;
}

/* Splits bytes into lines; the stream-start BOM has been handled already. */
static int feed_lines(hm_sse_parser *p, const char *data, size_t len)
{
    size_t i = 0;
    while (i < len) {
        if (p->skip_lf_) {
            p->skip_lf_ = false;
            if (data[i] == '\n') {
                i++;
                continue;
            }
        }
        /* The line ends at the first CR or LF; memchr scans a line's bytes
         * many at a time where a byte loop took most of the parse. */
        const char *lf = memchr(data + i, '\n', len - i);
        size_t j = lf ? (size_t)(lf - data) : len;
        const char *cr = memchr(data + i, '\r', j - i);
        if (cr) j = (size_t)(cr - data);

        if (j == len) { /* no line end yet: keep the partial line */
            size_t n = len - i;
            if (p->line_.len + n > p->max_event) return -HM_ETOOBIG;
            return hm_buf_append(&p->line_, data + i, n);
        }

        const char *line = data + i;
        size_t n = j - i;
        bool joined = p->line_.len > 0;
        if (joined) { /* complete the line started in an earlier feed */
            if (p->line_.len + n > p->max_event) return -HM_ETOOBIG;
            int rc = hm_buf_append(&p->line_, line, n);
            if (rc) return rc;
            line = p->line_.data;
            n = p->line_.len;
            p->line_.len = 0;
        }
        if (data[j] == '\r') p->skip_lf_ = true;
        int rc = process_line(p, line, n);
        if (joined && p->lean) hm_buf_free(&p->line_);
        if (rc) return rc;
        i = j + 1;
    }
    return 0;
}

int hm_sse_feed(hm_sse_parser *p, const char *data, size_t len)
{
    if (p->err_) return p->err_;
    int rc = 0;
    if (!p->bom_done_) {
        /* Match the BOM byte by byte so one split across feeds is still seen. */
        while (len > 0 && p->bom_seen_ < sizeof(utf8_bom) &&
               (unsigned char)*data == utf8_bom[p->bom_seen_]) {
            p->bom_seen_++;
            data++;
            len--;
        }
        if (p->bom_seen_ == sizeof(utf8_bom)) {
            p->bom_done_ = true;
        } else if (len > 0) {
            /* Not a BOM after all: the bytes held back are ordinary content. */
            p->bom_done_ = true;
            rc = feed_lines(p, (const char *)utf8_bom, p->bom_seen_);
        } else {
            return 0; /* still undecided; wait for more bytes */
        }
    }
    if (rc == 0) rc = feed_lines(p, data, len);
    if (rc) p->err_ = rc;
    return rc;
}

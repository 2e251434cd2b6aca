/* sse.c — WHATWG event-stream interpretation as an incremental push parser. */
#include "proto/sse.h"

#include "base/hm_base.h"

#include <string.h>

static const unsigned char utf8_bom[3] = {0xEF, 0xBB, 0xBF};

/* Grows *buf to hold at least need bytes; doubling keeps appends amortised
 * O(1) and lets a steady stream reuse the same block. */
static int buf_reserve(char **buf, size_t *cap, size_t need)
{
    if (need <= *cap) return 0;
    size_t ncap = *cap ? *cap : 64;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2) {
            ncap = need;
            break;
        }
        ncap *= 2;
    }
    char *nb = hm_realloc(*buf, ncap);
    if (!nb) return -ENOMEM;
    *buf = nb;
    *cap = ncap;
    return 0;
}

/* Copies n bytes into *buf as a NUL-terminated string. */
static int buf_set(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
    int rc = buf_reserve(buf, cap, n + 1);
    if (rc) return rc;
    if (n) memcpy(*buf, s, n);
    (*buf)[n] = '\0';
    *len = n;
    return 0;
}

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
    hm_free(p->line_);
    hm_free(p->data_);
    hm_free(p->type_);
    hm_free(p->id_);
    hm_free(p->last_id_);
    memset(p, 0, sizeof(*p));
    p->retry_ms = -1;
}

void hm_sse_parser_reset(hm_sse_parser *p)
{
    p->line_len_ = 0;
    p->data_len_ = 0;
    p->type_len_ = 0;
    p->skip_lf_ = false;
    p->bom_done_ = false;
    p->bom_seen_ = 0;
    p->err_ = 0;
    if (p->id_dirty_) {
        /* An id: of an event that never completed belongs to the dropped stream. */
        p->id_len_ = 0;
        if (p->last_id_ &&
            buf_set(&p->id_, &p->id_len_, &p->id_cap_, p->last_id_, p->last_id_len_) != 0)
            p->id_len_ = 0;
        p->id_dirty_ = false;
    }
}

const char *hm_sse_last_event_id(const hm_sse_parser *p, size_t *len)
{
    if (len) *len = p->last_id_ ? p->last_id_len_ : 0;
    return p->last_id_ ? p->last_id_ : "";
}

static int dispatch(hm_sse_parser *p)
{
    /* The last event ID string is committed even when nothing is dispatched. */
    if (p->id_dirty_) {
        int rc = buf_set(&p->last_id_, &p->last_id_len_, &p->last_id_cap_, p->id_ ? p->id_ : "",
                         p->id_len_);
        if (rc) return rc;
        p->id_dirty_ = false;
    }
    if (p->data_len_ == 0) {
        p->type_len_ = 0;
        return 0;
    }
    /* Drop the data buffer's final "\n"; its byte becomes the terminator. */
    p->data_len_--;
    p->data_[p->data_len_] = '\0';

    hm_sse_event ev = {
        .type = p->type_len_ ? p->type_ : "message",
        .type_len = p->type_len_ ? p->type_len_ : 7,
        .data = p->data_,
        .data_len = p->data_len_,
        .retry_ms = p->retry_ms,
    };
    ev.last_event_id = hm_sse_last_event_id(p, &ev.last_event_id_len);

    p->events++;
    int rc = p->on_event ? p->on_event(&ev, p->user) : 0;
    p->data_len_ = 0;
    p->type_len_ = 0;
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
        size_t need = p->data_len_ + vlen + 1;
        if (need > p->max_event) return -HM_ETOOBIG;
        int rc = buf_reserve(&p->data_, &p->data_cap_, need);
        if (rc) return rc;
        if (vlen) memcpy(p->data_ + p->data_len_, val, vlen);
        p->data_[need - 1] = '\n';
        p->data_len_ = need;
    } else if (field_is(line, flen, "event")) {
        return buf_set(&p->type_, &p->type_len_, &p->type_cap_, val, vlen);
    } else if (field_is(line, flen, "id")) {
        if (vlen && memchr(val, '\0', vlen)) return 0;
        int rc = buf_set(&p->id_, &p->id_len_, &p->id_cap_, val, vlen);
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
        size_t j = i;
        while (j < len && data[j] != '\n' && data[j] != '\r')
            j++;

        if (j == len) { /* no line end yet: keep the partial line */
            size_t n = len - i;
            if (p->line_len_ + n > p->max_event) return -HM_ETOOBIG;
            int rc = buf_reserve(&p->line_, &p->line_cap_, p->line_len_ + n);
            if (rc) return rc;
            memcpy(p->line_ + p->line_len_, data + i, n);
            p->line_len_ += n;
            return 0;
        }

        const char *line = data + i;
        size_t n = j - i;
        if (p->line_len_) { /* complete the line started in an earlier feed */
            if (p->line_len_ + n > p->max_event) return -HM_ETOOBIG;
            int rc = buf_reserve(&p->line_, &p->line_cap_, p->line_len_ + n);
            if (rc) return rc;
            if (n) memcpy(p->line_ + p->line_len_, line, n);
            line = p->line_;
            n = p->line_len_ + n;
            p->line_len_ = 0;
        }
        if (data[j] == '\r') p->skip_lf_ = true;
        int rc = process_line(p, line, n);
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

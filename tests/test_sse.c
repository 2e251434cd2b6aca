/* test_sse.c — the event-stream parser against the WHATWG rules and examples,
 * and its independence from chunk boundaries. */
#include "hm_test.h"

#include "base/hm_base.h"
#include "proto/sse.h"

#include <stdbool.h>

#define MAX_EVENTS 64

typedef struct {
    char *type;
    char *data;
    size_t data_len;
    char *id;
    int64_t retry_ms;
} rec_event;

typedef struct {
    rec_event ev[MAX_EVENTS];
    size_t n;
    int fail_at; /* 1-based event number whose callback returns -42; 0: never */
} recorder;

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    ASSERT(d != NULL);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

static int record(const hm_sse_event *ev, void *user)
{
    recorder *r = user;
    ASSERT_LT(r->n, MAX_EVENTS);
    /* Views are NUL-terminated as well as sized. */
    ASSERT_EQ(ev->type[ev->type_len], '\0');
    ASSERT_EQ(ev->data[ev->data_len], '\0');
    ASSERT_EQ(ev->last_event_id[ev->last_event_id_len], '\0');
    rec_event *e = &r->ev[r->n++];
    e->type = dup_n(ev->type, ev->type_len);
    e->data = dup_n(ev->data, ev->data_len);
    e->data_len = ev->data_len;
    e->id = dup_n(ev->last_event_id, ev->last_event_id_len);
    e->retry_ms = ev->retry_ms;
    if (r->fail_at && (int)r->n == r->fail_at) return -42;
    return 0;
}

static void rec_free(recorder *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->ev[i].type);
        free(r->ev[i].data);
        free(r->ev[i].id);
    }
    memset(r, 0, sizeof(*r));
}

static void rec_same(const recorder *a, const recorder *b, const char *what, size_t at)
{
    if (a->n != b->n) HM_FAIL_("%s %zu: %zu events vs %zu", what, at, a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        const rec_event *x = &a->ev[i], *y = &b->ev[i];
        if (strcmp(x->type, y->type) || x->data_len != y->data_len ||
            memcmp(x->data, y->data, x->data_len) || strcmp(x->id, y->id) ||
            x->retry_ms != y->retry_ms)
            HM_FAIL_("%s %zu: event %zu differs: [%s|%s|%s] vs [%s|%s|%s]", what, at, i, x->type,
                     x->data, x->id, y->type, y->data, y->id);
    }
}

/* Feeds s as one chunk; returns the comment count. */
static uint64_t parse_whole(recorder *r, const char *s, size_t n)
{
    hm_sse_parser p;
    hm_sse_parser_init(&p, record, r);
    ASSERT_EQ(hm_sse_feed(&p, s, n), 0);
    ASSERT_EQ(p.events, r->n);
    uint64_t c = p.comments;
    hm_sse_parser_free(&p);
    return c;
}

/* Whether parse_cuts runs a lean parser (hm_sse_parser.lean). */
static bool lean_parse;

/* Feeds s in pieces cut at the given offsets (ascending, within [0, n]). */
static uint64_t parse_cuts(recorder *r, const char *s, size_t n, const size_t *cuts, size_t ncuts)
{
    hm_sse_parser p;
    hm_sse_parser_init(&p, record, r);
    p.lean = lean_parse;
    size_t at = 0;
    for (size_t i = 0; i <= ncuts; i++) {
        size_t end = i < ncuts ? cuts[i] : n;
        ASSERT_EQ(hm_sse_feed(&p, s + at, end - at), 0);
        at = end;
    }
    uint64_t c = p.comments;
    hm_sse_parser_free(&p);
    return c;
}

static void expect(const recorder *r, size_t i, const char *type, const char *data, const char *id)
{
    ASSERT_LT(i, r->n);
    ASSERT_STREQ(r->ev[i].type, type);
    ASSERT_EQ(r->ev[i].data_len, strlen(data));
    ASSERT_STREQ(r->ev[i].data, data);
    ASSERT_STREQ(r->ev[i].id, id);
}

#define S(lit) lit, sizeof(lit) - 1
#define BOM "\xEF\xBB\xBF"

/* --- WHATWG examples ----------------------------------------------------- */

static void test_spec_stock_example(void)
{
    recorder r = {0};
    parse_whole(&r, S("data: YHOO\ndata: +2\ndata: 10\n\n"));
    ASSERT_EQ(r.n, 1);
    expect(&r, 0, "message", "YHOO\n+2\n10", "");
    rec_free(&r);
}

static void test_spec_test_stream_example(void)
{
    static const char stream[] = ": test stream\n"
                                 "\n"
                                 "data: first event\n"
                                 "id: 1\n"
                                 "\n"
                                 "data:second event\n"
                                 "id\n"
                                 "\n"
                                 "data:  third event\n"
                                 "\n";
    recorder r = {0};
    uint64_t comments = parse_whole(&r, S(stream));
    ASSERT_EQ(comments, 1);
    ASSERT_EQ(r.n, 3);
    expect(&r, 0, "message", "first event", "1");
    expect(&r, 1, "message", "second event", ""); /* bare "id" resets the id */
    expect(&r, 2, "message", " third event", ""); /* only one space is stripped */
    rec_free(&r);

    /* End of stream alone does not dispatch the last event. */
    recorder r2 = {0};
    parse_whole(&r2, stream, sizeof(stream) - 2);
    ASSERT_EQ(r2.n, 2);
    rec_free(&r2);
}

static void test_spec_empty_data_example(void)
{
    recorder r = {0};
    parse_whole(&r, S("data\n\ndata\ndata\n\ndata:"));
    ASSERT_EQ(r.n, 2);
    expect(&r, 0, "message", "", "");
    expect(&r, 1, "message", "\n", "");
    rec_free(&r);
}

static void test_spec_space_example(void)
{
    recorder r = {0};
    parse_whole(&r, S("data:test\n\ndata: test\n\n"));
    ASSERT_EQ(r.n, 2);
    expect(&r, 0, "message", "test", "");
    expect(&r, 1, "message", "test", "");
    rec_free(&r);
}

static void test_spec_event_type_example(void)
{
    recorder r = {0};
    parse_whole(&r, S("event: add\ndata: 73857293\n\n"
                      "event: remove\ndata: 2153\n\n"
                      "event: add\ndata: 113411\n\n"));
    ASSERT_EQ(r.n, 3);
    expect(&r, 0, "add", "73857293", "");
    expect(&r, 1, "remove", "2153", "");
    expect(&r, 2, "add", "113411", "");
    rec_free(&r);
}

/* --- field rules --------------------------------------------------------- */

static void test_fields(void)
{
    recorder r = {0};
    /* An event with no data resets the type; unknown fields are ignored;
     * "event" without a colon is an empty type, which means "message"; a tab
     * after the colon is kept; field names are case-sensitive. */
    parse_whole(&r, S("event: lost\n\n"
                      "foo: bar\nDATA: no\ndata: x\n\n"
                      "event: t\nevent\ndata: y\n\n"
                      "event:\tt\ndata:\tz\n\n"
                      "event:\ndata:a:b\n\n"));
    ASSERT_EQ(r.n, 4);
    expect(&r, 0, "message", "x", "");
    expect(&r, 1, "message", "y", "");
    expect(&r, 2, "\tt", "\tz", "");
    expect(&r, 3, "message", "a:b", "");
    rec_free(&r);
}

static void test_ids(void)
{
    recorder r = {0};
    hm_sse_parser p;
    hm_sse_parser_init(&p, record, &r);
    size_t len = 99;
    ASSERT_STREQ(hm_sse_last_event_id(&p, &len), "");
    ASSERT_EQ(len, 0);

    /* The id persists across events and is committed even by an event
     * without data; an id containing NUL is ignored. */
    static const char s[] = "id: 5\ndata: a\n\n"
                            "data: b\n\n"
                            "id: 6\n\n"
                            "data: c\n\n"
                            "id: x\0y\ndata: d\n\n"
                            "id:\ndata: e\n\n";
    ASSERT_EQ(hm_sse_feed(&p, s, sizeof(s) - 1), 0);
    ASSERT_EQ(r.n, 5);
    expect(&r, 0, "message", "a", "5");
    expect(&r, 1, "message", "b", "5");
    expect(&r, 2, "message", "c", "6");
    expect(&r, 3, "message", "d", "6");
    expect(&r, 4, "message", "e", "");

    /* An id of an unfinished event is not yet the last event ID, and a reset
     * (new connection) drops it but keeps the committed one. */
    ASSERT_EQ(hm_sse_feed(&p, S("id: 9\ndata: a\n\nid: 10\ndata: lost\n")), 0);
    ASSERT_STREQ(hm_sse_last_event_id(&p, &len), "9");
    ASSERT_EQ(len, 1);
    hm_sse_parser_reset(&p);
    ASSERT_STREQ(hm_sse_last_event_id(&p, NULL), "9");
    ASSERT_EQ(hm_sse_feed(&p, S("data: after\n\n")), 0);
    ASSERT_EQ(r.n, 7);
    expect(&r, 6, "message", "after", "9");
    hm_sse_parser_free(&p);
    rec_free(&r);
}

static void test_nul_in_data(void)
{
    recorder r = {0};
    static const char s[] = "data: a\0b\n\n";
    parse_whole(&r, s, sizeof(s) - 1);
    ASSERT_EQ(r.n, 1);
    ASSERT_EQ(r.ev[0].data_len, 3);
    ASSERT(memcmp(r.ev[0].data, "a\0b", 3) == 0);
    rec_free(&r);
}

static void test_retry(void)
{
    recorder r = {0};
    hm_sse_parser p;
    hm_sse_parser_init(&p, record, &r);
    ASSERT_EQ(p.retry_ms, -1);
    ASSERT_EQ(hm_sse_feed(&p, S("data: a\n\n")), 0);
    ASSERT_EQ(r.ev[0].retry_ms, -1);

    ASSERT_EQ(hm_sse_feed(&p, S("retry: 3000\n")), 0);
    ASSERT_EQ(p.retry_ms, 3000);
    /* Anything but ASCII digits is ignored. */
    static const char *const bad[] = {"retry: 3a\n", "retry: -1\n",  "retry:\n", "retry: 1.5\n",
                                      "retry: +7\n", "retry:  12\n", "retry\n",  "retry: 12 \n"};
    for (size_t i = 0; i < HM_ARRAY_LEN(bad); i++) {
        ASSERT_EQ(hm_sse_feed(&p, bad[i], strlen(bad[i])), 0);
        ASSERT_EQ(p.retry_ms, 3000);
    }
    ASSERT_EQ(hm_sse_feed(&p, S("retry:0\ndata: b\n\n")), 0);
    ASSERT_EQ(p.retry_ms, 0);
    ASSERT_EQ(r.ev[1].retry_ms, 0);
    ASSERT_EQ(hm_sse_feed(&p, S("retry: 99999999999999999999999\n")), 0);
    ASSERT_EQ(p.retry_ms, INT64_MAX);
    ASSERT_EQ(r.n, 2);
    hm_sse_parser_free(&p);
    rec_free(&r);
}

static void test_comments(void)
{
    recorder r = {0};
    uint64_t c = parse_whole(&r, S(": ping\n\n:\n\n:: x\r\n\r\n: a\n: b\ndata: real\n\n"));
    ASSERT_EQ(c, 5);
    ASSERT_EQ(r.n, 1);
    expect(&r, 0, "message", "real", "");
    rec_free(&r);
}

/* --- line ends and the BOM ------------------------------------------------ */

static char *with_line_ends(const char *s, const char *eol)
{
    size_t n = 0, el = strlen(eol);
    for (const char *q = s; *q; q++)
        n += *q == '\n' ? el : 1;
    char *out = malloc(n + 1), *w = out;
    ASSERT(out != NULL);
    for (const char *q = s; *q; q++) {
        if (*q == '\n') {
            memcpy(w, eol, el);
            w += el;
        } else {
            *w++ = *q;
        }
    }
    *w = '\0';
    return out;
}

static void test_line_end_styles_equal(void)
{
    static const char base[] = ": c\nevent: a\ndata: 1\ndata:\ndata: 2\nid: 3\n\n"
                               "\n\ndata: x\n\nevent: e\nretry: 10\ndata: y\n\n";
    recorder lf = {0};
    uint64_t c_lf = parse_whole(&lf, S(base));
    ASSERT_EQ(lf.n, 3);
    expect(&lf, 0, "a", "1\n\n2", "3");
    expect(&lf, 1, "message", "x", "3");
    expect(&lf, 2, "e", "y", "3");
    ASSERT_EQ(c_lf, 1);

    static const char *const eols[] = {"\r", "\r\n"};
    for (size_t i = 0; i < HM_ARRAY_LEN(eols); i++) {
        char *s = with_line_ends(base, eols[i]);
        recorder r = {0};
        ASSERT_EQ(parse_whole(&r, s, strlen(s)), c_lf);
        rec_same(&lf, &r, "line end style", i);
        /* And one byte at a time. */
        recorder r1 = {0};
        hm_sse_parser p;
        hm_sse_parser_init(&p, record, &r1);
        for (size_t k = 0; s[k]; k++)
            ASSERT_EQ(hm_sse_feed(&p, s + k, 1), 0);
        hm_sse_parser_free(&p);
        rec_same(&lf, &r1, "bytewise line end style", i);
        rec_free(&r);
        rec_free(&r1);
        free(s);
    }
    rec_free(&lf);
}

static void test_crlf_split_across_feeds(void)
{
    recorder r = {0};
    hm_sse_parser p;
    hm_sse_parser_init(&p, record, &r);
    /* If the LF were a second line end, the blank line would dispatch "a". */
    ASSERT_EQ(hm_sse_feed(&p, S("data: a\r")), 0);
    ASSERT_EQ(hm_sse_feed(&p, S("\ndata: b\r")), 0);
    ASSERT_EQ(hm_sse_feed(&p, S("\n\r")), 0);
    ASSERT_EQ(r.n, 1);
    expect(&r, 0, "message", "a\nb", "");
    /* CR then a non-LF byte in the next feed: the CR alone ended the line. */
    ASSERT_EQ(hm_sse_feed(&p, S("data: c\r")), 0);
    ASSERT_EQ(hm_sse_feed(&p, S("\r")), 0);
    ASSERT_EQ(r.n, 2);
    expect(&r, 1, "message", "c", "");
    /* An empty feed between CR and LF changes nothing. */
    ASSERT_EQ(hm_sse_feed(&p, S("data: d\r")), 0);
    ASSERT_EQ(hm_sse_feed(&p, "", 0), 0);
    ASSERT_EQ(hm_sse_feed(&p, S("\n\n")), 0);
    ASSERT_EQ(r.n, 3);
    expect(&r, 2, "message", "d", "");
    /* LF CR is two line ends. */
    ASSERT_EQ(hm_sse_feed(&p, S("data: e\n\r")), 0);
    ASSERT_EQ(r.n, 4);
    hm_sse_parser_free(&p);
    rec_free(&r);
}

static void test_bom(void)
{
    recorder r = {0};
    uint64_t c = parse_whole(&r, S("\xEF\xBB\xBF: c\ndata: x\n\n"));
    ASSERT_EQ(c, 1);
    ASSERT_EQ(r.n, 1);
    expect(&r, 0, "message", "x", "");
    rec_free(&r);

    /* Only at the stream start: a second BOM makes "\xEF\xBB\xBFdata" an
     * unknown field, as does one later in the stream. */
    parse_whole(&r, S(BOM BOM "data: x\n\n"));
    ASSERT_EQ(r.n, 0);
    parse_whole(&r, S("data: a\n\n" BOM "data: b\n\n"));
    ASSERT_EQ(r.n, 1);
    expect(&r, 0, "message", "a", "");
    rec_free(&r);
    /* In a value it is content. */
    parse_whole(&r, S("data: \xEF\xBB\xBFz\n\n"));
    expect(&r, 0, "message", "\xEF\xBB\xBFz", "");
    rec_free(&r);

    /* A BOM split over three feeds is still stripped. */
    hm_sse_parser p;
    hm_sse_parser_init(&p, record, &r);
    ASSERT_EQ(hm_sse_feed(&p, S("\xEF")), 0);
    ASSERT_EQ(hm_sse_feed(&p, S("\xBB")), 0);
    ASSERT_EQ(hm_sse_feed(&p, S("\xBF")), 0);
    ASSERT_EQ(hm_sse_feed(&p, S(":c\ndata: y\n\n")), 0);
    ASSERT_EQ(p.comments, 1);
    ASSERT_EQ(r.n, 1);
    expect(&r, 0, "message", "y", "");
    hm_sse_parser_free(&p);
    rec_free(&r);

    /* A BOM prefix that turns out not to be one is kept as content: here it
     * spoils the comment's leading colon. */
    hm_sse_parser_init(&p, record, &r);
    ASSERT_EQ(hm_sse_feed(&p, S("\xEF\xBB")), 0);
    ASSERT_EQ(hm_sse_feed(&p, S(":c\ndata: y\n\n")), 0);
    ASSERT_EQ(p.comments, 0);
    ASSERT_EQ(r.n, 1);
    hm_sse_parser_free(&p);
    rec_free(&r);

    /* reset() starts a new stream, which may carry its own BOM. */
    hm_sse_parser_init(&p, record, &r);
    ASSERT_EQ(hm_sse_feed(&p, S(BOM "data: 1\n\n")), 0);
    hm_sse_parser_reset(&p);
    ASSERT_EQ(hm_sse_feed(&p, S(BOM "data: 2\n\n")), 0);
    ASSERT_EQ(r.n, 2);
    expect(&r, 1, "message", "2", "");
    hm_sse_parser_free(&p);
    rec_free(&r);
}

/* --- chunk independence --------------------------------------------------- */

static const char mixed_stream[] = "\xEF\xBB\xBF: hello\r\n"
                                   "event: add\r"
                                   "data: 1\r\n"
                                   "data:2\n"
                                   "\r\n"
                                   "id: 7\n"
                                   "data\n"
                                   "\n"
                                   ": hb\r"
                                   "\r"
                                   "retry: 1500\n"
                                   "event: x\n"
                                   "\n"
                                   "data: tail\r\n"
                                   "\r\n"
                                   "foo: bar\n"
                                   "data:  sp\r"
                                   "\r"
                                   "event: end\n"
                                   "data: z\n"
                                   "\n"
                                   "data: never";

static void test_mixed_stream_whole(recorder *whole)
{
    uint64_t c = parse_whole(whole, S(mixed_stream));
    ASSERT_EQ(c, 2);
    ASSERT_EQ(whole->n, 5);
    expect(whole, 0, "add", "1\n2", "");
    ASSERT_EQ(whole->ev[0].retry_ms, -1);
    expect(whole, 1, "message", "", "7");
    expect(whole, 2, "message", "tail", "7");
    ASSERT_EQ(whole->ev[2].retry_ms, 1500);
    expect(whole, 3, "message", " sp", "7");
    expect(whole, 4, "end", "z", "7");
}

static void test_every_split_once(void)
{
    recorder whole = {0};
    test_mixed_stream_whole(&whole);
    size_t n = sizeof(mixed_stream) - 1;

    for (size_t i = 0; i <= n; i++) {
        recorder r = {0};
        size_t cuts[1] = {i};
        ASSERT_EQ(parse_cuts(&r, mixed_stream, n, cuts, 1), 2);
        rec_same(&whole, &r, "split at", i);
        rec_free(&r);
    }
    /* Every pair of cuts: three pieces, so a piece can hold just "\r" or a
     * lone BOM byte between two others. */
    for (size_t i = 0; i <= n; i++) {
        for (size_t j = i; j <= n; j++) {
            recorder r = {0};
            size_t cuts[2] = {i, j};
            ASSERT_EQ(parse_cuts(&r, mixed_stream, n, cuts, 2), 2);
            rec_same(&whole, &r, "split pair at", i * 1000 + j);
            rec_free(&r);
        }
    }
    /* One byte at a time. */
    recorder r = {0};
    size_t cuts[sizeof(mixed_stream)];
    for (size_t i = 0; i < n; i++)
        cuts[i] = i + 1;
    ASSERT_EQ(parse_cuts(&r, mixed_stream, n, cuts, n), 2);
    rec_same(&whole, &r, "bytewise", 0);
    rec_free(&r);
    rec_free(&whole);
}

static void test_every_split(void)
{
    lean_parse = false;
    test_every_split_once();
    lean_parse = true;
    test_every_split_once();
    lean_parse = false;
}

/* --- limits, errors, buffer reuse ----------------------------------------- */

static void test_too_big(void)
{
    recorder r = {0};
    hm_sse_parser p;

    /* Data accumulated over lines: 8 + 8 bytes fit a limit of 16 ... */
    hm_sse_parser_init(&p, record, &r);
    p.max_event = 16;
    ASSERT_EQ(hm_sse_feed(&p, S("data: 0123456\ndata: 0123456\n\n")), 0);
    ASSERT_EQ(r.n, 1);
    expect(&r, 0, "message", "0123456\n0123456", "");
    /* ... and 3 x 6 do not; the error sticks until reset. */
    ASSERT_EQ(hm_sse_feed(&p, S("data: 01234\ndata: 01234\ndata: 01234\n\n")), -HM_ETOOBIG);
    ASSERT_EQ(hm_sse_feed(&p, S("data: ok\n\n")), -HM_ETOOBIG);
    ASSERT_EQ(r.n, 1);
    hm_sse_parser_reset(&p);
    ASSERT_EQ(hm_sse_feed(&p, S("data: ok\n\n")), 0);
    ASSERT_EQ(r.n, 2);
    hm_sse_parser_free(&p);
    rec_free(&r);

    /* One line over the limit, whole or arriving in pieces without its end. */
    hm_sse_parser_init(&p, record, &r);
    p.max_event = 16;
    ASSERT_EQ(hm_sse_feed(&p, S(": 0123456789abcdef\n")), -HM_ETOOBIG);
    hm_sse_parser_free(&p);
    hm_sse_parser_init(&p, record, &r);
    p.max_event = 16;
    ASSERT_EQ(hm_sse_feed(&p, S("data: 0123")), 0);
    ASSERT_EQ(hm_sse_feed(&p, S("456789")), 0);
    ASSERT_EQ(hm_sse_feed(&p, S("abcdefgh")), -HM_ETOOBIG);
    hm_sse_parser_free(&p);
    ASSERT_EQ(r.n, 0);

    /* The default limit is 1 MiB. */
    size_t big = HM_SSE_DEFAULT_MAX_EVENT;
    char *s = malloc(big + 16);
    ASSERT(s != NULL);
    memcpy(s, "data: ", 6);
    memset(s + 6, 'x', big);
    memcpy(s + 6 + big, "\n\n", 2);
    hm_sse_parser_init(&p, record, &r);
    ASSERT_EQ(p.max_event, (size_t)1 << 20);
    ASSERT_EQ(hm_sse_feed(&p, s, 6 + big + 2), -HM_ETOOBIG);
    hm_sse_parser_free(&p);
    hm_sse_parser_init(&p, record, &r);
    memcpy(s + 6 + big / 2, "\n\n", 2);
    ASSERT_EQ(hm_sse_feed(&p, s, 6 + big / 2 + 2), 0);
    ASSERT_EQ(r.n, 1);
    ASSERT_EQ(r.ev[0].data_len, big / 2);
    hm_sse_parser_free(&p);
    free(s);
    rec_free(&r);
}

static void test_callback_error(void)
{
    recorder r = {.fail_at = 2};
    hm_sse_parser p;
    hm_sse_parser_init(&p, record, &r);
    ASSERT_EQ(hm_sse_feed(&p, S("data: 1\n\ndata: 2\n\ndata: 3\n\n")), -42);
    ASSERT_EQ(r.n, 2);
    ASSERT_EQ(hm_sse_feed(&p, S("data: 4\n\n")), -42);
    ASSERT_EQ(r.n, 2);
    hm_sse_parser_free(&p);
    rec_free(&r);
}

static int count_only(const hm_sse_event *ev, void *user)
{
    (void)ev;
    ++*(size_t *)user;
    return 0;
}

static void test_buffers_reused(void)
{
    size_t seen = 0;
    hm_sse_parser p;
    hm_sse_parser_init(&p, count_only, &seen);
    static const char ev[] = "event: datastar-patch-signals\n"
                             "data: signals {\"count__bench_counter__3f2a9c\":12345}\n\n";
    /* Warm up with every split, so the partial-line buffer has seen its
     * largest line too; after that nothing may grow or move. */
    for (size_t cut = 0; cut < sizeof(ev) - 1; cut++) {
        ASSERT_EQ(hm_sse_feed(&p, ev, cut), 0);
        ASSERT_EQ(hm_sse_feed(&p, ev + cut, sizeof(ev) - 1 - cut), 0);
    }
    size_t warm = seen;
    char *bufs[3] = {p.line_.data, p.data_.data, p.type_.data};
    size_t caps[3] = {p.line_.cap, p.data_.cap, p.type_.cap};
    for (int i = 0; i < 1000; i++) {
        size_t cut = (size_t)i % (sizeof(ev) - 1);
        ASSERT_EQ(hm_sse_feed(&p, ev, cut), 0);
        ASSERT_EQ(hm_sse_feed(&p, ev + cut, sizeof(ev) - 1 - cut), 0);
    }
    ASSERT_EQ(seen, warm + 1000);
    ASSERT_EQ(p.events, warm + 1000);
    ASSERT(bufs[0] == p.line_.data && bufs[1] == p.data_.data && bufs[2] == p.type_.data);
    ASSERT_EQ(caps[0], p.line_.cap);
    ASSERT_EQ(caps[1], p.data_.cap);
    ASSERT_EQ(caps[2], p.type_.cap);
    hm_sse_parser_free(&p);

    /* A NULL callback only counts. */
    hm_sse_parser_init(&p, NULL, NULL);
    ASSERT_EQ(hm_sse_feed(&p, S("data: a\n\ndata: b\n\n")), 0);
    ASSERT_EQ(p.events, 2);
    hm_sse_parser_free(&p);
}

/* A lean parser holds no buffer between events (a split line, data or
 * type), whatever the cut, and reads the same events as any other (the
 * splits of test_every_split run lean too). */
static void test_lean_between_events(void)
{
    size_t seen = 0;
    hm_sse_parser p;
    hm_sse_parser_init(&p, count_only, &seen);
    p.lean = true;
    static const char ev[] = "event: datastar-patch-signals\n"
                             "data: signals {\"count__bench_counter__3f2a9c\":12345}\n\n";
    for (size_t cut = 0; cut < sizeof(ev) - 1; cut++) {
        ASSERT_EQ(hm_sse_feed(&p, ev, cut), 0);
        ASSERT_EQ(hm_sse_feed(&p, ev + cut, sizeof(ev) - 1 - cut), 0);
        ASSERT_EQ(seen, cut + 1);
        ASSERT(!p.line_.data && !p.data_.data && !p.type_.data);
    }
    hm_sse_parser_free(&p);
}

int main(void)
{
    test_spec_stock_example();
    test_spec_test_stream_example();
    test_spec_empty_data_example();
    test_spec_space_example();
    test_spec_event_type_example();
    test_fields();
    test_ids();
    test_nul_in_data();
    test_retry();
    test_comments();
    test_line_end_styles_equal();
    test_crlf_split_across_feeds();
    test_bom();
    test_every_split();
    test_too_big();
    test_callback_error();
    test_buffers_reused();
    test_lean_between_events();
    puts("sse: ok");
    return 0;
}

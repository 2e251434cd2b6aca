/* test_datastar_scan.c — hm_datastar_scan_int, the watched signal's value
 * without jansson, against the decode it stands for (hm_datastar_decode +
 * hm_signals_find_int) on the same inputs, and a hm_watch that uses it
 * (value_only) against one that does not, on the same stream. */
#include "hm_test.h"

#include "base/hm_base.h"
#include "load/workload.h"
#include "proto/datastar.h"
#include "proto/sse.h"

static hm_sse_event make_event(const char *type, const char *data, size_t len)
{
    hm_sse_event ev = {.type = type,
                       .type_len = strlen(type),
                       .data = data,
                       .data_len = len,
                       .last_event_id = "",
                       .retry_ms = -1};
    return ev;
}

/* What jansson says: 1 found (*v), 0 absent, -1 the event does not decode. */
static int decoded(const hm_sse_event *ev, const char *wanted, int64_t *v)
{
    hm_datastar_event out = {0};
    int rc = hm_datastar_decode(ev, &out);
    int r = rc < 0 ? -1 : hm_signals_find_int(out.signals, wanted, v) == 0 ? 1 : 0;
    hm_datastar_event_clear(&out);
    return r;
}

/* A decided scan must say what jansson says. Returns the scan's answer. */
static hm_datastar_scan agree(const char *type, const char *data, size_t len, const char *wanted)
{
    hm_sse_event ev = make_event(type, data, len);
    int64_t fast = 0x5eed, slow = 0x5eed;
    hm_datastar_scan s = hm_datastar_scan_int(&ev, wanted, &fast);
    int j = decoded(&ev, wanted, &slow);
    if (s != HM_DATASTAR_UNDECIDED) {
        if (j != (int)s)
            HM_FAIL_("scan %d, jansson %d on [%.*s] for %s", s, j, (int)len, data, wanted);
        if (s == HM_DATASTAR_FOUND && fast != slow)
            HM_FAIL_("scan %lld, jansson %lld on [%.*s] for %s", (long long)fast, (long long)slow,
                     (int)len, data, wanted);
    }
    if (s != HM_DATASTAR_FOUND) ASSERT_EQ(fast, 0x5eed); /* *out untouched */
    return s;
}

typedef struct {
    const char *data, *wanted;
    hm_datastar_scan scan; /* what the scan answers */
    int jansson;           /* what decoding answers: 1 found, 0 absent, -1 refused */
    int64_t value;         /* when found */
} scan_case;

static const scan_case cases[] = {
    /* What php-via and bench_app send: decided. */
    {"signals {\"count__bench_counter__3f2a9c\":5}", "count", HM_DATASTAR_FOUND, 1, 5},
    {"signals {\"route__bench_counter_count\":12}", "count", HM_DATASTAR_FOUND, 1, 12},
    {"signals  { \"a\" : 1 ,\t\"count\" : -7 }\r ", "count", HM_DATASTAR_FOUND, 1, -7},
    {"onlyIfMissing true\nsignals {\"count\":0}", "count", HM_DATASTAR_FOUND, 1, 0},
    {"signals {\"count\":-0}", "count", HM_DATASTAR_FOUND, 1, 0},
    {"signals {\"count\":999999999999999999}", "count", HM_DATASTAR_FOUND, 1, 999999999999999999LL},
    {"signals {}", "count", HM_DATASTAR_ABSENT, 0, 0},
    {"signals {\"other\":1,\"s\":\"x y\",\"t\":true,\"f\":false,\"n\":null}", "count",
     HM_DATASTAR_ABSENT, 0, 0},
    /* A matching key with a value that is not an integer is skipped. */
    {"signals {\"count\":\"5\"}", "count", HM_DATASTAR_ABSENT, 0, 0},
    {"signals {\"count\":null,\"x\":2}", "count", HM_DATASTAR_ABSENT, 0, 0},
    /* Keys it does not watch may repeat. */
    {"signals {\"a\":1,\"a\":2,\"count\":3}", "count", HM_DATASTAR_FOUND, 1, 3},
    /* The watched name is not a prefix or a part of another key. */
    {"signals {\"counter\":1,\"xcount\":2,\"count_\":3}", "count", HM_DATASTAR_ABSENT, 0, 0},

    /* Escaped keys and strings: jansson's. */
    {"signals {\"co\\u0075nt\":3}", "count", HM_DATASTAR_UNDECIDED, 1, 3},
    {"signals {\"count\\\"\":3}", "count", HM_DATASTAR_UNDECIDED, 0, 0},
    {"signals {\"s\":\"a\\\"b\",\"count\":2}", "count", HM_DATASTAR_UNDECIDED, 1, 2},
    {"signals {\"s\":\"\\u00e9\\ud83d\\ude00\",\"count\":2}", "count", HM_DATASTAR_UNDECIDED, 1, 2},
    {"signals {\"s\":\"\\ud800\",\"count\":2}", "count", HM_DATASTAR_UNDECIDED, -1, 0},
    {"signals {\"s\":\"\\u0000\",\"count\":2}", "count", HM_DATASTAR_UNDECIDED, 1, 2},
    {"signals {\"s\":\"\xc3\xa9\",\"count\":2}", "count", HM_DATASTAR_UNDECIDED, 1, 2},
    {"signals {\"s\":\"\xc3\",\"count\":2}", "count", HM_DATASTAR_UNDECIDED, -1, 0},
    {"signals {\"s\":\"a\tb\",\"count\":2}", "count", HM_DATASTAR_UNDECIDED, -1, 0},
    /* Nested objects, and the watched name inside one. */
    {"signals {\"a\":{\"count\":1},\"count\":2}", "count", HM_DATASTAR_UNDECIDED, 1, 2},
    {"signals {\"a\":{\"count\":1}}", "count", HM_DATASTAR_UNDECIDED, 0, 0},
    {"signals {\"count\":[1],\"l\":[]}", "count", HM_DATASTAR_UNDECIDED, 0, 0},
    {"signals {\"a\":{\"count\":1}}", "a.count", HM_DATASTAR_UNDECIDED, 1, 1},
    /* Keys that match twice: jansson keeps the first's place, the last value. */
    {"signals {\"count\":1,\"count\":2}", "count", HM_DATASTAR_UNDECIDED, 1, 2},
    {"signals {\"count\":\"x\",\"global_count\":4,\"count\":7}", "count", HM_DATASTAR_UNDECIDED, 1,
     7},
    {"signals {\"count\":1,\"global_count\":2}", "count", HM_DATASTAR_UNDECIDED, 1, 1},
    /* Numbers jansson reads as reals, or as too big. */
    {"signals {\"count\":1e2}", "count", HM_DATASTAR_UNDECIDED, 1, 100},
    {"signals {\"count\":1E+2}", "count", HM_DATASTAR_UNDECIDED, 1, 100},
    {"signals {\"count\":2.0}", "count", HM_DATASTAR_UNDECIDED, 1, 2},
    {"signals {\"count\":2.5}", "count", HM_DATASTAR_UNDECIDED, 0, 0},
    {"signals {\"x\":1e400,\"count\":1}", "count", HM_DATASTAR_UNDECIDED, -1, 0},
    {"signals {\"count\":1234567890123456789}", "count", HM_DATASTAR_UNDECIDED, 1,
     1234567890123456789LL},
    {"signals {\"count\":99999999999999999999}", "count", HM_DATASTAR_UNDECIDED, -1, 0},
    /* Malformed: jansson refuses them. */
    {"signals {\"count\":01}", "count", HM_DATASTAR_UNDECIDED, -1, 0},
    {"signals {\"count\":1,}", "count", HM_DATASTAR_UNDECIDED, -1, 0},
    {"signals {\"count\":1} x", "count", HM_DATASTAR_UNDECIDED, -1, 0},
    {"signals {\"count\":1}{}", "count", HM_DATASTAR_UNDECIDED, -1, 0},
    {"signals {\"count\":1", "count", HM_DATASTAR_UNDECIDED, -1, 0},
    {"signals {\"count\" 1}", "count", HM_DATASTAR_UNDECIDED, -1, 0},
    {"signals {\"count\":1 \"x\":2}", "count", HM_DATASTAR_UNDECIDED, -1, 0},
    {"signals {\"count\":truex}", "count", HM_DATASTAR_UNDECIDED, -1, 0},
    {"signals {\"count\":tru}", "count", HM_DATASTAR_UNDECIDED, -1, 0},
    {"signals {\"count\":-}", "count", HM_DATASTAR_UNDECIDED, -1, 0},
    {"signals {\"count\":+1}", "count", HM_DATASTAR_UNDECIDED, -1, 0},
    {"signals {count:1}", "count", HM_DATASTAR_UNDECIDED, -1, 0},
    {"signals [1]", "count", HM_DATASTAR_UNDECIDED, -1, 0},
    {"signals ", "count", HM_DATASTAR_UNDECIDED, -1, 0},
    /* Lines: several signals lines are joined; none means {}. */
    {"signals {\"count\":\nsignals 4}", "count", HM_DATASTAR_UNDECIDED, 1, 4},
    {"onlyIfMissing true", "count", HM_DATASTAR_UNDECIDED, 0, 0},
    {"signals{\"count\":1}", "count", HM_DATASTAR_UNDECIDED, 0, 0},
    {"selector #x\nsignals {\"count\":8}\nbogus line", "count", HM_DATASTAR_FOUND, 1, 8},
    /* Names it does not scan for. */
    {"signals {\"count\":1}", "", HM_DATASTAR_UNDECIDED, 0, 0},
};

static void test_cases(void)
{
    for (size_t i = 0; i < HM_ARRAY_LEN(cases); i++) {
        const scan_case *c = &cases[i];
        size_t len = strlen(c->data);
        hm_sse_event ev = make_event("datastar-patch-signals", c->data, len);
        int64_t v = 0;
        int j = decoded(&ev, c->wanted, &v);
        if (j != c->jansson)
            HM_FAIL_("case %zu [%s]: jansson %d, expected %d", i, c->data, j, c->jansson);
        if (j == 1) ASSERT_EQ(v, c->value);
        hm_datastar_scan s = agree("datastar-patch-signals", c->data, len, c->wanted);
        if (s != c->scan) HM_FAIL_("case %zu [%s]: scan %d, expected %d", i, c->data, s, c->scan);
    }
    /* A NUL byte in the line (jansson stops there): undecided. */
    static const char nul[] = "signals {\"count\":1}\0";
    ASSERT_EQ(agree("datastar-patch-signals", nul, sizeof(nul) - 1, "count"),
              HM_DATASTAR_UNDECIDED);
    /* Other event types are decoded, never scanned. */
    static const char el[] = "signals {\"count\":1}";
    ASSERT_EQ(agree("datastar-patch-elements", el, strlen(el), "count"), HM_DATASTAR_UNDECIDED);
    ASSERT_EQ(agree("message", el, strlen(el), "count"), HM_DATASTAR_UNDECIDED);
}

/* Every one- and two-byte change of php-via's patch, each a byte JSON
 * gives a meaning to: wherever the scan decides, jansson agrees. */
static void test_mutations(void)
{
    static const char base[] = "signals {\"a\":\"s\",\"count__r__3f\":12,\"b\":true}";
    static const char bytes[] = "{}[]\":,\\ \t0123456789-+.eEtrufalsn\x01\x80u";
    char buf[sizeof(base)];
    size_t n = sizeof(base) - 1, decided = 0, total = 0;
    for (size_t i = 8; i < n; i++) {
        for (size_t b = 0; b < sizeof(bytes) - 1; b++) {
            memcpy(buf, base, n);
            buf[i] = bytes[b];
            total++;
            decided += agree("datastar-patch-signals", buf, n, "count") != HM_DATASTAR_UNDECIDED;
            for (size_t k = i + 1; k < n && k < i + 4; k++) {
                for (size_t c = 0; c < sizeof(bytes) - 1; c += 3) {
                    buf[k] = bytes[c];
                    total++;
                    decided +=
                        agree("datastar-patch-signals", buf, n, "count") != HM_DATASTAR_UNDECIDED;
                }
                buf[k] = base[k];
            }
        }
    }
    /* Not a vacuous pass: both answers were given many times. */
    ASSERT_GT(decided, 100);
    ASSERT_GT(total - decided, 100);
}

/* The same stream into two watches, one value_only: the same counts. */
static const char stream[] =
    "event: datastar-patch-elements\ndata: elements <button>+1</button>\n\n"
    "event: datastar-patch-signals\ndata: signals {\"count__bench_counter__3f\":10}\n\n"
    "event: datastar-patch-signals\ndata: signals {\"count__bench_counter__3f\":11}\n\n"
    "event: datastar-patch-signals\ndata: signals {\"count__bench_counter__3f\":11}\n\n"
    "event: datastar-patch-signals\ndata: signals {\"c\\u006funt__bench_counter__3f\":12}\n\n"
    "event: datastar-patch-signals\ndata: signals {\"count__bench_counter__3f\":1.3e1}\n\n"
    "event: datastar-patch-signals\ndata: signals {\"count__bench_counter__3f\":14,}\n\n"
    "event: datastar-patch-signals\ndata: signals {\"other\":1}\n\n"
    "event: datastar-patch-signals\ndata: signals {\"count__bench_counter__3f\":15}\n\n"
    "event: datastar-patch-signals\ndata: signals {\"count__bench_counter__3f\":9}\n\n";

typedef struct {
    int64_t values[32];
    int n;
} seen;

static void on_patch(hm_watch *w, int64_t value, void *user)
{
    (void)w;
    seen *s = user;
    if (s->n < 32) s->values[s->n++] = value;
}

static void watch_stream(hm_watch *w, const hm_workload *wl, bool value_only, seen *s)
{
    hm_watch_init(w, wl, "count");
    w->value_only = value_only;
    w->on_patch = on_patch;
    w->user = s;
    /* In pieces, as a socket delivers it. */
    for (size_t off = 0; off < sizeof(stream) - 1; off += 7) {
        size_t len = sizeof(stream) - 1 - off < 7 ? sizeof(stream) - 1 - off : 7;
        ASSERT_EQ(hm_watch_feed(w, stream + off, len), 0);
    }
}

static void test_watch_same_counts(void)
{
    static const hm_workload counter = {.check = HM_CHECK_NET_INCREMENT};
    static const hm_workload constant = {.check = HM_CHECK_CONSTANT, .expected = 11};
    const hm_workload *wls[] = {&counter, &constant};
    for (size_t i = 0; i < HM_ARRAY_LEN(wls); i++) {
        hm_watch full, fast;
        seen sf = {0}, sv = {0};
        watch_stream(&full, wls[i], false, &sf);
        watch_stream(&fast, wls[i], true, &sv);
        ASSERT_EQ(full.sse.events, 10);
        ASSERT(full.have_baseline && fast.have_baseline);
        ASSERT_EQ(full.baseline, 10);
        ASSERT_EQ(fast.baseline, full.baseline);
        ASSERT_EQ(fast.last, full.last);
        ASSERT_EQ(full.last, 9);
        ASSERT_EQ(fast.patches, full.patches);
        ASSERT_EQ(fast.extra, full.extra);
        ASSERT_EQ(fast.sse.events, full.sse.events);
        ASSERT_EQ(fast.bad, full.bad);
        ASSERT(strcmp(hm_reason(fast.bad_example), hm_reason(full.bad_example)) == 0);
        ASSERT_EQ(full.undecodable, 1); /* the trailing comma */
        ASSERT_EQ(fast.undecodable, full.undecodable);
        ASSERT(strcmp(hm_reason(fast.undecodable_why), hm_reason(full.undecodable_why)) == 0);
        ASSERT_EQ(sv.n, sf.n);
        for (int k = 0; k < sf.n; k++)
            ASSERT_EQ(sv.values[k], sf.values[k]);
        char wf[200] = "", wv[200] = "";
        bool okf = hm_watch_verdict(&full, 2, wf, sizeof(wf));
        bool okv = hm_watch_verdict(&fast, 2, wv, sizeof(wv));
        ASSERT_EQ(okv, okf);
        ASSERT(strcmp(wf, wv) == 0);
        /* The scan did the work: after the baseline, value_only merged
         * only what it decoded in full (the escaped key, then 1.3e1); the
         * full watch holds the last value, 9. */
        int64_t mf = -1, mv = -1;
        ASSERT_EQ(hm_signals_find_int(full.signals, "count", &mf), 0);
        ASSERT_EQ(hm_signals_find_int(fast.signals, "count", &mv), 0);
        ASSERT_EQ(mf, 9);
        ASSERT_EQ(mv, 13);
        hm_watch_free(&full);
        hm_watch_free(&fast);
    }
    ASSERT_EQ(HM_ARRAY_LEN(wls), 2);
}

/* value_only does not apply where the check reads more than the value. */
static void test_watch_spreadsheet_decodes(void)
{
    static const hm_workload sheet = {.check = HM_CHECK_SPREADSHEET};
    hm_watch w;
    seen s = {0};
    watch_stream(&w, &sheet, true, &s);
    int64_t m = -1;
    ASSERT_EQ(hm_signals_find_int(w.signals, "count", &m), 0);
    ASSERT_EQ(m, 9);
    ASSERT(w.bad > 0); /* no viewRow/focusRow in these patches */
    hm_watch_free(&w);
}

int main(void)
{
    test_cases();
    test_mutations();
    test_watch_same_counts();
    test_watch_spreadsheet_decodes();
    printf("ok\n");
    return 0;
}

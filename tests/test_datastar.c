/* test_datastar.c — decoding datastar-patch-* events as php-via sends them,
 * and finding signals by the names php-via users give them. */
#include "hm_test.h"

#include "base/hm_base.h"
#include "engine/engine.h"
#include "proto/datastar.h"
#include "proto/json_limit.h"
#include "proto/sse.h"

typedef struct {
    hm_datastar_event out;
    int rc;
    int calls;
} decoded;

static int decode_cb(const hm_sse_event *ev, void *user)
{
    decoded *d = user;
    d->calls++;
    d->rc = hm_datastar_decode(ev, &d->out);
    return 0;
}

/* Runs one SSE stream through the parser and decodes its (last) event; the
 * decoded struct must outlive the parser's view. */
static int decode_stream(decoded *d, const char *stream)
{
    hm_sse_parser p;
    hm_sse_parser_init(&p, decode_cb, d);
    d->calls = 0;
    ASSERT_EQ(hm_sse_feed(&p, stream, strlen(stream)), 0);
    hm_sse_parser_free(&p);
    ASSERT_EQ(d->calls, 1);
    return d->rc;
}

static hm_sse_event make_event(const char *type, const char *data)
{
    hm_sse_event ev = {.type = type,
                       .type_len = strlen(type),
                       .data = data,
                       .data_len = strlen(data),
                       .last_event_id = "",
                       .retry_ms = -1};
    return ev;
}

static void test_php_via_patch_signals(void)
{
    decoded d = {0};
    ASSERT_EQ(decode_stream(&d, "event: datastar-patch-signals\n"
                                "data: signals {\"count__bench_counter__3f2a9c\":5}\n\n"),
              0);
    ASSERT_EQ(d.out.kind, HM_DATASTAR_PATCH_SIGNALS);
    ASSERT(json_is_object(d.out.signals));
    ASSERT(!d.out.only_if_missing);
    int64_t v = -1;
    ASSERT_EQ(hm_signals_find_int(d.out.signals, "count", &v), 0);
    ASSERT_EQ(v, 5);
    ASSERT_EQ(hm_signals_find_int(d.out.signals, "coun", &v), -HM_ENOTFOUND);
    ASSERT_EQ(hm_signals_find_int(d.out.signals, "counter", &v), -HM_ENOTFOUND);
    hm_datastar_event_clear(&d.out);
    ASSERT(d.out.signals == NULL);
    hm_datastar_event_clear(&d.out); /* idempotent */
}

static void test_escaped_slashes(void)
{
    decoded d = {0};
    ASSERT_EQ(decode_stream(&d, "event: datastar-patch-signals\n"
                                "data: signals {\"via_ctx\":\"\\/bench\\/counter_\\/abc\","
                                "\"_disconnected\":false,\"n\":\"caf\\u00e9\"}\n\n"),
              0);
    ASSERT_EQ(d.out.kind, HM_DATASTAR_PATCH_SIGNALS);
    ASSERT_STREQ(json_string_value(json_object_get(d.out.signals, "via_ctx")),
                 "/bench/counter_/abc");
    ASSERT(json_is_false(json_object_get(d.out.signals, "_disconnected")));
    ASSERT_STREQ(json_string_value(json_object_get(d.out.signals, "n")), "caf\xC3\xA9");
    hm_datastar_event_clear(&d.out);
}

static void test_signals_lines_joined(void)
{
    /* JSON spread over several signals lines (the SDK splits pretty-printed
     * JSON this way), plus onlyIfMissing and other keys in between. */
    decoded d = {0};
    ASSERT_EQ(decode_stream(&d, "event: datastar-patch-signals\n"
                                "data: onlyIfMissing  true \n"
                                "data: signals {\"a\":\n"
                                "data: junkline\n"
                                "data: signals   {\"b\": 2},\n"
                                "data: signals \"s\": \"x\\ny\"}\n\n"),
              0);
    ASSERT(d.out.only_if_missing);
    int64_t v = 0;
    ASSERT_EQ(hm_signals_find_int(d.out.signals, "a.b", &v), 0);
    ASSERT_EQ(v, 2);
    ASSERT_STREQ(json_string_value(json_object_get(d.out.signals, "s")), "x\ny");

    /* onlyIfMissing is true only for "true". */
    ASSERT_EQ(decode_stream(&d, "event: datastar-patch-signals\n"
                                "data: onlyIfMissing TRUE\n"
                                "data: signals {}\n\n"),
              0);
    ASSERT(!d.out.only_if_missing);

    /* No signals line: the client patches "{}". */
    ASSERT_EQ(decode_stream(&d, "event: datastar-patch-signals\ndata: onlyIfMissing false\n\n"), 0);
    ASSERT(json_is_object(d.out.signals));
    ASSERT_EQ(json_object_size(d.out.signals), 0);
    hm_datastar_event_clear(&d.out);
}

static void test_patch_elements(void)
{
    decoded d = {0};
    ASSERT_EQ(decode_stream(&d, "event: datastar-patch-elements\n"
                                "data: selector #c-1\n"
                                "data: mode inner\n"
                                "data: useViewTransition true\n"
                                "data: elements <div id=\"c-1\">\n"
                                "data: elements     <span>1</span>\n"
                                "data: elements \n"
                                "data: elements </div>\n\n"),
              0);
    ASSERT_EQ(d.out.kind, HM_DATASTAR_PATCH_ELEMENTS);
    ASSERT(d.out.signals == NULL);
    ASSERT_STREQ(d.out.selector, "#c-1");
    ASSERT_STREQ(d.out.mode, "inner");
    ASSERT(d.out.use_view_transition);
    ASSERT(d.out.wrap == NULL);
    ASSERT_MEMEQ(d.out.elements, d.out.elements_len,
                 "<div id=\"c-1\">\n    <span>1</span>\n\n</div>");
    ASSERT_EQ(d.out.elements[d.out.elements_len], '\0');

    /* php-via's page view: elements only, default (outer) mode. Decoding
     * into the same struct replaces every field. */
    ASSERT_EQ(decode_stream(&d, "event: datastar-patch-elements\n"
                                "data: elements <button data-on:click=\"@post('/_action/"
                                "increment')\">0</button>\n\n"),
              0);
    ASSERT(d.out.selector == NULL);
    ASSERT(d.out.mode == NULL);
    ASSERT(!d.out.use_view_transition);
    ASSERT_STREQ(d.out.elements,
                 "<button data-on:click=\"@post('/_action/increment')\">0</button>");

    /* php-via's reload script. */
    ASSERT_EQ(decode_stream(&d, "event: datastar-patch-elements\n"
                                "data: selector body\n"
                                "data: mode append\n"
                                "data: wrap svg\n"
                                "data: elements <script data-effect=\"el.remove()\">"
                                "window.location.reload()</script>\n\n"),
              0);
    ASSERT_STREQ(d.out.selector, "body");
    ASSERT_STREQ(d.out.mode, "append");
    ASSERT_STREQ(d.out.wrap, "svg");
    ASSERT_STREQ(d.out.elements,
                 "<script data-effect=\"el.remove()\">window.location.reload()</script>");

    /* mode remove: no elements at all. */
    ASSERT_EQ(decode_stream(&d, "event: datastar-patch-elements\n"
                                "data: mode remove\ndata: selector #feed, #other\n\n"),
              0);
    ASSERT(d.out.elements == NULL);
    ASSERT_EQ(d.out.elements_len, 0);
    ASSERT_STREQ(d.out.selector, "#feed, #other");
    hm_datastar_event_clear(&d.out);
}

static void test_other_events(void)
{
    hm_datastar_event out = {0};
    static const char *const types[] = {"message", "datastar-patch-signalsX", "datastar-patch",
                                        "Datastar-Patch-Signals", "datastar-execute-script"};
    for (size_t i = 0; i < HM_ARRAY_LEN(types); i++) {
        hm_sse_event ev = make_event(types[i], "signals {not json");
        ASSERT_EQ(hm_datastar_decode(&ev, &out), 0);
        ASSERT_EQ(out.kind, HM_DATASTAR_OTHER);
        ASSERT(out.signals == NULL && out.elements == NULL);
    }
    /* Through the SSE parser, an event without event: is "message". */
    decoded d = {0};
    ASSERT_EQ(decode_stream(&d, "data: signals {\"a\":1}\n\n"), 0);
    ASSERT_EQ(d.out.kind, HM_DATASTAR_OTHER);
    hm_datastar_event_clear(&d.out);
    hm_datastar_event_clear(&out);
}

static void test_malformed_signals(void)
{
    hm_datastar_event out = {0};
    static const char *const bad[] = {
        "signals {\"count\":5",                 /* truncated */
        "signals {count:5}",                    /* JS, not JSON */
        "signals [1,2]",                        /* not an object */
        "signals 5",                            /* not an object */
        "signals ",                             /* empty */
        "signals {\"a\":1}\nsignals {\"b\":2}", /* two objects */
    };
    for (size_t i = 0; i < HM_ARRAY_LEN(bad); i++) {
        hm_sse_event ev = make_event("datastar-patch-signals", bad[i]);
        ASSERT_EQ(hm_datastar_decode(&ev, &out), -HM_EPARSE);
        ASSERT(out.signals == NULL);
        ASSERT(out.error != NULL);
    }
    /* The struct is still usable after a failure. */
    hm_sse_event ok = make_event("datastar-patch-signals", "signals {\"x\":1}");
    ASSERT_EQ(hm_datastar_decode(&ok, &out), 0);
    ASSERT(out.error == NULL);
    int64_t v = 0;
    ASSERT_EQ(hm_signals_find_int(out.signals, "x", &v), 0);
    ASSERT_EQ(v, 1);
    hm_datastar_event_clear(&out);
}

/* "signals " and an object whose key "x" holds `depth` - 1 more levels of
 * objects ({"a":...}), or of arrays; hm_alloc'd. */
static char *nested_signals(int depth, bool objects)
{
    char *p = hm_alloc((size_t)depth * 6 + 32);
    ASSERT(p != NULL);
    int n = sprintf(p, "signals {\"x\":");
    for (int i = 1; i < depth; i++)
        n += sprintf(p + n, "%s", objects ? "{\"a\":" : "[");
    p[n++] = '1';
    for (int i = 1; i < depth; i++)
        p[n++] = objects ? '}' : ']';
    strcpy(p + n, "}");
    return p;
}

typedef struct {
    int depth, rc;
    bool refused_with_reason;
} deep_case;

static void decode_deep(void *arg)
{
    deep_case *d = arg;
    char *data = nested_signals(d->depth, true);
    hm_sse_event ev = make_event("datastar-patch-signals", data);
    hm_datastar_event out = {0};
    d->rc = hm_datastar_decode(&ev, &out);
    d->refused_with_reason = out.signals == NULL && out.error != NULL;
    hm_datastar_event_clear(&out);
    hm_free(data);
}

static void test_signals_bounds(void)
{
    /* Issue 11's event (~1000 levels) on a virtual user's 64 KiB stack:
     * refused, where jansson's recursion used to overflow it. */
    hm_loop *loop;
    hm_loop_options o = {.backend = HM_BACKEND_EPOLL};
    ASSERT_EQ(hm_loop_create(&loop, &o), 0);
    deep_case d = {.depth = 1000};
    ASSERT_EQ(hm_coro_spawn(loop, decode_deep, &d, NULL), 0);
    ASSERT_EQ(hm_loop_run(loop), 0);
    hm_loop_destroy(loop);
    ASSERT_EQ(d.rc, -HM_ETOOBIG);
    ASSERT(d.refused_with_reason);

    hm_datastar_event out = {0};
    for (int objects = 0; objects < 2; objects++) {
        /* HM_JSON_MAX_DEPTH levels decode; one more does not. */
        char *data = nested_signals(HM_JSON_MAX_DEPTH, objects);
        hm_sse_event ev = make_event("datastar-patch-signals", data);
        ASSERT_EQ(hm_datastar_decode(&ev, &out), 0);
        ASSERT(json_object_get(out.signals, "x") != NULL);
        hm_free(data);
        data = nested_signals(HM_JSON_MAX_DEPTH + 1, objects);
        ev = make_event("datastar-patch-signals", data);
        ASSERT_EQ(hm_datastar_decode(&ev, &out), -HM_ETOOBIG);
        ASSERT(out.signals == NULL);
        ASSERT(strstr(out.error, "deeper than 64 levels") != NULL);
        hm_free(data);
    }
    /* Nesting split over several signals lines is still nesting. */
    hm_sse_event split =
        make_event("datastar-patch-signals", "signals {\"a\":\nsignals [[[[[[[[[[[["
                                             "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
                                             "[[[[[[[[[[[[[[[[[[[[]");
    ASSERT_EQ(hm_datastar_decode(&split, &out), -HM_ETOOBIG);
    /* Brackets in strings do not count. */
    char text[256];
    snprintf(text, sizeof(text), "signals {\"x\":\"%0100d\"}", 0);
    memset(strchr(text, '0'), '{', 100);
    hm_sse_event str = make_event("datastar-patch-signals", text);
    ASSERT_EQ(hm_datastar_decode(&str, &out), 0);
    ASSERT_EQ(strlen(json_string_value(json_object_get(out.signals, "x"))), 100);
    /* Over HM_DATASTAR_MAX_SIGNALS_BYTES: refused before jansson sees it. */
    size_t big = HM_DATASTAR_MAX_SIGNALS_BYTES;
    char *huge = hm_alloc(big + 32);
    ASSERT(huge != NULL);
    int n = sprintf(huge, "signals {\"x\":\"");
    memset(huge + n, 'x', big);
    strcpy(huge + n + big, "\"}");
    hm_sse_event h = make_event("datastar-patch-signals", huge);
    ASSERT_EQ(hm_datastar_decode(&h, &out), -HM_ETOOBIG);
    ASSERT(strstr(out.error, "256 KiB") != NULL);
    hm_free(huge);
    hm_datastar_event_clear(&out);
}

static void test_name_matching(void)
{
    static const struct {
        const char *wanted, *key;
        bool match;
    } cases[] = {
        /* exact */
        {"count", "count", true},
        /* TAB: wanted__<route>__<hex> */
        {"count", "count__bench_counter__3f2a9c", true},
        {"count", "count__bench_counter__3F2A9C", true},
        {"count", "count____ab12", true},                      /* route "/" */
        {"count", "count__item__id___0123456789abcdef", true}, /* route with {param} */
        {"count", "count__x__1", true},
        {"viewRow", "viewRow__bench_spreadsheet__00ff", true},
        /* scoped */
        {"count", "route__bench_counter_count", true},
        {"count", "route___count", true}, /* route:/ */
        {"count", "session_0123456789abcdef0123456789abcdef_count", true},
        {"count", "global_count", true},
        {"count", "global_room_count", true},
        {"my_count", "route__bench_my_count", true},
        {"my_count", "my_count__bench__ab", true},
        /* Ambiguous by construction: signal "count" on route /bench/my, or
         * "my_count" on /bench. Both names match. */
        {"count", "route__bench_my_count", true},
        /* negatives */
        {"count", "discount", false},
        {"count", "count_total", false},
        {"count", "account__x__1f", false},
        {"count", "count__x__zz", false},
        {"count", "count__x__", false},
        {"count", "count__ab", false}, /* the route's "__" cannot double as the hex's */
        {"count", "count___ab", false},
        {"count", "count__", false},
        {"count", "count__x_1f", false},
        {"count", "count__x.y__1f", false},
        {"count", "count__x__1f_", false},
        {"count", "Count", false},
        {"count", "counts", false},
        {"count", "xcount", false},
        {"count", "_count", false},
        {"count", "route_count", false},
        {"count", "session_count", false},
        {"count", "route__bench_counter_discount", false},
        {"count", "route__bench_counter_count_total", false},
        {"count", "session__count_", false},
        {"count", "globalcount", false},
        {"count", "global_x.y_count", false},
        {"count", "other_bench_count", false},
        {"count", "", false},
        {"", "", false},
        {"", "count", false},
    };
    for (size_t i = 0; i < HM_ARRAY_LEN(cases); i++) {
        bool got = hm_signal_name_matches(cases[i].wanted, cases[i].key);
        if (got != cases[i].match)
            HM_FAIL_("hm_signal_name_matches(\"%s\", \"%s\") = %d, want %d", cases[i].wanted,
                     cases[i].key, got, cases[i].match);
    }
    ASSERT(!hm_signal_name_matches(NULL, "count"));
    ASSERT(!hm_signal_name_matches("count", NULL));
}

static void test_find_int(void)
{
    json_error_t err;
    json_t *s = json_loads("{\"via_ctx\":\"/bench/cpu_/ab\","
                           "\"discount\":1,"
                           "\"count__bench_cpu__ab\":\"text\","
                           "\"route__bench_cpu_count\":65451,"
                           "\"count\":7,"
                           "\"real\":5.0,"
                           "\"frac\":5.5,"
                           "\"huge\":1e300,"
                           "\"neg\":-3,"
                           "\"user\":{\"profile\":{\"age__p__1f\":42},\"age\":1},"
                           "\"flag\":true,"
                           "\"nul\":null}",
                           0, &err);
    ASSERT(s != NULL);
    int64_t v = 0;
    /* The string-valued TAB key is skipped; the scoped key comes first. */
    ASSERT_EQ(hm_signals_find_int(s, "count", &v), 0);
    ASSERT_EQ(v, 65451);
    ASSERT_EQ(hm_signals_find_int(s, "real", &v), 0);
    ASSERT_EQ(v, 5);
    ASSERT_EQ(hm_signals_find_int(s, "neg", &v), 0);
    ASSERT_EQ(v, -3);
    v = 99;
    ASSERT_EQ(hm_signals_find_int(s, "frac", &v), -HM_ENOTFOUND);
    ASSERT_EQ(hm_signals_find_int(s, "huge", &v), -HM_ENOTFOUND);
    ASSERT_EQ(hm_signals_find_int(s, "flag", &v), -HM_ENOTFOUND);
    ASSERT_EQ(hm_signals_find_int(s, "nul", &v), -HM_ENOTFOUND);
    ASSERT_EQ(hm_signals_find_int(s, "via_ctx", &v), -HM_ENOTFOUND);
    ASSERT_EQ(hm_signals_find_int(s, "missing", &v), -HM_ENOTFOUND);
    ASSERT_EQ(v, 99); /* untouched on failure */
    /* Dotted names walk nested objects; the last segment matches by name. */
    ASSERT_EQ(hm_signals_find_int(s, "user.age", &v), 0);
    ASSERT_EQ(v, 1);
    ASSERT_EQ(hm_signals_find_int(s, "user.profile.age", &v), 0);
    ASSERT_EQ(v, 42);
    ASSERT_EQ(hm_signals_find_int(s, "user.profile", &v), -HM_ENOTFOUND);
    ASSERT_EQ(hm_signals_find_int(s, "user.nothing.age", &v), -HM_ENOTFOUND);
    ASSERT_EQ(hm_signals_find_int(s, "count.x", &v), -HM_ENOTFOUND);
    ASSERT_EQ(hm_signals_find_int(s, "user.", &v), -HM_ENOTFOUND);
    ASSERT_EQ(hm_signals_find_int(s, "", &v), -HM_ENOTFOUND);
    /* Not an object. */
    json_t *arr = json_array();
    ASSERT_EQ(hm_signals_find_int(arr, "count", &v), -HM_ENOTFOUND);
    ASSERT_EQ(hm_signals_find_int(NULL, "count", &v), -HM_ENOTFOUND);
    ASSERT_EQ(hm_signals_find_int(s, NULL, &v), -EINVAL);
    json_decref(arr);
    json_decref(s);

    /* Document order decides between two matches. */
    s = json_loads("{\"count__a__1\":1,\"count\":2}", 0, &err);
    ASSERT(s != NULL);
    ASSERT_EQ(hm_signals_find_int(s, "count", &v), 0);
    ASSERT_EQ(v, 1);
    json_decref(s);
}

static void test_many_events_one_struct(void)
{
    /* A stream of alternating kinds decoded into one struct: nothing leaks
     * (checked by ASan's leak detector) and each decode is independent. */
    hm_datastar_event out = {0};
    char sig[96], el[96];
    for (int i = 0; i < 200; i++) {
        snprintf(sig, sizeof(sig), "signals {\"count__bench_io__ff\":%d}", i);
        snprintf(el, sizeof(el), "selector #c-%d\nelements <p>%d</p>", i, i);
        hm_sse_event a = make_event("datastar-patch-signals", sig);
        hm_sse_event b = make_event("datastar-patch-elements", el);
        ASSERT_EQ(hm_datastar_decode(&a, &out), 0);
        int64_t v = -1;
        ASSERT_EQ(hm_signals_find_int(out.signals, "count", &v), 0);
        ASSERT_EQ(v, i);
        ASSERT_EQ(hm_datastar_decode(&b, &out), 0);
        ASSERT(out.signals == NULL);
        char want[32];
        snprintf(want, sizeof(want), "<p>%d</p>", i);
        ASSERT_STREQ(out.elements, want);
    }
    hm_datastar_event_clear(&out);
}

int main(void)
{
    test_php_via_patch_signals();
    test_escaped_slashes();
    test_signals_lines_joined();
    test_patch_elements();
    test_other_events();
    test_malformed_signals();
    test_signals_bounds();
    test_name_matching();
    test_find_int();
    test_many_events_one_struct();
    puts("datastar: ok");
    return 0;
}

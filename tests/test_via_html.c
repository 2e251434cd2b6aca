/* php-via page scraping: via_ctx from the shell's meta tag and action URLs
 * from data-on attributes, on real-shaped pages and on the variants other
 * versions and hand-written pages produce. */
#include "base/hm_base.h"
#include "engine/engine.h"
#include "hm_test.h"
#include "proto/json_limit.h"
#include "proto/via_html.h"

/* The page php-via 0.12 serves for bench_app's counter route. */
static const char shell[] =
    "<!DOCTYPE html>\n"
    "<html lang=\"en\">\n"
    "<head>\n"
    "    <meta charset=\"UTF-8\">\n"
    "    <meta data-signals='{\"via_ctx\":\"\\/bench\\/counter_\\/3f2a9c1b00aa11ff\","
    "\"_disconnected\":false}'>\n"
    "<script type=\"module\" src=\"/datastar.js\"></script>\n"
    "    <meta name=\"viewport\" content=\"width=device-width, initial-scale=1.0\">\n"
    "    <link rel=\"stylesheet\" href=\"/via.css\">\n"
    "</head>\n"
    "<body>\n"
    "    <div data-show=\"$_disconnected\" class=\"connection-warning\">Not connected.</div>\n"
    "    <div class=\"page-layout\">\n"
    "        <div class=\"container\" id=\"content\">\n"
    "            <div id=\"counter\" data-on-interval__duration.15s.leading=\"@get('/_sse')\">\n"
    "              <span data-text=\"$count__bench_counter__3f2a9c1b00aa11ff\">0</span>\n"
    "              <button data-on:click=\"@post('/_action/increment')\">+1</button>\n"
    "            </div>\n"
    "        </div>\n"
    "    </div>\n"
    "</body>\n"
    "</html>\n";

static const char *last_why;

static int ctx_of(const char *html, char **out)
{
    return hm_via_extract_ctx(html, strlen(html), out, &last_why);
}

static int action_of(const char *html, const char *name, char **out)
{
    return hm_via_find_action(html, strlen(html), name, out);
}

static void expect_ctx(const char *html, const char *want)
{
    char *ctx = NULL;
    int rc = ctx_of(html, &ctx);
    if (rc != 0) HM_FAIL_("ctx of %s: %d (%s)", html, rc, hm_strerror(rc));
    ASSERT_STREQ(ctx, want);
    hm_free(ctx);
}

static void expect_ctx_err(const char *html, int err)
{
    char *ctx = (char *)"untouched";
    int rc = ctx_of(html, &ctx);
    if (rc != err) HM_FAIL_("ctx of %s: %d, want %d", html, rc, err);
    ASSERT(ctx == NULL);
    ASSERT(last_why != NULL);
}

static void expect_action(const char *html, const char *name, const char *want)
{
    char *url = NULL;
    int rc = action_of(html, name, &url);
    if (rc != 0) HM_FAIL_("action %s in %s: %d", name, html, rc);
    ASSERT_STREQ(url, want);
    hm_free(url);
}

static void expect_no_action(const char *html, const char *name)
{
    char *url = (char *)"untouched";
    int rc = action_of(html, name, &url);
    if (rc != -HM_ENOTFOUND) HM_FAIL_("action %s in %s: %d, url %s", name, html, rc, url);
    ASSERT(url == NULL);
}

static void test_shell(void)
{
    expect_ctx(shell, "/bench/counter_/3f2a9c1b00aa11ff");
    expect_action(shell, "increment", "/_action/increment");
    expect_no_action(shell, "decrement");
    expect_no_action(shell, "incr");
    /* Only len bytes are read: cut before the meta tag, nothing is found. */
    char *ctx = NULL;
    const char *meta = strstr(shell, "<meta data-signals");
    ASSERT_EQ(hm_via_extract_ctx(shell, (size_t)(meta - shell) + 20, &ctx, NULL), -HM_ENOTFOUND);
    ASSERT_EQ(
        hm_via_find_action(shell, (size_t)(strstr(shell, "<button") - shell), "increment", &ctx),
        -HM_ENOTFOUND);
}

static void test_ctx_variants(void)
{
    /* Double-quoted and entity-encoded, as html-escaping templates emit it. */
    expect_ctx("<meta data-signals=\"{&quot;via_ctx&quot;:&quot;\\/x_\\/ab&quot;}\">", "/x_/ab");
    /* Other attributes first, spacing, upper case, self-closing. */
    expect_ctx("<META name=\"x\"\n\tDATA-SIGNALS = '{\"via_ctx\":\"a\"}' />", "a");
    expect_ctx("<meta content=\"<meta data-signals='no'>\" data-signals='{\"via_ctx\":\"b\"}'>",
               "b");
    /* Numeric and named entities, JSON escapes and \u sequences. */
    expect_ctx("<meta data-signals=\"{&#34;via_ctx&#x22;:&#x22;it&#39;s&#x27;&apos;&amp;&lt;&gt;"
               "&#233;\\u00e9\\&quot;&#34;}\">",
               "it's''&<>\xc3\xa9\xc3\xa9\"");
    /* Unknown entities stay as written. */
    expect_ctx("<meta data-signals='{\"via_ctx\":\"&nbsp;&#;&x\"}'>", "&nbsp;&#;&x");
    /* Unquoted attribute value. */
    expect_ctx("<meta data-signals={\"via_ctx\":\"u\"}>", "u");
    /* The first meta with data-signals counts. */
    expect_ctx(
        "<meta data-signals='{\"via_ctx\":\"one\"}'><meta data-signals='{\"via_ctx\":\"two\"}'>",
        "one");
}

static void test_ctx_errors(void)
{
    expect_ctx_err("", -HM_ENOTFOUND);
    expect_ctx_err("<html><head><title>x</title></head><body>hi</body></html>", -HM_ENOTFOUND);
    /* Not on a meta tag, inside a comment, inside a script or title: not the shell's tag. */
    expect_ctx_err("<div data-signals='{\"via_ctx\":\"a\"}'></div>", -HM_ENOTFOUND);
    expect_ctx_err("<!-- <meta data-signals='{\"via_ctx\":\"a\"}'> -->", -HM_ENOTFOUND);
    expect_ctx_err("<script>var s = \"<meta data-signals='{}'>\";</script>", -HM_ENOTFOUND);
    expect_ctx_err("<title><meta data-signals='{\"via_ctx\":\"a\"}'></TITLE>", -HM_ENOTFOUND);
    expect_ctx_err("<meta data-signals-x='{\"via_ctx\":\"a\"}'>", -HM_ENOTFOUND);
    /* Unterminated quote (truncated page). */
    expect_ctx_err("<meta data-signals='{\"via_ctx\":\"a\"}", -HM_ENOTFOUND);
    /* Present but no via_ctx key. */
    expect_ctx_err("<meta data-signals='{\"_disconnected\":false}'>", -HM_ENOTFOUND);
    /* Malformed JSON, a JSON non-object, a non-string via_ctx. */
    expect_ctx_err("<meta data-signals='{\"via_ctx\":}'>", -HM_EPARSE);
    expect_ctx_err("<meta data-signals='{via_ctx: \"a\"}'>", -HM_EPARSE);
    expect_ctx_err("<meta data-signals='{\"via_ctx\":\"a\"} x'>", -HM_EPARSE);
    expect_ctx_err("<meta data-signals=''>", -HM_EPARSE);
    expect_ctx_err("<meta data-signals>", -HM_EPARSE);
    expect_ctx_err("<meta data-signals='[\"via_ctx\"]'>", -HM_EPARSE);
    expect_ctx_err("<meta data-signals='{\"via_ctx\":42}'>", -HM_EPARSE);
}

/* A page whose data-signals JSON nests `depth` levels (arrays, or objects
 * {"a":...}) inside the object holding via_ctx "d"; hm_alloc'd. */
static char *nested_page(int depth, bool objects)
{
    char *p = hm_alloc((size_t)depth * 6 + 64);
    ASSERT(p != NULL);
    int n = sprintf(p, "<meta data-signals='{\"via_ctx\":\"d\",\"x\":");
    for (int i = 1; i < depth; i++)
        n += sprintf(p + n, "%s", objects ? "{\"a\":" : "[");
    p[n++] = '1';
    for (int i = 1; i < depth; i++)
        p[n++] = objects ? '}' : ']';
    strcpy(p + n, "}'>");
    return p;
}

typedef struct {
    int depth, rc;
    const char *why;
} deep_case;

static void extract_deep(void *arg)
{
    deep_case *d = arg;
    char *page = nested_page(d->depth, true), *ctx = NULL;
    d->rc = hm_via_extract_ctx(page, strlen(page), &ctx, &d->why);
    hm_free(ctx);
    hm_free(page);
}

static void test_ctx_bounds(void)
{
    /* Issue 11's page (~1000 levels of objects) on a virtual user's 64 KiB
     * stack: refused, where jansson's recursion used to overflow it. */
    hm_loop *loop;
    hm_loop_options o = {.backend = HM_BACKEND_EPOLL};
    ASSERT_EQ(hm_loop_create(&loop, &o), 0);
    deep_case d = {.depth = 1000};
    ASSERT_EQ(hm_coro_spawn(loop, extract_deep, &d, NULL), 0);
    ASSERT_EQ(hm_loop_run(loop), 0);
    hm_loop_destroy(loop);
    ASSERT_EQ(d.rc, -HM_ETOOBIG);
    ASSERT(d.why != NULL);
    /* Up to HM_JSON_MAX_DEPTH levels are fine, one more is refused. */
    char *page = nested_page(HM_JSON_MAX_DEPTH, false);
    expect_ctx(page, "d");
    hm_free(page);
    page = nested_page(HM_JSON_MAX_DEPTH, true);
    expect_ctx(page, "d");
    hm_free(page);
    page = nested_page(HM_JSON_MAX_DEPTH + 1, false);
    expect_ctx_err(page, -HM_ETOOBIG);
    ASSERT(strstr(last_why, "deeper than 64 levels") != NULL);
    hm_free(page);
    /* Brackets inside strings are text, not nesting. */
    char text[512];
    snprintf(text, sizeof(text), "<meta data-signals='{\"via_ctx\":\"%0200d\"}'>", 0);
    memset(strstr(text, "\"0") + 1, '[', 200);
    char want[201];
    memset(want, '[', 200);
    want[200] = '\0';
    expect_ctx(text, want);
    /* A value over 64 KiB is refused before it is decoded. */
    size_t big = HM_VIA_MAX_SIGNALS_BYTES + 1;
    char *huge = hm_alloc(big + 64);
    ASSERT(huge != NULL);
    int n = sprintf(huge, "<meta data-signals='{\"via_ctx\":\"h\",\"pad\":\"");
    memset(huge + n, 'x', big);
    strcpy(huge + n + big, "\"}'>");
    expect_ctx_err(huge, -HM_ETOOBIG);
    ASSERT(strstr(last_why, "64 KiB") != NULL);
    hm_free(huge);
}

static void test_action_forms(void)
{
    /* Pre-0.12 hashed id. */
    expect_action("<button data-on:click=\"@post('/_action/increment-3f2a9c1b00aa11ff')\">",
                  "increment", "/_action/increment-3f2a9c1b00aa11ff");
    /* The hashless form wins wherever it appears. */
    expect_action("<a data-on:click=\"@post('/_action/increment-3f2a9c1b00aa11ff')\"></a>"
                  "<b data-on:click=\"@post('/_action/increment')\"></b>",
                  "increment", "/_action/increment");
    /* Hyphen form, other events, other quoting, entities, spacing. */
    expect_action("<button data-on-click=\"@post('/_action/increment')\">", "increment",
                  "/_action/increment");
    expect_action("<form data-on:submit__prevent=\"@post('/_action/save')\">", "save",
                  "/_action/save");
    expect_action("<button data-on:click='@post(\"/_action/increment\")'>", "increment",
                  "/_action/increment");
    expect_action("<button data-on:click=\"@post(&#39;/_action/increment&#39;)\">", "increment",
                  "/_action/increment");
    expect_action("<button data-on:click='@post(&quot;/_action/increment&quot;)'>", "increment",
                  "/_action/increment");
    expect_action("<button data-on:click=\"@post(`/_action/increment`)\">", "increment",
                  "/_action/increment");
    expect_action("<button DATA-ON:CLICK=\"$x = 1; @post( '/_action/increment', {} )\">",
                  "increment", "/_action/increment");
    /* Base path kept, as the browser would post to it. */
    expect_action("<button data-on:click=\"@post('/app/_action/increment')\">", "increment",
                  "/app/_action/increment");
    /* Several @post calls in one attribute. */
    expect_action("<button data-on:click=\"@post('/_action/a'); @post('/_action/b')\">", "b",
                  "/_action/b");
    /* Namespaced TAB id. */
    expect_action("<button data-on:click=\"@post('/_action/counter-increment')\">",
                  "counter-increment", "/_action/counter-increment");
}

static void test_action_misses(void)
{
    /* incrementAll is not increment, nor is a non-hex suffix. */
    expect_no_action("<button data-on:click=\"@post('/_action/incrementAll')\">", "increment");
    expect_action("<button data-on:click=\"@post('/_action/incrementAll')\">"
                  "<button data-on:click=\"@post('/_action/increment')\">",
                  "increment", "/_action/increment");
    expect_action("<button data-on:click=\"@post('/_action/incrementAll')\">", "incrementAll",
                  "/_action/incrementAll");
    expect_no_action("<button data-on:click=\"@post('/_action/increment-xyz')\">", "increment");
    expect_no_action("<button data-on:click=\"@post('/_action/increment-')\">", "increment");
    expect_no_action("<button data-on:click=\"@post('/_action/xincrement')\">", "increment");
    expect_no_action("<button data-on:click=\"@post('/_action/increment?x=1')\">", "increment");
    /* Not a POST, not a data-on attribute, not markup. */
    expect_no_action("<button data-on:click=\"@get('/_action/increment')\">", "increment");
    expect_no_action("<button data-text=\"@post('/_action/increment')\">", "increment");
    expect_no_action("<button data-on=\"@post('/_action/increment')\">", "increment");
    expect_no_action("<p>@post('/_action/increment')</p>", "increment");
    expect_no_action("<!-- <button data-on:click=\"@post('/_action/increment')\"> -->",
                     "increment");
    expect_no_action("<script>x='<b data-on:click=\"@post(\\'/_action/increment\\')\">'</script>",
                     "increment");
    /* URLs no request line can carry: a NUL (which would also cut the copy
     * short of the action), a space, a tab from an entity. */
    static const char nul_page[] = "<b data-on:click=\"@post('/x\0/_action/increment')\">";
    char *url = NULL;
    ASSERT_EQ(hm_via_find_action(nul_page, sizeof(nul_page) - 1, "increment", &url), -HM_ENOTFOUND);
    ASSERT(url == NULL);
    expect_no_action("<b data-on:click=\"@post('/a b/_action/increment')\">", "increment");
    expect_no_action("<b data-on:click=\"@post('/a&#9;/_action/increment')\">", "increment");
    /* Unclosed quotes, empty names, empty documents. */
    expect_no_action("<button data-on:click=\"@post('/_action/increment)\">", "increment");
    expect_no_action("<button data-on:click=\"@post('/_action/increment')", "increment");
    expect_no_action(shell, "");
    expect_no_action("", "increment");
}

int main(void)
{
    test_shell();
    test_ctx_variants();
    test_ctx_errors();
    test_ctx_bounds();
    test_action_forms();
    test_action_misses();
    puts("via_html: ok");
    return 0;
}

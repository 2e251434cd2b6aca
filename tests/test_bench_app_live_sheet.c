/* bench_app's live spreadsheet (/examples/spreadsheet, action navigate):
 * the page's 20x10 viewport table (values HTML-escaped, the focus
 * outlined) that passes hammer's own table check; each navigate patches
 * #sheet with the new table over many data lines and then the signals it
 * changed (moves, paging, clamping at the edge, unknown directions); client
 * values reach the string signal `direction` as PHP's (string) casts them
 * and come back in json_encode()'s escaping; a new stream re-renders the
 * view at the current focus. argv[1]: the engine backend. */
#include "bench_app_client.h"
#include "load/workload.h"

static void test_live(int port)
{
    static resp r;
    static char ev[65536], html[65536];
    char sel[64];
    page pg;
    get_route(port, "/examples/spreadsheet", NULL, &pg, &r);
    check_sheet_div(r.body);
    ASSERT(strstr(r.body, "<td style=\"outline:2px solid #4f8ef7\">A1 &lt; B1</td>"));
    ASSERT(strstr(r.body, "<td>&quot;D1&quot; &amp; co</td>"));
    ASSERT(strstr(r.body, "<td>&#039;H1&#039; &gt; 0</td>"));
    ASSERT_EQ(focus_row_label(r.body), 1);

    sse *s = sse_open(port, pg.ctx, pg.cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    sse_event(s, 0, ev, sizeof(ev));
    ASSERT_GE(elements_of(ev, html, sizeof(html), sel, sizeof(sel)), 22);
    ASSERT_STREQ(sel, "");
    check_sheet_div(html);
    sse_event(s, 1, ev, sizeof(ev));
    json_t *j = signals_of(ev);
    ASSERT_EQ(json_object_size(j), 6);
    char dir[160];
    wire_of(&pg, "direction", dir, sizeof(dir));
    ASSERT_STREQ(json_string_value(json_object_get(j, dir)), "");
    ASSERT_EQ(int_of(j, &pg, "focusRow"), 0);
    ASSERT_EQ(int_of(j, &pg, "count"), 0);
    json_decref(j);

    /* Each navigate: an elements event for #sheet spanning many data lines,
     * then the signals it set. */
    static const struct {
        const char *direction; /* a JSON value */
        int focus_row, focus_col, view_row, label;
    } steps[] = {
        {"\"ArrowDown\"", 1, 0, 0, 2},
        {"\"Sideways\"", 1, 0, 0, 2}, /* unknown: no move */
        {"5", 1, 0, 0, 2},            /* cast to "5": no move */
        {"\"PageDown\"", 21, 0, 2, 22},
        {"\"ArrowLeft\"", 21, 0, 2, 22}, /* clamped at col 0 */
        {"\"ArrowRight\"", 21, 1, 2, 22},
        {"\"ArrowUp\"", 20, 1, 2, 21},
    };
    conn *c = conn_open(port);
    size_t seen = 2;
    for (size_t i = 0; i < HM_ARRAY_LEN(steps); i++) {
        char f[256];
        snprintf(f, sizeof(f), ",\"%s\":%s", dir, steps[i].direction);
        act(c, "navigate", &pg, f, &r);
        ASSERT_EQ(sse_wait(s, seen + 2, IO_TIMEOUT_MS), seen + 2);
        sse_event(s, seen, ev, sizeof(ev));
        ASSERT_GE(elements_of(ev, html, sizeof(html), sel, sizeof(sel)), 22);
        ASSERT_STREQ(sel, "#sheet");
        ASSERT(hm_table_well_formed(html, strlen(html)));
        check_sheet_div(html);
        ASSERT_EQ(focus_row_label(html), steps[i].label);
        char first[32];
        snprintf(first, sizeof(first), "\n<tr><th>%d</th>", steps[i].view_row + 1);
        ASSERT(strstr(html, first)); /* the view's first row */
        sse_event(s, seen + 1, ev, sizeof(ev));
        j = signals_of(ev);
        ASSERT_EQ(json_object_size(j), 5); /* focus, view, count; not direction */
        ASSERT_EQ(int_of(j, &pg, "focusRow"), steps[i].focus_row);
        ASSERT_EQ(int_of(j, &pg, "focusCol"), steps[i].focus_col);
        ASSERT_EQ(int_of(j, &pg, "viewRow"), steps[i].view_row);
        ASSERT_EQ(int_of(j, &pg, "viewCol"), 0);
        ASSERT_EQ(int_of(j, &pg, "count"), (long long)i + 1);
        json_decref(j);
        seen += 2;
    }
    conn_close(c);

    /* Client values reach the string signal as PHP's (string) casts them;
     * a first SSE connect sends every signal, in json_encode()'s escaping. */
    static const struct {
        const char *sent, *sync;
    } casts[] = {
        {"1e25", "\"1.0E+25\""},
        {"0.1", "\"0.1\""},
        {"-0.0", "\"-0\""},
        {"0.00001", "\"1.0E-5\""},
        {"123456.5", "\"123456.5\""},
        {"true", "\"1\""},
        {"null", "\"\""},
        {"[1,2]", "\"Array\""},
        {"{}", "\"Array\""},   /* json_decode(..., true): an empty array */
        {"{\"a\":1}", "\"\""}, /* flattened away: the signal keeps its value */
        {"42", "\"42\""},
        {"\"a/b\\\"\\u00e9\\ud83d\\ude00\\n\"", "\"a\\/b\\\"\\u00e9\\ud83d\\ude00\\n\""},
    };
    for (size_t i = 0; i < HM_ARRAY_LEN(casts); i++) {
        page pc;
        get_route(port, "/examples/spreadsheet", NULL, &pc, &r);
        char cdir[160], f[256], want[400];
        wire_of(&pc, "direction", cdir, sizeof(cdir));
        snprintf(f, sizeof(f), ",\"%s\":%s", cdir, casts[i].sent);
        conn *cc = conn_open(port);
        act(cc, "navigate", &pc, f, &r);
        conn_close(cc);
        sse *sc = sse_open(port, pc.ctx, pc.cookie_hdr);
        ASSERT_EQ(sse_wait(sc, 2, IO_TIMEOUT_MS), 2);
        sse_event(sc, 1, ev, sizeof(ev));
        snprintf(want, sizeof(want), "\"%s\":%s,", cdir, casts[i].sync);
        if (!strstr(ev, want)) HM_FAIL_("sent %s, expected %s in: %s", casts[i].sent, want, ev);
        sse_close(sc);
    }

    /* A new stream re-renders the view with the current focus. */
    sse *s2 = sse_open(port, pg.ctx, pg.cookie_hdr);
    ASSERT_EQ(sse_wait(s2, 1, IO_TIMEOUT_MS), 1);
    sse_event(s2, 0, ev, sizeof(ev));
    elements_of(ev, html, sizeof(html), sel, sizeof(sel));
    check_sheet_div(html);
    ASSERT_EQ(focus_row_label(html), 21);
    sse_close(s2);
    sse_close(s);
    printf("/examples/spreadsheet: view table, navigate patches (#sheet on many lines, then "
           "signals), moves, clamping, unknown direction, string signal casts and escaping, "
           "re-rendered view on reconnect: ok\n");
}

/* The one bench_app.* directory the default database made under dir. */

int main(int argc, char **argv)
{
    hm_bench_app_options o = ba_test_options(ba_test_begin(argc, argv, true));
    int port;
    pid_t pid = start_server(&o, &port);
    test_live(port);
    stop_server(pid);
    return 0;
}

/* routes.c — the pages of php-via's tests/Load/bench_app.php, in TAB scope
 * (bench_app.php's one-worker form, kept with --workers N too, where
 * bench_app.php switches to ROUTE scope: the failure a wrong worker gives,
 * 400 Invalid context, comes before any scope matters), and the php-via
 * website's live spreadsheet.
 *
 *   /bench/counter      count+1
 *   /bench/cpu          count = the Mandelbrot sum (65451), every call
 *   /bench/io           a 2 ms non-blocking sleep, then count+1
 *   /bench/spreadsheet  the viewport query and table (not sent), count+1,
 *                       viewRow = focusRow = (viewRow+1) % 100
 *   /examples/spreadsheet  navigate: move the focus by `direction`, scroll,
 *                       send the new table and the changed signals
 *
 * The bench pages have a `count` signal starting at 0 and an action named
 * `increment`; their view is one button posting to /_action/increment. A new
 * page is one more table entry: its route, its TAB signals (in patch order),
 * its view (static HTML, or a render function when it depends on the
 * context) and its actions. Actions run in the connection's coroutine, so
 * one may block (hm_coro_sleep) while the loop serves other requests; they
 * change signals with ba_signal_set() and queue the patch with
 * ba_sync_signals(). */
#include "bench_app/internal.h"

#include "bench_app/mandel.h"

/* ---- /bench/counter ------------------------------------------------------- */

/* count+1, then syncSignals(). PHP would turn an overflowing int into a
 * float; we stop at INT64_MAX (only reachable with a client-sent value). */
static int counter_increment(ba_ctx *ctx)
{
    int64_t v;
    if (__builtin_add_overflow(ba_signal_get(ctx, 0), 1, &v)) v = INT64_MAX;
    ba_signal_set(ctx, 0, v);
    return ba_sync_signals(ctx);
}

static const ba_signal_def count_signals[] = {{.name = "count"}};
static const ba_action_def counter_actions[] = {{"increment", counter_increment}};

/* ---- /bench/cpu ----------------------------------------------------------- */

/* Read on every call, so the sum is computed per action and never folded
 * into a constant at compile time. */
static volatile int g_mandel_size = 50, g_mandel_iter = 100;

/* setValue(<sum>), then syncSignals(): the value is the same every time
 * (65451), but setValue() marks it changed, so every call patches. */
static int cpu_increment(ba_ctx *ctx)
{
    ba_signal_set(ctx, 0, ba_mandel_sum(g_mandel_size, g_mandel_iter));
    return ba_sync_signals(ctx);
}

static const ba_action_def cpu_actions[] = {{"increment", cpu_increment}};

/* ---- /bench/io ------------------------------------------------------------ */

/* usleep(2000), which OpenSwoole's HOOK_ALL turns into a coroutine sleep:
 * the worker serves other requests meanwhile. Then count+1 with no yield
 * between the read and the write, then syncSignals(). A sleep cut short by
 * the server stopping (-ECANCELED) still increments. */
static int io_increment(ba_ctx *ctx)
{
    hm_coro_sleep(2 * 1000000LL);
    return counter_increment(ctx);
}

static const ba_action_def io_actions[] = {{"increment", io_increment}};

/* ---- /bench/spreadsheet ------------------------------------------------------ */

enum { SS_COUNT, SS_VIEW_ROW, SS_VIEW_COL, SS_FOCUS_ROW, SS_FOCUS_COL };

static const ba_signal_def sheet_signals[] = {
    [SS_COUNT] = {.name = "count"},        [SS_VIEW_ROW] = {.name = "viewRow"},
    [SS_VIEW_COL] = {.name = "viewCol"},   [SS_FOCUS_ROW] = {.name = "focusRow"},
    [SS_FOCUS_COL] = {.name = "focusCol"},
};

/* The table /bench/spreadsheet builds and never sends: its length lands
 * here, so the work cannot be optimised away. One per worker thread: a
 * shared one is a data race between workers (TSan), an atomic one a
 * contended cache line. */
static __thread volatile size_t g_html_sink;

/* The viewport query and its table (pure CPU work, as in bench_app.php),
 * then count+1, viewRow = focusRow = (viewRow+1) % 100, syncSignals(): the
 * patch carries count, viewRow and focusRow. */
static int sheet_increment(ba_ctx *ctx)
{
    ba_app *app = ba_ctx_app(ctx);
    int64_t vr = ba_signal_get(ctx, SS_VIEW_ROW), vc = ba_signal_get(ctx, SS_VIEW_COL);
    int64_t fr = ba_signal_get(ctx, SS_FOCUS_ROW), fc = ba_signal_get(ctx, SS_FOCUS_COL);
    app->html.len = 0;
    int rc = ba_sheet_table(app->sheet, vr, vc, fr, fc, false, &app->html);
    if (rc < 0) return rc;
    g_html_sink += app->html.len;

    int64_t count;
    if (__builtin_add_overflow(ba_signal_get(ctx, SS_COUNT), 1, &count)) count = INT64_MAX;
    ba_signal_set(ctx, SS_COUNT, count);
    /* PHP's ($vr + 1) % 100 (the sign follows the dividend, as in C),
     * without overflowing at INT64_MAX. */
    int64_t nv = vr >= 0 ? (vr % 100 + 1) % 100 : (vr + 1) % 100;
    ba_signal_set(ctx, SS_VIEW_ROW, nv);
    ba_signal_set(ctx, SS_FOCUS_ROW, nv);
    return ba_sync_signals(ctx);
}

static const ba_action_def sheet_actions[] = {{"increment", sheet_increment}};

/* ---- /examples/spreadsheet (the live one) ------------------------------------ */

enum { LV_DIRECTION, LV_FOCUS_ROW, LV_FOCUS_COL, LV_VIEW_ROW, LV_VIEW_COL, LV_COUNT };

static const ba_signal_def live_signals[] = {
    [LV_DIRECTION] = {.name = "direction", .type = BA_SIG_STR, .initial_str = ""},
    [LV_FOCUS_ROW] = {.name = "focusRow"},
    [LV_FOCUS_COL] = {.name = "focusCol"},
    [LV_VIEW_ROW] = {.name = "viewRow"},
    [LV_VIEW_COL] = {.name = "viewCol"},
    [LV_COUNT] = {.name = "count"},
};

/* <div id="sheet"> around the viewport table; a key press in it sets
 * `direction` and posts navigate. Each <tr> is on its own line, so a patch
 * of it spans many data lines. */
static int live_view(ba_ctx *ctx, ba_buf *out)
{
    ba_app *app = ba_ctx_app(ctx);
    char id[160];
    size_t il = ba_signal_wire_id(ctx, LV_DIRECTION, id, sizeof(id));
    int rc = ba_buf_lit(out, "<div id=\"sheet\" tabindex=\"0\" data-on:keydown=\"$");
    if (!rc) rc = ba_buf_append(out, id, il);
    if (!rc) rc = ba_buf_lit(out, " = evt.key; @post('/_action/navigate')\">\n");
    if (!rc)
        rc = ba_sheet_table(app->sheet, ba_signal_get(ctx, LV_VIEW_ROW),
                            ba_signal_get(ctx, LV_VIEW_COL), ba_signal_get(ctx, LV_FOCUS_ROW),
                            ba_signal_get(ctx, LV_FOCUS_COL), true, out);
    if (!rc) rc = ba_buf_lit(out, "\n</div>");
    return rc;
}

static int64_t clamp(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static bool dir_is(const char *d, size_t n, const char *lit)
{
    return n == strlen(lit) && memcmp(d, lit, n) == 0;
}

/* The website's navigate, cut down to the keys a load test sends: move the
 * focus (clamped to the sheet), scroll the view so the focus stays in it,
 * query and build the new table, count+1; then one patch-elements event for
 * #sheet and one patch-signals event with the signals set (focus, view,
 * count; setValue() marks them changed even when they did not move). */
static int live_navigate(ba_ctx *ctx)
{
    ba_app *app = ba_ctx_app(ctx);
    size_t dl;
    const char *d = ba_signal_str(ctx, LV_DIRECTION, &dl);
    /* Client-sent values may be anywhere: bring them onto the sheet first. */
    int64_t fr = clamp(ba_signal_get(ctx, LV_FOCUS_ROW), 0, BA_SHEET_ROWS - 1);
    int64_t fc = clamp(ba_signal_get(ctx, LV_FOCUS_COL), 0, BA_SHEET_COLS - 1);
    int64_t vr = clamp(ba_signal_get(ctx, LV_VIEW_ROW), 0, BA_SHEET_ROWS - BA_VIEW_ROWS);
    int64_t vc = clamp(ba_signal_get(ctx, LV_VIEW_COL), 0, BA_SHEET_COLS - BA_VIEW_COLS);
    if (dir_is(d, dl, "ArrowDown"))
        fr++;
    else if (dir_is(d, dl, "ArrowUp"))
        fr--;
    else if (dir_is(d, dl, "ArrowRight"))
        fc++;
    else if (dir_is(d, dl, "ArrowLeft"))
        fc--;
    else if (dir_is(d, dl, "PageDown"))
        fr += BA_VIEW_ROWS;
    else if (dir_is(d, dl, "PageUp"))
        fr -= BA_VIEW_ROWS;
    fr = clamp(fr, 0, BA_SHEET_ROWS - 1);
    fc = clamp(fc, 0, BA_SHEET_COLS - 1);
    if (fr < vr)
        vr = fr;
    else if (fr >= vr + BA_VIEW_ROWS)
        vr = fr - BA_VIEW_ROWS + 1;
    if (fc < vc)
        vc = fc;
    else if (fc >= vc + BA_VIEW_COLS)
        vc = fc - BA_VIEW_COLS + 1;
    ba_signal_set(ctx, LV_FOCUS_ROW, fr);
    ba_signal_set(ctx, LV_FOCUS_COL, fc);
    ba_signal_set(ctx, LV_VIEW_ROW, vr);
    ba_signal_set(ctx, LV_VIEW_COL, vc);

    app->html.len = 0;
    int rc = live_view(ctx, &app->html);
    if (rc < 0) return rc;
    int64_t count;
    if (__builtin_add_overflow(ba_signal_get(ctx, LV_COUNT), 1, &count)) count = INT64_MAX;
    ba_signal_set(ctx, LV_COUNT, count);
    rc = ba_patch_elements(ctx, "#sheet", app->html.data, app->html.len);
    return rc < 0 ? rc : ba_sync_signals(ctx);
}

static const ba_action_def live_actions[] = {{"navigate", live_navigate}};

/* ---- the table ----------------------------------------------------------------- */

const ba_route_def ba_routes[] = {
    {
        .path = "/bench/counter",
        .view = "<button data-on:click=\"@post('/_action/increment')\">+1</button>",
        .signals = count_signals,
        .n_signals = HM_ARRAY_LEN(count_signals),
        .actions = counter_actions,
        .n_actions = HM_ARRAY_LEN(counter_actions),
    },
    {
        .path = "/bench/cpu",
        .view = "<button data-on:click=\"@post('/_action/increment')\">mandelbrot</button>",
        .signals = count_signals,
        .n_signals = HM_ARRAY_LEN(count_signals),
        .actions = cpu_actions,
        .n_actions = HM_ARRAY_LEN(cpu_actions),
    },
    {
        .path = "/bench/io",
        .view = "<button data-on:click=\"@post('/_action/increment')\">io+1</button>",
        .signals = count_signals,
        .n_signals = HM_ARRAY_LEN(count_signals),
        .actions = io_actions,
        .n_actions = HM_ARRAY_LEN(io_actions),
    },
    {
        .path = "/bench/spreadsheet",
        .view = "<div id=\"bench-sheet\"><button data-on:click=\"@post('/_action/increment')\">"
                "sheet+1</button></div>",
        .signals = sheet_signals,
        .n_signals = HM_ARRAY_LEN(sheet_signals),
        .actions = sheet_actions,
        .n_actions = HM_ARRAY_LEN(sheet_actions),
    },
    {
        .path = "/examples/spreadsheet",
        .render = live_view,
        .signals = live_signals,
        .n_signals = HM_ARRAY_LEN(live_signals),
        .actions = live_actions,
        .n_actions = HM_ARRAY_LEN(live_actions),
    },
};
const size_t ba_n_routes = HM_ARRAY_LEN(ba_routes);

int ba_routes_init(ba_app *app)
{
    return ba_sheet_open(app->opt.db_path, &app->sheet);
}

void ba_routes_free(ba_app *app)
{
    ba_sheet_close(app->sheet);
    app->sheet = NULL;
    ba_buf_free(&app->html);
}

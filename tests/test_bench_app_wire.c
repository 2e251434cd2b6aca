/* bench_app's bytes against real php-via's: the requests captured from
 * php-via v0.12.0 (tests/fixtures/php-via-0.12.0, see its README) are
 * replayed with bench_app's own context, session and port, and every
 * answer must equal the captured one byte for byte after normalising what
 * differs by nature: the Date value, the session cookie's value and
 * expires, the context's 16 hex digits, and bench_app's X-Via-Worker
 * header, which php-via does not send. The page and /_health differ in
 * their bodies (php-via's shell with its Dev Bar; bench_app's extra
 * /_health fields), so there only the head (without Content-Length) and
 * the JSON fields php-via sends are compared. argv[1]: the fixtures
 * directory. */
#include "bench_app_client.h"

#include <ctype.h>

static const char CAP_HEX[] = "6637b8ea385c1d74";
static const char CAP_SID[] = "0e2b1b6b4b1406d2c1e78c3c907318f8";
static const char CAP_HOST[] = "127.0.0.1:23099";

static const char *g_dir;

typedef struct bytes {
    char *p;
    size_t n, cap;
} bytes;

static void b_add(bytes *b, const char *p, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        ASSERT(b->p);
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static bytes load(const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", g_dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) HM_FAIL_("cannot open fixture %s", path);
    bytes b = {0};
    char buf[4096];
    size_t k;
    while ((k = fread(buf, 1, sizeof(buf), f)) > 0)
        b_add(&b, buf, k);
    fclose(f);
    if (!b.p) b_add(&b, "", 0);
    return b;
}

/* Every `from` in b replaced by `to`. */
static void replace(bytes *b, const char *from, const char *to)
{
    bytes out = {0};
    size_t fl = strlen(from);
    const char *p = b->p, *end = b->p + b->n;
    for (;;) {
        const char *hit = memmem(p, (size_t)(end - p), from, fl);
        if (!hit) break;
        b_add(&out, p, (size_t)(hit - p));
        b_add(&out, to, strlen(to));
        p = hit + fl;
    }
    b_add(&out, p, (size_t)(end - p));
    free(b->p);
    *b = out;
}

/* Replaces the rest of each line starting with `prefix` (up to CRLF, or
 * up to `stop` when given) by "X"; drop: removes such lines whole. */
static void blank_after(bytes *b, const char *prefix, const char *stop, bool drop)
{
    bytes out = {0};
    size_t pl = strlen(prefix);
    const char *p = b->p, *end = b->p + b->n;
    for (;;) {
        const char *hit = memmem(p, (size_t)(end - p), prefix, pl);
        if (!hit) break;
        const char *v = hit + pl;
        const char *e = memmem(v, (size_t)(end - v), stop ? stop : "\r\n", stop ? strlen(stop) : 2);
        ASSERT(e);
        if (drop) { /* the line, its CRLF included */
            b_add(&out, p, (size_t)(hit - p));
            p = e + 2;
            continue;
        }
        b_add(&out, p, (size_t)(hit - p) + pl);
        b_add(&out, "X", 1);
        p = e;
    }
    b_add(&out, p, (size_t)(end - p));
    free(b->p);
    *b = out;
}

static void normalise(bytes *b, const char *hex, const char *sid, bool no_length)
{
    replace(b, hex, "HEX");
    replace(b, sid, "SID");
    blank_after(b, "\r\nDate: ", NULL, false);
    blank_after(b, "; expires=", ";", false);
    blank_after(b, "X-Via-Worker: ", NULL, true);
    if (no_length) blank_after(b, "Content-Length: ", NULL, true);
}

/* Reads one response on fd: the head, then a Content-Length body, or
 * `chunks` chunks of a chunked one (-1: up to the last chunk); with
 * more_chunks, no head: just more chunks of a stream. Appends the raw
 * bytes to out. */
static void read_answer(int fd, int chunks, bool more_chunks, bytes *out)
{
    bytes in = {0};
    b_add(&in, "", 0);
    int64_t until = now_ms() + IO_TIMEOUT_MS;
    char buf[8192];
    size_t head = more_chunks ? 1 : 0, pos = 0;
    long long clen = -1;
    int seen = 0;
    for (;;) {
        if (!head) {
            const char *e = memmem(in.p, in.n, "\r\n\r\n", 4);
            if (e) {
                head = pos = (size_t)(e - in.p) + 4;
                const char *cl = strcasestr(in.p, "\r\nContent-Length: ");
                if (cl && cl < e) clen = atoll(cl + 18);
            }
        }
        if (head && clen >= 0 && in.n >= head + (size_t)clen) break;
        if (head && clen < 0) { /* chunked: walk the complete chunks */
            bool done = false;
            for (;;) {
                const char *crlf = memmem(in.p + pos, in.n - pos, "\r\n", 2);
                if (!crlf) break;
                size_t size = strtoul(in.p + pos, NULL, 16);
                size_t at = (size_t)(crlf - in.p) + 2;
                size_t need = at + size + 2;
                if (in.n < need) break;
                pos = need;
                seen++;
                if (size == 0 || seen == chunks) {
                    done = true;
                    break;
                }
            }
            if (done) break;
        }
        ssize_t k = read_until(fd, buf, sizeof(buf), until);
        if (k <= 0) HM_FAIL_("the answer stopped after %zu bytes: %s", in.n, in.p ? in.p : "");
        b_add(&in, buf, (size_t)k);
    }
    b_add(out, in.p, in.n);
    free(in.p);
}

/* The fixture's request with the capture's context, session and host
 * replaced by ours; sent on fd. */
static void send_request(int fd, const char *name, const char *hex, const char *sid, int port)
{
    bytes req = load(name);
    char host[64];
    snprintf(host, sizeof(host), "127.0.0.1:%d", port);
    replace(&req, CAP_HEX, hex);
    replace(&req, CAP_SID, sid);
    replace(&req, CAP_HOST, host);
    send_all(fd, req.p, req.n);
    free(req.p);
}

static void expect_same(const char *what, bytes *ours, bytes *theirs)
{
    if (ours->n != theirs->n || memcmp(ours->p, theirs->p, ours->n) != 0)
        HM_FAIL_("%s differs from php-via's:\n--- php-via ---\n%s\n--- bench_app ---\n%s", what,
                 theirs->p, ours->p);
    printf("%s: as php-via's\n", what);
}

/* One exchange on fd: request `base`.req.bin, answer against
 * `base`.resp.bin (or resp_name), both normalised. */
static void check(int fd, const char *base, const char *resp_name, int chunks, const char *hex,
                  const char *sid, int port, bool no_length)
{
    char name[128];
    if (fd >= 0 && base) {
        snprintf(name, sizeof(name), "%s.req.bin", base);
        send_request(fd, name, hex, sid, port);
    }
    bytes ours = {0};
    read_answer(fd, chunks, !base, &ours);
    snprintf(name, sizeof(name), "%s", resp_name);
    bytes theirs = load(name);
    normalise(&ours, hex, sid, no_length);
    normalise(&theirs, CAP_HEX, CAP_SID, no_length);
    expect_same(resp_name, &ours, &theirs);
    free(ours.p);
    free(theirs.p);
}

int main(int argc, char **argv)
{
    ba_test_begin(argc, argv, false);
    if (argc < 2) HM_FAIL_("usage: test_bench_app_wire FIXTURES_DIR");
    g_dir = argv[1];
    hm_bench_app_options o = ba_test_options(HM_BACKEND_AUTO);
    int port;
    pid_t pid = start_server(&o, &port);

    /* 01: the page; our context and session come from it. */
    int fd = tcp_connect(port);
    send_request(fd, "01_page.req.bin", CAP_HEX, CAP_SID, port);
    bytes pg = {0};
    read_answer(fd, 0, false, &pg);
    fd_close(fd);
    const char *m = strstr(pg.p, "counter_\\/");
    ASSERT(m);
    char hex[17];
    copy_str(hex, sizeof(hex), m + strlen("counter_\\/"), 16);
    ASSERT(is_hex(hex, 16));
    const char *c = strstr(pg.p, "via_session_id=");
    ASSERT(c);
    char sid[33];
    copy_str(sid, sizeof(sid), c + 15, 32);
    ASSERT(is_hex(sid, 32));
    pg.n = (size_t)(strstr(pg.p, "\r\n\r\n") - pg.p) + 4;
    pg.p[pg.n] = '\0';
    bytes cap = load("01_page.resp-head.bin");
    normalise(&pg, hex, sid, true);
    normalise(&cap, CAP_HEX, CAP_SID, true);
    expect_same("01_page (head)", &pg, &cap);
    free(pg.p);
    free(cap.p);

    int sse_fd = tcp_connect(port);
    check(sse_fd, "02_sse_start", "02_sse_start.resp.bin", 2, hex, sid, port, false);
    fd = tcp_connect(port);
    check(fd, "03_action", "03_action.resp.bin", 0, hex, sid, port, false);
    fd_close(fd);
    check(sse_fd, NULL, "04_sse_after_action.resp.bin", 1, hex, sid, port, false);
    fd_close(sse_fd);
    const char *single[] = {"05_action_unknown_ctx", "06_action_stale_ctx_other_shape",
                            "09_sse_no_ctx"};
    for (size_t i = 0; i < HM_ARRAY_LEN(single); i++) {
        char resp_name[128];
        snprintf(resp_name, sizeof(resp_name), "%s.resp.bin", single[i]);
        fd = tcp_connect(port);
        check(fd, single[i], resp_name, 0, hex, sid, port, false);
        fd_close(fd);
    }
    /* 07 and 08 on one connection: it stays open after the reload script. */
    fd = tcp_connect(port);
    check(fd, "07_sse_unknown_ctx_first", "07_sse_unknown_ctx_first.resp.bin", -1, hex, sid, port,
          false);
    check(fd, "08_sse_unknown_ctx_second", "08_sse_unknown_ctx_second.resp.bin", 0, hex, sid, port,
          false);
    fd_close(fd);

    /* 10: /_health's head, and the fields php-via sends with its values
     * (one context, its stream closed but not yet noticed: php-via's too). */
    fd = tcp_connect(port);
    send_request(fd, "10_health.req.bin", hex, sid, port);
    bytes ours = {0};
    read_answer(fd, 0, false, &ours);
    fd_close(fd);
    bytes theirs = load("10_health.resp.bin");
    char *ob = strstr(ours.p, "\r\n\r\n") + 4, *tb = strstr(theirs.p, "\r\n\r\n") + 4;
    json_error_t err;
    json_t *oj = json_loads(ob, 0, &err), *tj = json_loads(tb, 0, &err);
    ASSERT(oj && tj);
    ASSERT_STREQ(json_string_value(json_object_get(oj, "status")),
                 json_string_value(json_object_get(tj, "status")));
    ASSERT(json_equal(json_object_get(oj, "broker"), json_object_get(tj, "broker")));
    ASSERT(json_equal(json_object_get(oj, "connections"), json_object_get(tj, "connections")));
    json_decref(oj);
    json_decref(tj);
    ours.n = (size_t)(ob - ours.p);
    ours.p[ours.n] = '\0';
    theirs.n = (size_t)(tb - theirs.p);
    theirs.p[theirs.n] = '\0';
    normalise(&ours, hex, sid, true);
    normalise(&theirs, CAP_HEX, CAP_SID, true);
    expect_same("10_health (head; status, broker, connections)", &ours, &theirs);
    free(ours.p);
    free(theirs.p);
    stop_server(pid);
    return 0;
}

/* bench_app_steps.c — the php-via steps the bench_app tests take (pages,
 * actions, /_health), parsers for what the pages send, worker and port
 * helpers, the test PKI, and the HTTP framing checks several front ends
 * share (see bench_app_client.h). */
#include "bench_app_client.h"
#include "load/workload.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

/* ---- php-via steps ---------------------------------------------------------- */

const char ELEMENTS_EVENT[] =
    "event: datastar-patch-elements\n"
    "data: elements <button data-on:click=\"@post('/_action/increment')\">+1</button>";

/* GET /bench/counter with an optional Cookie line; checks the page's shape. */
void get_page(int port, const char *cookie_line, page *pg)
{
    resp r;
    req1(port, "GET", "/bench/counter", cookie_line, NULL, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT_STREQ(r.ctype, "text/html; charset=utf-8");
    static const char meta[] = "<meta data-signals='{\"via_ctx\":\"\\/bench\\/counter_\\/";
    const char *m = strstr(r.body, meta);
    ASSERT(m);
    const char *hex = m + strlen(meta);
    ASSERT(is_hex(hex, 16));
    static const char meta_end[] = "\",\"_disconnected\":false}'>";
    ASSERT_EQ(strncmp(hex + 16, meta_end, strlen(meta_end)), 0);
    memcpy(pg->hex, hex, 16);
    pg->hex[16] = '\0';
    snprintf(pg->ctx, sizeof(pg->ctx), "/bench/counter_/%s", pg->hex);
    ASSERT(strstr(r.body, "<button data-on:click=\"@post('/_action/increment')\">"));
    ASSERT(strstr(r.body, "<script type=\"module\" src=\"/datastar.js\"></script>"));
    ASSERT(strstr(r.body, "<div class=\"container\" id=\"content\">"));

    /* via_session_id=<v>; expires=Www, DD-Mon-YYYY HH:MM:SS GMT; path=/; httponly; samesite=Lax */
    ASSERT_EQ(strncmp(r.cookie, "via_session_id=", 15), 0);
    const char *v = r.cookie + 15;
    const char *semi = strchr(v, ';');
    ASSERT(semi);
    copy_str(pg->session, sizeof(pg->session), v, (size_t)(semi - v));
    ASSERT_EQ(strncmp(semi, "; expires=", 10), 0);
    const char *date = semi + 10;
    ASSERT_STREQ(date + 29, "; path=/; httponly; samesite=Lax");
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    char dbuf[32];
    copy_str(dbuf, sizeof(dbuf), date, 29);
    const char *e = strptime(dbuf, "%a, %d-%b-%Y %H:%M:%S GMT", &tm);
    ASSERT(e && *e == '\0');
    ASSERT(dbuf[3] == ',' && dbuf[7] == '-' && dbuf[11] == '-');
    int64_t exp = (int64_t)timegm(&tm), want = (int64_t)time(NULL) + 30 * 86400;
    ASSERT_LE(exp > want ? exp - want : want - exp, 120);
    snprintf(pg->cookie_hdr, sizeof(pg->cookie_hdr), "Cookie: via_session_id=%s\r\n", pg->session);
}

void wire_id(const page *pg, char *out, size_t cap)
{
    snprintf(out, cap, "count__bench_counter__%s", pg->hex);
}

/* POST /_action/<id> with {"via_ctx":ctx[, wire:count]} on a connection. */
void action_on(conn *c, const char *id, const page *pg, const char *extra, long long count, resp *r)
{
    char body[512], target[128], hdrs[1024];
    if (count >= 0) {
        char w[128];
        wire_id(pg, w, sizeof(w));
        snprintf(body, sizeof(body), "{\"via_ctx\":\"%s\",\"%s\":%lld}", pg->ctx, w, count);
    } else {
        snprintf(body, sizeof(body), "{\"via_ctx\":\"%s\"}", pg->ctx);
    }
    snprintf(target, sizeof(target), "/_action/%s", id);
    snprintf(hdrs, sizeof(hdrs), "Content-Type: application/json\r\n%s%s", pg->cookie_hdr,
             extra ? extra : "");
    conn_req(c, "POST", target, hdrs, body, r);
}

void action(int port, const char *id, const page *pg, const char *extra, long long count, resp *r)
{
    conn *c = conn_open(port);
    action_on(c, id, pg, extra, count, r);
    conn_close(c);
}

json_t *health(int port)
{
    resp r;
    req1(port, "GET", "/_health", NULL, NULL, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT_STREQ(r.ctype, "application/json");
    ASSERT(has_header(&r, "Cache-Control: no-store"));
    json_error_t err;
    json_t *j = json_loads(r.body, 0, &err);
    ASSERT(j);
    return j;
}

long long health_count(int port, const char *what)
{
    json_t *j = health(port);
    json_t *v = json_object_get(json_object_get(j, "connections"), what);
    ASSERT(json_is_integer(v));
    long long n = json_integer_value(v);
    json_decref(j);
    return n;
}

void wait_health_count(int port, const char *what, long long want)
{
    int64_t until = now_ms() + IO_TIMEOUT_MS;
    long long n;
    while ((n = health_count(port, what)) != want) {
        if (now_ms() > until) HM_FAIL_("/_health %s stayed %lld, not %lld", what, n, want);
        usleep(10000);
    }
}

int notice_closed_streams(int port, const page *pg, const char *action_id, long long want)
{
    int64_t until = now_ms() + IO_TIMEOUT_MS;
    int actions = 0;
    long long n;
    while ((n = health_count(port, "sse")) != want) {
        if (now_ms() > until)
            HM_FAIL_("/_health sse stayed %lld, not %lld, after %d actions", n, want, actions);
        resp r;
        action(port, action_id, pg, NULL, -1, &r);
        ASSERT_EQ(r.status, 200);
        actions++;
        usleep(10000);
    }
    return actions;
}

/* GET route: the page's context (route + "_/" + hex) and session. */
void get_route(int port, const char *route, const char *cookie_line, page *pg, resp *r)
{
    req1(port, "GET", route, cookie_line, NULL, r);
    ASSERT_EQ(r->status, 200);
    char meta[256] = "<meta data-signals='{\"via_ctx\":\"";
    size_t k = strlen(meta);
    for (const char *p = route; *p && k + 3 < sizeof(meta); p++) {
        if (*p == '/') meta[k++] = '\\';
        meta[k++] = *p;
    }
    snprintf(meta + k, sizeof(meta) - k, "_\\/");
    const char *m = strstr(r->body, meta);
    ASSERT(m);
    const char *hex = m + strlen(meta);
    ASSERT(is_hex(hex, 16));
    memcpy(pg->hex, hex, 16);
    pg->hex[16] = '\0';
    snprintf(pg->ctx, sizeof(pg->ctx), "%s_/%s", route, pg->hex);
    ASSERT_EQ(strncmp(r->cookie, "via_session_id=", 15), 0);
    const char *v = r->cookie + 15, *semi = strchr(v, ';');
    ASSERT(semi);
    copy_str(pg->session, sizeof(pg->session), v, (size_t)(semi - v));
    snprintf(pg->cookie_hdr, sizeof(pg->cookie_hdr), "Cookie: via_session_id=%s\r\n", pg->session);
}

/* A TAB signal's wire id: name + "_" + sanitized route + "__" + hex. */
void wire_of(const page *pg, const char *name, char *out, size_t cap)
{
    size_t k = (size_t)snprintf(out, cap, "%s_", name);
    for (const char *p = pg->ctx; *p && *p != '_' && k + 1 < cap; p++) /* the route part */
        out[k++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ? *p : '_';
    snprintf(out + k, cap - k, "__%s", pg->hex);
}

/* POST /_action/<id> with {"via_ctx":ctx<fields>} on connection c. */
void act(conn *c, const char *id, const page *pg, const char *fields, resp *r)
{
    char body[1024], target[128], hdrs[512];
    snprintf(body, sizeof(body), "{\"via_ctx\":\"%s\"%s}", pg->ctx, fields ? fields : "");
    snprintf(target, sizeof(target), "/_action/%s", id);
    snprintf(hdrs, sizeof(hdrs), "Content-Type: application/json\r\n%s", pg->cookie_hdr);
    conn_req(c, "POST", target, hdrs, body, r);
    ASSERT_EQ(r->status, 200);
}

/* The signals object of a datastar-patch-signals event (caller decrefs). */
json_t *signals_of(const char *ev)
{
    static const char pfx[] = "event: datastar-patch-signals\ndata: signals ";
    ASSERT_EQ(strncmp(ev, pfx, strlen(pfx)), 0);
    json_error_t err;
    json_t *j = json_loads(ev + strlen(pfx), 0, &err);
    ASSERT(json_is_object(j));
    return j;
}

long long int_of(json_t *sig, const page *pg, const char *name)
{
    char w[160];
    wire_of(pg, name, w, sizeof(w));
    json_t *v = json_object_get(sig, w);
    if (!json_is_integer(v)) HM_FAIL_("signal %s is not an integer in the patch", name);
    return json_integer_value(v);
}

/* A datastar-patch-elements event's "elements" lines joined with \n into
 * out; returns the number of those lines. *selector gets the selector line
 * ("" when none). */
int elements_of(const char *ev, char *out, size_t cap, char *selector, size_t scap)
{
    static const char pfx[] = "event: datastar-patch-elements\n";
    ASSERT_EQ(strncmp(ev, pfx, strlen(pfx)), 0);
    size_t k = 0;
    int lines = 0;
    selector[0] = '\0';
    for (const char *p = ev + strlen(pfx); *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (n >= 15 && strncmp(p, "data: elements ", 15) == 0) {
            ASSERT_LT(k + n, cap);
            if (lines++) out[k++] = '\n';
            memcpy(out + k, p + 15, n - 15);
            k += n - 15;
        } else if (n >= 15 && strncmp(p, "data: selector ", 15) == 0) {
            copy_str(selector, scap, p + 15, n - 15);
        } else {
            HM_FAIL_("unexpected line in an elements event: %.*s", (int)n, p);
        }
        p += n + (nl ? 1 : 0);
    }
    out[k] = '\0';
    return lines;
}

/* The row label (1-based) of the table line holding the focus outline. */
int focus_row_label(const char *html)
{
    static const char mark[] = "<td style=\"outline:2px solid #4f8ef7\">";
    const char *o = strstr(html, mark);
    ASSERT(o);
    ASSERT(!strstr(o + sizeof(mark) - 1, "outline:")); /* exactly one focused cell */
    const char *line = o;
    while (line > html && line[-1] != '\n')
        line--;
    ASSERT_EQ(strncmp(line, "<tr><th>", 8), 0);
    return atoi(line + 8);
}

/* The table inside <div id="sheet">…</div> must pass hammer's own check. */
void check_sheet_div(const char *html)
{
    const char *d = strstr(html, "<div id=\"sheet\"");
    ASSERT(d);
    const char *e = strstr(d, "</div>");
    ASSERT(e);
    ASSERT(hm_table_well_formed(d, (size_t)(e - d)));
    ASSERT(strstr(d, "@post('/_action/navigate')"));
}

/* The value of `wire` in a datastar-patch-signals event. */
long long signal_in(const char *ev, const char *wire)
{
    static const char pfx[] = "event: datastar-patch-signals\ndata: signals ";
    ASSERT_EQ(strncmp(ev, pfx, strlen(pfx)), 0);
    json_error_t err;
    json_t *j = json_loads(ev + strlen(pfx), 0, &err);
    ASSERT(j);
    json_t *v = json_object_get(j, wire);
    ASSERT(json_is_integer(v));
    long long n = json_integer_value(v);
    json_decref(j);
    return n;
}

/* The seeded database at path: WAL, 26000 cells, known values. */
void check_db(const char *path, const char *cell00)
{
    struct stat st;
    ASSERT_EQ(stat(path, &st), 0);
    sqlite3 *db;
    ASSERT_EQ(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_busy_timeout(db, 2000);
    sqlite3_stmt *q;
    ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &q, NULL), SQLITE_OK);
    ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
    ASSERT_STREQ((const char *)sqlite3_column_text(q, 0), "wal");
    sqlite3_finalize(q);
    ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM cells", -1, &q, NULL), SQLITE_OK);
    ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
    ASSERT_EQ(sqlite3_column_int(q, 0), 26000);
    sqlite3_finalize(q);
    static const struct {
        int row, col;
        const char *value;
    } known[] = {
        {0, 0, NULL},       {0, 1, "2"},        {0, 3, "\"D1\" & co"},
        {0, 7, "'H1' > 0"}, {1, 4, "E2 < F2"},  {3, 9, "'J4' > 0"},
        {999, 24, "25000"}, {999, 25, "26000"}, {500, 10, "K501 < L501"},
    };
    ASSERT_EQ(
        sqlite3_prepare_v2(db, "SELECT value FROM cells WHERE row = ?1 AND col = ?2", -1, &q, NULL),
        SQLITE_OK);
    for (size_t i = 0; i < HM_ARRAY_LEN(known); i++) {
        sqlite3_bind_int(q, 1, known[i].row);
        sqlite3_bind_int(q, 2, known[i].col);
        ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
        ASSERT_STREQ((const char *)sqlite3_column_text(q, 0),
                     known[i].value ? known[i].value : cell00);
        sqlite3_reset(q);
    }
    sqlite3_finalize(q);
    sqlite3_close(db);
}

/* The answer came from the worker fd (or session) dispatch picks for the
 * connection just used: its id % workers (0 with one worker). */
static void check_worker(const resp *r, int port, int workers)
{
    int want = conns_made(port) % workers;
    if (via_worker(r->head) != want)
        HM_FAIL_("X-Via-Worker %d on connection %d, not %d:\n%s", via_worker(r->head),
                 conns_made(port), want, r->head);
}

void check_http_framing(int port, int workers)
{
    /* Malformed: 400 and close; other connections keep working. */
    conn *c = conn_open(port);
    send_all(c->fd, "GARBAGE\r\n\r\n", 11);
    resp r;
    read_resp(c, false, &r);
    ASSERT_EQ(r.status, 400);
    check_worker(&r, port, workers);
    ASSERT(!r.keep_alive);
    char b[16];
    ASSERT_EQ(read_until(c->fd, b, sizeof(b), now_ms() + IO_TIMEOUT_MS), 0);
    conn_close(c);
    c = conn_open(port);
    static const char bad_cl[] = "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n";
    send_all(c->fd, bad_cl, sizeof(bad_cl) - 1);
    read_resp(c, false, &r);
    ASSERT_EQ(r.status, 400);
    check_worker(&r, port, workers);
    conn_close(c);
    req1(port, "GET", "/_health", NULL, NULL, &r);
    ASSERT_EQ(r.status, 200);
    check_worker(&r, port, workers);

    /* Oversized header section: 431; oversized body: 413. */
    static char big[80 * 1024];
    int n = snprintf(big, sizeof(big), "X-Big: ");
    memset(big + n, 'a', 70 * 1024);
    snprintf(big + n + 70 * 1024, sizeof(big) - (size_t)n - 70 * 1024, "\r\n");
    req1(port, "GET", "/_health", big, NULL, &r);
    ASSERT_EQ(r.status, 431);
    check_worker(&r, port, workers);
    c = conn_open(port);
    conn_req(c, "POST", "/_action/increment", "Content-Length: 2000000\r\n", NULL, &r);
    ASSERT_EQ(r.status, 413);
    check_worker(&r, port, workers);
    conn_close(c);

    /* Pipelining: two requests in one write, two responses in order. */
    c = conn_open(port);
    char two[512];
    n = snprintf(two, sizeof(two),
                 "GET /_health HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\n\r\n");
    send_all(c->fd, two, (size_t)n);
    read_resp(c, false, &r);
    ASSERT_EQ(r.status, 200);
    check_worker(&r, port, workers);
    read_resp(c, false, &r);
    ASSERT_EQ(r.status, 404);
    check_worker(&r, port, workers);
    conn_req(c, "GET", "/_health", NULL, NULL, &r);
    ASSERT_EQ(r.status, 200);
    check_worker(&r, port, workers);
    conn_close(c);

    /* Expect: 100-continue gets the interim answer before the body. */
    c = conn_open(port);
    n = snprintf(two, sizeof(two),
                 "POST /_action/increment HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                 "Content-Length: 2\r\n\r\n");
    send_all(c->fd, two, (size_t)n);
    char cont[64] = "";
    size_t got = 0;
    int64_t until = now_ms() + IO_TIMEOUT_MS;
    while (!strstr(cont, "\r\n\r\n")) {
        ssize_t k = read_until(c->fd, cont + got, sizeof(cont) - 1 - got, until);
        ASSERT_GT(k, 0);
        got += (size_t)k;
        cont[got] = '\0';
    }
    ASSERT_STREQ(cont, "HTTP/1.1 100 Continue\r\n\r\n");
    send_all(c->fd, "{}", 2);
    read_resp(c, false, &r);
    ASSERT_EQ(r.status, 400);
    check_worker(&r, port, workers);
    conn_close(c);
    printf("malformed 400, 431, 413, pipelining, 100-continue: ok\n");
}

/* ---- workers and ports ------------------------------------------------------ */

int crc_worker(const char *sid, int n)
{
    return (int)(crc32(0L, (const Bytef *)sid, (uInt)strlen(sid)) % (uLong)n);
}

void session_for_worker(int w, int n, unsigned seed, char *sid, size_t cap)
{
    for (unsigned k = 0; k < 1000; k++) {
        snprintf(sid, cap, "%032x", seed + k);
        if (crc_worker(sid, n) == w) return;
    }
    HM_FAIL_("no session id for worker %d of %d", w, n);
}

json_t *health_with(int port, const char *cookie_line, int *worker)
{
    resp r;
    req1(port, "GET", "/_health", cookie_line, NULL, &r);
    ASSERT_EQ(r.status, 200);
    *worker = via_worker(r.head);
    json_error_t err;
    json_t *j = json_loads(r.body, 0, &err);
    ASSERT(j);
    ASSERT_EQ(json_integer_value(json_object_get(j, "worker")), *worker);
    return j;
}

/* workers[i].what from /_health. */
long long worker_count(json_t *h, int i, const char *what)
{
    json_t *ws = json_object_get(h, "workers");
    ASSERT(json_is_array(ws));
    json_t *w = json_array_get(ws, (size_t)i);
    ASSERT_EQ(json_integer_value(json_object_get(w, "id")), i);
    json_t *v = json_object_get(w, what);
    ASSERT(json_is_integer(v));
    return json_integer_value(v);
}

bool port_open(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    close(fd);
    return ok;
}

/* Two consecutive free ports, below the ephemeral range (bench_app
 * listens with SO_REUSEADDR, so the probe does too). */
int free_port_pair(void)
{
    for (int tries = 0; tries < 200; tries++) {
        int base = 20000 + (int)((unsigned)(getpid() * 7919 + tries * 104729) % 12000);
        bool ok = true;
        for (int i = 0; i < 2 && ok; i++) {
            int fd = socket(AF_INET, SOCK_STREAM, 0);
            ASSERT(fd >= 0);
            int one = 1;
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
            struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)(base + i))};
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            ok = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
            close(fd);
        }
        if (ok) return base;
    }
    HM_FAIL_("no two consecutive free ports");
}

void wait_ports(int base, int n)
{
    int64_t until = now_ms() + IO_TIMEOUT_MS;
    for (int i = 0; i < n; i++) {
        while (!port_open(base + i)) {
            ASSERT_LT(now_ms(), until);
            usleep(10000);
        }
    }
}

/* ---- HTTPS ---------------------------------------------------------------------- */

/* The test's PKI, made with the OpenSSL API in g_tmp/tls: ca.pem, and a
 * server.pem + server.key it signed for 127.0.0.1 and localhost (as
 * scripts/gen-test-cert.sh makes them); other.key matches nothing. */
char g_ca[320], g_cert[320], g_key[320], g_other_key[320];

static EVP_PKEY *ec_key(void)
{
    EVP_PKEY_CTX *pc = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, NULL);
    ASSERT(pc);
    EVP_PKEY *k = NULL;
    ASSERT_EQ(EVP_PKEY_keygen_init(pc), 1);
    ASSERT_EQ(EVP_PKEY_CTX_set_ec_paramgen_curve_nid(pc, NID_X9_62_prime256v1), 1);
    ASSERT_EQ(EVP_PKEY_keygen(pc, &k), 1);
    EVP_PKEY_CTX_free(pc);
    return k;
}

static void add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX v3;
    X509V3_set_ctx_nodb(&v3);
    X509V3_set_ctx(&v3, issuer, x, NULL, NULL, 0);
    X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
    ASSERT(e);
    ASSERT_EQ(X509_add_ext(x, e, -1), 1);
    X509_EXTENSION_free(e);
}

/* A certificate for key named cn, signed by issuer (NULL: self-signed). */
static X509 *make_cert(EVP_PKEY *key, const char *cn, X509 *issuer, EVP_PKEY *issuer_key,
                       long serial)
{
    X509 *x = X509_new();
    ASSERT(x);
    ASSERT_EQ(X509_set_version(x, 2), 1);
    ASN1_INTEGER_set(X509_get_serialNumber(x), serial);
    X509_gmtime_adj(X509_getm_notBefore(x), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x), 86400);
    ASSERT_EQ(X509_set_pubkey(x, key), 1);
    X509_NAME *name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    ASSERT_EQ(X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name), 1);
    if (issuer) {
        add_ext(x, issuer, NID_basic_constraints, "CA:FALSE");
        add_ext(x, issuer, NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1,IP:::1");
    } else {
        add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE");
        add_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign");
    }
    ASSERT_GT(X509_sign(x, issuer_key ? issuer_key : key, EVP_sha256()), 0);
    return x;
}

static void write_pem(const char *path, X509 *x, EVP_PKEY *k)
{
    FILE *f = fopen(path, "w");
    ASSERT(f);
    if (x) ASSERT_EQ(PEM_write_X509(f, x), 1);
    if (k) ASSERT_EQ(PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL), 1);
    ASSERT_EQ(fclose(f), 0);
}

void make_pki(void)
{
    char dir[300];
    snprintf(dir, sizeof(dir), "%s/tls", g_tmp);
    ASSERT_EQ(mkdir(dir, 0700), 0);
    snprintf(g_ca, sizeof(g_ca), "%s/ca.pem", dir);
    snprintf(g_cert, sizeof(g_cert), "%s/server.pem", dir);
    snprintf(g_key, sizeof(g_key), "%s/server.key", dir);
    snprintf(g_other_key, sizeof(g_other_key), "%s/other.key", dir);
    EVP_PKEY *ca_key = ec_key(), *key = ec_key(), *other = ec_key();
    X509 *ca = make_cert(ca_key, "bench_app test CA", NULL, NULL, 1);
    X509 *leaf = make_cert(key, "localhost", ca, ca_key, 2);
    write_pem(g_ca, ca, NULL);
    write_pem(g_cert, leaf, NULL);
    write_pem(g_key, NULL, key);
    write_pem(g_other_key, NULL, other);
    X509_free(ca);
    X509_free(leaf);
    EVP_PKEY_free(ca_key);
    EVP_PKEY_free(key);
    EVP_PKEY_free(other);
}

/* A client context trusting only the test CA: TLS 1.2 to max_version
 * (0: the newest), ALPN `alpn` (wire format; NULL: http/1.1), with tickets
 * unless no_tickets (TLS 1.2 then resumes by session id). */
SSL_CTX *client_ctx(int max_version, const char *alpn, size_t alpn_len, bool no_tickets)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    ASSERT(ctx);
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    if (max_version) SSL_CTX_set_max_proto_version(ctx, max_version);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    ASSERT_EQ(SSL_CTX_load_verify_locations(ctx, g_ca, NULL), 1);
    if (!alpn) alpn = "\x08http/1.1", alpn_len = 9;
    ASSERT_EQ(SSL_CTX_set_alpn_protos(ctx, (const unsigned char *)alpn, (unsigned)alpn_len), 0);
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF | (no_tickets ? SSL_OP_NO_TICKET : 0));
    return ctx;
}

/* ---- TLS clients that misbehave, and resumption --------------------------------- */

/* Connections that do not speak TLS (or not acceptably) just get closed,
 * perhaps after an alert, never answered in HTTP; the server goes on. */
void check_tls_bad_clients(int port)
{
    SSL_CTX *tls = g_tls;
    g_tls = NULL;
#define JUNK(lit, half)                                                                            \
    {                                                                                              \
        lit, sizeof(lit) - 1, half                                                                 \
    }
    static const struct {
        const char *bytes;
        size_t len;
        bool half_close; /* then EOF: the bytes alone leave the server waiting */
    } junk[] = {
        JUNK("GET /_health HTTP/1.1\r\nHost: x\r\n\r\n", false), /* plain HTTP */
        JUNK("\x16\x03\x01\xff\xff no handshake at all", false), /* a record far too long */
        JUNK("\x16\x03\x01\x00\x05\x01\x00\x00\x01\x00", false), /* a ClientHello of 1 byte */
        JUNK("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03", true),  /* a ClientHello cut short */
        JUNK("\x80\x2e\x01\x00\x02\x00\x15", true),              /* SSLv2-style, cut short */
        JUNK("", true),                                          /* nothing at all */
    };
#undef JUNK
    char buf[4096];
    ssize_t n;
    for (size_t i = 0; i < HM_ARRAY_LEN(junk); i++) {
        int fd = tcp_connect_raw(port);
        if (junk[i].len) send_all(fd, junk[i].bytes, junk[i].len);
        if (junk[i].half_close) shutdown(fd, SHUT_WR);
        int64_t until = now_ms() + IO_TIMEOUT_MS;
        while ((n = read_until(fd, buf, sizeof(buf), until)) > 0)
            ASSERT_EQ(buf[0], 0x15); /* an alert record */
        if (n != 0 && n != -2) HM_FAIL_("junk %zu: read %zd, not a close", i, n);
        close(fd);
    }
    unsigned char rnd[2048]; /* bytes of no protocol */
    for (size_t i = 0; i < sizeof(rnd); i++)
        rnd[i] = (unsigned char)((i * 2654435761u) >> 13);
    int fd = tcp_connect_raw(port);
    send(fd, rnd, sizeof(rnd), MSG_NOSIGNAL);
    int64_t until = now_ms() + IO_TIMEOUT_MS;
    while ((n = read_until(fd, buf, sizeof(buf), until)) > 0) {
    }
    ASSERT(n == 0 || n == -2);
    close(fd);

    /* ALPN: an offer of h2 alone is refused; no offer at all is HTTP/1.1. */
    g_tls = client_ctx(0, "\x02h2", 3, false);
    fd = tcp_connect_raw(port);
    ASSERT_EQ(tls_handshake(fd, false), 0);
    close(fd);
    SSL_CTX_free(g_tls);
    g_tls = client_ctx(0, "", 0, false);
    fd = tcp_connect_raw(port);
    ASSERT_EQ(tls_handshake(fd, true), 1);
    ASSERT_STREQ(g_alpn, "");
    static const char req[] = "GET /_health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    send_all(fd, req, strlen(req));
    size_t got = 0;
    until = now_ms() + IO_TIMEOUT_MS;
    while (got < sizeof(buf) - 1 &&
           (n = read_until(fd, buf + got, sizeof(buf) - 1 - got, until)) > 0)
        got += (size_t)n;
    buf[got] = '\0';
    ASSERT_EQ(strncmp(buf, "HTTP/1.1 200 OK\r\n", 17), 0);
    fd_close(fd);
    SSL_CTX_free(g_tls);
    g_tls = tls;
    /* Still serving. */
    json_decref(health(port));
}

/* A session of a first connection resumes on the next two: TLS 1.3
 * tickets (max_version 0), TLS 1.2 tickets, TLS 1.2 session ids. */
void check_tls_resume(int port, int max_version, bool no_tickets)
{
    SSL_CTX *saved = g_tls;
    g_tls = client_ctx(max_version, NULL, 0, no_tickets);
    conn *c = conn_open(port);
    ASSERT(!g_reused);
    ASSERT_EQ(SSL_version(ssl_of(c->fd)), max_version ? max_version : TLS1_3_VERSION);
    resp r;
    conn_req(c, "GET", "/_health", NULL, NULL, &r); /* TLS 1.3: the tickets came first */
    ASSERT_EQ(r.status, 200);
    g_resume = tls_session(c->fd);
    conn_close(c);
    for (int i = 0; i < 2; i++) {
        c = conn_open(port);
        ASSERT(g_reused);
        conn_req(c, "GET", "/_health", NULL, NULL, &r);
        ASSERT_EQ(r.status, 200);
        conn_close(c);
    }
    SSL_SESSION_free(g_resume);
    g_resume = NULL;
    SSL_CTX_free(g_tls);
    g_tls = saved;
}

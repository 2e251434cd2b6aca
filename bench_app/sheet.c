/* sheet.c — the spreadsheet workloads' data: a real SQLite database of
 * 1000 rows x 26 columns, and the 20x10 viewport table built from it.
 *
 * The database: php-via's bench_app.php opens website/spreadsheet.db (or an
 * empty :memory:) with journal_mode=WAL and synchronous=NORMAL, schema
 * cells(row, col, value, PRIMARY KEY(row, col)). Here the file is --db PATH,
 * or by default spreadsheet.db in a fresh mkdtemp() directory under $TMPDIR
 * (else /tmp) that close removes. A table with no rows is seeded in one
 * transaction with the deterministic sheet described at seed_value().
 *
 * The viewport query is prepared once (SQLITE_PREPARE_PERSISTENT) and
 * reset after each use, so no read transaction stays open between actions
 * (that would stop WAL checkpoints). SQLite calls block the loop, as the
 * PHP SQLite3 calls block php-via's worker; they never yield.
 *
 * Workers: each worker opens its own ba_sheet (connection and prepared
 * statement) on the file the run opened first; a connection is used only
 * by its worker's thread.
 *
 * Memory: the ba_sheet and its path strings are hm_alloc'd; SQLite uses its
 * own allocator. Tables are appended to the caller's buffer. */
#include "bench_app/internal.h"

#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct ba_sheet {
    sqlite3 *db;
    sqlite3_stmt *range; /* the viewport query */
    char *path;          /* the database file */
    char *tmpdir;        /* the directory close removes, or NULL (--db) */
};

static const char CREATE_SQL[] = "CREATE TABLE IF NOT EXISTS cells ("
                                 "row INTEGER NOT NULL, col INTEGER NOT NULL, "
                                 "value TEXT NOT NULL DEFAULT '', PRIMARY KEY (row, col))";
static const char RANGE_SQL[] = "SELECT row, col, value FROM cells "
                                "WHERE row >= ?1 AND row < ?2 AND col >= ?3 AND col < ?4 "
                                "ORDER BY row, col";
/* A cell with the focus: bench_app.php's outline style. */
static const char TD_FOCUS[] = "<td style=\"outline:2px solid #4f8ef7\">";

/* bench_app.php's benchColName(): 0 -> A, 25 -> Z, 26 -> AA. */
static size_t col_name(int64_t col, char *out)
{
    char rev[16];
    size_t n = 0;
    for (int64_t c = col + 1; c > 0 && n < sizeof(rev); c = (c - 1) / 26)
        rev[n++] = (char)('A' + (c - 1) % 26);
    for (size_t i = 0; i < n; i++)
        out[i] = rev[n - 1 - i];
    out[n] = '\0';
    return n;
}

/* The seeded value of cell (row, col), 0-based. With k = (row*26 + col) % 10:
 *   k == 0:  "<ref> < <ref of the next column>", e.g. (0,0) "A1 < B1"
 *   k == 3:  "\"<ref>\" & co",                    e.g. (0,3) "\"D1\" & co"
 *   k == 7:  "'<ref>' > 0",                       e.g. (0,7) "'H1' > 0"
 *   else:    the decimal (row+1)*(col+1),         e.g. (0,1) "2"
 * where <ref> is the column letter and row+1 ("A1"). One cell in ten thus
 * needs HTML escaping (<, >, &, ", '). */
static size_t seed_value(int row, int col, char *out, size_t cap)
{
    char a[8], b[8];
    col_name(col, a);
    col_name((col + 1) % BA_SHEET_COLS, b);
    int n;
    switch ((row * BA_SHEET_COLS + col) % 10) {
    case 0:
        n = snprintf(out, cap, "%s%d < %s%d", a, row + 1, b, row + 1);
        break;
    case 3:
        n = snprintf(out, cap, "\"%s%d\" & co", a, row + 1);
        break;
    case 7:
        n = snprintf(out, cap, "'%s%d' > 0", a, row + 1);
        break;
    default:
        n = snprintf(out, cap, "%d", (row + 1) * (col + 1));
        break;
    }
    return n < 0 ? 0 : (size_t)n;
}

static int err_of(int sqlite_rc)
{
    switch (sqlite_rc & 0xff) {
    case SQLITE_NOMEM:
        return -ENOMEM;
    case SQLITE_CANTOPEN:
        return -ENOENT;
    case SQLITE_PERM:
    case SQLITE_READONLY:
        return -EACCES;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return -EBUSY;
    default:
        return -EIO;
    }
}

static int fail(ba_sheet *sh, int rc, const char *what)
{
    fprintf(stderr, "bench_app: database %s: %s: %s\n", sh->path ? sh->path : "?", what,
            sh->db ? sqlite3_errmsg(sh->db) : sqlite3_errstr(rc));
    return err_of(rc);
}

/* Seeds an empty table with the whole sheet in one transaction. */
static int seed(ba_sheet *sh)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(sh->db, "SELECT EXISTS (SELECT 1 FROM cells)", -1, &st, NULL);
    if (rc != SQLITE_OK) return fail(sh, rc, "cannot read cells");
    rc = sqlite3_step(st);
    bool empty = rc == SQLITE_ROW && sqlite3_column_int(st, 0) == 0;
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW) return fail(sh, rc, "cannot read cells");
    if (!empty) return 0;

    rc = sqlite3_exec(sh->db, "BEGIN", NULL, NULL, NULL);
    if (rc != SQLITE_OK) return fail(sh, rc, "cannot begin the seed");
    rc = sqlite3_prepare_v2(sh->db, "INSERT INTO cells (row, col, value) VALUES (?1, ?2, ?3)", -1,
                            &st, NULL);
    for (int r = 0; r < BA_SHEET_ROWS && rc == SQLITE_OK; r++) {
        for (int c = 0; c < BA_SHEET_COLS && rc == SQLITE_OK; c++) {
            char v[64];
            size_t n = seed_value(r, c, v, sizeof(v));
            sqlite3_bind_int(st, 1, r);
            sqlite3_bind_int(st, 2, c);
            sqlite3_bind_text(st, 3, v, (int)n, SQLITE_STATIC);
            rc = sqlite3_step(st);
            if (rc == SQLITE_DONE) rc = sqlite3_reset(st);
        }
    }
    int ret = rc == SQLITE_OK ? 0 : fail(sh, rc, "cannot seed cells");
    sqlite3_finalize(st);
    rc = sqlite3_exec(sh->db, ret == 0 ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL);
    if (ret == 0 && rc != SQLITE_OK) ret = fail(sh, rc, "cannot commit the seed");
    return ret;
}

int ba_sheet_open(const char *path, ba_sheet **out)
{
    *out = NULL;
    ba_sheet *sh = hm_calloc(1, sizeof(*sh));
    if (!sh) return -ENOMEM;
    int ret = 0;
    if (path) {
        sh->path = hm_strdup(path);
        if (!sh->path) ret = -ENOMEM;
    } else {
        const char *tmp = getenv("TMPDIR");
        if (!tmp || !*tmp) tmp = "/tmp";
        size_t n = strlen(tmp) + 64;
        sh->tmpdir = hm_alloc(n);
        sh->path = hm_alloc(n);
        if (!sh->tmpdir || !sh->path) {
            ret = -ENOMEM;
        } else {
            snprintf(sh->tmpdir, n, "%s/bench_app.XXXXXX", tmp);
            if (!mkdtemp(sh->tmpdir)) {
                ret = -errno;
                fprintf(stderr, "bench_app: cannot make a directory like %s: %s\n", sh->tmpdir,
                        strerror(errno));
                hm_free(sh->tmpdir);
                sh->tmpdir = NULL;
            } else {
                snprintf(sh->path, n, "%s/spreadsheet.db", sh->tmpdir);
            }
        }
    }
    if (ret == 0) {
        int rc =
            sqlite3_open_v2(sh->path, &sh->db,
                            SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
        if (rc != SQLITE_OK) ret = fail(sh, rc, "cannot open");
    }
    if (ret == 0) {
        sqlite3_busy_timeout(sh->db, 2000); /* another process seeding the same --db file */
        static const char *const setup[] = {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL",
                                            CREATE_SQL};
        for (size_t i = 0; i < HM_ARRAY_LEN(setup) && ret == 0; i++) {
            int rc = sqlite3_exec(sh->db, setup[i], NULL, NULL, NULL);
            if (rc != SQLITE_OK) ret = fail(sh, rc, setup[i]);
        }
    }
    if (ret == 0) ret = seed(sh);
    if (ret == 0) {
        int rc =
            sqlite3_prepare_v3(sh->db, RANGE_SQL, -1, SQLITE_PREPARE_PERSISTENT, &sh->range, NULL);
        if (rc != SQLITE_OK) ret = fail(sh, rc, "cannot prepare the viewport query");
    }
    if (ret < 0) {
        ba_sheet_close(sh);
        return ret;
    }
    *out = sh;
    return 0;
}

void ba_sheet_close(ba_sheet *sh)
{
    if (!sh) return;
    sqlite3_finalize(sh->range);
    sqlite3_close(sh->db); /* the last connection: checkpoints, removes -wal and -shm */
    if (sh->tmpdir) {
        static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
        for (size_t i = 0; i < HM_ARRAY_LEN(suffix); i++) {
            char p[4096];
            if (snprintf(p, sizeof(p), "%s%s", sh->path, suffix[i]) < (int)sizeof(p)) unlink(p);
        }
        rmdir(sh->tmpdir);
        hm_free(sh->tmpdir);
    }
    hm_free(sh->path);
    hm_free(sh);
}

const char *ba_sheet_path(const ba_sheet *sh)
{
    return sh->path;
}

/* ---- the viewport table ------------------------------------------------- */

static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

/* PHP's htmlspecialchars() with its defaults (ENT_QUOTES | ENT_HTML401). */
static int escape_append(ba_buf *b, const unsigned char *s, size_t n)
{
    int rc = ba_buf_reserve(b, 6 * n);
    if (rc) return rc;
    char *d = b->data + b->len;
    for (size_t i = 0; i < n; i++) {
        const char *e;
        size_t el;
        switch (s[i]) {
        case '&':
            e = "&amp;", el = 5;
            break;
        case '"':
            e = "&quot;", el = 6;
            break;
        case '\'':
            e = "&#039;", el = 6;
            break;
        case '<':
            e = "&lt;", el = 4;
            break;
        case '>':
            e = "&gt;", el = 4;
            break;
        default:
            *d++ = (char)s[i];
            continue;
        }
        memcpy(d, e, el);
        d += el;
    }
    b->len = (size_t)(d - b->data);
    b->data[b->len] = '\0';
    return 0;
}

static int num_append(ba_buf *b, int64_t v)
{
    char num[24];
    int k = snprintf(num, sizeof(num), "%" PRId64, v);
    return ba_buf_append(b, num, (size_t)k);
}

int ba_sheet_table(ba_sheet *sh, int64_t vr, int64_t vc, int64_t fr, int64_t fc, bool live,
                   ba_buf *out)
{
    sqlite3_stmt *st = sh->range;
    sqlite3_bind_int64(st, 1, vr);
    sqlite3_bind_int64(st, 2, sat_add(vr, BA_VIEW_ROWS));
    sqlite3_bind_int64(st, 3, vc);
    sqlite3_bind_int64(st, 4, sat_add(vc, BA_VIEW_COLS));
    int rc = ba_buf_reserve(out, live ? 12288 : 8192); /* the usual size, at once */
    if (!rc) rc = ba_buf_lit(out, live ? "<table class=\"sheet\">\n<tr><th></th>" : "<table>");
    for (int c = 0; live && c < BA_VIEW_COLS && !rc; c++) {
        char name[16];
        size_t nl = col_name(sat_add(vc, c), name);
        rc = ba_buf_lit(out, "<th>");
        if (!rc) rc = ba_buf_append(out, name, nl);
        if (!rc) rc = ba_buf_lit(out, "</th>");
    }
    if (!rc && live) rc = ba_buf_lit(out, "</tr>\n");

    /* The rows come in (row, col) order, so the grid is filled in one pass
     * straight from SQLite's buffers; cells without a row stay empty. */
    int src = sqlite3_step(st);
    for (int r = 0; r < BA_VIEW_ROWS && !rc; r++) {
        int64_t ar = sat_add(vr, r);
        rc = ba_buf_lit(out, live ? "<tr><th>" : "<tr>");
        if (!rc && live) rc = num_append(out, sat_add(ar, 1));
        if (!rc && live) rc = ba_buf_lit(out, "</th>");
        for (int c = 0; c < BA_VIEW_COLS && !rc; c++) {
            int64_t ac = sat_add(vc, c);
            const unsigned char *val = NULL;
            size_t vlen = 0;
            while (src == SQLITE_ROW) {
                int64_t rr = sqlite3_column_int64(st, 0), cc = sqlite3_column_int64(st, 1);
                if (rr < ar || (rr == ar && cc < ac)) { /* not on the grid: skip it */
                    src = sqlite3_step(st);
                    continue;
                }
                if (rr == ar && cc == ac) {
                    val = sqlite3_column_text(st, 2);
                    vlen = (size_t)sqlite3_column_bytes(st, 2);
                }
                break;
            }
            rc = ba_buf_lit(out, ar == fr && ac == fc ? TD_FOCUS : "<td>");
            if (!rc && val) rc = escape_append(out, val, vlen);
            if (!rc) rc = ba_buf_lit(out, "</td>");
            if (val) src = sqlite3_step(st);
        }
        if (!rc) rc = ba_buf_lit(out, live ? "</tr>\n" : "</tr>");
    }
    if (!rc) rc = ba_buf_lit(out, "</table>");
    sqlite3_reset(st); /* ends the read transaction */
    if (rc) return rc;
    if (src != SQLITE_ROW && src != SQLITE_DONE) {
        fprintf(stderr, "bench_app: database %s: viewport query: %s\n", sh->path,
                sqlite3_errmsg(sh->db));
        return err_of(src);
    }
    return 0;
}

/* bench_app's spreadsheet database: without db_path a run makes
 * spreadsheet.db in a fresh directory under $TMPDIR (WAL, 26000 seeded
 * cells with known values) and removes that directory when it stops; an
 * explicit db_path is seeded when empty and kept; an existing one is used
 * as it is, not seeded again (a changed cell shows, HTML-escaped, in the
 * live spreadsheet). The spreadsheet pages work on either. */
#include "bench_app_client.h"

#include <dirent.h>
#include <sqlite3.h>
#include <sys/stat.h>

/* The one bench_app.* directory the default database made under dir. */
static void find_tmp_db(const char *dir, char *out, size_t cap)
{
    DIR *d = opendir(dir);
    ASSERT(d);
    int found = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        ASSERT_EQ(strncmp(e->d_name, "bench_app.", 10), 0);
        snprintf(out, cap, "%s/%s/spreadsheet.db", dir, e->d_name);
        found++;
    }
    closedir(d);
    ASSERT_EQ(found, 1);
}

static bool dir_empty(const char *dir)
{
    DIR *d = opendir(dir);
    ASSERT(d);
    struct dirent *e;
    bool empty = true;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) empty = false;
    closedir(d);
    return empty;
}

/* Both spreadsheet pages answer, the live one showing cell A1. */
static void pages_work(int port, const char *a1_html)
{
    static resp r;
    page pg;
    get_route(port, "/bench/spreadsheet", NULL, &pg, &r);
    conn *c = conn_open(port);
    act(c, "increment", &pg, NULL, &r);
    conn_close(c);
    get_route(port, "/examples/spreadsheet", NULL, &pg, &r);
    if (!strstr(r.body, a1_html)) HM_FAIL_("no %s in the live spreadsheet", a1_html);
}

static void wal_in_use(const char *db)
{
    char wal[700];
    snprintf(wal, sizeof(wal), "%s-wal", db);
    struct stat st;
    ASSERT_EQ(stat(wal, &st), 0);
}

int main(int argc, char **argv)
{
    ba_test_begin(argc, argv, false);
    hm_bench_app_options o = ba_test_options(HM_BACKEND_AUTO);

    /* The default place: a directory under $TMPDIR, gone after the run. */
    char tmp[300], db[600];
    snprintf(tmp, sizeof(tmp), "%s/tmp", g_tmp);
    ASSERT_EQ(mkdir(tmp, 0700), 0);
    ASSERT_EQ(setenv("TMPDIR", tmp, 1), 0);
    int port;
    pid_t pid = start_server(&o, &port);
    find_tmp_db(tmp, db, sizeof(db));
    pages_work(port, ">A1 &lt; B1</td>");
    wal_in_use(db);
    check_db(db, "A1 < B1");
    stop_server(pid);
    ASSERT(dir_empty(tmp));
    printf("default database: WAL, 26000 seeded cells, removed at exit: ok\n");

    /* An explicit file: seeded, kept. */
    snprintf(db, sizeof(db), "%s/sheet.db", g_tmp);
    o.db_path = db;
    pid = start_server(&o, &port);
    pages_work(port, ">A1 &lt; B1</td>");
    wal_in_use(db);
    check_db(db, "A1 < B1");
    stop_server(pid);
    struct stat st;
    ASSERT_EQ(stat(db, &st), 0);
    ASSERT(dir_empty(tmp));
    printf("--db file: seeded, kept after the run: ok\n");

    /* The same file again, one cell changed: used as it is. */
    sqlite3 *h;
    ASSERT_EQ(sqlite3_open(db, &h), SQLITE_OK);
    sqlite3_busy_timeout(h, 2000);
    ASSERT_EQ(sqlite3_exec(h, "UPDATE cells SET value = 'changed <x>' WHERE row = 0 AND col = 0",
                           NULL, NULL, NULL),
              SQLITE_OK);
    sqlite3_close(h);
    pid = start_server(&o, &port);
    pages_work(port, ">changed &lt;x&gt;</td>");
    check_db(db, "changed <x>");
    stop_server(pid);
    printf("an existing --db file is not seeded again: ok\n");
    return 0;
}

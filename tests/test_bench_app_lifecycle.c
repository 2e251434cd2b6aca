/* bench_app's start and stop: bad worker or dispatch options are refused
 * (-EINVAL) before anything starts; a port in use fails the run before it
 * listens (EADDRINUSE, and it removes the temporary database it made);
 * SIGTERM with an SSE stream and a keep-alive connection open ends the run
 * cleanly (exit 0, the stream's connection closed). argv[1]: the engine
 * backend. */
#include "bench_app_client.h"

#include <dirent.h>
#include <sys/stat.h>

/* Entries in dir besides . and .. */
static int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    ASSERT(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static void bad_options(void)
{
    hm_bench_app_options o;
    hm_bench_app_defaults(&o);
    ASSERT_EQ(o.workers, 1);
    ASSERT(o.dispatch == NULL);
    o.port = 0;
    o.quiet = true;
    o.workers = 65;
    ASSERT_EQ(hm_bench_app_run(&o, -1), -EINVAL);
    o.workers = 2;
    o.dispatch = "roundrobin";
    ASSERT_EQ(hm_bench_app_run(&o, -1), -EINVAL);
    printf("bad workers / dispatch options: -EINVAL: ok\n");
}

int main(int argc, char **argv)
{
    hm_backend_kind backend = ba_test_begin(argc, argv, true);
    bad_options();

    /* The default databases go to a directory under $TMPDIR. */
    char tmp[300];
    snprintf(tmp, sizeof(tmp), "%s/tmp", g_tmp);
    ASSERT_EQ(mkdir(tmp, 0700), 0);
    ASSERT_EQ(setenv("TMPDIR", tmp, 1), 0);
    hm_bench_app_options o = ba_test_options(backend);
    int port;
    pid_t pid = start_server(&o, &port);
    ASSERT_EQ(dir_entries(tmp), 1);

    hm_bench_app_options taken = o;
    taken.port = port;
    int port2;
    pid_t pid2 = start_child(&taken, &port2);
    ASSERT_EQ(port2, -1);
    ASSERT_EQ(wait_child(pid2, 5000), 10);
    ASSERT_EQ(dir_entries(tmp), 1); /* the failed run removed its own */
    printf("EADDRINUSE: the run fails before listening: ok\n");

    page p;
    get_page(port, NULL, &p);
    sse *s = sse_open(port, p.ctx, p.cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    conn *kc = conn_open(port);
    resp r;
    conn_req(kc, "GET", "/_health", NULL, NULL, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT(r.keep_alive);
    stop_server(pid); /* exit 0 within 5 s */
    sse_read_to_end(s);
    sse_close(s);
    char b[8];
    ASSERT_EQ(read_until(kc->fd, b, sizeof(b), now_ms() + IO_TIMEOUT_MS), 0);
    conn_close(kc);
    printf("SIGTERM with a stream and a keep-alive connection open: exit 0, both closed: ok\n");
    return 0;
}

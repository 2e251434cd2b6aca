/* get's request options and what it reports, against a server in this
 * test that records what arrives: -m, repeated -H and --body (a file and
 * stdin) reach the wire as given; HEAD gets no body back; the summary and
 * the JSON count status codes, and the bytes read and written equal what
 * the server wrote and read, with a transfer rate.
 * argv: HAMMER */
#include "run_util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

static const char *hammer;
static int listen_fd;
static _Atomic long long served, server_wrote, server_read;
static char first_req[4096];
static atomic_bool have_first;
/* Set once first_req is written: what the main thread acquires before
 * reading it (the request's own path through hammer is invisible to TSan). */
static atomic_bool first_written;

#define BODY_LEN 100

/* One connection: requests in, a 200 (every fourth a 503) out. */
static void *conn_thread(void *arg)
{
    int fd = (int)(intptr_t)arg;
    char buf[65536];
    size_t have = 0;
    for (;;) {
        ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
        if (n <= 0) break;
        have += (size_t)n;
        buf[have] = 0;
        for (;;) {
            char *end = strstr(buf, "\r\n\r\n");
            if (!end) break;
            size_t head = (size_t)(end + 4 - buf), body = 0;
            char *cl = strcasestr(buf, "Content-Length:");
            if (cl && cl < end) body = (size_t)atol(cl + 15);
            if (have < head + body) break;
            /* hammer's reachability probe (a bare GET, no Accept) is not
             * part of the run */
            char *accept = strcasestr(buf, "\r\nAccept:");
            bool probe = !accept || accept > end;
            if (!probe && !atomic_exchange(&have_first, true)) {
                size_t k =
                    head + body < sizeof(first_req) - 1 ? head + body : sizeof(first_req) - 1;
                memcpy(first_req, buf, k);
                first_req[k] = 0;
                atomic_store(&first_written, true);
            }
            bool is_head = !strncmp(buf, "HEAD ", 5);
            long long nth = probe ? 0 : atomic_fetch_add(&served, 1);
            char resp[512];
            int len =
                snprintf(resp, sizeof(resp),
                         "HTTP/1.1 %s\r\nContent-Length: %d\r\nContent-Type: text/plain\r\n\r\n",
                         nth % 4 == 3 ? "503 Service Unavailable" : "200 OK", BODY_LEN);
            if (!is_head) {
                memset(resp + len, 'x', BODY_LEN);
                len += BODY_LEN;
            }
            ASSERT_EQ(write(fd, resp, (size_t)len), len);
            if (!probe) {
                atomic_fetch_add(&server_wrote, len);
                atomic_fetch_add(&server_read, head + body);
            }
            memmove(buf, buf + head + body, have - head - body);
            have -= head + body;
            buf[have] = 0;
        }
    }
    close(fd);
    return NULL;
}

static void *accept_thread(void *arg)
{
    (void)arg;
    for (;;) {
        int fd = accept(listen_fd, NULL, NULL);
        if (fd < 0) return NULL;
        pthread_t t;
        pthread_create(&t, NULL, conn_thread, (void *)(intptr_t)fd);
        pthread_detach(t);
    }
}

static void reset_counts(void)
{
    served = server_wrote = server_read = 0;
    first_req[0] = 0;
    first_written = false;
    have_first = false; /* after first_req: the exchange that claims it sees the reset */
}

/* Runs argv with the server's counts reset; returns the exit code. */
/* The server counts and records every request it gets, so the server
 * watch's GET /_health stays out of it. */
static int run(proc *p, char **argv)
{
    reset_counts();
    if (strcmp(argv[0], hammer)) return proc_run(p, argv, 60);
    char *with[64];
    int n = 0;
    with[n++] = argv[0];
    with[n++] = "--no-server-watch";
    for (int i = 1; argv[i] && n < 63; i++)
        with[n++] = argv[i];
    with[n] = NULL;
    return proc_run(p, with, 60);
}

int main(int argc, char **argv)
{
    if (argc < 2) HM_FAIL_("usage: %s HAMMER", argv[0]);
    hammer = argv[1];
    listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(listen_fd, (struct sockaddr *)&a, sizeof(a)), 0);
    ASSERT_EQ(listen(listen_fd, 64), 0);
    socklen_t alen = sizeof(a);
    getsockname(listen_fd, (struct sockaddr *)&a, &alen);
    pthread_t acc;
    pthread_create(&acc, NULL, accept_thread, NULL);
    char url[96], dir[] = "/tmp/hm_get_XXXXXX", body[300], json[300];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/items?x=1", ntohs(a.sin_port));
    ASSERT(mkdtemp(dir));
    snprintf(body, sizeof(body), "%s/body.json", dir);
    snprintf(json, sizeof(json), "%s/run.json", dir);
    FILE *f = fopen(body, "w");
    fputs("{\"hello\": \"body\"}\n", f);
    fclose(f);

    /* -m PUT, two -H, --body FILE. */
    proc p;
    char *put[] = {(char *)hammer, "-t",       "1",           "-c",     "2",
                   "-n",           "200",      "-m",          "PUT",    "-H",
                   "X-Test: one",  "--header", "X-Other:two", "--body", body,
                   "--json",       json,       "--url",       url,      "scenario",
                   "get",          NULL};
    int rc = run(&p, put);
    printf("%s", p.out);
    ASSERT_EQ(rc, 1); /* every fourth answer is a 503 */
    ASSERT(atomic_load(&first_written));
    ASSERT(!strncmp(first_req, "PUT /items?x=1 HTTP/1.1\r\n", 25));
    ASSERT(strstr(first_req, "\r\nX-Test: one\r\n"));
    ASSERT(strstr(first_req, "\r\nX-Other: two\r\n"));
    ASSERT(strstr(first_req, "\r\nContent-Length: 18\r\n"));
    ASSERT(strstr(first_req, "\r\nAccept: */*\r\n"));
    ASSERT(strstr(first_req, "\r\n\r\n{\"hello\": \"body\"}\n"));
    json_t *doc = load_json(json);
    ASSERT_EQ(json_int_at(doc, "actions.sent"), 200);
    ASSERT_EQ(json_int_at(doc, "actions.by_status.200"), 150);
    ASSERT_EQ(json_int_at(doc, "actions.by_status.503"), 50);
    ASSERT_EQ(json_int_at(doc, "bytes.read"), served == 200 ? server_wrote : -2);
    ASSERT_EQ(json_int_at(doc, "bytes.written"), server_read);
    ASSERT(json_number_value(json_object_get(json_object_get(doc, "bytes"), "read_per_s")) > 0);
    json_decref(doc);
    ASSERT(strstr(p.out, "HTTP OK           150 (75.00%)"));
    ASSERT(strstr(p.out, "HTTP 503 ×50"));
    ASSERT(strstr(p.out, "\nTransfer          "));
    ASSERT(strstr(p.out, " read ("));
    printf("-m PUT -H -H --body FILE: on the wire as given; 200 ×150 and 503 ×50 counted; "
           "%lld bytes read, %lld written, as the server saw\n",
           (long long)server_wrote, (long long)server_read);

    /* --body - reads stdin; the user's Accept replaces the default. */
    char cmd[1200];
    snprintf(cmd, sizeof(cmd),
             "printf 'from stdin' | '%s' --no-server-watch -t 1 -c 1 -n 8 -m POST -H 'Accept: "
             "text/plain' "
             "--body - --url '%s' scenario get",
             hammer, url);
    char *sh[] = {"/bin/sh", "-c", cmd, NULL};
    rc = run(&p, sh);
    ASSERT(rc == 0 || rc == 1);
    ASSERT(atomic_load(&first_written));
    ASSERT(!strncmp(first_req, "POST /items?x=1 HTTP/1.1\r\n", 26));
    ASSERT(strstr(first_req, "\r\nAccept: text/plain\r\n"));
    ASSERT(!strstr(first_req, "*/*"));
    ASSERT(strstr(first_req, "\r\nContent-Length: 10\r\n\r\nfrom stdin"));
    printf("--body -: stdin sent; -H Accept replaces the default\n");

    /* HEAD: the answer carries Content-Length but no body; no hang. */
    char *head[] = {(char *)hammer, "-t",        "1",  "-c",       "1",    "-n",
                    "12",           "--timeout", "2s", "-m",       "HEAD", "--json",
                    json,           "--url",     url,  "scenario", "get",  NULL};
    rc = run(&p, head);
    ASSERT_EQ(rc, 1);
    doc = load_json(json);
    ASSERT_EQ(json_int_at(doc, "actions.sent"), 12);
    ASSERT_EQ(json_int_at(doc, "errors.timeout"), 0);
    ASSERT_EQ(json_int_at(doc, "actions.by_status.200"), 9);
    json_decref(doc);
    printf("-m HEAD: 12 answers without bodies, no timeouts\n");
    unlink(body);
    unlink(json);
    rmdir(dir);
    return 0;
}

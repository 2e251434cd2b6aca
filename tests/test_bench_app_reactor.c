/* bench_app --workers 4: the reactor in front of the workers (dispatch
 * session; requests without a cookie go to their connection's id % 4).
 * Its HTTP framing (malformed 400, 431, 413, pipelining, 100-continue with
 * the worker never sending a second one), every answer naming the worker
 * fd dispatch picks, its own answers included; and SIGTERM with a stream
 * open through it stopping every thread and ending the stream. */
#include "bench_app_client.h"

enum { WORKERS = 4 };

int main(int argc, char **argv)
{
    ba_test_begin(argc, argv, false);
    hm_bench_app_options o = ba_test_options(HM_BACKEND_AUTO);
    o.workers = WORKERS;
    o.dispatch = "session";
    int port;
    pid_t pid = start_server(&o, &port);
    check_http_framing(port, WORKERS);
    printf("reactor: framing, each answer from connection id %% 4: ok\n");

    char sid[40], cookie[128];
    session_for_worker(3, WORKERS, 0x5e55, sid, sizeof(sid));
    snprintf(cookie, sizeof(cookie), "Cookie: via_session_id=%s\r\n", sid);
    page pg;
    get_page(port, cookie, &pg);
    sse *s = sse_open(port, pg.ctx, pg.cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    ASSERT_EQ(via_worker(s->head), 3);
    stop_server(pid);
    sse_read_to_end(s);
    sse_close(s);
    printf("reactor: SIGTERM with a stream open: exit 0, the stream ends: ok\n");
    return 0;
}

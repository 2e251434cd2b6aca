/* bench_app's TLS front door against clients that do not speak TLS or not
 * acceptably: plain HTTP, garbage, cut hellos, bytes of no protocol, an
 * h2-only ALPN offer are closed (perhaps after an alert), never answered
 * in HTTP, and the server serves on; no ALPN offer at all is HTTP/1.1.
 * SIGTERM with a stream and a handshake that never starts still exits 0.
 * argv[1]: the engine backend. */
#include "bench_app_client.h"

int main(int argc, char **argv)
{
    hm_bench_app_options o = ba_test_options(ba_test_begin(argc, argv, true));
    make_pki();
    o.tls_cert = g_cert;
    o.tls_key = g_key;
    int port;
    pid_t pid = start_server(&o, &port);
    g_tls = client_ctx(0, NULL, 0, false);
    check_tls_bad_clients(port);
    printf("TLS: plain HTTP, garbage, cut hellos, h2-only ALPN: closed, the server serves on; "
           "no ALPN: HTTP/1.1: ok\n");

    page pg;
    get_page(port, NULL, &pg);
    sse *s = sse_open(port, pg.ctx, pg.cookie_hdr);
    ASSERT_EQ(sse_wait(s, 2, IO_TIMEOUT_MS), 2);
    int mute = tcp_connect_raw(port); /* a handshake that never starts */
    usleep(20 * 1000);
    stop_server(pid);
    close(mute);
    sse_read_to_end(s);
    sse_close(s);
    SSL_CTX_free(g_tls);
    g_tls = NULL;
    printf("TLS: SIGTERM with a stream and a silent handshake open: exit 0: ok\n");
    return 0;
}

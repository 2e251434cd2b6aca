/* bench_app's TLS session resumption: a first connection's session resumes
 * on the next ones with TLS 1.3 tickets, TLS 1.2 tickets and TLS 1.2
 * session ids (the server's cache). argv[1]: the engine backend. */
#include "bench_app_client.h"

int main(int argc, char **argv)
{
    hm_bench_app_options o = ba_test_options(ba_test_begin(argc, argv, true));
    make_pki();
    o.tls_cert = g_cert;
    o.tls_key = g_key;
    int port;
    pid_t pid = start_server(&o, &port);
    check_tls_resume(port, 0, false);
    check_tls_resume(port, TLS1_2_VERSION, false);
    check_tls_resume(port, TLS1_2_VERSION, true);
    printf("TLS resumption (1.3 tickets, 1.2 tickets, 1.2 session ids): ok\n");
    stop_server(pid);
    return 0;
}

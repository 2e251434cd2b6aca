/* The bench_app executable with TLS and --processes 2: each process serves
 * HTTPS on its own port (X-Via-Worker 0 and 1), and one SIGTERM stops
 * both. argv[1]: the bench_app executable. */
#include "bench_app_client.h"

int main(int argc, char **argv)
{
    ba_test_begin(argc, argv, false);
    if (argc < 2) HM_FAIL_("usage: %s BENCH_APP", argv[0]);
    const char *exe = argv[1];
    make_pki();

    int base = free_port_pair();
    char port_s[16];
    snprintf(port_s, sizeof(port_s), "%d", base);
    char *args[] = {(char *)exe,  "--port", port_s,      "--processes", "2", "--quiet",
                    "--tls-cert", g_cert,   "--tls-key", g_key,         NULL};
    pid_t pid = spawn(args);
    wait_ports(base, 2);
    g_tls = client_ctx(0, NULL, 0, false);
    for (int i = 0; i < 2; i++) {
        int hw;
        json_decref(health_with(base + i, NULL, &hw));
        ASSERT_EQ(hw, i);
    }
    SSL_CTX_free(g_tls);
    g_tls = NULL;
    stop_server(pid);
    printf("TLS --processes 2: both serve TLS: ok\n");
    return 0;
}

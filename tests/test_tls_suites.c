/* hammer offers the TLS 1.3 suites in a browser's order, AES-128-GCM
 * first: a server that follows the client's order (OpenSSL's default)
 * then runs the cipher a browser would make it run. The peer (tests/
 * tls_peer.h) answers 200 on a connection that agreed on
 * TLS_AES_128_GCM_SHA256 and 503 naming the suite otherwise, so a run
 * with every answer OK is one where every connection chose it.
 * argv: HAMMER GEN_CERT_SCRIPT */
#include "tls_peer.h"

#include <stdio.h>
#include <string.h>

static bool answer_by_suite(SSL *ssl, int conn_no, void *arg)
{
    (void)conn_no;
    (void)arg;
    const char *suite = SSL_CIPHER_get_name(SSL_get_current_cipher(ssl));
    char out[256];
    int n = strcmp(suite, "TLS_AES_128_GCM_SHA256") == 0
                ? snprintf(out, sizeof(out), "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                : snprintf(out, sizeof(out),
                           "HTTP/1.1 503 Wrong Suite\r\nContent-Length: %zu\r\n\r\n%s",
                           strlen(suite), suite);
    return SSL_write(ssl, out, n) == n;
}

int main(int argc, char **argv)
{
    if (argc < 3) HM_FAIL_("usage: %s HAMMER GEN_CERT", argv[0]);
    test_certs certs;
    test_certs_make(&certs, argv[2], "suites");
    char json_path[300];
    snprintf(json_path, sizeof(json_path), "%s/run.json", certs.dir);
    tls_peer srv = {.cert = certs.cert, .key = certs.key, .answer = answer_by_suite};
    int port;
    pid_t server = tls_peer_start(&srv, &port);
    proc p;
    int rc = tls_peer_hammer(&p, argv[1], "epoll", port, 6, "10s", certs.ca, json_path);
    tls_peer_stop(server);
    if (rc != 0) HM_FAIL_("exit %d, want 0 (every answer 200):\n%s", rc, p.out);
    json_t *doc = load_json(json_path);
    long long sent = json_int_at(doc, "actions.sent"), ok = json_int_at(doc, "actions.ok");
    printf("sent %lld, ok %lld\n", sent, ok);
    ASSERT_EQ(sent, 6);
    ASSERT_EQ(ok, 6);
    json_decref(doc);
    test_certs_remove(&certs);
    return 0;
}

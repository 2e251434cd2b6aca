/* hammer offers its suites in a browser's order, AES-128-GCM first, over
 * TLS 1.3 and over TLS 1.2 (as nginx 1.22 speaks by default): a server
 * that follows the client's order (OpenSSL's and nginx's default) then
 * runs the cipher a browser would make it run. The peer (tests/
 * tls_peer.h) answers 200 on a connection that agreed on the expected
 * suite and 503 naming the suite otherwise, so a run with every answer
 * OK is one where every connection chose it. The test certificate's key
 * is ECDSA, so TLS 1.2 agrees on ECDHE-ECDSA-AES128-GCM-SHA256.
 * argv: HAMMER GEN_CERT_SCRIPT */
#include "tls_peer.h"

#include <stdio.h>
#include <string.h>

static bool answer_by_suite(SSL *ssl, int conn_no, void *arg)
{
    (void)conn_no;
    const char *suite = SSL_CIPHER_get_name(SSL_get_current_cipher(ssl));
    char out[256];
    int n = strcmp(suite, (const char *)arg) == 0
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
    static const struct {
        int max_version;
        const char *suite;
    } cases[] = {{0, "TLS_AES_128_GCM_SHA256"}, {TLS1_2_VERSION, "ECDHE-ECDSA-AES128-GCM-SHA256"}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tls_peer srv = {.cert = certs.cert,
                        .key = certs.key,
                        .max_version = cases[i].max_version,
                        .answer = answer_by_suite,
                        .arg = (void *)cases[i].suite};
        int port;
        pid_t server = tls_peer_start(&srv, &port);
        proc p;
        int rc = tls_peer_hammer(&p, argv[1], "epoll", port, 6, "10s", certs.ca, json_path);
        tls_peer_stop(server);
        if (rc != 0)
            HM_FAIL_("%s: exit %d, want 0 (every answer 200):\n%s", cases[i].suite, rc, p.out);
        json_t *doc = load_json(json_path);
        long long sent = json_int_at(doc, "actions.sent"), ok = json_int_at(doc, "actions.ok");
        printf("%s: sent %lld, ok %lld\n", cases[i].suite, sent, ok);
        ASSERT_EQ(sent, 6);
        ASSERT_EQ(ok, 6);
        json_decref(doc);
    }
    test_certs_remove(&certs);
    return 0;
}

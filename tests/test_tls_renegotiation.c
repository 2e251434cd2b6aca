/* A TLS 1.2 server that asks to renegotiate (HelloRequest) after each
 * response: hammer refuses, as Chromium does, and says so as a counted TLS
 * failure with its reason; it never sends the request again on a new
 * connection behind the user's back (connections.retries stays 0).
 * With get (a GET, which hammer would otherwise repeat on a fresh
 * connection after a reused one closes without answering); ctest runs it
 * on both engines.
 * argv: HAMMER GEN_CERT_SCRIPT ENGINE (io_uring or epoll, skipped when
 * not available here) */
#include "tls_peer.h"

#include <stdlib.h>
#include <string.h>

/* One connection at a time; after each answer a HelloRequest. Writes the
 * number of requests it answered to the pipe *arg after each one. */
static bool answer_then_renegotiate(SSL *ssl, int conn_no, void *arg)
{
    (void)conn_no;
    static int answered;
    static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    if (SSL_write(ssl, ok, sizeof(ok) - 1) <= 0) return false;
    answered++;
    if (write(*(const int *)arg, &answered, sizeof(answered)) < 0) _exit(4);
    /* Sends the HelloRequest; the client's answer comes with its next
     * bytes. */
    return SSL_renegotiate(ssl) == 1 && SSL_do_handshake(ssl) == 1;
}

int main(int argc, char **argv)
{
    if (argc < 4) HM_FAIL_("usage: %s HAMMER GEN_CERT ENGINE", argv[0]);
    const char *hammer = argv[1], *engine = argv[3];
    skip_unless_engine(hammer, engine);
    test_certs certs;
    test_certs_make(&certs, argv[2], "reneg");
    char json_path[300];
    snprintf(json_path, sizeof(json_path), "%s/run.json", certs.dir);

    int counts[2];
    ASSERT_EQ(pipe(counts), 0);
    fcntl(counts[0], F_SETFL, O_NONBLOCK);
    tls_peer srv = {.cert = certs.cert,
                    .key = certs.key,
                    .max_version = TLS1_2_VERSION, /* TLS 1.3 has no renegotiation */
                    .answer = answer_then_renegotiate,
                    .arg = &counts[1]};
    int port;
    pid_t server = tls_peer_start(&srv, &port);
    close(counts[1]);
    proc p;
    int rc = tls_peer_hammer(&p, hammer, engine, port, 6, "10s", certs.ca, json_path);
    int answered = 0, n;
    while (read(counts[0], &n, sizeof(n)) == (ssize_t)sizeof(n))
        answered = n;
    tls_peer_stop(server);
    close(counts[0]);
    if (rc != 1) HM_FAIL_("%s: exit %d, want 1 (TLS failures):\n%s", engine, rc, p.out);
    json_t *doc = load_json(json_path);
    long long sent = json_int_at(doc, "actions.sent"), ok = json_int_at(doc, "actions.ok");
    long long tls = json_int_at(doc, "errors.tls");
    const char *reason = json_string_value(
        json_object_get(json_object_get(json_object_get(doc, "error_reasons"), "tls"), "reason"));
    printf("%s: sent %lld, ok %lld, tls failures %lld (\"%s\"), server answered %d\n", engine, sent,
           ok, tls, reason ? reason : "", answered);
    /* Nothing went again behind the user's back: no request was repeated
     * on a new connection, and each that failed is counted as a TLS
     * failure with the reason, on a connection it retired. */
    ASSERT_EQ(json_int_at(doc, "connections.retries"), 0);
    ASSERT(tls >= 1);
    ASSERT_EQ(sent, ok + tls);
    ASSERT(answered >= ok);
    ASSERT(reason && strstr(reason, "renegotiat"));
    json_decref(doc);
    test_certs_remove(&certs);
    return 0;
}

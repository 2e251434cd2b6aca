/* A TLS 1.2 server that asks to renegotiate (HelloRequest) after each
 * response: hammer refuses, as Chromium does, and says so as a counted TLS
 * failure with its reason; it never sends the request again on a new
 * connection behind the user's back (connections.retries stays 0).
 * On both engines, with get (a GET, which hammer would otherwise repeat
 * on a fresh connection after a reused one closes without answering).
 * argv: HAMMER GEN_CERT_SCRIPT */
#include "engine/engine.h"
#include "run_util.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdlib.h>
#include <string.h>

static test_certs certs;
static char *certdir = certs.dir, *ca = certs.ca, *cert = certs.cert, *key = certs.key;

/* The server, in a child: one connection at a time; after each answer a
 * HelloRequest. Writes the number of requests it answered to count_fd
 * after each one. */
static void serve(int listen_fd, int count_fd)
{
    signal(SIGPIPE, SIG_IGN); /* a client gone mid-write ends that connection only */
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx || SSL_CTX_use_certificate_chain_file(ctx, cert) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1)
        _exit(3);
    SSL_CTX_set_max_proto_version(ctx, TLS1_2_VERSION); /* TLS 1.3 has no renegotiation */
    int answered = 0;
    for (;;) {
        int fd = accept(listen_fd, NULL, NULL);
        if (fd < 0) _exit(0);
        SSL *ssl = SSL_new(ctx);
        SSL_set_fd(ssl, fd);
        if (SSL_accept(ssl) == 1) {
            char buf[4096];
            size_t have = 0;
            for (;;) {
                int n = SSL_read(ssl, buf + have, (int)(sizeof(buf) - 1 - have));
                if (n <= 0) break;
                have += (size_t)n;
                buf[have] = 0;
                if (!strstr(buf, "\r\n\r\n")) continue;
                have = 0;
                static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
                if (SSL_write(ssl, ok, sizeof(ok) - 1) <= 0) break;
                answered++;
                if (write(count_fd, &answered, sizeof(answered)) < 0) _exit(4);
                /* Sends the HelloRequest; the client's answer comes with
                 * its next bytes. */
                if (SSL_renegotiate(ssl) != 1 || SSL_do_handshake(ssl) != 1) break;
            }
        }
        SSL_free(ssl);
        close(fd);
        ERR_clear_error();
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) HM_FAIL_("usage: %s HAMMER GEN_CERT", argv[0]);
    const char *hammer = argv[1];
    test_certs_make(&certs, argv[2], "reneg");
    char json_path[300];
    snprintf(json_path, sizeof(json_path), "%s/run.json", certdir);

    const char *engines[] = {"io_uring", "epoll"};
    for (int e = 0; e < 2; e++) {
        const char *why = NULL;
        if (e == 0 && hm_io_uring_probe(&why) < 0) {
            printf("io_uring run skipped: %s\n", why);
            continue;
        }
        int port;
        int lfd = listen_loopback(&port);
        int counts[2];
        ASSERT_EQ(pipe(counts), 0);
        pid_t server = fork();
        ASSERT(server >= 0);
        if (server == 0) {
            close(counts[0]);
            serve(lfd, counts[1]);
            _exit(0);
        }
        close(lfd);
        close(counts[1]);
        fcntl(counts[0], F_SETFL, O_NONBLOCK);

        char url[64];
        snprintf(url, sizeof(url), "https://127.0.0.1:%d/", port);
        unlink(json_path);
        char *run_argv[] = {(char *)hammer,
                            "-q",
                            "--engine",
                            (char *)engines[e],
                            "-t",
                            "1",
                            "-c",
                            "1",
                            "-n",
                            "6",
                            "--timeout",
                            "10s",
                            "--cacert",
                            ca,
                            "--json",
                            json_path,
                            "--url",
                            url,
                            "scenario",
                            "get",
                            NULL};
        proc p;
        int rc = proc_run(&p, run_argv, 120);
        int answered = 0, n;
        while (read(counts[0], &n, sizeof(n)) == (ssize_t)sizeof(n))
            answered = n;
        kill(server, SIGTERM);
        waitpid(server, NULL, 0);
        close(counts[0]);
        if (rc != 1) HM_FAIL_("%s: exit %d, want 1 (TLS failures):\n%s", engines[e], rc, p.out);
        json_t *doc = load_json(json_path);
        long long sent = json_int_at(doc, "actions.sent"), ok = json_int_at(doc, "actions.ok");
        long long tls = json_int_at(doc, "errors.tls");
        const char *reason = json_string_value(json_object_get(
            json_object_get(json_object_get(doc, "error_reasons"), "tls"), "reason"));
        printf("%s: sent %lld, ok %lld, tls failures %lld (\"%s\"), server answered %d\n",
               engines[e], sent, ok, tls, reason ? reason : "", answered);
        /* Nothing went again behind the user's back: no request was
         * repeated on a new connection, and each that failed is counted
         * as a TLS failure with the reason, on a connection it retired. */
        ASSERT_EQ(json_int_at(doc, "connections.retries"), 0);
        ASSERT(tls >= 1);
        ASSERT_EQ(sent, ok + tls);
        ASSERT(answered >= ok);
        ASSERT(reason && strstr(reason, "renegotiat"));
        json_decref(doc);
    }
    return 0;
}

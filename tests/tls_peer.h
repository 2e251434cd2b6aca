/* A scripted TLS server on 127.0.0.1 for tests that put hammer against a
 * hostile TLS peer, and the one hammer run such a test makes against it.
 *
 * tls_peer_start forks the server; its accept loop hands each connection
 * to the peer's raw hook (a peer that never completes a handshake) or
 * runs the TLS handshake and calls answer after each request head. The
 * server child owns its SSL_CTX and everything it opens; the caller owns
 * the tls_peer it passes (read in the child only) and stops the server
 * with tls_peer_stop. */
#ifndef HM_TLS_PEER_H
#define HM_TLS_PEER_H

#include "run_util.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <string.h>

typedef struct tls_peer {
    const char *cert, *key; /* the PEM chain and key the server presents */
    int max_version;        /* 0, or the highest TLS version it speaks (TLS1_2_VERSION) */
    /* Each connection in its own child: a connection hammer keeps open
     * (its probe's) must not hold the next one's handshake back. */
    bool fork_each;
    /* Optional: takes connection conn_no (0 is the first) before any TLS;
     * true when it did (the connection is then closed). */
    bool (*raw)(int fd, int conn_no, void *arg);
    /* After each request head on connection conn_no: writes the answer;
     * false ends the connection. */
    bool (*answer)(SSL *ssl, int conn_no, void *arg);
    void *arg;
} tls_peer;

/* Reads one request head; false when the client went first. */
static inline bool tls_peer_read_head(SSL *ssl)
{
    char buf[4096];
    size_t have = 0;
    while (have < sizeof(buf) - 1) {
        int n = SSL_read(ssl, buf + have, (int)(sizeof(buf) - 1 - have));
        if (n <= 0) return false;
        have += (size_t)n;
        buf[have] = 0;
        if (strstr(buf, "\r\n\r\n")) return true;
    }
    return false;
}

static inline void tls_peer_conn(const tls_peer *p, SSL_CTX *ctx, int fd, int conn_no)
{
    if (!p->raw || !p->raw(fd, conn_no, p->arg)) {
        SSL *ssl = SSL_new(ctx);
        SSL_set_fd(ssl, fd);
        if (SSL_accept(ssl) == 1)
            while (tls_peer_read_head(ssl) && p->answer(ssl, conn_no, p->arg)) {
            }
        SSL_free(ssl);
        ERR_clear_error();
    }
    close(fd);
}

/* The server child's loop; ends (_exit 0) when accept fails. */
static inline void tls_peer_serve(const tls_peer *p, int listen_fd)
{
    signal(SIGPIPE, SIG_IGN); /* a client gone mid-write ends that connection only */
    if (p->fork_each) signal(SIGCHLD, SIG_IGN); /* connection children reap themselves */
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx || SSL_CTX_use_certificate_chain_file(ctx, p->cert) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, p->key, SSL_FILETYPE_PEM) != 1)
        _exit(3);
    if (p->max_version) SSL_CTX_set_max_proto_version(ctx, p->max_version);
    for (int conn_no = 0;; conn_no++) {
        int fd = accept(listen_fd, NULL, NULL);
        if (fd < 0) _exit(0);
        if (!p->fork_each) {
            tls_peer_conn(p, ctx, fd, conn_no);
            continue;
        }
        pid_t child = fork();
        if (child == 0) {
            close(listen_fd);
            tls_peer_conn(p, ctx, fd, conn_no);
            _exit(0);
        }
        close(fd);
    }
}

/* Forks the server on a loopback port (into *port); returns its pid. */
static inline pid_t tls_peer_start(const tls_peer *p, int *port)
{
    int lfd = listen_loopback(port);
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) tls_peer_serve(p, lfd);
    close(lfd);
    return pid;
}

static inline void tls_peer_stop(pid_t pid)
{
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
}

/* hammer's get against https://127.0.0.1:port/ on engine: one connection,
 * n requests, --timeout timeout, trusting the CA ca; the JSON report at
 * json_path (removed first). Returns hammer's exit code, its output in p. */
static inline int tls_peer_hammer(proc *p, const char *hammer, const char *engine, int port, int n,
                                  const char *timeout, const char *ca, const char *json_path)
{
    char url[64], ns[16];
    snprintf(url, sizeof(url), "https://127.0.0.1:%d/", port);
    snprintf(ns, sizeof(ns), "%d", n);
    char *argv[] = {(char *)hammer,
                    "--no-server-watch",
                    "--engine",
                    (char *)engine,
                    "-t",
                    "1",
                    "-c",
                    "1",
                    "-n",
                    ns,
                    "--timeout",
                    (char *)timeout,
                    "--cacert",
                    (char *)ca,
                    "--json",
                    (char *)json_path,
                    "--url",
                    url,
                    "scenario",
                    "get",
                    NULL};
    unlink(json_path);
    return proc_run(p, argv, 120);
}

#endif

/* Hostile TLS peers on 127.0.0.1, each a small scripted server in a child,
 * against hammer's `get` (ctest runs each on both engines, as
 * hostile_tls_PEER_ENGINE): what the user is told (exit
 * code, the fatal reason or errors.* with error_reasons.*) and that no
 * work is done twice (connections.retries 0) or dropped silently (sent =
 * ok + failed). The peers (docs/reliability.md, "Hostile TLS peers"):
 *   stall       accepts, reads the ClientHello, never answers
 *   stall_late  the probe is answered; then every handshake stalls so
 *               (each connection one that never finished its handshake)
 *   garbage     answers the ClientHello with bytes that are no TLS record
 *   cut         the probe is answered; then each response is cut short by
 *               a close_notify
 *   drip        each response one byte per TLS record, well within --timeout
 *   drip_slow   the same, slower than --timeout allows for one response
 *   extra_record  the probe is answered; then each answer comes with a
 *               second, unasked one in a record of its own, in the same
 *               TCP segment (OpenSSL reads both at once: the second
 *               waits unopened in its buffer)
 *   expired     a certificate that expired yesterday
 *   wrong_host  a certificate for another host name
 * argv: HAMMER GEN_CERT_SCRIPT ENGINE PEER (ENGINE io_uring or epoll,
 * skipped when not available here). */
#include "tls_peer.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>

static test_certs certs;
static char *certdir = certs.dir, *ca = certs.ca, *cert = certs.cert, *key = certs.key;
static char expired[300], wrong[300], xkey[300];

static void sh(const char *cmd)
{
    char *argv[] = {"/bin/sh", "-c", (char *)cmd, NULL};
    proc p;
    if (proc_run(&p, argv, 60) != 0) HM_SKIP("cannot make test certificates: %s: %s", cmd, p.out);
}

/* The CA and a good certificate; with bad, also the expired and the
 * wrong-host ones (for the same key, x.key). */
static void gen_certs(const char *script, bool bad)
{
    test_certs_make(&certs, script, "hostile-tls");
    if (!bad) return;
    char cmd[2048];
    snprintf(xkey, sizeof(xkey), "%s/x.key", certdir);
    snprintf(expired, sizeof(expired), "%s/expired.pem", certdir);
    snprintf(wrong, sizeof(wrong), "%s/wrong.pem", certdir);
    /* OpenSSL 3.0's x509 -req takes a negative -days: notAfter lies a day
     * before notBefore (now), so the certificate has expired. */
    snprintf(cmd, sizeof(cmd),
             "cd '%s' && openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
             "-subj /CN=localhost -keyout x.key -out x.csr 2>/dev/null && "
             "printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > ok.cnf && "
             "printf 'subjectAltName=DNS:other.invalid\\n' > other.cnf && "
             "openssl x509 -req -in x.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days -1 "
             "-extfile ok.cnf -out expired.pem 2>/dev/null && "
             "openssl x509 -req -in x.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 "
             "-extfile other.cnf -out wrong.pem 2>/dev/null",
             certdir);
    sh(cmd);
}

typedef enum peer {
    STALL,
    STALL_LATE,
    GARBAGE,
    CUT,
    DRIP,
    DRIP_SLOW,
    EXTRA_RECORD,
    EXPIRED,
    WRONG_HOST,
    PEER__COUNT
} peer;
static const char *peer_name[] = {"stall",     "stall_late",   "garbage", "cut",       "drip",
                                  "drip_slow", "extra_record", "expired", "wrong_host"};

static const char ok_resp[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

/* stall and garbage never get to TLS: the ClientHello is read, then
 * nothing or bytes that are no TLS record, and the connection held open
 * (the client must give up by itself). */
static bool no_handshake(int fd, int conn_no, void *arg)
{
    peer how = *(const peer *)arg;
    if (how == STALL_LATE && conn_no == 0) return false; /* the probe */
    if (how != STALL && how != STALL_LATE && how != GARBAGE) return false;
    char hello[4096];
    if (read(fd, hello, sizeof(hello)) > 0 && how == GARBAGE) {
        static const char junk[] = "HTTP/1.1 400 Bad Request\r\n\r\nnot TLS at all";
        if (write(fd, junk, sizeof(junk) - 1) < 0) return true;
    }
    char b;
    while (read(fd, &b, 1) > 0) {
    }
    return true;
}

/* The first connection (hammer's probe) is served well by every peer that
 * gets past the handshake; the peer's misbehaviour meets the run's. */
static bool answer(SSL *ssl, int conn_no, void *arg)
{
    peer how = *(const peer *)arg;
    if (how == CUT && conn_no > 0) {
        /* Half a response, then close_notify: a response cut short. */
        static const char half[] = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc";
        SSL_write(ssl, half, sizeof(half) - 1);
        SSL_shutdown(ssl);
        return false;
    }
    if ((how == DRIP || how == DRIP_SLOW) && conn_no > 0) {
        /* One byte per TLS record. */
        for (size_t i = 0; i < sizeof(ok_resp) - 1; i++) {
            if (SSL_write(ssl, ok_resp + i, 1) <= 0) return false;
            usleep(how == DRIP ? 2000 : 100000);
        }
        return true;
    }
    if (how == EXTRA_RECORD && conn_no > 0) {
        /* Corked: both records leave in one segment when uncorked. */
        int fd = SSL_get_fd(ssl), on = 1, off = 0;
        static const char extra[] = "HTTP/1.1 500 Unasked\r\nContent-Length: 0\r\n\r\n";
        setsockopt(fd, IPPROTO_TCP, TCP_CORK, &on, sizeof(on));
        bool wrote = SSL_write(ssl, ok_resp, sizeof(ok_resp) - 1) > 0 &&
                     SSL_write(ssl, extra, sizeof(extra) - 1) > 0;
        setsockopt(fd, IPPROTO_TCP, TCP_CORK, &off, sizeof(off));
        return wrote;
    }
    return SSL_write(ssl, ok_resp, sizeof(ok_resp) - 1) > 0;
}

static const char *str_at(json_t *doc, const char *a, const char *b, const char *c)
{
    json_t *j = json_object_get(doc, a);
    if (b) j = json_object_get(j, b);
    if (c) j = json_object_get(j, c);
    return json_is_string(j) ? json_string_value(j) : "";
}

int main(int argc, char **argv)
{
    if (argc < 5) HM_FAIL_("usage: %s HAMMER GEN_CERT ENGINE PEER", argv[0]);
    const char *hammer = argv[1], *engine = argv[3];
    int named = 0;
    while (named < PEER__COUNT && strcmp(peer_name[named], argv[4]) != 0)
        named++;
    if (named == PEER__COUNT) HM_FAIL_("unknown peer %s", argv[4]);
    peer how = (peer)named;
    skip_unless_engine(hammer, engine);
    gen_certs(argv[2], how == EXPIRED || how == WRONG_HOST);
    char json_path[300];
    snprintf(json_path, sizeof(json_path), "%s/run.json", certdir);

    tls_peer srv = {.cert = how == EXPIRED      ? expired
                            : how == WRONG_HOST ? wrong
                                                : cert,
                    .key = how == EXPIRED || how == WRONG_HOST ? xkey : key,
                    .fork_each = true,
                    .raw = no_handshake,
                    .answer = answer,
                    .arg = &how};
    int port;
    pid_t server = tls_peer_start(&srv, &port);
    /* drip_slow: 39 bytes 100 ms apart take ~4 s, past --timeout 1s. */
    proc p;
    int rc =
        tls_peer_hammer(&p, hammer, engine, port, 4, how == DRIP_SLOW ? "1s" : "2s", ca, json_path);
    tls_peer_stop(server);
    json_t *doc = load_json(json_path);
    const char *fatal = str_at(doc, "fatal", NULL, NULL);
    long long sent = json_int_at(doc, "actions.sent"), ok = json_int_at(doc, "actions.ok");
    long long failed = json_int_at(doc, "actions.failed");
    printf("%s %s: exit %d, sent %lld ok %lld failed %lld, fatal \"%s\"\n", engine, peer_name[how],
           rc, sent, ok, failed, fatal);
    ASSERT_EQ(json_int_at(doc, "connections.retries"), 0);
    ASSERT_EQ(sent, ok + failed);
    switch (how) {
    case STALL:
        /* The probe's handshake waits out --timeout and says so. */
        if (rc != 2) HM_FAIL_("stall: exit %d, want 2:\n%s", rc, p.out);
        ASSERT(strstr(fatal, "unreachable") && strstr(fatal, "TLS handshake"));
        ASSERT(strstr(fatal, "within 2 s")); /* the run's --timeout */
        break;
    case STALL_LATE: {
        /* Every connection after the probe connected and timed out in its
         * handshake: counted as such, so that the TLS line adds up to the
         * connections established. */
        if (rc != 1) HM_FAIL_("stall_late: exit %d, want 1:\n%s", rc, p.out);
        long long est = json_int_at(doc, "connections.established");
        long long cut = json_int_at(doc, "tls.unfinished_handshakes");
        printf("  established %lld, unfinished handshakes %lld\n", est, cut);
        ASSERT(est >= 1);
        ASSERT_EQ(cut, est);
        ASSERT_EQ(json_int_at(doc, "tls.full_handshakes"), 0);
        ASSERT_EQ(json_int_at(doc, "errors.timeout"), sent);
        if (!strstr(p.out, "cut or timed out before")) HM_FAIL_("stall_late:\n%s", p.out);
        break;
    }
    case GARBAGE:
        if (rc != 2) HM_FAIL_("garbage: exit %d, want 2:\n%s", rc, p.out);
        ASSERT(strstr(fatal, "unreachable") && strstr(fatal, "TLS"));
        break;
    case CUT: {
        /* Every request after the probe is cut short: a failure with its
         * reason, never an OK. */
        if (rc != 1) HM_FAIL_("cut: exit %d, want 1:\n%s", rc, p.out);
        long long closed = json_int_at(doc, "errors.closed");
        long long tls = json_int_at(doc, "errors.tls");
        ASSERT_EQ(ok, 0);
        ASSERT_EQ(closed + tls, sent);
        const char *reason = str_at(doc, "error_reasons", closed ? "closed" : "tls", "reason");
        printf("  reason \"%s\"\n", reason);
        ASSERT(reason[0] && strstr(p.out, reason));
        break;
    }
    case DRIP:
        if (rc != 0) HM_FAIL_("drip: exit %d, want 0:\n%s", rc, p.out);
        ASSERT_EQ(ok, 4);
        break;
    case DRIP_SLOW: {
        if (rc != 1) HM_FAIL_("drip_slow: exit %d, want 1:\n%s", rc, p.out);
        ASSERT(json_int_at(doc, "errors.timeout") >= 1);
        const char *reason = str_at(doc, "error_reasons", "timeout", "reason");
        printf("  reason \"%s\"\n", reason);
        if (!reason[0] || !strstr(p.out, reason)) HM_FAIL_("drip_slow:\n%s", p.out);
        break;
    }
    case EXTRA_RECORD: {
        /* The unasked record is seen with the answer before it: that
         * exchange fails, naming the bytes, and the connection goes; the
         * unasked answer is never taken for the next request's. */
        if (rc != 1) HM_FAIL_("extra_record: exit %d, want 1:\n%s", rc, p.out);
        ASSERT_EQ(ok, 0);
        ASSERT_EQ(failed, sent);
        ASSERT(strstr(p.out, "unsolicited bytes after a complete HTTP 200 response"));
        break;
    }
    case EXPIRED:
        if (rc != 2) HM_FAIL_("expired: exit %d, want 2:\n%s", rc, p.out);
        ASSERT(strstr(fatal, "unreachable") && strstr(fatal, "certificate has expired"));
        break;
    case WRONG_HOST:
        if (rc != 2) HM_FAIL_("wrong_host: exit %d, want 2:\n%s", rc, p.out);
        ASSERT(strstr(fatal, "unreachable") && strstr(fatal, "mismatch"));
        break;
    case PEER__COUNT:
        break;
    }
    json_decref(doc);
    test_certs_remove(&certs);
    return 0;
}

/* TLS over a BIO of our own (see "the BIO" below): OpenSSL reads the
 * ciphertext the socket's reader lent us (or what we kept of it) and
 * writes its records into the connection's flight buffer, which we send. */
#include "proto/tls.h"

#include "base/hm_buf.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

struct hm_tls_config {
    SSL_CTX *ctx;
    int handshakes; /* client handshakes at once per thread; 0: no bound */
    bool insecure;
    bool server; /* made by hm_tls_server_config_create */
    bool h2;     /* ALPN: the client offers h2 alone; the server prefers h2 */
};

struct hm_tls {
    hm_tls_config *cfg;
    SSL *ssl;             /* with our BIO (owned by ssl) */
    SSL_SESSION *session; /* last session, for resumption */
    char *server_name;
    bool resumed;
    bool renegotiation_asked; /* the server sent a HelloRequest (TLS 1.2) */
    /* Ciphertext OpenSSL has not read: first what we kept (kept.data from
     * kept_off to kept.len), then the bytes lent to hm_tls_feed. */
    const char *lent;
    size_t lent_len;
    hm_buf kept;
    size_t kept_off;
    /* The records OpenSSL wrote and we have not sent (flight.len bytes),
     * in a buffer a detached send reads until the peer answers
     * (unanswered: nothing came back since it left). */
    hm_buf flight;
    bool flight_unanswered;
    bool lost; /* received bytes could not be kept: the stream is broken */
    hm_tls_fail fail;
    char reason[256];
    /* Its handshake's turn (see "handshakes in flight" below). */
    uint8_t turn;
    bool ended_waiting;  /* the last connection ended before its turn came */
    hm_dlink turn_link;  /* in the thread's queue while waiting */
    struct turns *turns; /* that thread's, while it waits or holds */
    hm_tls_turn_fn turn_fn;
    void *turn_user;
};

static void set_reason_from_queue(hm_tls *t, const char *what)
{
    unsigned long e = ERR_get_error();
    char buf[200] = "";
    if (e) ERR_error_string_n(e, buf, sizeof(buf));
    snprintf(t->reason, sizeof(t->reason), "%s%s%s", what, buf[0] ? ": " : "", buf);
    ERR_clear_error();
}

static int on_new_session(SSL *ssl, SSL_SESSION *sess)
{
    hm_tls *t = SSL_get_app_data(ssl);
    if (!t) return 0;
    if (t->session) SSL_SESSION_free(t->session);
    t->session = sess;
    return 1; /* we keep the reference */
}

/* Notes a server's HelloRequest: OpenSSL refuses it (SSL_OP_NO_RENEGOTIATION)
 * with a warning alert and reads on, so without this the connection would
 * just stop answering, and a request repeated on a new one would hide it. */
static void on_tls_message(int write_p, int version, int content_type, const void *buf, size_t len,
                           SSL *ssl, void *arg)
{
    (void)version;
    (void)arg;
    hm_tls *t = SSL_get_app_data(ssl);
    if (t && !write_p && content_type == SSL3_RT_HANDSHAKE && len >= 1 &&
        *(const unsigned char *)buf == SSL3_MT_HELLO_REQUEST)
        t->renegotiation_asked = true;
}

int hm_tls_config_create(hm_tls_config **out, bool insecure, const char *cafile, char *why,
                         size_t whylen)
{
    hm_tls_config *cfg = hm_calloc(1, sizeof(*cfg));
    if (!cfg) return -ENOMEM;
    cfg->insecure = insecure;
    cfg->handshakes = HM_TLS_HANDSHAKES_DEFAULT;
    cfg->ctx = SSL_CTX_new(TLS_client_method());
    if (!cfg->ctx) goto fail;
    SSL_CTX_set_min_proto_version(cfg->ctx, TLS1_2_VERSION);
    /* A server's renegotiation is refused (RFC 9113 §9.2.1 forbids it under
     * HTTP/2; under HTTP/1.1 it would re-run a handshake mid-request) and
     * reported as a TLS failure of its own. */
    SSL_CTX_set_options(cfg->ctx, SSL_OP_NO_RENEGOTIATION);
    SSL_CTX_set_msg_callback(cfg->ctx, on_tls_message);
    /* OpenSSL's record buffers (about 17 KiB each way) go back after every
     * record: a connection waiting for its answer holds none, so a TLS
     * connection's memory is some 8 KiB less, for some 840 instructions a
     * request that our BIO more than saves (docs/PERFORMANCE.md). */
    SSL_CTX_set_mode(cfg->ctx, SSL_MODE_RELEASE_BUFFERS);
    /* OpenSSL takes every byte lent (hm_tls_feed) in one read, not a
     * record's header and then its body in two: records it has not yet
     * opened wait in its buffer (SSL_has_pending, hm_tls_has_input). */
    SSL_CTX_set_read_ahead(cfg->ctx, 1);
    /* The suites in the order browsers offer them (AES-128-GCM first, as
     * Chromium, Firefox and h2load do), not OpenSSL's AES-256 first: the
     * server that honours the client's order then runs what a browser
     * would make it run. TLS 1.2 keeps OpenSSL's default set (ALL less
     * COMPLEMENTOFDEFAULT and eNULL), its ECDHE AEAD suites moved first. */
    SSL_CTX_set_ciphersuites(cfg->ctx, "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:"
                                       "TLS_CHACHA20_POLY1305_SHA256");
    SSL_CTX_set_cipher_list(cfg->ctx, "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
                                      "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
                                      "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:"
                                      "ALL:!COMPLEMENTOFDEFAULT:!eNULL");
    /* ALPN: we speak HTTP/1.1 only. */
    static const unsigned char alpn[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
    SSL_CTX_set_alpn_protos(cfg->ctx, alpn, sizeof(alpn));
    /* TLS 1.3 tickets arrive after the handshake: keep whichever session
     * OpenSSL hands us last, per connection, for the next reconnect. */
    SSL_CTX_set_session_cache_mode(cfg->ctx,
                                   SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(cfg->ctx, on_new_session);
    if (insecure) {
        SSL_CTX_set_verify(cfg->ctx, SSL_VERIFY_NONE, NULL);
    } else {
        SSL_CTX_set_verify(cfg->ctx, SSL_VERIFY_PEER, NULL);
        int ok = cafile ? SSL_CTX_load_verify_locations(cfg->ctx, cafile, NULL)
                        : SSL_CTX_set_default_verify_paths(cfg->ctx);
        if (!ok) {
            unsigned long e = ERR_get_error();
            char buf[200];
            ERR_error_string_n(e, buf, sizeof(buf));
            snprintf(why, whylen, "cannot load CA certificates%s%s: %s", cafile ? " from " : "",
                     cafile ? cafile : "", buf);
            hm_tls_config_free(cfg);
            return -EINVAL;
        }
    }
    *out = cfg;
    return 0;
fail:
    snprintf(why, whylen, "cannot create an OpenSSL context");
    hm_tls_config_free(cfg);
    return -ENOMEM;
}

void hm_tls_config_free(hm_tls_config *cfg)
{
    if (!cfg) return;
    SSL_CTX_free(cfg->ctx);
    hm_free(cfg);
}

void hm_tls_config_set_handshakes(hm_tls_config *cfg, int n)
{
    cfg->handshakes = n > 0 ? n : 0;
}

bool hm_tls_config_insecure(const hm_tls_config *cfg)
{
    return cfg->insecure;
}

int hm_tls_config_offer_h2(hm_tls_config *cfg)
{
    /* h2 alone: a server that cannot speak it must say so (no ALPN
     * agreement), not quietly turn an HTTP/2 run into an HTTP/1.1 one. */
    static const unsigned char alpn[] = {2, 'h', '2'};
    if (cfg->server || SSL_CTX_set_alpn_protos(cfg->ctx, alpn, sizeof(alpn)) != 0) return -EINVAL;
    cfg->h2 = true;
    return 0;
}

bool hm_tls_selected_h2(const hm_tls *t)
{
    const unsigned char *p = NULL;
    unsigned int n = 0;
    if (t->ssl) SSL_get0_alpn_selected(t->ssl, &p, &n);
    return n == 2 && p[0] == 'h' && p[1] == '2';
}

/* ---- server side ------------------------------------------------------- */

/* ALPN: http/1.1 when the client offers it (and h2 first when the config
 * allows it); an offer without one of ours is fatal (RFC 7301 3.2), no
 * offer at all is simply not acknowledged. */
static int on_alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                          const unsigned char *in, unsigned int inlen, void *arg)
{
    (void)ssl;
    const hm_tls_config *cfg = arg;
    static const unsigned char h1[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
    static const unsigned char h2_h1[] = {2, 'h', '2', 8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
    const unsigned char *ours = cfg->h2 ? h2_h1 : h1;
    unsigned int ours_len = cfg->h2 ? sizeof(h2_h1) : sizeof(h1);
    unsigned char *sel = NULL;
    /* Server preference: the first of ours the client offers. */
    if (SSL_select_next_proto(&sel, outlen, ours, ours_len, in, inlen) != OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    *out = sel;
    return SSL_TLSEXT_ERR_OK;
}

/* Why loading a PEM file failed, from the first (most specific) error
 * OpenSSL queued; clears the queue. *mismatch: the key does not fit the
 * certificate. */
static void load_reason(char *buf, size_t cap, const char *what, bool *mismatch)
{
    unsigned long e = ERR_peek_error();
    *mismatch = false;
    if (!e) {
        snprintf(buf, cap, "unusable");
    } else if (ERR_GET_LIB(e) == ERR_LIB_X509 && ERR_GET_REASON(e) == X509_R_KEY_VALUES_MISMATCH) {
        *mismatch = true;
        snprintf(buf, cap, "it does not match the certificate");
    } else if ((ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE) ||
               ERR_GET_LIB(e) == ERR_LIB_OSSL_DECODER) {
        snprintf(buf, cap, "no PEM %s in it", what);
    } else {
        const char *r = ERR_reason_error_string(e);
        snprintf(buf, cap, "%s", r ? r : "unusable");
    }
    ERR_clear_error();
}

/* Whether path can be opened for reading; on failure names why. */
static bool readable(const char *path, char *why, size_t whylen, const char *what)
{
    FILE *f = fopen(path, "r");
    if (f) {
        fclose(f);
        return true;
    }
    snprintf(why, whylen, "cannot read the %s %s: %s", what, path, strerror(errno));
    return false;
}

int hm_tls_server_config_create(hm_tls_config **out, const char *cert_file, const char *key_file,
                                char *why, size_t whylen)
{
    *out = NULL;
    if (!cert_file || !cert_file[0] || !key_file || !key_file[0]) {
        snprintf(why, whylen, "a TLS server needs both a certificate and a key file");
        return -EINVAL;
    }
    if (!readable(cert_file, why, whylen, "TLS certificate") ||
        !readable(key_file, why, whylen, "TLS key"))
        return -EINVAL;
    hm_tls_config *cfg = hm_calloc(1, sizeof(*cfg));
    if (!cfg) return -ENOMEM;
    cfg->server = true;
    ERR_clear_error();
    cfg->ctx = SSL_CTX_new(TLS_server_method());
    if (!cfg->ctx) {
        snprintf(why, whylen, "cannot create an OpenSSL context");
        hm_tls_config_free(cfg);
        return -ENOMEM;
    }
    char r[160];
    bool mismatch;
    if (SSL_CTX_use_certificate_chain_file(cfg->ctx, cert_file) != 1) {
        load_reason(r, sizeof(r), "certificate", &mismatch);
        snprintf(why, whylen, "cannot load the TLS certificate %s: %s", cert_file, r);
        goto bad;
    }
    if (SSL_CTX_use_PrivateKey_file(cfg->ctx, key_file, SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(cfg->ctx) != 1) {
        load_reason(r, sizeof(r), "private key", &mismatch);
        if (mismatch)
            snprintf(why, whylen, "the TLS key %s does not match the certificate %s", key_file,
                     cert_file);
        else
            snprintf(why, whylen, "cannot load the TLS key %s: %s", key_file, r);
        goto bad;
    }
    SSL_CTX_set_min_proto_version(cfg->ctx, TLS1_2_VERSION);
    SSL_CTX_set_options(cfg->ctx, SSL_OP_NO_RENEGOTIATION);
    /* Idle connections (SSE streams) give their read and write buffers back. */
    SSL_CTX_set_mode(cfg->ctx, SSL_MODE_RELEASE_BUFFERS);
    SSL_CTX_set_alpn_select_cb(cfg->ctx, on_alpn_select, cfg);
    /* Resumption: TLS 1.2 session ids from the server cache, and stateless
     * tickets (TLS 1.2 and 1.3, on by default) sealed with this context's
     * keys. */
    static const unsigned char sid_ctx[] = "hammer";
    SSL_CTX_set_session_id_context(cfg->ctx, sid_ctx, sizeof(sid_ctx) - 1);
    SSL_CTX_set_session_cache_mode(cfg->ctx, SSL_SESS_CACHE_SERVER);
    *out = cfg;
    return 0;
bad:
    hm_tls_config_free(cfg);
    return -EINVAL;
}

void hm_tls_server_config_allow_h2(hm_tls_config *cfg)
{
    if (cfg->server) cfg->h2 = true;
}

int hm_tls_create(hm_tls **out, hm_tls_config *cfg, const char *server_name)
{
    hm_tls *t = hm_calloc(1, sizeof(*t));
    if (!t) return -ENOMEM;
    t->cfg = cfg;
    t->server_name = hm_strdup(server_name ? server_name : "");
    *out = t;
    return t->server_name ? 0 : -ENOMEM;
}

/* ---- handshakes in flight ------------------------------------------------
 *
 * A thread runs at most cfg->handshakes client handshakes at once; the
 * others wait for their turn in the order they asked. Every handshake
 * holds OpenSSL's handshake state (its message buffer, grown to 16 KiB,
 * and the transcript) until it ends, so 2,000 connections opened at once
 * would hold 2,000 of them at the same moment (docs/PERFORMANCE.md: the
 * bound's memory and its delay). The queue is the thread's: a connection
 * lives on one loop. */

enum { TURN_NONE, TURN_WAITING, TURN_HELD };

typedef struct turns turns;
struct turns {
    int running;    /* turns held */
    int waiting;    /* in the queue */
    hm_dlist queue; /* waiting, oldest first */
    bool granting;  /* in grant(): a turn ended inside a turn_fn */
};
static _Thread_local turns tl_turns;

static bool turn_free(const turns *q, const hm_tls *t)
{
    return t->cfg->handshakes == 0 || q->running < t->cfg->handshakes;
}

static void turn_unlink(turns *q, hm_tls *t)
{
    hm_dlist_remove(&q->queue, &t->turn_link);
    q->waiting--;
}

/* The oldest waiter, or NULL. */
static hm_tls *turn_next(const turns *q)
{
    return q->queue.head ? HM_CONTAINER_OF(q->queue.head, hm_tls, turn_link) : NULL;
}

/* Hands free turns to the oldest waiters. A turn_fn may end a turn (its
 * start failed), which only counts here: this loop goes on. */
static void grant(turns *q)
{
    if (q->granting) return;
    q->granting = true;
    hm_tls *t;
    while ((t = turn_next(q)) && turn_free(q, t)) {
        turn_unlink(q, t);
        t->turn = TURN_HELD;
        q->running++;
        t->turn_fn(t, t->turn_user);
    }
    q->granting = false;
}

bool hm_tls_turn_wait(hm_tls *t, hm_tls_turn_fn fn, void *user)
{
    turns *q = &tl_turns;
    if (t->turn == TURN_HELD) return true;
    if (t->turn == TURN_WAITING) return false;
    t->turns = q;
    if (hm_dlist_empty(&q->queue) && turn_free(q, t)) {
        t->turn = TURN_HELD;
        q->running++;
        return true;
    }
    t->turn = TURN_WAITING;
    t->ended_waiting = false;
    t->turn_fn = fn;
    t->turn_user = user;
    hm_dlist_push(&q->queue, &t->turn_link);
    q->waiting++;
    return false;
}

void hm_tls_turns(int *running, int *waiting)
{
    *running = tl_turns.running;
    *waiting = tl_turns.waiting;
}

void hm_tls_turn_end(hm_tls *t)
{
    turns *q = t->turns;
    if (t->turn == TURN_WAITING)
        turn_unlink(q, t);
    else if (t->turn == TURN_HELD)
        q->running--;
    else
        return;
    t->turn = TURN_NONE;
    grant(q);
}

/* The words of a connection that ended while it waited for its turn. */
static int turn_ended_waiting(hm_tls *t, int err)
{
    hm_tls_turn_end(t);
    t->ended_waiting = true;
    t->fail = err == 0 ? HM_TLS_EOF : HM_TLS_HANDSHAKE;
    snprintf(t->reason, sizeof(t->reason),
             "%sit waited for its turn: this thread runs %d handshake%s at once "
             "(--tls-handshakes)",
             err == 0 ? "the server closed the connection while " : "", t->cfg->handshakes,
             t->cfg->handshakes == 1 ? "" : "s");
    return err == 0 ? -HM_ETLS : err;
}

bool hm_tls_ended_waiting(const hm_tls *t)
{
    return t->ended_waiting;
}

/* ---- the BIO ---------------------------------------------------------------
 *
 * OpenSSL reads and writes through one BIO whose methods are these (as
 * h2o's socket does): its reads take the bytes the socket's reader lent to
 * hm_tls_feed, in place, and its writes append to the flight buffer that
 * hm_tls_send_pending sends. Memory BIOs did the same through a copy each
 * way and a dozen BIO_ctrl calls a request (about 1,400 instructions of
 * 25,000: docs/PERFORMANCE.md). Lent bytes are valid only while the
 * reader's callback runs, so every call that lets OpenSSL read ends by
 * keeping what it left (keep_lent), before anything above can run. */

/* A kept buffer larger than this goes once drained (a big response came
 * in one read); a smaller one stays for the next partial record. */
#define KEPT_KEEP 4096

static void trim_kept(hm_tls *t)
{
    if (t->kept_off < t->kept.len) return;
    t->kept_off = t->kept.len = 0;
    if (t->kept.cap > KEPT_KEEP) hm_buf_free(&t->kept);
}

/* Appends n bytes to what OpenSSL has yet to read. */
static int keep_bytes(hm_tls *t, const char *data, size_t n)
{
    if (n == 0) return 0;
    if (t->kept_off && t->kept.len + n >= t->kept.cap) { /* the read part goes first */
        memmove(t->kept.data, t->kept.data + t->kept_off, t->kept.len - t->kept_off);
        t->kept.len -= t->kept_off;
        t->kept_off = 0;
    }
    return hm_buf_append(&t->kept, data, n);
}

/* The lent bytes OpenSSL did not read become ours: the reader's buffer
 * goes when its callback returns. */
static int keep_lent(hm_tls *t)
{
    if (!t->lent_len) return 0;
    int rc = keep_bytes(t, t->lent, t->lent_len);
    t->lent = NULL;
    t->lent_len = 0;
    return rc;
}

static size_t cipher_unread(const hm_tls *t)
{
    return t->kept.len - t->kept_off + t->lent_len;
}

static int bio_read(BIO *b, char *out, int outl)
{
    hm_tls *t = BIO_get_data(b);
    BIO_clear_retry_flags(b);
    size_t want = outl > 0 ? (size_t)outl : 0, got = 0;
    size_t k = t->kept.len - t->kept_off;
    if (k) {
        if (k > want) k = want;
        memcpy(out, t->kept.data + t->kept_off, k);
        t->kept_off += k;
        got = k;
        trim_kept(t);
    }
    if (got < want && t->lent_len) {
        size_t l = t->lent_len < want - got ? t->lent_len : want - got;
        memcpy(out + got, t->lent, l);
        t->lent += l;
        t->lent_len -= l;
        got += l;
    }
    if (got == 0) {
        BIO_set_retry_read(b); /* more comes with the next read */
        return -1;
    }
    return (int)got;
}

/* The buffer the kernel reads for an unanswered detached send stays
 * untouched: it goes with the loop, and new records get a buffer of
 * their own. */
static void flight_release(hm_tls *t)
{
    hm_loop_free_later(hm_loop_current(), t->flight.data);
    t->flight = (hm_buf){0};
    t->flight_unanswered = false;
}

static int bio_write(BIO *b, const char *in, int inl)
{
    hm_tls *t = BIO_get_data(b);
    BIO_clear_retry_flags(b);
    if (inl <= 0) return 0;
    if (t->flight_unanswered) flight_release(t);
    if (hm_buf_append(&t->flight, in, (size_t)inl) < 0)
        return -1; /* OpenSSL fails the write: a TLS failure */
    return inl;
}

static long bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)num;
    (void)ptr;
    /* OpenSSL asks some dozen times a request (kTLS mostly): answer
     * without looking the connection up unless the question needs it. */
    switch (cmd) {
    case BIO_CTRL_FLUSH: /* the caller sends the flight */
        return 1;
    case BIO_CTRL_PENDING:
        return (long)cipher_unread(BIO_get_data(b));
    case BIO_CTRL_WPENDING:
        return (long)((hm_tls *)BIO_get_data(b))->flight.len;
    default: /* kTLS, EOF, dup and the rest: none of that here */
        return 0;
    }
}

static BIO_METHOD *bio_method;
static pthread_once_t bio_method_once = PTHREAD_ONCE_INIT;

/* Made once per process and kept to its end (BIOs of any thread use it). */
static void bio_method_make(void)
{
    BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "hammer tls");
    if (m && BIO_meth_set_read(m, bio_read) && BIO_meth_set_write(m, bio_write) &&
        BIO_meth_set_ctrl(m, bio_ctrl)) {
        bio_method = m;
        return;
    }
    BIO_meth_free(m);
}

static BIO *bio_new(hm_tls *t)
{
    pthread_once(&bio_method_once, bio_method_make);
    BIO *b = bio_method ? BIO_new(bio_method) : NULL;
    if (!b) return NULL;
    BIO_set_data(b, t);
    BIO_set_init(b, 1);
    return b;
}

/* The connection's SSL and its flight go; the session and the turn stay. */
static void forget_conn(hm_tls *t)
{
    /* OpenSSL marks the session of a connection freed without a shutdown
     * as not resumable; an HTTP/1.1 connection that ends after a complete
     * response was fine, so say it was shut down. */
    if (t->ssl && SSL_is_init_finished(t->ssl))
        SSL_set_shutdown(t->ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
    if (t->ssl) SSL_free(t->ssl); /* frees our BIO */
    t->ssl = NULL;
    t->lent = NULL;
    t->lent_len = 0;
    t->kept_off = t->kept.len = 0;
    trim_kept(t);
    t->lost = false;
    t->flight.len = 0;
    /* The kernel may still be sending it on the closing socket. */
    if (t->flight_unanswered) flight_release(t);
}

void hm_tls_drop_buffers(hm_tls *t)
{
    if (t->kept_off == t->kept.len) {
        hm_buf_free(&t->kept);
        t->kept_off = 0;
    }
    if (!t->flight.len && !t->flight_unanswered) hm_buf_free(&t->flight);
}

void hm_tls_reset(hm_tls *t)
{
    hm_tls_turn_end(t);
    forget_conn(t);
}

void hm_tls_free(hm_tls *t)
{
    if (!t) return;
    hm_tls_reset(t);
    if (t->session) SSL_SESSION_free(t->session);
    hm_free(t->server_name);
    hm_buf_free(&t->flight);
    hm_buf_free(&t->kept);
    hm_free(t);
}

/* OpenSSL's handshake, read and write, run on the loop's stack: they never
 * suspend (our BIO never blocks) and go some 8 KiB deep, which on a connection's
 * coroutine would stay resident per connection. */
enum { SSL_OP_HANDSHAKE, SSL_OP_READ, SSL_OP_WRITE };
typedef struct ssl_call {
    SSL *ssl;
    int op, len, rc;
    void *buf;
} ssl_call;

static void ssl_call_run(void *arg)
{
    ssl_call *c = arg;
    switch (c->op) {
    case SSL_OP_HANDSHAKE:
        c->rc = SSL_do_handshake(c->ssl);
        break;
    case SSL_OP_READ:
        c->rc = SSL_read(c->ssl, c->buf, c->len);
        break;
    default:
        c->rc = SSL_write(c->ssl, c->buf, c->len);
        break;
    }
}

/* Then keeps what OpenSSL left of the lent bytes (see "the BIO"). */
static int ssl_shallow(hm_tls *t, int op, void *buf, int len)
{
    ssl_call c = {.ssl = t->ssl, .op = op, .len = len, .buf = buf};
    hm_call_on_loop_stack(ssl_call_run, &c);
    if (keep_lent(t) < 0) t->lost = true;
    return c.rc;
}

/* Sends the flight from a coroutine, in place (no buffer on its stack: a
 * TLS connection's stack stays shallow). The buffer is the sender's while
 * it waits: records written meanwhile (hm_tls_read_quiet's reply to a key
 * update) start a buffer of their own and leave with the next flush. */
static int flush_out(hm_tls *t, hm_sock *s, int64_t deadline)
{
    if (!t->flight.len) return 0;
    hm_buf mine = t->flight;
    t->flight = (hm_buf){0};
    ssize_t w = hm_sock_write(s, mine.data, mine.len, deadline, NULL); /* or it broke */
    if (!t->flight.data) {
        t->flight = mine;
        t->flight.len = 0;
    } else {
        hm_buf_free(&mine);
    }
    return w < 0 ? (int)w : 0;
}

/* Keeps the ciphertext the engine received, from its buffer, for OpenSSL.
 * 0 on EOF; -ENOMEM when it cannot be kept (bytes dropped would corrupt
 * the record stream). */
static ssize_t fill_in(hm_tls *t, hm_sock *s, int64_t deadline)
{
    const char *data;
    ssize_t n = hm_sock_peek(s, &data, deadline);
    if (n <= 0) return n;
    if (keep_bytes(t, data, (size_t)n) < 0) return -ENOMEM;
    hm_sock_skip(s, (size_t)n);
    return n;
}

static bool is_ip_literal(const char *h)
{
    return strchr(h, ':') || strspn(h, "0123456789.") == strlen(h);
}

/* A fresh SSL for a new connection, wired to our BIO. */
static int tls_begin(hm_tls *t)
{
    forget_conn(t);
    t->ended_waiting = false;
    t->fail = HM_TLS_OK;
    t->reason[0] = 0;
    t->resumed = false;
    t->renegotiation_asked = false;
    t->ssl = SSL_new(t->cfg->ctx);
    BIO *b = t->ssl ? bio_new(t) : NULL;
    if (!b) {
        SSL_free(t->ssl);
        t->ssl = NULL;
        return -ENOMEM;
    }
    SSL_set_bio(t->ssl, b, b); /* one reference, for reading and writing */
    SSL_set_app_data(t->ssl, t);
    return 0;
}

int hm_tls_client_begin(hm_tls *t)
{
    int rc = tls_begin(t);
    if (rc < 0) return rc;
    SSL_set_connect_state(t->ssl);
    if (t->server_name[0]) {
        if (!is_ip_literal(t->server_name)) SSL_set_tlsext_host_name(t->ssl, t->server_name);
        if (!t->cfg->insecure) {
            if (is_ip_literal(t->server_name)) {
                X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(t->ssl), t->server_name);
            } else {
                SSL_set1_host(t->ssl, t->server_name);
            }
        }
    }
    if (t->session) SSL_set_session(t->ssl, t->session);
    return 0;
}

int hm_tls_handshake_step(hm_tls *t)
{
    if (!t->ssl) return -ENOTCONN;
    int rc = ssl_shallow(t, SSL_OP_HANDSHAKE, NULL, 0);
    if (t->lost) return -ENOMEM;
    if (rc == 1) {
        t->resumed = SSL_session_reused(t->ssl);
        /* TLS 1.3 has no HelloRequest: the watch (on_tls_message) would
         * only cost every record two calls from here on. */
        if (SSL_version(t->ssl) >= TLS1_3_VERSION) SSL_set_msg_callback(t->ssl, NULL);
        return 1;
    }
    if (SSL_get_error(t->ssl, rc) == SSL_ERROR_WANT_READ) return 0;
    long vr = SSL_get_verify_result(t->ssl);
    if (vr != X509_V_OK) {
        t->fail = HM_TLS_VERIFY;
        snprintf(t->reason, sizeof(t->reason), "certificate verification failed: %s",
                 X509_verify_cert_error_string(vr));
        ERR_clear_error();
    } else {
        t->fail = HM_TLS_HANDSHAKE;
        set_reason_from_queue(t, "handshake failed");
    }
    return -HM_ETLS;
}

static void turn_notify(hm_tls *t, void *user)
{
    (void)t;
    hm_event_notify(user);
}

static int handshake_turn(hm_tls *t, hm_sock *s, int64_t deadline)
{
    int rc = hm_tls_client_begin(t);
    if (rc < 0) return rc;
    for (;;) {
        int step = hm_tls_handshake_step(t);
        int fl = flush_out(t, s, deadline);
        if (fl < 0) {
            t->fail = HM_TLS_HANDSHAKE;
            snprintf(t->reason, sizeof(t->reason), "handshake: %s", hm_strerror(fl));
            return fl;
        }
        if (step != 0) return step < 0 ? step : 0;
        ssize_t n = fill_in(t, s, deadline);
        if (n <= 0) return hm_tls_peer_ended(t, (int)n);
    }
}

int hm_tls_handshake(hm_tls *t, hm_sock *s, int64_t deadline)
{
    hm_event turn;
    hm_event_init(&turn);
    if (!hm_tls_turn_wait(t, turn_notify, &turn)) {
        while (t->turn == TURN_WAITING) {
            int rc = hm_event_wait_io(&turn, deadline);
            if (rc < 0 && t->turn == TURN_WAITING) return turn_ended_waiting(t, rc);
            if (rc < 0) { /* the turn came with the deadline or the cancel */
                hm_tls_turn_end(t);
                return rc;
            }
        }
    }
    int rc = handshake_turn(t, s, deadline);
    hm_tls_turn_end(t);
    return rc;
}

/* hm_tls_read, and with quiet set hm_tls_read_quiet: what SSL_read wants
 * to send is left in `out` for the writer. */
static ssize_t tls_read(hm_tls *t, hm_sock *s, void *buf, size_t len, int64_t deadline, bool quiet)
{
    for (;;) {
        ssize_t n = hm_tls_take(t, buf, len);
        if (n > 0 || n == -ENOTCONN) return n;
        /* TLS 1.3 tickets and key updates may want to write (and a refused
         * renegotiation its alert). */
        if (!quiet) {
            int fl = flush_out(t, s, deadline);
            if (fl < 0) return fl;
        }
        if (n != -EAGAIN) return n;
        ssize_t r = fill_in(t, s, deadline);
        if (r > 0) continue;
        return hm_tls_peer_ended(t, (int)r);
    }
}

ssize_t hm_tls_read(hm_tls *t, hm_sock *s, void *buf, size_t len, int64_t deadline)
{
    return tls_read(t, s, buf, len, deadline, false);
}

ssize_t hm_tls_read_quiet(hm_tls *t, hm_sock *s, void *buf, size_t len, int64_t deadline)
{
    return tls_read(t, s, buf, len, deadline, true);
}

ssize_t hm_tls_write(hm_tls *t, hm_sock *s, const void *buf, size_t len, int64_t deadline,
                     size_t *sent)
{
    if (sent) *sent = 0;
    int rc = hm_tls_seal(t, buf, len);
    if (rc < 0) return rc;
    /* From here the record may reach the server even if the flush fails
     * part way, so the caller must treat the request as sent. */
    if (sent) *sent = len;
    int fl = flush_out(t, s, deadline);
    return fl < 0 ? fl : (ssize_t)len;
}

/* ---- client side without a coroutine --------------------------------------- */

int hm_tls_feed(hm_tls *t, const char *data, size_t len)
{
    if (t->turn == TURN_WAITING) {
        /* A TLS server speaks after the client's hello, never before. */
        hm_tls_turn_end(t);
        t->fail = HM_TLS_PROTOCOL;
        snprintf(t->reason, sizeof(t->reason),
                 "the server sent %zu bytes before the client's hello", len);
        return -HM_ETLS;
    }
    if (!t->ssl) return -ENOTCONN;
    t->flight_unanswered = false;         /* the peer spoke: it has what we sent */
    if (keep_lent(t) < 0) return -ENOMEM; /* not taken since: keep it first */
    t->lent = data;
    t->lent_len = len;
    return 0;
}

ssize_t hm_tls_take(hm_tls *t, void *buf, size_t len)
{
    if (!t->ssl) return -ENOTCONN;
    int n = ssl_shallow(t, SSL_OP_READ, buf, (int)(len > INT32_MAX ? INT32_MAX : len));
    if (t->lost) return -ENOMEM;
    if (n > 0) return n;
    int err = SSL_get_error(t->ssl, n);
    if (t->renegotiation_asked) {
        /* Nothing more comes on this connection until the handshake
         * hammer will not run: end it, saying why. */
        t->fail = HM_TLS_PROTOCOL;
        snprintf(t->reason, sizeof(t->reason),
                 "the server asked to renegotiate TLS (a TLS 1.2 HelloRequest); hammer "
                 "refuses renegotiation");
        ERR_clear_error();
        return -HM_ETLS;
    }
    if (err == SSL_ERROR_ZERO_RETURN) return 0;
    if (err == SSL_ERROR_WANT_READ) return -EAGAIN;
    t->fail = HM_TLS_PROTOCOL;
    set_reason_from_queue(t, "TLS read failed");
    return -HM_ETLS;
}

bool hm_tls_has_input(const hm_tls *t)
{
    /* SSL_has_pending: opened or not (read ahead), OpenSSL holds bytes. */
    return t->ssl && (SSL_has_pending(t->ssl) || cipher_unread(t) > 0);
}

size_t hm_tls_plain_pending(const hm_tls *t)
{
    int n = t->ssl ? SSL_pending(t->ssl) : 0;
    return n > 0 ? (size_t)n : 0;
}

int hm_tls_peer_ended(hm_tls *t, int err)
{
    if (t->turn == TURN_WAITING) return turn_ended_waiting(t, err);
    if (t->ssl && !SSL_is_init_finished(t->ssl)) {
        t->fail = err == 0 ? HM_TLS_EOF : HM_TLS_HANDSHAKE;
        snprintf(t->reason, sizeof(t->reason), "handshake: %s",
                 err == 0 ? "the server closed the connection" : hm_strerror(err));
        return err == 0 ? -HM_ETLS : err;
    }
    if (err == 0) t->fail = HM_TLS_EOF; /* closed without close_notify */
    return err;
}

int hm_tls_seal(hm_tls *t, const void *buf, size_t len)
{
    if (!t->ssl) return -ENOTCONN;
    if (len == 0) return 0;
    /* Our BIO never blocks, so SSL_write takes everything at once. */
    int n = ssl_shallow(t, SSL_OP_WRITE, (void *)buf, (int)len);
    if (n <= 0) {
        t->fail = HM_TLS_PROTOCOL;
        set_reason_from_queue(t, "TLS write failed");
        return -HM_ETLS;
    }
    return 0;
}

int hm_tls_send_pending(hm_tls *t, hm_sock *s)
{
    if (!t->ssl) return -ENOTCONN;
    if (!t->flight.len) return 0;
    size_t n = t->flight.len;
    /* The kernel reads the buffer until the server answers: the next
     * records go to a buffer of their own unless it has (bio_write). */
    t->flight.len = 0;
    t->flight_unanswered = true;
    return hm_sock_send_detached(s, t->flight.data, n);
}

int hm_tls_accept(hm_tls *t, hm_sock *s, int64_t deadline)
{
    int rc0 = tls_begin(t);
    if (rc0 < 0) return rc0;
    SSL_set_accept_state(t->ssl);
    for (;;) {
        int rc = ssl_shallow(t, SSL_OP_HANDSHAKE, NULL, 0);
        /* Also sends the alert of a failed handshake, best effort. */
        int fl = flush_out(t, s, deadline);
        if (rc == 1 && fl == 0) break;
        if (fl < 0) {
            t->fail = HM_TLS_HANDSHAKE;
            snprintf(t->reason, sizeof(t->reason), "handshake: %s", hm_strerror(fl));
            ERR_clear_error();
            return fl;
        }
        int err = SSL_get_error(t->ssl, rc);
        if (err == SSL_ERROR_WANT_READ) {
            ssize_t n = fill_in(t, s, deadline);
            if (n > 0) continue;
            t->fail = n == 0 ? HM_TLS_EOF : HM_TLS_HANDSHAKE;
            snprintf(t->reason, sizeof(t->reason), "handshake: %s",
                     n == 0 ? "the client closed the connection" : hm_strerror((int)n));
            ERR_clear_error();
            return n == 0 ? -HM_ETLS : (int)n;
        }
        t->fail = HM_TLS_HANDSHAKE;
        set_reason_from_queue(t, "handshake failed");
        return -HM_ETLS;
    }
    t->resumed = SSL_session_reused(t->ssl);
    return 0;
}

int hm_tls_close_notify(hm_tls *t, hm_sock *s, int64_t deadline)
{
    if (!t->ssl || !SSL_is_init_finished(t->ssl)) return 0;
    if (!(SSL_get_shutdown(t->ssl) & SSL_SENT_SHUTDOWN)) SSL_shutdown(t->ssl);
    ERR_clear_error();
    return flush_out(t, s, deadline);
}

bool hm_tls_resumed(const hm_tls *t)
{
    return t->resumed;
}
hm_tls_fail hm_tls_last_fail(const hm_tls *t)
{
    return t->fail;
}
const char *hm_tls_last_reason(const hm_tls *t)
{
    return t->reason;
}

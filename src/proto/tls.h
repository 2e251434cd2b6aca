/* tls.h — TLS for client connections through OpenSSL memory BIOs, so the
 * engine (io_uring or epoll) keeps doing every byte of socket I/O: OpenSSL
 * only transforms bytes between two in-memory BIOs, and these functions
 * move them to and from the hm_sock.
 *
 * Ownership: a hm_tls_config (one per run, shared by every thread; OpenSSL's
 * SSL_CTX is thread-safe for creating sessions) is created by
 * hm_tls_config_create and freed by hm_tls_config_free after all threads
 * end. A hm_tls (one per connection) is owned by its connection; it keeps
 * the last session for resumption across reconnects until hm_tls_free. */
#ifndef HM_PROTO_TLS_H
#define HM_PROTO_TLS_H

#include "engine/engine.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct hm_tls_config hm_tls_config;
typedef struct hm_tls hm_tls;

/* Why a TLS operation failed, as the summary counts it. */
typedef enum hm_tls_fail {
    HM_TLS_OK = 0,
    HM_TLS_VERIFY,     /* the certificate did not verify */
    HM_TLS_HANDSHAKE,  /* any other handshake failure */
    HM_TLS_EOF,        /* the peer closed without close_notify */
    HM_TLS_PROTOCOL,   /* an error after the handshake */
} hm_tls_fail;

/* insecure skips certificate verification; cafile (optional) replaces the
 * system CA store. On failure writes OpenSSL's reason to why. */
int hm_tls_config_create(hm_tls_config **out, bool insecure, const char *cafile, char *why,
                         size_t whylen);
void hm_tls_config_free(hm_tls_config *cfg);
bool hm_tls_config_insecure(const hm_tls_config *cfg);

/* A connection's TLS state, created once and reused over reconnects. */
int hm_tls_create(hm_tls **out, hm_tls_config *cfg, const char *server_name);
void hm_tls_free(hm_tls *t);

/* Runs the handshake on a freshly connected socket (resuming the previous
 * session when there is one). 0, or a negative error with hm_tls_last_fail
 * and hm_tls_last_reason telling why. */
int hm_tls_handshake(hm_tls *t, hm_sock *s, int64_t deadline);
/* As hm_sock_read / hm_sock_write, through TLS. */
ssize_t hm_tls_read(hm_tls *t, hm_sock *s, void *buf, size_t len, int64_t deadline);
ssize_t hm_tls_write(hm_tls *t, hm_sock *s, const void *buf, size_t len, int64_t deadline,
                     size_t *sent);
/* Forgets the connection (not the session): call when the socket closes. */
void hm_tls_reset(hm_tls *t);

bool hm_tls_resumed(const hm_tls *t);
hm_tls_fail hm_tls_last_fail(const hm_tls *t);
const char *hm_tls_last_reason(const hm_tls *t);
const char *hm_tls_fail_name(hm_tls_fail f);

#endif

/* tls.h — TLS for client connections (and, for bench_app, the server
 * side) through a BIO of hammer's own that never touches a socket, so the
 * engine (io_uring or epoll) keeps doing every byte of socket I/O: OpenSSL
 * only transforms bytes (the ciphertext received, the records to send),
 * and these functions move them to and from the hm_sock.
 *
 * Ownership: a hm_tls_config (one per run, shared by every thread; OpenSSL's
 * SSL_CTX is thread-safe for creating sessions) is created by
 * hm_tls_config_create and freed by hm_tls_config_free after all threads
 * end. A hm_tls (one per connection) is owned by its connection; it keeps
 * the last session for resumption across reconnects until hm_tls_free.
 *
 * Server side: hm_tls_server_config_create loads a certificate chain and
 * its key into a server context (TLS 1.2+, ALPN http/1.1, a session cache
 * and session tickets, so clients resume); a hm_tls made from it with
 * hm_tls_create(&t, cfg, NULL) runs hm_tls_accept on each accepted socket
 * and then hm_tls_read / hm_tls_write as a client's does; hm_tls_reset
 * when the socket closes (the record, with its hm_tls, may be reused).
 * Only one coroutine may write through a hm_tls; another may read at the
 * same time with hm_tls_read_quiet (which never writes to the socket).
 *
 * Client connections of HTTP/1.1 (http_client.c) use the functions
 * "without a coroutine" below, driven by the socket's callback reader;
 * HTTP/2's links and the server side use the suspending ones above. */
#ifndef HM_PROTO_TLS_H
#define HM_PROTO_TLS_H

#include "base/hm_fail.h"
#include "engine/engine.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct hm_tls_config hm_tls_config;
typedef struct hm_tls hm_tls;

/* hm_tls_fail (why a TLS operation failed) and hm_tls_fail_name: base/hm_fail.h. */

/* insecure skips certificate verification; cafile (optional) replaces the
 * system CA store. On failure writes OpenSSL's reason to why. */
int hm_tls_config_create(hm_tls_config **out, bool insecure, const char *cafile, char *why,
                         size_t whylen);
void hm_tls_config_free(hm_tls_config *cfg);
bool hm_tls_config_insecure(const hm_tls_config *cfg);
/* At most n client handshakes at once per thread (0: no bound); the
 * default is HM_TLS_HANDSHAKES_DEFAULT. Call before any connection uses
 * the config. */
#define HM_TLS_HANDSHAKES_DEFAULT 256
void hm_tls_config_set_handshakes(hm_tls_config *cfg, int n);
/* Makes a client config offer "h2" alone in ALPN (instead of http/1.1),
 * for HTTP/2 over TLS; call before any connection uses it. -EINVAL on a
 * server config. */
int hm_tls_config_offer_h2(hm_tls_config *cfg);

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
/* ---- client side without a coroutine ------------------------------------
 *
 * TLS as a filter between a callback reader (hm_sock_set_reader) and the
 * protocol above it: ciphertext the reader is handed goes in with
 * hm_tls_feed, plaintext comes out of hm_tls_take, and what OpenSSL wants
 * to send leaves with hm_tls_send_pending. None of these suspends, so a
 * connection needs no coroutine; OpenSSL runs on the loop's stack. */

/* A thread runs at most its config's bound of client handshakes at once
 * (hm_tls_config_set_handshakes); the others wait for their turn, oldest
 * first. hm_tls_turn_wait asks for t's turn: true when it holds it now,
 * false when it waits, and then fn(t, user) runs once when the turn comes
 * (from inside another connection's hm_tls_turn_end). A waiting t's
 * hm_tls_peer_ended words its end as an end while waiting, and
 * hm_tls_feed refuses bytes (a server never speaks first). The turn ends
 * with hm_tls_turn_end (the handshake is done or failed) or with
 * hm_tls_reset. hm_tls_handshake takes its turn itself. */
typedef void (*hm_tls_turn_fn)(hm_tls *t, void *user);
bool hm_tls_turn_wait(hm_tls *t, hm_tls_turn_fn fn, void *user);
/* This thread's handshakes: holding their turn, and waiting for it. */
void hm_tls_turns(int *running, int *waiting);
void hm_tls_turn_end(hm_tls *t);
/* The last connection ended (timed out, closed) while it waited for its
 * turn; hm_tls_last_reason says so. */
bool hm_tls_ended_waiting(const hm_tls *t);

/* Prepares a client handshake on a fresh connection (resuming the last
 * session when there is one). 0 or -ENOMEM. */
int hm_tls_client_begin(hm_tls *t);
/* Runs the handshake on what was fed so far: 1 done (hm_tls_resumed
 * tells how), 0 it waits for the server (send what is pending, then feed
 * what comes), or -HM_ETLS with hm_tls_last_fail and hm_tls_last_reason. */
int hm_tls_handshake_step(hm_tls *t);
/* Takes ciphertext received from the server, lent: data must stay valid
 * until the next hm_tls_take or hm_tls_handshake_step returns, which keep
 * what OpenSSL did not read (so feed, then take or step, within the
 * reader's callback). 0, -ENOMEM, or -HM_ETLS while waiting for a turn. */
int hm_tls_feed(hm_tls *t, const char *data, size_t len);
/* Decrypts into buf what was fed: the count of plaintext bytes, -EAGAIN
 * when a whole record has not arrived yet, 0 at the server's
 * close_notify, or -HM_ETLS (a refused renegotiation, a bad record) with
 * the reason. */
ssize_t hm_tls_take(hm_tls *t, void *buf, size_t len);
/* Whether fed bytes wait to be taken (a record, or plaintext of one). */
bool hm_tls_has_input(const hm_tls *t);
/* Plaintext bytes decrypted and not taken yet. */
size_t hm_tls_plain_pending(const hm_tls *t);
/* The socket ended (err 0: EOF, else its negative errno): records why in
 * the TLS state and returns the error to report: during the handshake
 * -HM_ETLS for an EOF (or err), after it err. */
int hm_tls_peer_ended(hm_tls *t, int err);
/* Encrypts buf into records waiting to be sent. 0, or -HM_ETLS. */
int hm_tls_seal(hm_tls *t, const void *buf, size_t len);
/* Sends every byte OpenSSL has for the server, detached
 * (hm_sock_send_detached) from a copy the hm_tls keeps. Call it only once
 * the server has answered the previous flight: the handshake's flights,
 * then each request, alternate with the server's answers. 0 or a negative
 * errno. */
int hm_tls_send_pending(hm_tls *t, hm_sock *s);

/* OpenSSL's record buffers go back after every record on every client
 * connection (SSL_MODE_RELEASE_BUFFERS); hm_tls_drop_buffers also lets go
 * of hammer's own (the unread ciphertext kept and the flight buffer, when
 * empty), for a connection about to idle; the next record makes them
 * again. */
void hm_tls_drop_buffers(hm_tls *t);

/* Forgets the connection (not the session): call when the socket closes. */
void hm_tls_reset(hm_tls *t);

bool hm_tls_resumed(const hm_tls *t);
/* The handshake just made agreed on "h2" through ALPN. */
bool hm_tls_selected_h2(const hm_tls *t);

/* ---- server side ------------------------------------------------------- */

/* A server context: the PEM certificate chain in cert_file (leaf first)
 * and the PEM private key in key_file, which must match. TLS 1.2 and 1.3;
 * ALPN: http/1.1 is selected when offered (a client that offers only other
 * protocols gets a no_application_protocol alert; one that offers none is
 * served HTTP/1.1); client-initiated renegotiation refused; resumption
 * through a server session cache (TLS 1.2 session ids) and stateless
 * tickets (TLS 1.2 and 1.3) whose keys live as long as the config. On
 * failure -EINVAL (-ENOMEM) and a one-line reason naming the file in why. */
int hm_tls_server_config_create(hm_tls_config **out, const char *cert_file, const char *key_file,
                                char *why, size_t whylen);
/* ALPN of a server config also accepts h2, preferred over http/1.1 when a
 * client offers both (hm_tls_selected_h2 then tells the connection's
 * protocol); a client offering neither still gets the alert. Call before
 * the first accept. */
void hm_tls_server_config_allow_h2(hm_tls_config *cfg);
/* Runs the server side of the handshake on a freshly accepted socket, the
 * whole of it before the deadline. 0, or a negative error (-HM_ETLS: the
 * peer is no TLS client, or its hello is unacceptable; hm_tls_last_reason
 * says why) after which the caller closes the socket. hm_tls_resumed tells
 * whether the client resumed a session. */
int hm_tls_accept(hm_tls *t, hm_sock *s, int64_t deadline);
/* As hm_tls_read, for a coroutine that watches the peer while another one
 * may be writing through the same hm_tls: what OpenSSL wants to send in
 * reply (a key update, an alert) stays buffered for the writer's next
 * hm_tls_write instead of being written here, so the two never interleave
 * bytes on the socket. */
ssize_t hm_tls_read_quiet(hm_tls *t, hm_sock *s, void *buf, size_t len, int64_t deadline);
/* Sends close_notify (after a complete handshake; otherwise does nothing).
 * 0 or a negative errno from the write. */
int hm_tls_close_notify(hm_tls *t, hm_sock *s, int64_t deadline);
hm_tls_fail hm_tls_last_fail(const hm_tls *t);
const char *hm_tls_last_reason(const hm_tls *t);

#endif

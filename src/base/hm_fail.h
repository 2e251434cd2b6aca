/* hm_fail.h — why a request failed, in the words the reports use.
 *
 * The vocabulary shared by the layer that classifies failures (proto: a
 * client connection sets hm_fail_kind, a TLS session hm_tls_fail) and the
 * layer that counts and reports them (stats), so that stats needs nothing
 * from proto. The names are the JSON keys of docs/output.md; never rename
 * one. Everything here is static: nothing to allocate or free. */
#ifndef HM_BASE_FAIL_H
#define HM_BASE_FAIL_H

#include <stdbool.h>
#include <stddef.h>

/* Why a request failed, as the summary reports it. */
typedef enum hm_fail_kind {
    HM_FAIL_NONE = 0,
    HM_FAIL_CONNECT,  /* could not connect (refused, unreachable, connect timeout) */
    HM_FAIL_TIMEOUT,  /* no complete response before the deadline */
    HM_FAIL_RESET,    /* connection reset or broken pipe */
    HM_FAIL_CLOSED,   /* server closed before a complete response */
    HM_FAIL_PROTOCOL, /* malformed or oversized response */
    HM_FAIL_TLS,      /* TLS handshake, verification or record failure */
    HM_FAIL_OTHER,
    HM_FAIL__COUNT
} hm_fail_kind;

/* "connect", "timeout", ... for reports and JSON keys ("other" when out of range). */
const char *hm_fail_kind_name(hm_fail_kind k);

/* The kind of a failed exchange's negative errno or HM_E* code, the same
 * for HTTP/1.1 and HTTP/2 (connect failures are told apart by the caller,
 * which knows it was connecting). */
hm_fail_kind hm_fail_of_error(int err);

/* Why a TLS operation failed, as the summary counts it. */
typedef enum hm_tls_fail {
    HM_TLS_OK = 0,
    HM_TLS_VERIFY,    /* the certificate did not verify */
    HM_TLS_HANDSHAKE, /* any other handshake failure */
    HM_TLS_EOF,       /* the peer closed without close_notify */
    HM_TLS_PROTOCOL,  /* an error after the handshake */
    HM_TLS__COUNT
} hm_tls_fail;

/* "tls_verify", "tls_handshake", ... for reports and JSON keys ("none" otherwise). */
const char *hm_tls_fail_name(hm_tls_fail f);

/* Why an SSE stream failed (a stream the run still wanted). */
typedef enum hm_sse_fail {
    HM_SSE_FAIL_NONE = 0,
    HM_SSE_FAIL_STATUS,   /* answered with a status other than 200 */
    HM_SSE_FAIL_PROTOCOL, /* malformed HTTP, an event over the limit, an undecodable event */
    HM_SSE_FAIL_CLOSED,   /* the server ended the stream while the run was live */
    HM_SSE_FAIL_TIMEOUT,  /* no headers, or no first (baseline) event, within --timeout; or
                           * the run ended it inside an unfinished line or event, with no
                           * complete event for longer than --timeout */
    HM_SSE_FAIL_CONNECT,  /* could not connect */
    HM_SSE_FAIL_RESET,    /* connection reset */
    HM_SSE_FAIL_OTHER,
    HM_SSE_FAIL__COUNT
} hm_sse_fail;

/* "status", "protocol", ... for reports and JSON keys ("other" when out of range). */
const char *hm_sse_fail_name(hm_sse_fail k);
/* The SSE kind of a request-level failure kind (a stream that failed like a request). */
hm_sse_fail hm_sse_fail_of(hm_fail_kind k);

/* How many bytes of a response a failure keeps as evidence. */
#define HM_EVIDENCE_BYTES 80

/* The first example of a kind of failure: what went wrong in words, where
 * (page, action, SSE; which VU or connection), and the bytes that showed
 * it (the status line, or the response's first bytes), escaped. Empty
 * strings when not known. Plain storage: nothing to free. */
typedef struct hm_fail_example {
    char reason[160];
    char where[96];
    char bytes[4 * HM_EVIDENCE_BYTES + 8]; /* every byte may need \xNN, then "..." */
} hm_fail_example;

/* Fills *ex unless it holds an example already (reason set); any argument
 * may be NULL. Returns true when it was filled. */
bool hm_fail_example_keep(hm_fail_example *ex, const char *reason, const char *where,
                          const char *bytes);

/* Writes in[0..n) for display, at most HM_EVIDENCE_BYTES of it: printable
 * ASCII as is, \r \n \t \" \\ and \xNN for the rest, "..." when cut.
 * Always NUL-terminates out (cap > 0); returns the length written. */
size_t hm_escape_bytes(const char *in, size_t n, char *out, size_t cap);

#endif

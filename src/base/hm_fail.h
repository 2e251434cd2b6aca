/* hm_fail.h — why a request failed, in the words the reports use.
 *
 * The vocabulary shared by the layer that classifies failures (proto: a
 * client connection sets hm_fail_kind, a TLS session hm_tls_fail) and the
 * layer that counts and reports them (stats), so that stats needs nothing
 * from proto. The names are the JSON keys of docs/output.md; never rename
 * one. Everything here is static: nothing to allocate or free. */
#ifndef HM_BASE_FAIL_H
#define HM_BASE_FAIL_H

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

#endif

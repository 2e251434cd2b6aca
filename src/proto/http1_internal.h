/* http1_internal.h — what http1.c (the llhttp core, the response and
 * request parsers) shares with http1_push.c (responses pushed as fields,
 * for HTTP/2). No other file includes it; its functions are prefixed h1_. */
#ifndef HM_HTTP1_INTERNAL_H
#define HM_HTTP1_INTERNAL_H

#include "proto/http1.h"

/* c_.state: where the parser stands between feeds. */
enum {
    ST_FRESH,   /* nothing fed since begin/reset/resume */
    ST_PARTIAL, /* a message is in progress */
    ST_DONE,    /* DONE was reported; llhttp is paused right after the message */
    ST_FAILED,  /* sticky error */
};

/* Headers some caller reads by name; HID_NONE for all others. */
enum {
    HID_NONE,
    HID_CONTENT_TYPE,
    HID_SET_COOKIE,
    HID_LOCATION,
    HID_X_VIA_WORKER,
    HID_CONNECTION,
    HID_HOST,
    HID_COOKIE,
    HID_ORIGIN,
    HID_CONTENT_LENGTH,
    HID_DATASTAR_REQUEST,
    HID_ACCEPT,
    HID_UPGRADE,
    HID_CONTENT_ENCODING,
};

enum { FOR_RESP = 1, FOR_REQ = 2 };

int h1_match_header(const char *name, size_t len, uint8_t dir);
int h1_fail(hm_http_core_ *c, int err, const char *reason);
int h1_arena_append(hm_http_core_ *c, const char *s, size_t n);
void h1_core_clear_msg(hm_http_core_ *c);
int h1_body_bytes(hm_http_core_ *c, const char *at, size_t len);
void h1_resp_clear_results(hm_http_resp_parser *p);
int h1_resp_head_done(hm_http_resp_parser *p);

#endif

/* A server's protocol errors in words (h2_internal.h): nghttp2 finds them
 * (RFC 9113 sections 5 and 6, its flood bounds) and tells of them through
 * its callbacks: the frame it found invalid, its words, the GOAWAY it
 * answered with. What it says is kept on the link; h2_client.c gives it
 * to the streams that fail by it, with the frame as the report's bytes. */
#include "proto/h2_internal.h"

#include <stdio.h>

/* nghttp2's error code (NGHTTP2_ERR_*) in words of what the server did. */
const char *h2l_lib_words(int lib)
{
    switch (lib) {
    case NGHTTP2_ERR_FLOODED:
        return "a flood: over 1000 SETTINGS or PING frames awaiting hammer's ACK";
    case NGHTTP2_ERR_TOO_MANY_CONTINUATIONS:
        return "a CONTINUATION flood: more than 8 CONTINUATION frames after one HEADERS";
    case NGHTTP2_ERR_FLOW_CONTROL:
        return "a flow-control window past 2^31-1";
    case NGHTTP2_ERR_FRAME_SIZE_ERROR:
        return "a frame of a size its type or SETTINGS_MAX_FRAME_SIZE forbids";
    case NGHTTP2_ERR_HEADER_COMP:
        return "a header block HPACK cannot decode (a bad table size update, an index past the "
               "table, bad Huffman)";
    case NGHTTP2_ERR_PUSH_DISABLED:
        return "PUSH_PROMISE although hammer disabled push";
    case NGHTTP2_ERR_HTTP_HEADER:
        return "a header field HTTP/2 forbids";
    case NGHTTP2_ERR_HTTP_MESSAGING:
        return "a response that breaks HTTP/2's message rules";
    case NGHTTP2_ERR_SETTINGS_EXPECTED:
        return "a first frame that is not SETTINGS";
    case NGHTTP2_ERR_TOO_MANY_SETTINGS:
        return "a SETTINGS frame with too many entries";
    case 0:
        return "a frame HTTP/2 does not allow";
    default:
        return nghttp2_strerror(lib);
    }
}

/* The connection's protocol error of the server's, in words. */
void h2l_proto_why(const h2_link *L, char *why, size_t cap)
{
    const char *what = L->bad_msg[0] ? L->bad_msg : h2l_lib_words(L->bad_lib);
    if (L->sent_goaway_code)
        snprintf(why, cap, "HTTP/2 protocol error by the server (%s): %s",
                 nghttp2_http2_strerror(L->sent_goaway_code), what);
    else
        snprintf(why, cap, "HTTP/2 protocol error by the server: %s", what);
}

/* The frame that showed a failure, as the report's bytes (after the
 * status line when a head came): its frames are binary. */
void h2l_frame_evidence(hm_http_conn *c, const nghttp2_frame_hd *hd)
{
    static const char *const names[] = {"DATA",          "HEADERS",      "PRIORITY", "RST_STREAM",
                                        "SETTINGS",      "PUSH_PROMISE", "PING",     "GOAWAY",
                                        "WINDOW_UPDATE", "CONTINUATION"};
    char type[16];
    if (hd->type < HM_ARRAY_LEN(names))
        snprintf(type, sizeof(type), "%s", names[hd->type]);
    else
        snprintf(type, sizeof(type), "type 0x%02x", hd->type);
    char *head = hm_http_conn_head_room_(c);
    if (!head) return;
    size_t room = HM_EVIDENCE_BYTES;
    size_t at = c->head_len < room / 2 ? c->head_len : 0;
    int k = snprintf(head + at, room - at, "%s frame (stream %d, flags 0x%02x, %zu bytes)", type,
                     hd->stream_id, hd->flags, hd->length);
    c->head_len = (uint8_t)(at + (k < 0 ? 0 : (size_t)k < room - at ? (size_t)k : room - at - 1));
}

/* nghttp2 found a frame invalid: a connection error (a GOAWAY follows) or
 * a stream's (an RST_STREAM follows, then on_stream_close). */
static int on_invalid_frame(nghttp2_session *ng, const nghttp2_frame *f, int lib_error, void *user)
{
    h2_link *L = user;
    L->bad_hd = f->hd;
    L->bad_lib = lib_error ? lib_error : NGHTTP2_ERR_PROTO;
    /* The stream's own copy: several streams may break the rules in one
     * read, and their RST_STREAMs close them later, one by one. */
    hm_h2_stream *s =
        f->hd.stream_id ? nghttp2_session_get_stream_user_data(ng, f->hd.stream_id) : NULL;
    if (s && !s->done) {
        s->bad_hd = f->hd;
        s->bad_lib = L->bad_lib;
        snprintf(s->bad_msg, sizeof(s->bad_msg), "%s", L->bad_msg);
    }
    return 0;
}

/* nghttp2's words for what it found (a header field it refused, say). */
static int on_error(nghttp2_session *ng, int lib_error, const char *msg, size_t len, void *user)
{
    (void)ng, (void)lib_error;
    h2_link *L = user;
    snprintf(L->bad_msg, sizeof(L->bad_msg), "%.*s", (int)len, msg);
    return 0;
}

/* The GOAWAY nghttp2 ends the connection with over the server's error:
 * its debug data says what the error was ("SETTINGS: too large ..."). */
static int on_frame_send(nghttp2_session *ng, const nghttp2_frame *f, void *user)
{
    (void)ng;
    h2_link *L = user;
    if (f->hd.type != NGHTTP2_GOAWAY || f->goaway.error_code == NGHTTP2_NO_ERROR) return 0;
    L->sent_goaway_code = f->goaway.error_code;
    /* No frame was found invalid: the error was in decoding one, and
     * COMPRESSION_ERROR is HPACK's (the frame being decoded showed it). */
    if (!L->bad_lib && f->goaway.error_code == NGHTTP2_COMPRESSION_ERROR) {
        L->bad_lib = NGHTTP2_ERR_HEADER_COMP;
        L->bad_hd = L->last_hd;
    }
    if (f->goaway.opaque_data_len)
        snprintf(L->bad_msg, sizeof(L->bad_msg), "%.*s", (int)f->goaway.opaque_data_len,
                 (const char *)f->goaway.opaque_data);
    return 0;
}

void h2l_set_error_callbacks(nghttp2_session_callbacks *cb)
{
    nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(cb, on_invalid_frame);
    nghttp2_session_callbacks_set_error_callback2(cb, on_error);
    nghttp2_session_callbacks_set_on_frame_send_callback(cb, on_frame_send);
}

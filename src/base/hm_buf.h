/* hm_buf.h — a growable byte buffer, reused rather than freed.
 *
 * A zeroed hm_buf is empty and allocates nothing. Once allocated, data is
 * always NUL-terminated after len (the NUL is not counted), so a buffer of
 * text is a C string too. The capacity doubles (from 64 bytes), so appends
 * are amortised O(1), and setting len = 0 keeps the block for the next
 * message: a connection in steady state allocates nothing.
 *
 * Ownership: whoever embeds the hm_buf owns data (hm_alloc'd) until
 * hm_buf_free. data may move on any call that grows the buffer: keep
 * offsets, not pointers, across appends. Not thread-safe. */
#ifndef HM_BASE_BUF_H
#define HM_BASE_BUF_H

#include <stddef.h>

typedef struct hm_buf {
    char *data; /* NULL until the first growth */
    size_t len; /* bytes in use */
    size_t cap; /* bytes allocated (room for len + 1 at least, once allocated) */
} hm_buf;

/* Makes room for `extra` more bytes after len, plus the NUL. 0 or -ENOMEM
 * (also when the size would overflow). */
int hm_buf_reserve(hm_buf *b, size_t extra);
/* Appends n bytes (p may be NULL when n is 0). 0 or -ENOMEM. */
int hm_buf_append(hm_buf *b, const void *p, size_t n);
/* Replaces the contents with n bytes (p not inside b). 0 or -ENOMEM
 * (contents unchanged). */
int hm_buf_set(hm_buf *b, const void *p, size_t n);
/* Releases the block; b is empty (zeroed) afterwards. */
void hm_buf_free(hm_buf *b);

#endif

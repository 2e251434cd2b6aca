/* h2.h — what both ends of HTTP/2 share: nghttp2's allocator routed
 * through hm_alloc, the client connection preface, and the header fields
 * HTTP/2 forbids (RFC 9113 section 8.2.2). The protocol itself is
 * libnghttp2's; hammer's client is h2_client.h, bench_app's server
 * bench_app/h2.c.
 *
 * Ownership: hm_h2_mem() is static and lives as long as the process;
 * nothing here allocates. */
#ifndef HM_PROTO_H2_H
#define HM_PROTO_H2_H

#include <nghttp2/nghttp2.h>

#include <stdbool.h>
#include <stddef.h>

/* "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n": how an h2c client with prior
 * knowledge opens a cleartext connection. */
#define HM_H2_PREFACE NGHTTP2_CLIENT_MAGIC
#define HM_H2_PREFACE_LEN NGHTTP2_CLIENT_MAGIC_LEN

/* nghttp2's allocations through hm_alloc (mimalloc; libc under
 * sanitizers), for nghttp2_session_*_new3. */
nghttp2_mem *hm_h2_mem(void);

/* A connection-specific field HTTP/2 does not carry (Connection,
 * Keep-Alive, Proxy-Connection, Transfer-Encoding, Upgrade) or one it
 * carries otherwise (Host: :authority), by name, case-insensitively. */
bool hm_h2_dropped_field(const char *name, size_t len);

/* Writes the lower-case copy of name[0, len) into out (len bytes):
 * HTTP/2 field names are lower case. */
void hm_h2_lower(char *out, const char *name, size_t len);

#endif

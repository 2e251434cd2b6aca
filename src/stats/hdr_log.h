/* hdr_log.h — HdrHistogram's compressed histogram encoding and interval log.
 *
 * The encoding is the reference's "V2 compressed" form that every
 * HdrHistogram implementation (Java, C, Go, JavaScript, Python) reads: a
 * 40-byte big-endian header (cookie 0x1c849313, payload length, normalizing
 * offset 0, significant digits, lowest, highest, conversion ratio 1.0), then
 * the counts up to the maximum's slot as ZigZag LEB128 varints where a
 * negative number is a run of empty slots; that is zlib-deflated behind an
 * 8-byte header (cookie 0x1c849314, deflated length) and written as base64,
 * so every encoded histogram starts with "HISTF".
 *
 * The interval log is the text format of HistogramLogWriter (version 1.3):
 * `#[...]` comment lines, a CSV header line, then one line per interval:
 * `[Tag=NAME,]start,length,max,HISTF...` with start relative to the
 * `#[StartTime: ...]` line, start and length in seconds and max in
 * milliseconds (hammer records microseconds).
 *
 * zlib deflates and OpenSSL's EVP_EncodeBlock/EVP_DecodeBlock do the base64;
 * only the varint layout is ours.
 *
 * Memory: the encoder returns a string the caller frees with hm_free; the
 * decoder initialises the caller's hm_hdr (destroy it as usual). The log
 * writer owns nothing but the FILE it opened. */
#ifndef HM_STATS_HDR_LOG_H
#define HM_STATS_HDR_LOG_H

#include "stats/hdr.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Encodes h; *out is a NUL-terminated base64 string ("HISTF..."), owned by
 * the caller (hm_free). 0, -ENOMEM or -EIO (zlib failed). */
int hm_hdr_encode_base64(const hm_hdr *h, char **out);

/* Decodes one base64 histogram into *h, which it initialises with the
 * encoded configuration. 0, or -EINVAL for anything that is not a V2
 * compressed histogram (bad base64, cookie, zlib stream, header or counts),
 * -ENOMEM. On failure *h is zeroed. */
int hm_hdr_decode_base64(const char *b64, size_t len, hm_hdr *h);

/* ---- the interval log -------------------------------------------------- */

typedef struct hm_hlog {
    FILE *f;
    int64_t start_ns; /* hm_now_ns() at the StartTime line */
} hm_hlog;

/* Creates (truncates) path and writes the header; StartTime is now.
 * 0 or a negative errno. */
int hm_hlog_open(hm_hlog *log, const char *path);

/* Creates (truncates) path and writes the header with StartTime
 * start_epoch_s (seconds since the epoch); log->start_ns is then 0, so
 * hm_hlog_write takes times relative to that start (merging logs).
 * 0 or a negative errno. */
int hm_hlog_open_at(hm_hlog *log, const char *path, double start_epoch_s);

/* Appends one interval: [from_ns, to_ns) on the hm_now_ns() clock, tag NULL
 * or a name without commas or spaces. Flushes, so a killed run keeps every
 * interval written so far. 0 or a negative errno. */
int hm_hlog_write(hm_hlog *log, const char *tag, int64_t from_ns, int64_t to_ns, const hm_hdr *h);

/* Closes the file; 0, or a negative errno if anything written was lost
 * (-EIO when an earlier write failed and its errno is gone). */
int hm_hlog_close(hm_hlog *log);

/* One interval read back from a log. */
typedef struct hm_hlog_entry {
    char tag[64]; /* "" when untagged */
    double start_s, length_s, max_ms;
    hm_hdr hist; /* initialised by the reader; destroy it */
} hm_hlog_entry;

/* Reads the StartTime of the log's header into *epoch_s and rewinds f.
 * 0, or -EINVAL when the header has none. */
int hm_hlog_start_time(FILE *f, double *epoch_s);

/* Reads the next interval line of f, skipping comments and the CSV header.
 * 1 when *e was filled, 0 at the end, -EINVAL for a malformed line. */
int hm_hlog_read(FILE *f, hm_hlog_entry *e);

#endif

/* fuzz_common.h — what every libFuzzer harness in fuzz/ shares: the input
 * layout, a transcript to compare two parses of the same bytes, and running
 * a parse on a stack the size of hammer's coroutine stacks.
 *
 * Input layout (missing bytes read as 0):
 *   byte 0       flags: bits 0-6 are the harness's own (each documents them);
 *                bit 7 is HM_FUZZ_EXPAND
 *   bytes 1-8    split sizes: the payload is fed in pieces of split[i % 8]
 *                bytes; 0 means "all that is left", so eight zeros feed it
 *                whole
 *   bytes 9-11   expansion (only with HM_FUZZ_EXPAND): payload[off, off+len)
 *                repeated reps times in place, off = b9, len = 1 + b10 % 16,
 *                reps = 16 * b11. A short input can so stand for deep nesting
 *                or a long run, which coverage alone never rewards.
 *   bytes 12-    the payload
 * fuzz/seeds.py writes seeds in this layout.
 *
 * Memory: hm_fuzz_input_init allocates the payload (malloc); release it with
 * hm_fuzz_input_free. A hm_fuzz_log owns its buffer; hm_fuzz_log_free. */
#ifndef HM_FUZZ_COMMON_H
#define HM_FUZZ_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HM_FUZZ_HEADER 12
#define HM_FUZZ_EXPAND 0x80

typedef struct hm_fuzz_input {
    uint8_t flags;
    uint8_t split[8];
    uint8_t *data; /* payload after expansion, NUL-terminated (not counted) */
    size_t len;
} hm_fuzz_input;

/* Reads the header and builds the payload; aborts only when out of memory. */
void hm_fuzz_input_init(hm_fuzz_input *in, const uint8_t *data, size_t size);
void hm_fuzz_input_free(hm_fuzz_input *in);

/* Length of piece number i when left bytes remain (>= 1 when left >= 1). */
size_t hm_fuzz_piece(const hm_fuzz_input *in, size_t i, size_t left);

/* A transcript of what a parser reported. Two parses of the same bytes that
 * must agree append the same things; hm_fuzz_log_same aborts, printing both,
 * when they differ. */
typedef struct hm_fuzz_log {
    char *data;
    size_t len, cap;
} hm_fuzz_log;

void hm_fuzz_log_printf(hm_fuzz_log *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends n raw bytes behind their length, so any byte value is unambiguous. */
void hm_fuzz_log_bytes(hm_fuzz_log *l, const char *tag, const void *p, size_t n);
/* Appends n raw bytes (for a caller that frames them itself). */
void hm_fuzz_log_raw(hm_fuzz_log *l, const void *p, size_t n);
void hm_fuzz_log_same(const hm_fuzz_log *a, const hm_fuzz_log *b, const char *what);
void hm_fuzz_log_free(hm_fuzz_log *l);

/* Runs fn(arg) to completion inside a hammer coroutine: HM_DEFAULT_STACK
 * bytes with a guard page, as every virtual user and bench_app connection
 * has. One loop serves every input; stacks are pooled.
 *
 * It also measures how much of that stack the run used (the lowest byte
 * written) and reports it to libFuzzer as a feature in 1 KiB steps: an
 * input that goes deeper counts as new even when it covers no new code, so
 * the fuzzer climbs towards recursion that overflows a coroutine stack
 * (deep JSON, say) instead of having to guess it in one step. */
void hm_fuzz_on_coro_stack(void (*fn)(void *), void *arg);

/* The libFuzzer entry point of a harness whose whole work is fn(input),
 * run on a coroutine stack: HM_FUZZ_ENTRY(body) defines
 * LLVMFuzzerTestOneInput around it. */
#define HM_FUZZ_ENTRY(fn)                                                                          \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);                                  \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)                                   \
    {                                                                                              \
        hm_fuzz_input in;                                                                          \
        hm_fuzz_input_init(&in, data, size);                                                       \
        hm_fuzz_on_coro_stack(fn, &in);                                                            \
        hm_fuzz_input_free(&in);                                                                   \
        return 0;                                                                                  \
    }

/* For a parser that reads a file by name (flows, HARs, profiles): writes
 * the n bytes to NAME in this process's scratch directory (made once under
 * $TMPDIR or /tmp, removed at exit, so relative paths inside the file
 * resolve there) and returns its path (static storage, valid until the
 * next call). */
const char *hm_fuzz_file(const char *name, const void *p, size_t n);

/* True when the payload names a file outside the scratch directory that a
 * parser would read endlessly or that is not the run's own (/dev/zero,
 * /proc/..., /sys/...): such inputs are skipped, since what they find is
 * the harness's machine, not a parser bug. */
bool hm_fuzz_names_device(const hm_fuzz_input *in);

/* Aborts with a message: a harness's own property check failed. */
void hm_fuzz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#define HM_FUZZ_CHECK(cond)                                                                        \
    do {                                                                                           \
        if (!(cond)) hm_fuzz_fail("%s:%d: check failed: %s", __FILE__, __LINE__, #cond);           \
    } while (0)

#endif

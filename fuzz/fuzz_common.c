/* fuzz_common.c — see fuzz_common.h. */
#include "fuzz_common.h"

#include "engine/engine.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) hm_fuzz_fail("out of memory (%zu bytes)", n);
    return p;
}

void hm_fuzz_input_init(hm_fuzz_input *in, const uint8_t *data, size_t size)
{
    uint8_t h[HM_FUZZ_HEADER] = {0};
    memcpy(h, data, size < HM_FUZZ_HEADER ? size : HM_FUZZ_HEADER);
    const uint8_t *p = size > HM_FUZZ_HEADER ? data + HM_FUZZ_HEADER : data;
    size_t n = size > HM_FUZZ_HEADER ? size - HM_FUZZ_HEADER : 0;
    in->flags = h[0];
    memcpy(in->split, h + 1, 8);

    size_t off = h[9], len = 1 + h[10] % 16, reps = 16 * (size_t)h[11];
    bool expand = (in->flags & HM_FUZZ_EXPAND) && off < n;
    if (expand && off + len > n) len = n - off;
    size_t total = expand ? n - len + len * reps : n;
    in->data = xmalloc(total + 1);
    if (expand) {
        memcpy(in->data, p, off);
        for (size_t r = 0; r < reps; r++)
            memcpy(in->data + off + r * len, p + off, len);
        memcpy(in->data + off + reps * len, p + off + len, n - off - len);
    } else if (n) {
        memcpy(in->data, p, n);
    }
    in->data[total] = 0;
    in->len = total;
}

void hm_fuzz_input_free(hm_fuzz_input *in)
{
    free(in->data);
    in->data = NULL;
}

size_t hm_fuzz_piece(const hm_fuzz_input *in, size_t i, size_t left)
{
    size_t n = in->split[i % 8];
    return n == 0 || n > left ? left : n;
}

static void log_reserve(hm_fuzz_log *l, size_t more)
{
    if (l->len + more + 1 <= l->cap) return;
    size_t cap = l->cap ? l->cap : 256;
    while (cap < l->len + more + 1)
        cap *= 2;
    char *d = realloc(l->data, cap);
    if (!d) hm_fuzz_fail("out of memory (log of %zu bytes)", cap);
    l->data = d;
    l->cap = cap;
}

void hm_fuzz_log_printf(hm_fuzz_log *l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) hm_fuzz_fail("bad log format %s", fmt);
    log_reserve(l, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(l->data + l->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    l->len += (size_t)n;
}

void hm_fuzz_log_raw(hm_fuzz_log *l, const void *p, size_t n)
{
    log_reserve(l, n);
    if (n) memcpy(l->data + l->len, p, n);
    l->len += n;
    l->data[l->len] = 0;
}

void hm_fuzz_log_bytes(hm_fuzz_log *l, const char *tag, const void *p, size_t n)
{
    hm_fuzz_log_printf(l, " %s[%zu]=", tag, n);
    hm_fuzz_log_raw(l, p, n);
}

static void print_escaped(const char *label, const hm_fuzz_log *l)
{
    fprintf(stderr, "%s (%zu bytes): ", label, l->len);
    size_t show = l->len < 4000 ? l->len : 4000;
    for (size_t i = 0; i < show; i++) {
        unsigned char c = (unsigned char)l->data[i];
        if (c >= 0x20 && c < 0x7f && c != '\\')
            fputc(c, stderr);
        else
            fprintf(stderr, "\\x%02x", c);
    }
    fputs(show < l->len ? "...\n" : "\n", stderr);
}

void hm_fuzz_log_same(const hm_fuzz_log *a, const hm_fuzz_log *b, const char *what)
{
    if (a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0)) return;
    size_t i = 0;
    while (i < a->len && i < b->len && a->data[i] == b->data[i])
        i++;
    fprintf(stderr, "fuzz: %s differ at byte %zu\n", what, i);
    print_escaped("first ", a);
    print_escaped("second", b);
    abort();
}

void hm_fuzz_log_free(hm_fuzz_log *l)
{
    free(l->data);
    memset(l, 0, sizeof(*l));
}

/* libFuzzer's extra counters: each non-zero byte after a run is a feature. */
__attribute__((used, section("__libfuzzer_extra_counters"))) static uint8_t stack_counters[80];

#define STACK_PAINT UINT64_C(0xa5a5a5a5a5a5a5a5)
#define STACK_MARGIN 4096 /* left unpainted below the trampoline's frame */

/* Not instrumented: ASan need not know about words below the stack pointer. */
__attribute__((no_sanitize("address"), noinline)) static void paint(volatile uint64_t *lo, size_t n)
{
    for (size_t i = 0; i < n; i++)
        lo[i] = STACK_PAINT;
}

/* Index of the lowest word of lo[0, n) that is no longer paint (n if none). */
__attribute__((no_sanitize("address"), noinline)) static size_t
first_written(const volatile uint64_t *lo, size_t n)
{
    size_t i = 0;
    while (i < n && lo[i] == STACK_PAINT)
        i++;
    return i;
}

typedef struct trampoline {
    void (*fn)(void *);
    void *arg;
} trampoline;

static void measured(void *p)
{
    /* Words below first_dirty are still paint from the previous run on the
     * same stack, so only the rest is painted again. */
    static volatile uint64_t *last_lo;
    static size_t first_dirty;
    trampoline *t = p;
    size_t left = hm_coro_stack_left();
    uint8_t *here = __builtin_frame_address(0);
    if (left < 2 * STACK_MARGIN) {
        t->fn(t->arg);
        return;
    }
    uintptr_t lo_addr =
        ((uintptr_t)(here - left) + 256 + 7) & ~(uintptr_t)7; /* clear of the guard */
    volatile uint64_t *lo = (volatile uint64_t *)lo_addr;
    size_t n = ((uintptr_t)(here - STACK_MARGIN) - lo_addr) / sizeof(uint64_t);
    if (lo != last_lo) first_dirty = 0;
    if (first_dirty < n) paint(lo + first_dirty, n - first_dirty);
    t->fn(t->arg);
    size_t low = first_written(lo, n);
    last_lo = lo;
    first_dirty = low;
    size_t used = (n - low) * sizeof(uint64_t) + STACK_MARGIN;
    size_t bucket = used / 1024;
    if (bucket >= sizeof(stack_counters)) bucket = sizeof(stack_counters) - 1;
    stack_counters[bucket] = 1;
}

void hm_fuzz_on_coro_stack(void (*fn)(void *), void *arg)
{
    static hm_loop *loop;
    if (!loop) {
        /* epoll: nothing here does I/O, and it needs no io_uring support. */
        hm_loop_options o = {.backend = HM_BACKEND_EPOLL, .stack_size = HM_DEFAULT_STACK};
        int rc = hm_loop_create(&loop, &o);
        if (rc < 0) hm_fuzz_fail("hm_loop_create: %s", hm_strerror(rc));
    }
    trampoline t = {fn, arg};
    int rc = hm_coro_spawn(loop, measured, &t, NULL);
    if (rc < 0) hm_fuzz_fail("hm_coro_spawn: %s", hm_strerror(rc));
    rc = hm_loop_run(loop);
    if (rc < 0) hm_fuzz_fail("hm_loop_run: %s", hm_strerror(rc));
}

/* libFuzzer's own mutator, for the payload. */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

/* One mutation in four changes the header: a flag, a split size, or the
 * expansion (aimed inside the payload, repeat count nudged or redrawn).
 * Left to byte-level mutations of the whole input, a header byte changes
 * too rarely for inputs that need a large repeat count to be found. */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    uint32_t x = seed ? seed : 1;
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    if (x % 4 || max_size < HM_FUZZ_HEADER) return LLVMFuzzerMutate(data, size, max_size);
    if (size < HM_FUZZ_HEADER) {
        memset(data + size, 0, HM_FUZZ_HEADER - size);
        size = HM_FUZZ_HEADER;
    }
    size_t payload = size - HM_FUZZ_HEADER;
    uint32_t r = x >> 8;
    switch ((x >> 2) % 5) {
    case 0:
        data[0] ^= (uint8_t)(1u << (r % 8));
        break;
    case 1:
        data[1 + r % 8] = (uint8_t)(r >> 3);
        break;
    case 2:
        data[0] |= HM_FUZZ_EXPAND;
        data[9] = (uint8_t)(payload ? (r >> 4) % (payload < 256 ? payload : 256) : 0);
        data[10] = (uint8_t)(r % 16);
        break;
    case 3:
        data[11] = (uint8_t)(data[11] + 1 + r % 4);
        break;
    default:
        data[11] = (uint8_t)r;
        break;
    }
    return size;
}

void hm_fuzz_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fuzz: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

static char scratch[256];

static void scratch_remove(void)
{
    char cmd[300];
    if (!scratch[0]) return;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
    if (system(cmd) != 0) fprintf(stderr, "fuzz: could not remove %s\n", scratch);
}

const char *hm_fuzz_file(const char *name, const void *p, size_t n)
{
    static char path[512];
    if (!scratch[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(scratch, sizeof(scratch), "%s/hm-fuzz-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
        if (!mkdtemp(scratch)) hm_fuzz_fail("mkdtemp %s failed", scratch);
        atexit(scratch_remove);
    }
    snprintf(path, sizeof(path), "%s/%s", scratch, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) hm_fuzz_fail("cannot write %s", path);
    return path;
}

bool hm_fuzz_names_device(const hm_fuzz_input *in)
{
    static const char *const bad[] = {"/dev", "/proc", "/sys", "dev/", "proc/", "sys/"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (memmem(in->data, in->len, bad[i], strlen(bad[i]))) return true;
    return false;
}

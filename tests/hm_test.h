/* hm_test.h — the assertions every hammer test uses.
 *
 * A test is one executable per behaviour. It exits 0 on pass, 1 on the first
 * failed assertion (after printing both operands and where), and 77 to skip,
 * always printing why (CTest maps 77 to "skipped"). */
#ifndef HM_TEST_H
#define HM_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HM_TEST_SKIP_CODE 77

#define HM_FAIL_(...)                                                                              \
    do {                                                                                           \
        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                            \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fputc('\n', stderr);                                                                       \
        exit(1);                                                                                   \
    } while (0)

#define ASSERT(c)                                                                                  \
    do {                                                                                           \
        if (!(c)) HM_FAIL_("assertion failed: %s", #c);                                            \
    } while (0)

#define ASSERT_CMP_(a, op, b)                                                                      \
    do {                                                                                           \
        int64_t a_ = (int64_t)(a), b_ = (int64_t)(b);                                              \
        if (!(a_ op b_)) HM_FAIL_("%s %s %s: %" PRId64 " vs %" PRId64, #a, #op, #b, a_, b_);       \
    } while (0)

#define ASSERT_EQ(a, b) ASSERT_CMP_(a, ==, b)
#define ASSERT_NE(a, b) ASSERT_CMP_(a, !=, b)
#define ASSERT_LT(a, b) ASSERT_CMP_(a, <, b)
#define ASSERT_LE(a, b) ASSERT_CMP_(a, <=, b)
#define ASSERT_GT(a, b) ASSERT_CMP_(a, >, b)
#define ASSERT_GE(a, b) ASSERT_CMP_(a, >=, b)

#define ASSERT_DBL_NEAR(a, b, eps)                                                                 \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (!(a_ - b_ <= (eps) && b_ - a_ <= (eps)))                                               \
            HM_FAIL_("%s ~= %s: %.9g vs %.9g", #a, #b, a_, b_);                                    \
    } while (0)

#define ASSERT_STREQ(a, b)                                                                         \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (!a_ || !b_ || strcmp(a_, b_) != 0)                                                     \
            HM_FAIL_("%s == %s: \"%s\" vs \"%s\"", #a, #b, a_ ? a_ : "(null)",                     \
                     b_ ? b_ : "(null)");                                                          \
    } while (0)

/* Compares a (pointer, length) pair with a C string. */
#define ASSERT_MEMEQ(p, n, s)                                                                      \
    do {                                                                                           \
        const char *p_ = (const char *)(p), *s_ = (s);                                             \
        size_t n_ = (n);                                                                           \
        if (n_ != strlen(s_) || memcmp(p_, s_, n_) != 0)                                           \
            HM_FAIL_("%s == %s: \"%.*s\" vs \"%s\"", #p, #s, (int)n_, p_, s_);                     \
    } while (0)

#define HM_SKIP(...)                                                                               \
    do {                                                                                           \
        printf("SKIP: ");                                                                          \
        printf(__VA_ARGS__);                                                                       \
        putchar('\n');                                                                             \
        exit(HM_TEST_SKIP_CODE);                                                                   \
    } while (0)

#endif

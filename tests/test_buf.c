/* base/hm_buf.h: the growable byte buffer bench_app, the HTTP codec and the
 * SSE parser share. */
#include "base/hm_base.h"
#include "base/hm_buf.h"
#include "hm_test.h"

#include <stdint.h>

/* A zeroed buffer is empty and owns nothing; the first append allocates and
 * NUL-terminates. */
static void test_empty_then_append(void)
{
    hm_buf b = {0};
    ASSERT(b.data == NULL);
    ASSERT_EQ(hm_buf_append(&b, NULL, 0), 0);
    ASSERT(b.data != NULL);
    ASSERT_EQ(b.len, 0);
    ASSERT_STREQ(b.data, "");
    ASSERT_EQ(hm_buf_append(&b, "abc", 3), 0);
    ASSERT_EQ(hm_buf_append(&b, "de", 2), 0);
    ASSERT_MEMEQ(b.data, b.len, "abcde");
    ASSERT_EQ(b.data[b.len], '\0');
    ASSERT_GT(b.cap, b.len);
    hm_buf_free(&b);
    ASSERT(b.data == NULL);
    ASSERT_EQ(b.len, 0);
    ASSERT_EQ(b.cap, 0);
}

/* Growth keeps every byte, and a buffer emptied with len = 0 is refilled in
 * the same block: steady state allocates nothing. */
static void test_growth_and_reuse(void)
{
    hm_buf b = {0};
    char chunk[100];
    for (size_t i = 0; i < sizeof(chunk); i++)
        chunk[i] = (char)('a' + i % 26);
    for (int i = 0; i < 1000; i++)
        ASSERT_EQ(hm_buf_append(&b, chunk, sizeof(chunk)), 0);
    ASSERT_EQ(b.len, 100000);
    for (size_t i = 0; i < b.len; i++)
        ASSERT_EQ(b.data[i], chunk[i % sizeof(chunk)]);
    ASSERT_EQ(b.data[b.len], '\0');
    /* Doubling: the capacity is at most about twice what was asked for. */
    ASSERT_LE(b.cap, 2 * (b.len + 1));
    char *block = b.data;
    size_t cap = b.cap;
    for (int round = 0; round < 10; round++) {
        b.len = 0;
        for (int i = 0; i < 1000; i++)
            ASSERT_EQ(hm_buf_append(&b, chunk, sizeof(chunk)), 0);
    }
    ASSERT(b.data == block);
    ASSERT_EQ(b.cap, cap);
    hm_buf_free(&b);
}

/* reserve makes room for extra bytes plus the NUL and moves nothing when the
 * room is there already. */
static void test_reserve(void)
{
    hm_buf b = {0};
    ASSERT_EQ(hm_buf_reserve(&b, 1000), 0);
    ASSERT_GE(b.cap, 1001);
    ASSERT_EQ(b.len, 0);
    char *block = b.data;
    for (int i = 0; i < 1000; i++)
        ASSERT_EQ(hm_buf_append(&b, "x", 1), 0);
    ASSERT(b.data == block);
    ASSERT_EQ(b.len, 1000);
    /* A size that would overflow is refused, and the buffer is unchanged. */
    ASSERT_EQ(hm_buf_reserve(&b, SIZE_MAX - 10), -ENOMEM);
    ASSERT_EQ(hm_buf_append(&b, "y", SIZE_MAX / 2), -ENOMEM);
    ASSERT(b.data == block);
    ASSERT_EQ(b.len, 1000);
    hm_buf_free(&b);
}

/* set replaces the contents, shorter or longer, and leaves a C string. */
static void test_set(void)
{
    hm_buf b = {0};
    ASSERT_EQ(hm_buf_set(&b, "", 0), 0);
    ASSERT(b.data != NULL);
    ASSERT_STREQ(b.data, "");
    ASSERT_EQ(hm_buf_set(&b, "hello world", 11), 0);
    ASSERT_STREQ(b.data, "hello world");
    ASSERT_EQ(hm_buf_set(&b, "hi", 2), 0);
    ASSERT_STREQ(b.data, "hi");
    ASSERT_EQ(b.len, 2);
    char big[300];
    memset(big, 'z', sizeof(big));
    ASSERT_EQ(hm_buf_set(&b, big, sizeof(big)), 0);
    ASSERT_EQ(b.len, 300);
    ASSERT_EQ(b.data[299], 'z');
    ASSERT_EQ(b.data[300], '\0');
    hm_buf_free(&b);
}

int main(void)
{
    test_empty_then_append();
    test_growth_and_reuse();
    test_reserve();
    test_set();
    printf("buf: ok\n");
    return 0;
}

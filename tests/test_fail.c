/* Failure vocabulary: names of the kinds, the first-example record, and how
 * evidence bytes are shown (escaped, at most HM_EVIDENCE_BYTES of them). */
#include "base/hm_fail.h"
#include "hm_test.h"

#include <string.h>

int main(void)
{
    ASSERT_STREQ(hm_sse_fail_name(HM_SSE_FAIL_STATUS), "status");
    ASSERT_STREQ(hm_sse_fail_name(HM_SSE_FAIL_OTHER), "other");
    ASSERT_STREQ(hm_sse_fail_name((hm_sse_fail)99), "other");
    ASSERT_EQ(hm_sse_fail_of(HM_FAIL_TIMEOUT), HM_SSE_FAIL_TIMEOUT);
    ASSERT_EQ(hm_sse_fail_of(HM_FAIL_TLS), HM_SSE_FAIL_OTHER);

    char out[4 * HM_EVIDENCE_BYTES + 8];
    static const char sse[] = "6f\r\nevent: x\n\"q\"\\\x01\xff";
    ASSERT_EQ(hm_escape_bytes(sse, sizeof(sse) - 1, out, sizeof(out)), strlen(out));
    ASSERT_STREQ(out, "6f\\r\\nevent: x\\n\\\"q\\\"\\\\\\x01\\xff");

    /* Cut at HM_EVIDENCE_BYTES source bytes, and said so. */
    char many[200];
    memset(many, 'a', sizeof(many));
    hm_escape_bytes(many, sizeof(many), out, sizeof(out));
    ASSERT_EQ(strlen(out), HM_EVIDENCE_BYTES + 3);
    ASSERT(!strcmp(out + HM_EVIDENCE_BYTES, "..."));
    /* The worst case (every byte \xNN) fits the example's field. */
    memset(many, 0, sizeof(many));
    hm_fail_example ex = {0};
    hm_escape_bytes(many, sizeof(many), ex.bytes, sizeof(ex.bytes));
    ASSERT_EQ(strlen(ex.bytes), 4 * HM_EVIDENCE_BYTES + 3);
    /* A small buffer is never overrun and always terminated. */
    char small[8];
    hm_escape_bytes(many, sizeof(many), small, sizeof(small));
    ASSERT(strlen(small) < sizeof(small));

    /* The first example sticks. */
    hm_fail_example first = {0};
    ASSERT(hm_fail_example_keep(&first, "closed early", "action, connection 1", "HTTP/1.1"));
    ASSERT(!hm_fail_example_keep(&first, "later", "elsewhere", ""));
    ASSERT_STREQ(first.reason, "closed early");
    ASSERT_STREQ(first.where, "action, connection 1");
    hm_fail_example none = {0};
    ASSERT(hm_fail_example_keep(&none, NULL, NULL, NULL));
    ASSERT_STREQ(none.reason, "unknown");
    ASSERT_STREQ(none.bytes, "");
    printf("fail: names, first examples and evidence escaping hold\n");
    return 0;
}

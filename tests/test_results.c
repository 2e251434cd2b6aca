/* hm_thread_stats failure examples and SSE failures: what merge keeps, what
 * makes a run fail, and how the summary and the JSON show them. */
#include "hm_test.h"
#include "stats/results.h"

#include <jansson.h>
#include <string.h>

static char *summary(const hm_results *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    hm_report_print(f, r);
    fclose(f);
    return buf;
}

int main(void)
{
    hm_thread_stats a, b;
    ASSERT_EQ(hm_thread_stats_init(&a), 0);
    ASSERT_EQ(hm_thread_stats_init(&b), 0);

    /* Both threads saw a protocol error: the merge keeps the first merged one's. */
    hm_thread_stats_count(&b, 0, HM_FAIL_PROTOCOL);
    hm_thread_stats_fail_example(&b, HM_FAIL_PROTOCOL, "Chunk size overflow",
                                 "action POST /_action/increment, connection 2",
                                 "HTTP/1.1 200 OK\\r\\n");
    hm_thread_stats_count(&a, 0, HM_FAIL_PROTOCOL);
    hm_thread_stats_fail_example(&a, HM_FAIL_PROTOCOL, "other words", "elsewhere", "");
    for (int s = 500; s < 500 + HM_STATUS_EXAMPLES + 2; s++) {
        hm_thread_stats_count(&a, s, HM_FAIL_NONE);
        hm_thread_stats_status_example(&a, s, "answered", "action", "HTTP/1.1 5xx");
    }
    hm_thread_stats_status_example(&a, 500, "again", "again", "again"); /* kept already */
    hm_thread_stats_count(&a, 200, HM_FAIL_NONE);

    hm_results r;
    memset(&r, 0, sizeof(r));
    ASSERT_EQ(hm_thread_stats_init(&r.total), 0);
    r.scenario = "counter";
    r.target = "http://127.0.0.1:1";
    r.engine = "epoll";
    r.unit = "actions";
    r.has_patches = true;
    hm_thread_stats_merge(&r.total, &a);
    hm_thread_stats_merge(&r.total, &b);
    ASSERT_STREQ(r.total.fail_first[HM_FAIL_PROTOCOL].reason, "other words"); /* a merged first */
    ASSERT_EQ(r.total.status_first_code[0], 500);
    ASSERT_STREQ(r.total.status_first[0].reason, "answered");
    ASSERT_EQ(r.total.status_first_code[HM_STATUS_EXAMPLES - 1], 500 + HM_STATUS_EXAMPLES - 1);
    ASSERT(!hm_results_passed(&r)); /* failed requests */

    /* SSE: counted by kind, the first kept, and any fails the run. */
    hm_thread_stats c;
    ASSERT_EQ(hm_thread_stats_init(&c), 0);
    hm_thread_stats_count(&c, 200, HM_FAIL_NONE);
    c.sse_opened = 3;
    hm_thread_stats_sse_fail(&c, HM_SSE_FAIL_STATUS, "answered HTTP 500", "SSE GET /_sse, VU 1",
                             "HTTP/1.1 500 Internal Server Error");
    hm_thread_stats_sse_fail(&c, HM_SSE_FAIL_CLOSED, "ended", "SSE GET /_sse, VU 2", "");
    ASSERT_EQ(hm_thread_stats_sse_failures(&c), 2);
    hm_results rs;
    memset(&rs, 0, sizeof(rs));
    ASSERT_EQ(hm_thread_stats_init(&rs.total), 0);
    rs.scenario = "counter";
    rs.target = "http://127.0.0.1:1";
    rs.engine = "epoll";
    rs.unit = "actions";
    rs.has_patches = true;
    rs.observers = rs.observers_connected = 3; /* one stream each: nothing to explain */
    hm_thread_stats_merge(&rs.total, &c);
    ASSERT(!hm_results_passed(&rs)); /* every request OK, but an SSE stream failed */
    rs.total.sse_fail[HM_SSE_FAIL_STATUS] = rs.total.sse_fail[HM_SSE_FAIL_CLOSED] = 0;
    rs.interrupted = true;
    ASSERT(hm_results_passed(&rs)); /* interrupted, and what ran passed */
    rs.total.sse_fail[HM_SSE_FAIL_STATUS] = 1;
    rs.total.sse_fail[HM_SSE_FAIL_CLOSED] = 1;

    char *out = summary(&rs);
    ASSERT(strstr(out, "SSE streams       3 opened; failures: status ×1 closed ×1\n"));
    ASSERT(strstr(out, "  status          answered HTTP 500 — SSE GET /_sse, VU 1\n"
                       "                  \"HTTP/1.1 500 Internal Server Error\"\n"));
    ASSERT(strstr(out, "Interrupted       after "));
    free(out);
    out = summary(&r);
    ASSERT(strstr(out, "  protocol        other words — elsewhere\n"));
    ASSERT(strstr(out, "  HTTP 500        answered — action\n"));
    free(out);

    json_t *j = hm_report_json(&rs);
    ASSERT_EQ(json_integer_value(json_object_get(json_object_get(j, "sse"), "opened")), 3);
    json_t *ff = json_object_get(json_object_get(j, "sse"), "first_failure");
    ASSERT_STREQ(json_string_value(json_object_get(ff, "kind")), "status");
    ASSERT_STREQ(json_string_value(json_object_get(ff, "where")), "SSE GET /_sse, VU 1");
    json_t *fails = json_object_get(json_object_get(j, "sse"), "failures");
    ASSERT_EQ(json_object_size(fails), HM_SSE_FAIL__COUNT - 1);
    ASSERT_EQ(json_integer_value(json_object_get(fails, "closed")), 1);
    ASSERT(json_is_object(json_object_get(j, "bytes")));
    json_decref(j);
    j = hm_report_json(&r);
    json_t *why = json_object_get(json_object_get(j, "error_reasons"), "protocol");
    ASSERT_STREQ(json_string_value(json_object_get(why, "reason")), "other words");
    ASSERT_EQ(json_object_size(json_object_get(j, "error_reasons")), 1); /* kinds with a count */
    ASSERT_EQ(json_object_size(json_object_get(j, "status_examples")), HM_STATUS_EXAMPLES);
    ASSERT(json_is_null(json_object_get(json_object_get(j, "sse"), "first_failure")));
    json_decref(j);

    hm_thread_stats_destroy(&a);
    hm_thread_stats_destroy(&b);
    hm_thread_stats_destroy(&c);
    hm_thread_stats_destroy(&r.total);
    hm_thread_stats_destroy(&rs.total);
    printf("results: first examples merged, SSE failures fail the run, summary and JSON show "
           "them\n");
    return 0;
}

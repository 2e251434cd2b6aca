/* fuzz_hdr_log.c — the HdrHistogram interval-log reader (its StartTime and
 * its intervals) and the V2
 * compressed-histogram decoder (src/stats/hdr_log.h): base64, zlib,
 * varints and the histogram's own header all come from the file.
 *
 * Every histogram decoded is summarised (count, min, max, mean, stddev,
 * percentiles, the .hgrm printout) and must survive a round trip: encoded
 * again and decoded, it has the same configuration and counts.
 *
 * Flags (byte 0):
 *   bit 0  the payload is one base64 histogram instead of a whole log */
#include "fuzz_common.h"

#include "base/hm_base.h"
#include "stats/hdr_log.h"

#include <stdio.h>
#include <string.h>

enum { F_ONE = 1 };

static void check_histogram(const hm_hdr *h)
{
    static FILE *null_out;
    if (!null_out) null_out = fopen("/dev/null", "w");
    HM_FUZZ_CHECK(null_out);
    HM_FUZZ_CHECK(hm_hdr_count(h) >= 0);
    HM_FUZZ_CHECK(hm_hdr_min(h) <= hm_hdr_max(h) || hm_hdr_count(h) == 0);
    (void)hm_hdr_mean(h);
    (void)hm_hdr_stddev(h);
    int64_t last = 0;
    for (double p = 0; p <= 100; p += 12.5) {
        int64_t v = hm_hdr_value_at_percentile(h, p);
        HM_FUZZ_CHECK(v >= last || p == 0);
        last = v;
    }
    HM_FUZZ_CHECK(hm_hdr_percentiles_print(h, null_out, 1, 1.0) == 0);

    char *b64;
    HM_FUZZ_CHECK(hm_hdr_encode_base64(h, &b64) == 0);
    hm_hdr back;
    int rc = hm_hdr_decode_base64(b64, strlen(b64), &back);
    hm_free(b64);
    HM_FUZZ_CHECK(rc == 0);
    HM_FUZZ_CHECK(back.lowest == h->lowest && back.highest == h->highest &&
                  back.sigfigs == h->sigfigs && back.counts_len == h->counts_len);
    HM_FUZZ_CHECK(back.total_count == h->total_count);
    HM_FUZZ_CHECK(memcmp(back.counts, h->counts, (size_t)h->counts_len * sizeof(int64_t)) == 0);
    hm_hdr_destroy(&back);
}

static void body(void *arg)
{
    const hm_fuzz_input *in = arg;
    if (in->flags & F_ONE) {
        hm_hdr h;
        int rc = hm_hdr_decode_base64((const char *)in->data, in->len, &h);
        HM_FUZZ_CHECK(rc == 0 || rc == -EINVAL);
        if (rc == 0) check_histogram(&h);
        hm_hdr_destroy(&h);
        return;
    }
    FILE *f = fmemopen(in->len ? in->data : (uint8_t *)"", in->len ? in->len : 1, "r");
    HM_FUZZ_CHECK(f);
    double start = 0;
    int src = hm_hlog_start_time(f, &start);
    HM_FUZZ_CHECK(src == 0 || src == -EINVAL);
    HM_FUZZ_CHECK(ftell(f) == 0); /* rewound for the intervals */
    for (int i = 0; i < 1000; i++) {
        hm_hlog_entry e;
        int rc = hm_hlog_read(f, &e);
        HM_FUZZ_CHECK(rc == 1 || rc == 0 || rc == -EINVAL);
        if (rc != 1) break;
        HM_FUZZ_CHECK(memchr(e.tag, '\0', sizeof(e.tag)) != NULL);
        check_histogram(&e.hist);
        hm_hdr_destroy(&e.hist);
    }
    fclose(f);
}

HM_FUZZ_ENTRY(body)

/* The interval recorder hands every recorded value to exactly one take,
 * while a reader takes over and over as a writer records: no value lost,
 * none counted twice. The writer keeps its own copy of what it recorded;
 * it stops once the reader has taken values from it five times while it
 * ran, so the overlap happens on one CPU as on many. */
#include "hm_test.h"
#include "stats/interval_recorder.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#define DISTINCT 1000 /* values 1..1000: each its own bucket at 3 digits */
#define TAKES_WHILE_WRITING 5

static hm_interval_recorder rec;
static hm_hdr written; /* the writer's own copy */
static atomic_bool stop, writer_done;

static void *writer(void *arg)
{
    (void)arg;
    for (int64_t i = 0; !atomic_load(&stop); i++) {
        hm_interval_recorder_record(&rec, i % DISTINCT + 1);
        hm_hdr_record(&written, i % DISTINCT + 1);
    }
    atomic_store(&writer_done, true);
    return NULL;
}

int main(void)
{
    ASSERT_EQ(hm_interval_recorder_init(&rec), 0);
    hm_hdr total, one;
    ASSERT_EQ(hm_hdr_init(&written, 1, HM_HDR_HIGHEST_US, 3), 0);
    ASSERT_EQ(hm_hdr_init(&total, 1, HM_HDR_HIGHEST_US, 3), 0);
    ASSERT_EQ(hm_hdr_init(&one, 1, HM_HDR_HIGHEST_US, 3), 0);
    pthread_t w;
    ASSERT_EQ(pthread_create(&w, NULL, writer, NULL), 0);
    int takes = 0, takes_while_writing = 0;
    while (!atomic_load(&writer_done)) {
        hm_hdr_reset(&one);
        hm_interval_recorder_take(&rec, &one);
        takes++;
        if (hm_hdr_count(&one) > 0 && ++takes_while_writing >= TAKES_WHILE_WRITING)
            atomic_store(&stop, true);
        ASSERT_EQ(hm_hdr_add(&total, &one), 0);
    }
    ASSERT_EQ(pthread_join(w, NULL), 0);
    hm_interval_recorder_take(&rec, &total);
    hm_interval_recorder_take(&rec, &total); /* both halves drained: adds nothing */
    printf("%d takes, %d with values; %lld values written\n", takes, takes_while_writing,
           (long long)hm_hdr_count(&written));
    ASSERT_GE(takes_while_writing, TAKES_WHILE_WRITING);
    ASSERT_GT(hm_hdr_count(&written), 0);
    ASSERT_EQ(hm_hdr_count(&total), hm_hdr_count(&written));
    for (int v = 1; v <= DISTINCT; v++)
        ASSERT_EQ(hm_hdr_count_at_value(&total, v), hm_hdr_count_at_value(&written, v));
    ASSERT_EQ(hm_hdr_max(&total), hm_hdr_max(&written));
    /* A take with no destination forgets what was recorded. */
    hm_interval_recorder_record(&rec, 5);
    hm_hdr none = {0};
    hm_interval_recorder_take(&rec, &none);
    hm_hdr_reset(&one);
    hm_interval_recorder_take(&rec, &one);
    hm_interval_recorder_take(&rec, &one);
    ASSERT_EQ(hm_hdr_count(&one), 0);
    hm_hdr_destroy(&one);
    hm_hdr_destroy(&total);
    hm_hdr_destroy(&written);
    hm_interval_recorder_destroy(&rec);
    return 0;
}

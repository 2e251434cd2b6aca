/* The interval recorder: two halves and a writer-reader phaser (see the
 * header for why the writer must never wait). */
#include "stats/interval_recorder.h"

#include <sched.h>
#include <string.h>

int hm_interval_recorder_init(hm_interval_recorder *r)
{
    memset(r, 0, sizeof(*r));
    for (int i = 0; i < 2; i++) {
        int rc = hm_hdr_init(&r->half[i], 1, HM_HDR_HIGHEST_US, 3);
        if (rc < 0) {
            hm_interval_recorder_destroy(r);
            return rc;
        }
    }
    atomic_init(&r->entered, 0);
    atomic_init(&r->finished[0], 0);
    atomic_init(&r->finished[1], INT64_MIN);
    return 0;
}

void hm_interval_recorder_destroy(hm_interval_recorder *r)
{
    hm_hdr_destroy(&r->half[0]);
    hm_hdr_destroy(&r->half[1]);
}

void hm_interval_recorder_record(hm_interval_recorder *r, int64_t us)
{
    /* Acquire: the half this phase names was cleared by the take that
     * started the phase, before it published the phase. */
    int64_t at = atomic_fetch_add_explicit(&r->entered, 1, memory_order_acquire);
    int half = at < 0;
    hm_hdr_record(&r->half[half], us);
    atomic_fetch_add_explicit(&r->finished[half], 1, memory_order_release);
}

void hm_interval_recorder_take(hm_interval_recorder *r, hm_hdr *dst)
{
    int old = atomic_load_explicit(&r->entered, memory_order_relaxed) < 0;
    int64_t next_start = old ? 0 : INT64_MIN;
    /* The next phase's finish count starts where its entries will. No
     * writer touches it yet: the last take waited out its old writers. */
    atomic_store_explicit(&r->finished[!old], next_start, memory_order_relaxed);
    int64_t entered_old = atomic_exchange_explicit(&r->entered, next_start, memory_order_acq_rel);
    while (atomic_load_explicit(&r->finished[old], memory_order_acquire) != entered_old)
        sched_yield();
    if (dst->counts) hm_hdr_add(dst, &r->half[old]);
    hm_hdr_reset(&r->half[old]);
}

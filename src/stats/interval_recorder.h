/* interval_recorder.h — a histogram one thread records into while another
 * takes, now and then, what was recorded since it last took.
 *
 * The recording thread never waits: it writes into one of two halves,
 * chosen by the phase it entered in (HdrHistogram's writer-reader phaser,
 * as its Recorder uses it). Taking flips the phase, waits until every
 * record begun in the old one has finished, and then owns that half alone
 * while it adds it up and clears it. A lock held across that work would
 * let a reader preempted inside it (both threads on one CPU) stall the
 * engine for a scheduler slice.
 *
 * Ownership: the caller owns the struct (embed it); init allocates the two
 * halves, destroy frees them. hm_interval_recorder_record is for one
 * writer thread; hm_interval_recorder_take for one reader at a time (the
 * caller serialises readers). */
#ifndef HM_STATS_INTERVAL_RECORDER_H
#define HM_STATS_INTERVAL_RECORDER_H

#include "stats/hdr.h"

#include <stdatomic.h>
#include <stdint.h>

typedef struct hm_interval_recorder {
    hm_hdr half[2];
    /* Records begun: counts up from 0 in the even phase (half[0]) and from
     * INT64_MIN in the odd one (half[1]), so its sign names the half. */
    _Atomic int64_t entered;
    /* Records finished, per phase, counted from the same start. */
    _Atomic int64_t finished[2];
} hm_interval_recorder;

/* Both halves as hm_hdr_init(h, 1, HM_HDR_HIGHEST_US, 3). 0 or -ENOMEM. */
int hm_interval_recorder_init(hm_interval_recorder *r);
void hm_interval_recorder_destroy(hm_interval_recorder *r);

/* Records one value in microseconds. The writer thread only. */
void hm_interval_recorder_record(hm_interval_recorder *r, int64_t us);

/* Adds to dst (when it has counts) every value recorded since the last
 * take, and forgets them. Yields the CPU while a record begun before the
 * flip is still being written. */
void hm_interval_recorder_take(hm_interval_recorder *r, hm_hdr *dst);

#endif

/* workload.h — what each php-via workload promises, and how hammer checks
 * it from the SSE stream.
 *
 * A hm_workload names the page, action and signal a scenario drives, and
 * the check its patches must pass. A hm_watch is one SSE stream's view of
 * a context: it decodes events, tracks the watched signal's baseline and
 * last value, counts patches, checks every patch against the workload's
 * promise, and keeps the last-seen signals (what a browser sends back).
 *
 * Ownership: workloads are static. A hm_watch owns its decoded-event
 * buffers and the merged signals object; hm_watch_free releases them. */
#ifndef HM_LOAD_WORKLOAD_H
#define HM_LOAD_WORKLOAD_H

#include "base/hm_reason.h"
#include "engine/engine.h"
#include "proto/datastar.h"
#include "proto/sse.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum hm_check_kind {
    HM_CHECK_NONE,          /* nothing promised (plugins check for themselves) */
    HM_CHECK_NET_INCREMENT, /* signal's net increment equals HTTP OK */
    HM_CHECK_CONSTANT,      /* every patched value equals `expected` */
    HM_CHECK_SPREADSHEET,   /* net increment, and viewRow/focusRow follow count */
    HM_CHECK_TABLE,         /* element patches hold a well-formed 20x10 table */
} hm_check_kind;

typedef struct hm_workload {
    hm_check_kind check;
    int64_t expected; /* HM_CHECK_CONSTANT */
    /* A signal every action sets, as the user would (spreadsheet-live's
     * direction); its wire id is looked up in the page's signals. */
    const char *set_signal, *set_value;
} hm_workload;

typedef struct hm_watch {
    const hm_workload *w;
    const char *signal;
    hm_sse_parser sse; /* the stream's parser; sse.events counts every event */
    /* The event being handled, decoded in full: valid in the callbacks
     * below (and the checks they run), NULL between events. It lives on
     * the stack of the call that feeds the watch, so a watch keeps no
     * decoded event while its stream is quiet. */
    const hm_datastar_event *ev;
    json_t *signals; /* merged last-seen signals */
    bool have_baseline;
    /* The stream carried php-via's answer for a context the server does not
     * know: an event that runs window.location.reload() (datastar-php's
     * executeScript, as a patch-elements <script> or an execute-script
     * event). A browser reloads the page; the context is gone. */
    bool reload_asked;
    /* Set by an owner that, once the baseline is in, reads nothing of this
     * watch but the watched signal's values and the counts (the hammer
     * model's observers). Then a patch-signals event that
     * hm_datastar_scan_int decides is checked from the value it found,
     * without jansson (w->ev stays NULL in its callbacks) and
     * w->signals stops following the stream. Counts, checks and
     * callbacks are the same either way; it applies only to a watched
     * signal whose check reads no other (not HM_CHECK_SPREADSHEET nor
     * HM_CHECK_TABLE) and with no on_event. (The three flags sit
     * together: a browser VU's record holds a watch.) */
    bool value_only;
    int64_t baseline, last;
    uint64_t patches; /* events after the baseline that carry an action's effect */
    /* Events apart from patches: those on a stream before any action was
     * sent since it opened (nothing watched: its page's state), and those
     * that answered no action (a counted value that did not change;
     * nothing watched: more events than actions were sent). */
    uint64_t opening, extra;
    /* Nothing watched (a flow without a check): the actions sent to this
     * context so far, kept by whoever sends them; each Datastar patch event
     * answers one of them while fewer were answered. NULL: every patch
     * event counts as a patch. */
    _Atomic int64_t *actions_sent;
    int64_t sent_at_open; /* *actions_sent when the stream (re)opened */
    /* Its evidence, as hm_reason.h strings (NULL until there is some): the
     * first bad patch, why the stream was refused (an event over the
     * limit; the owner clears it for a new stream), the first undecodable
     * event. */
    uint64_t bad; /* patches that broke the workload's promise */
    char *bad_example;
    char *error;
    uint64_t undecodable; /* Datastar events that could not be decoded */
    char *undecodable_why;
    int64_t last_patch_ns;
    /* When the stream's last complete event came, or (before one) when
     * the watch was set up or restarted: hm_sse_note_cut's quiet time. */
    int64_t last_event_ns;
    uint64_t comments_at_event; /* the parser's comment count at that time */
    /* Called for each patch after the baseline (value: the watched signal's
     * value, or the patch count for element checks). */
    void (*on_patch)(struct hm_watch *w, int64_t value, void *user);
    void *user;
    /* Called for every decoded Datastar event, after the checks and the
     * merged signals took it in (w->ev is the event); NULL for none. */
    void (*on_event)(struct hm_watch *w, void *user);
} hm_watch;

void hm_watch_init(hm_watch *w, const hm_workload *wl, const char *signal);
/* Starts a new stream (reconnect): parser state reset, values kept. */
void hm_watch_restart(hm_watch *w);
/* Feeds SSE body bytes (an hm_http_body_fn). An error (an event over the
 * SSE parser's limit) ends the stream, with w->error saying why. Parsing,
 * decoding and on_patch / on_event run on the loop's stack
 * (hm_call_on_loop_stack), so a reader's coroutine stays shallow: the
 * callbacks must not suspend. */
int hm_watch_feed(void *user, const char *at, size_t len);
void hm_watch_free(hm_watch *w);

/* The stream has shown the page's first state: the watched signal's
 * baseline or, when no signal is watched (a flow without a check), the
 * page's signals. A page that has none shows its view only: see
 * hm_watch_wait_first_state. */
bool hm_watch_first_state(const hm_watch *w);

/* Waits on `ev` until w shows its first state, alive(arg) turns false
 * (the stream ended for good) or the absolute deadline; whoever feeds w
 * notifies ev after each event and when the stream ends. When nothing is watched, a
 * stream that shows events but no signals for 200 ms counts as showing its
 * state (a page without signals). 0, -ETIMEDOUT, or -ECANCELED once Ctrl-C
 * interrupted the run. */
int hm_watch_wait_first_state(const hm_watch *w, bool (*alive)(const void *arg), const void *arg,
                              hm_event *ev, int64_t deadline);

/* How long a stream without a counter must be quiet after its last patch
 * before it is taken to show every action (hm_watch_caught_up). */
#define HM_WATCH_QUIET_NS (300 * 1000000LL)

/* True when the stream shows the effect of every one of ok OK actions at
 * now, so the run's end need not wait for more: always when nothing is
 * checked or nothing was OK; never before the stream showed its state;
 * with a counter, when it moved by ok; otherwise after a quiet spell of
 * HM_WATCH_QUIET_NS after its last patch. The one rule of every
 * hammer-model run's end. */
bool hm_watch_caught_up(const hm_watch *w, int64_t ok, int64_t now);

/* End-of-run verdict for one context: ok_actions is the HTTP OK count of
 * the actions aimed at it. Writes a reason when it fails. */
bool hm_watch_verdict(const hm_watch *w, uint64_t ok_actions, char *why, size_t whylen);

/* The verdict for a context the server lost (a restart, another worker):
 * patches must not show more than its ok_actions plus its unanswered ones
 * (sent, but the connection broke before the answer: the server may have
 * applied them), and no bad patch may have arrived; the OK actions whose
 * effect never showed are swallowed (*swallowed), not failures. Writes a
 * reason when it fails. */
bool hm_watch_verdict_lost(const hm_watch *w, uint64_t ok_actions, uint64_t unanswered,
                           uint64_t *swallowed, char *why, size_t whylen);

/* The action body: {"via_ctx":ctx} + extra_json (--signals) + the
 * workload's set_signal under its wire id from `signals` (may be NULL) +
 * (browser) every last-seen signal in `signals`. Returns 0 and a hm_alloc'd
 * string, or -HM_EPARSE when extra_json is not a JSON object. */
int hm_workload_body(const hm_workload *wl, const char *ctx, const char *extra_json,
                     json_t *signals, bool send_signals, char **out);

/* True when html holds one <table> with 20 rows of 10 <td> cells. */
bool hm_table_well_formed(const char *html, size_t len);

#endif

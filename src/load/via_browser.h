/* via_browser.h — the browser model's virtual user, for VU bodies written
 * inside hammer (flows, src/flow/flow_browser.c). They get what the
 * plugin API gives (include/hammer/scenario.h: hammer_vu_load_page,
 * _open_sse, _action, _wait_patch, _get, _sleep_ms, _next, _fail) and what
 * a user who visits several pages needs on top: each SSE event as it
 * arrives, the last-seen signals, leaving a page, a fresh session, the
 * run's budget, and stopping the run when the input does not fit the app.
 *
 * A body runs on the VU's coroutine; the event hook runs on the VU's SSE
 * coroutine, on the same thread, so neither needs locks. Pointers returned
 * here stay valid until the VU's next call. */
#ifndef HM_LOAD_VIA_BROWSER_H
#define HM_LOAD_VIA_BROWSER_H

#include "hammer/scenario.h"
#include "load/request.h"
#include "load/workload.h"

/* The browser load model of the php-via scenarios: -c virtual users, one
 * tab each (docs/scenarios.md). */
int hm_via_browser_run(const hm_options *o, hm_results *r);

/* The browser model with body as every VU's life (NULL: the built-in tab)
 * and state handed to it; body->setup, when set, makes the state instead.
 * hm_via_browser_run is this with the run's plugin. */
int hm_via_browser_run_body(const hm_options *o, const hammer_scenario *body, void *state,
                            hm_results *r);

/* Called for every Datastar event on the VU's stream, after the VU's
 * last-seen signals took it in: w->ev is the event, w->signals the merged
 * signals (the watch's own on_event hook). */
typedef void (*hm_vu_event_fn)(hm_watch *w, void *user);

/* Sets (or, with NULL, clears) the VU's event hook. */
void hm_vu_on_event(hammer_vu *v, hm_vu_event_fn fn, void *user);
/* Suspends the VU until hm_vu_wake (from its event hook) or the absolute
 * deadline: 0, -ETIMEDOUT, or -ECANCELED when the run is stopping. A wake
 * that came before the call is not lost. */
int hm_vu_wait(hammer_vu *v, int64_t deadline);
void hm_vu_wake(hammer_vu *v);

/* The VU's last-seen signals (a JSON object, borrowed). */
json_t *hm_vu_signals(hammer_vu *v);
/* The body of the last page load, or NULL; *len gets its length. Kept
 * for VU bodies (flows, plugins: they look actions up by name); the
 * built-in tab keeps none. */
const char *hm_vu_page_html(const hammer_vu *v, size_t *len);
/* The engine thread the VU runs on, 0 .. -t minus 1. */
int hm_vu_thread(const hammer_vu *v);
/* The run's options. */
const hm_options *hm_vu_options(const hammer_vu *v);

/* Opens path as the tab's page (the built-in tab's first page, a flow's
 * page step). One that does not load (a 503, a refused connect) is
 * reloaded with the back-off, as a user reloads a tab showing an error:
 * the answered failures are counted (page_failed, which fails the check;
 * an unanswered one is a failed connect or reload attempt instead: the
 * server is away), and the VU goes
 * on once its page loads. The page's status, or a negative error (the VU
 * failed, or the run ended first). */
int hm_vu_open_page(hammer_vu *v, const char *path);

/* Leaves the current page, as a browser navigating away: lets the last
 * patch land, ends the SSE stream, sends php-via's close beacon, and checks
 * the context against the run's workload (a failure fails the VU). Nothing
 * when no page is open. */
void hm_vu_leave_page(hammer_vu *v);
/* Leaves the page and forgets the cookies and the connection: the next
 * page load starts a new session, as a new user would. */
void hm_vu_new_user(hammer_vu *v);

/* True when the page's context is gone: an action got 400 Invalid
 * context, or the SSE stream carried php-via's reload script (or an empty
 * 200). Counted in the run's disruption report. */
bool hm_vu_context_lost(const hammer_vu *v);
/* What php-via's reload script makes a browser do: leaves the page (a lost
 * context is judged leniently: its swallowed OK actions are counted, not
 * failed), loads the same path again with the same cookies (a new
 * context), retrying with backoff while the server is away, and reopens
 * the SSE stream if the page had one. 0, -ECANCELED when the run ended
 * (or its budget did) first, or -ETIMEDOUT (the VU failed) when the server
 * answered but served no page for --timeout. */
int hm_vu_reload(hammer_vu *v);

/* True while the run's -n budget is not spent, -d has not elapsed and the
 * run is not stopping (claims nothing; hammer_vu_next claims). */
bool hm_vu_budget_left(hammer_vu *v);
/* Records an action -> patch latency (µs) in the run's histogram. */
void hm_vu_record_patch(hammer_vu *v, int64_t us);
/* The input does not fit the app (a flow names an action the page does
 * not offer): every VU stops, and the run reports why (the first reason
 * given) and exits 2. */
void hm_vu_abort_run(hammer_vu *v, const char *why);

#endif

/* live_view.h — the full-screen live view on a terminal (ncurses).
 *
 * It draws the figures the interval reporter computes (hm_live_figures,
 * stats/results.h) and reads the keys: q raises SIGINT, so it stops the
 * run exactly as Ctrl-C does (the first: stop new work, wait for what is
 * in flight; the second: abort); p pauses the screen, not the run. It runs
 * on the reporter's thread only (hm_progress_options.view); it owns the
 * terminal from its first call to the last (f->last), which restores it. */
#ifndef HM_CLI_LIVE_VIEW_H
#define HM_CLI_LIVE_VIEW_H

#include "stats/results.h"

#include <stdbool.h>

/* hm_progress_options.view: arg is the scenario's name (const char *).
 * false when the terminal cannot hold the view (ncurses cannot start). */
bool hm_live_view_show(const hm_live_figures *f, void *arg);

#endif

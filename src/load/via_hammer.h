/* via_hammer.h — the hammer load model of the php-via scenarios: one
 * context per thread, its SSE observers, and -c actions in flight from the
 * sender pool (docs/scenarios.md). Owns nothing past the run. */
#ifndef HM_LOAD_VIA_HAMMER_H
#define HM_LOAD_VIA_HAMMER_H

#include "load/run.h"

int hm_via_hammer_run(const hm_options *o, hm_results *r);

#endif

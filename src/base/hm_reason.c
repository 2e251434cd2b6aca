/* Failure reasons allocated at the failure (hm_reason.h). */
#include "base/hm_reason.h"

#include "base/hm_base.h"

#include <stdarg.h>
#include <stdio.h>

void hm_reason_set(char **r, size_t cap, const char *fmt, ...)
{
    if (!cap) return;
    if (!*r && !(*r = hm_alloc(cap))) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(*r, cap, fmt, ap);
    va_end(ap);
}

void hm_reason_clear(char **r)
{
    if (!*r) return; /* every request starts so: no call into the allocator */
    hm_free(*r);
    *r = NULL;
}

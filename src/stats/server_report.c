/* server_report.c — the server watch's verdict in words (results.h), one
 * sentence for the summary, the JSON and the HTML report alike. */
#include "stats/results.h"

#include <math.h>
#include <stdio.h>

double hm_server_report_left(const hm_server_report *w, const char *leaf)
{
    double b = hm_server_leaf_max(w->n, w->names, w->before, leaf);
    double a = hm_server_leaf_max(w->n, w->names, w->after, leaf);
    return isnan(a) || isnan(b) ? 0 : a - b;
}

const char *hm_server_verdict_level(hm_server_verdict v)
{
    switch (v) {
    case HM_SERVER_OPEN_STREAMS:
    case HM_SERVER_KEPT:
        return "note";
    case HM_SERVER_GREW:
        return "warning";
    default:
        return NULL;
    }
}

const char *hm_server_verdict_name(hm_server_verdict v)
{
    static const char *const names[] = {
        [HM_SERVER_CAME_BACK] = "came_back",
        [HM_SERVER_OPEN_STREAMS] = "open_streams",
        [HM_SERVER_KEPT] = "kept",
        [HM_SERVER_GREW] = "grew",
    };
    return v > HM_SERVER_UNCHECKED && v <= HM_SERVER_GREW ? names[v] : NULL;
}

static const char *plural(double n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

void hm_server_verdict_text(const hm_server_report *w, char *buf, size_t len)
{
    double ctx = hm_server_report_left(w, "contexts"), sse = hm_server_report_left(w, "sse");
    double oc = (double)w->own_contexts, os = (double)w->own_streams;
    int n = 0;
    buf[0] = 0;
    switch (w->verdict) {
    case HM_SERVER_UNCHECKED:
        return;
    case HM_SERVER_CAME_BACK:
        n = snprintf(buf, len, "/_health back to its baseline %.1f s after the run", w->waited_s);
        break;
    case HM_SERVER_OPEN_STREAMS:
        n = snprintf(buf, len,
                     "the server still counts %.0f of the %.0f SSE %s hammer opened and closed%s",
                     sse, os, plural(os, "stream", "streams"),
                     ctx > 0 ? ", and the contexts they hold" : "");
        if (n > 0 && (size_t)n < len)
            n += snprintf(buf + n, len - (size_t)n,
                          ": php-via notices a vanished SSE client only at its next write to "
                          "the stream, and frees a context only after its stream ended "
                          "(docs/php-via.md#the-sse-stream)");
        break;
    case HM_SERVER_KEPT:
        n = snprintf(buf, len,
                     "the server still holds %.0f of the %.0f %s hammer opened, %.1f s after the "
                     "run: it keeps contexts after their clients left (php-via frees a closed "
                     "session's context 5 s later, or after its SSE stream ended; "
                     "docs/php-via.md)",
                     ctx, oc, plural(oc, "context", "contexts"), w->waited_s);
        break;
    case HM_SERVER_GREW: {
        char what[160] = "";
        int k = 0;
        if (ctx > oc)
            k = snprintf(what, sizeof(what),
                         "%.0f %s more than before the run (hammer opened %.0f)", ctx,
                         plural(ctx, "context", "contexts"), oc);
        if (sse > os && k >= 0 && (size_t)k < sizeof(what))
            snprintf(what + k, sizeof(what) - (size_t)k,
                     "%s%.0f SSE %s more than before the run (hammer opened %.0f)",
                     k ? " and " : "", sse, plural(sse, "stream", "streams"), os);
        n = snprintf(buf, len,
                     "the server holds %s, %.1f s after the run: growth that hammer's own clients "
                     "do not explain (a leak?)",
                     what, w->waited_s);
        break;
    }
    }
    if (n > 0 && (size_t)n < len && w->skipped)
        snprintf(buf + n, len - (size_t)n, " (Ctrl-C ended the wait)");
}

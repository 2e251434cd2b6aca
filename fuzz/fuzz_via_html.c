/* fuzz_via_html.c — the php-via page scan (src/proto/via_html.h): the
 * context id from <meta data-signals='…'> (entity-decoded, then JSON),
 * action URLs from data-on:* attributes and the list of every action (for
 * error messages), on a coroutine-sized stack.
 *
 * The payload is a page body. A found action URL must name the action it
 * was asked for; the list stays inside its buffer at every size.
 *
 * Flags (byte 0):
 *   bit 0  the action name is the payload's first line (the rest is the
 *          page) instead of "increment" */
#include "fuzz_common.h"

#include "base/hm_base.h"
#include "proto/via_html.h"

#include <stdio.h>
#include <string.h>

enum { F_NAME_LINE = 1 };

static void body(void *arg)
{
    const hm_fuzz_input *in = arg;
    const char *page = (const char *)in->data;
    size_t len = in->len;
    char name[64] = "increment";
    if (in->flags & F_NAME_LINE) {
        const char *nl = memchr(page, '\n', len);
        size_t nn = nl ? (size_t)(nl - page) : len;
        if (nn >= sizeof(name)) nn = sizeof(name) - 1;
        memcpy(name, page, nn);
        name[nn] = '\0';
        if (nl) {
            len -= (size_t)(nl + 1 - page);
            page = nl + 1;
        } else {
            page += len;
            len = 0;
        }
    }

    char *ctx = (char *)1;
    const char *why = "untouched";
    int rc = hm_via_extract_ctx(page, len, &ctx, &why);
    HM_FUZZ_CHECK(rc == 0 || rc == -HM_ENOTFOUND || rc == -HM_EPARSE || rc == -HM_ETOOBIG);
    HM_FUZZ_CHECK((rc == 0) == (ctx != NULL));
    HM_FUZZ_CHECK((rc == 0) == (why == NULL)); /* every failure says why */
    hm_free(ctx);

    char *url = (char *)1;
    rc = hm_via_find_action(page, len, name, &url);
    HM_FUZZ_CHECK(rc == 0 || rc == -HM_ENOTFOUND);
    HM_FUZZ_CHECK((rc == 0) == (url != NULL));
    if (url) {
        char want[80];
        snprintf(want, sizeof(want), "/_action/%s", name);
        HM_FUZZ_CHECK(strstr(url, want) != NULL);
    }
    hm_free(url);

    char list[256], tiny[8];
    memset(tiny, 'x', sizeof(tiny));
    int n = hm_via_list_actions(page, len, list, sizeof(list));
    HM_FUZZ_CHECK(n >= 0 && memchr(list, '\0', sizeof(list)) != NULL);
    int m = hm_via_list_actions(page, len, tiny, sizeof(tiny));
    HM_FUZZ_CHECK(m >= 0 && m <= n && memchr(tiny, '\0', sizeof(tiny)) != NULL);
}

HM_FUZZ_ENTRY(body)

/* hm_json_text (stats/json_text.h): text hammer did not write goes into
 * its JSON whole. Valid UTF-8, from one to four bytes a character, is kept
 * as it is; every byte jansson would refuse (a lead byte that starts no
 * sequence, a lone continuation byte, an overlong form, a surrogate, a
 * code point above U+10FFFF, a sequence cut short) becomes \xNN, and the
 * rest of the text survives. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "hm_test.h"
#include "stats/json_text.h"

static void same(const char *in)
{
    ASSERT(hm_utf8_valid(in));
    json_t *j = hm_json_text(in);
    ASSERT(j && json_is_string(j));
    ASSERT_STREQ(json_string_value(j), in);
    json_decref(j);
}

static void escaped(const char *in, const char *want)
{
    ASSERT(!hm_utf8_valid(in));
    ASSERT(!json_string(in)); /* the case this exists for: jansson refuses it */
    json_t *j = hm_json_text(in);
    ASSERT(j && json_is_string(j));
    ASSERT_STREQ(json_string_value(j), want);
    json_decref(j);
}

int main(void)
{
    same("");
    same("GET /bench/counter 200");
    same("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf"); /* é € 😀 U+10FFFF */
    escaped("a\xff"
            "b",
            "a\\xffb");
    escaped("x\xf8\x80\x80y", "x\\xf8\\x80\\x80y");      /* 0xf8 leads nothing */
    escaped("\xc0\xaf", "\\xc0\\xaf");                   /* overlong '/' */
    escaped("\xe0\x80\xaf", "\\xe0\\x80\\xaf");          /* overlong, 3 bytes */
    escaped("\xed\xa0\x80", "\\xed\\xa0\\x80");          /* a surrogate */
    escaped("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"); /* above U+10FFFF */
    escaped("\xe2\x82 ok", "\\xe2\\x82 ok");             /* cut short */
    escaped("\x80\xc3\xa9", "\\x80\xc3\xa9");            /* lone continuation */
    json_t *null = hm_json_text(NULL);
    ASSERT(json_is_null(null));
    json_decref(null);
    printf("json_text: UTF-8 kept, every refused byte as \\xNN, NULL as null\n");
    return 0;
}

/* fuzz_php_compat.c — bench_app's PHP-compatible helpers
 * (bench_app/php_compat.h) on what clients send: urldecode and forms,
 * OpenSwoole's cookie parsing, json_decode and PHP's casts of what it
 * decoded, json_encode of a string, (string) and (int) of a float, trim.
 *
 * The payload's first line is a key (form field, cookie name), the rest the
 * data. Properties: urldecode(urlencode(x)) == x; json_encode of any bytes
 * is a JSON string jansson reads back, as the same bytes when they were
 * UTF-8; (string) of a finite float reads back within PHP's 14 significant
 * digits; every output stays inside its documented size.
 *
 * Flags (byte 0):
 *   bit 0  the data's first 8 bytes are also taken as a double, bit for bit
 *          (NaN, infinities, subnormals) */
#include "fuzz_common.h"

#include "bench_app/php_compat.h"
#include "base/hm_base.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { F_DOUBLE_BITS = 1 };

static void check_float(double d)
{
    char s[BA_PHP_FLOAT_STR_MAX];
    memset(s, 'x', sizeof(s));
    size_t n = ba_php_float_str(d, s);
    HM_FUZZ_CHECK(n < sizeof(s) && s[n] == '\0' && strlen(s) == n);
    (void)ba_php_int_of_double(d);
    if (isnan(d)) {
        HM_FUZZ_CHECK(strcmp(s, "NAN") == 0);
        return;
    }
    if (isinf(d)) {
        HM_FUZZ_CHECK(strcmp(s, d < 0 ? "-INF" : "INF") == 0);
        return;
    }
    char *end;
    double back = strtod(s, &end);
    HM_FUZZ_CHECK(*end == '\0');
    HM_FUZZ_CHECK(fabs(back - d) <= fabs(d) * 1e-13);
    HM_FUZZ_CHECK(signbit(back) == signbit(d));
}

static void check_json_string(const char *p, size_t n)
{
    ba_buf b = {0};
    HM_FUZZ_CHECK(ba_php_json_string_append(&b, p, n) == 0);
    HM_FUZZ_CHECK(b.data && b.data[b.len] == '\0');
    json_error_t err;
    json_t *back = json_loadb(b.data, b.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
    if (!back) hm_fuzz_fail("json_encode gave what jansson cannot read: %s (%s)", b.data, err.text);
    HM_FUZZ_CHECK(json_is_string(back));
    json_t *utf8 = json_stringn(p, n); /* NULL unless p is valid UTF-8 */
    if (utf8) {
        HM_FUZZ_CHECK(json_string_length(back) == n && memcmp(json_string_value(back), p, n) == 0);
        json_decref(utf8);
    }
    json_decref(back);
    ba_buf_free(&b);
}

/* PHP's casts of every decoded value; the recursion is bounded by the
 * decoder's depth limit. */
static void check_value(const json_t *v, int depth)
{
    HM_FUZZ_CHECK(depth <= BA_PHP_JSON_MAX_DEPTH);
    (void)ba_php_int_of_json(v);
    (void)ba_php_falsy(v);
    char num[BA_PHP_FLOAT_STR_MAX];
    const char *s = NULL;
    size_t n = ba_php_string_of_json(v, num, &s);
    HM_FUZZ_CHECK(s != NULL);
    check_json_string(s, n);
    if (json_is_real(v)) check_float(json_real_value(v));
    size_t i;
    const char *key;
    json_t *item;
    if (json_is_array(v)) json_array_foreach(v, i, item) check_value(item, depth + 1);
    if (json_is_object(v)) json_object_foreach((json_t *)v, key, item) check_value(item, depth + 1);
}

static void body(void *arg)
{
    const hm_fuzz_input *in = arg;
    const char *all = (const char *)in->data;
    const char *nl = memchr(all, '\n', in->len);
    char key[64] = "datastar";
    const char *data = all;
    size_t n = in->len;
    if (nl) {
        size_t kl = (size_t)(nl - all) < sizeof(key) - 1 ? (size_t)(nl - all) : sizeof(key) - 1;
        memcpy(key, all, kl);
        key[kl] = '\0';
        data = nl + 1;
        n = in->len - (size_t)(data - all);
    }

    /* urldecode never grows; urlencode then urldecode gives the bytes back. */
    char *dec = malloc(n + 1);
    HM_FUZZ_CHECK(dec);
    HM_FUZZ_CHECK(ba_php_urldecode(dec, data, n) <= n);
    ba_buf enc = {0}, back = {0};
    HM_FUZZ_CHECK(ba_php_urlencode_append(&enc, data, n) == 0);
    HM_FUZZ_CHECK(ba_php_urldecode_append(&back, enc.len ? enc.data : "", enc.len) == 0);
    HM_FUZZ_CHECK(back.len == n && (n == 0 || memcmp(back.data, data, n) == 0));
    ba_buf_free(&enc);
    ba_buf_free(&back);

    ba_buf field = {0};
    if (ba_php_form_get(data, n, key, &field)) HM_FUZZ_CHECK(field.data[field.len] == '\0');
    ba_buf_free(&field);

    char cookie[BA_SWOOLE_COOKIE_MAX];
    size_t clen = (size_t)-1;
    if (ba_swoole_cookie_get(data, n, key, cookie, &clen)) HM_FUZZ_CHECK(clen < sizeof(cookie));

    json_t *j = ba_php_json_decode(data, n);
    if (j) {
        HM_FUZZ_CHECK(json_is_array(j) || json_is_object(j));
        check_value(j, 1);
        json_decref(j);
    }
    check_json_string(data, n);

    const char *t = data;
    size_t tn = n;
    ba_php_trim(&t, &tn);
    HM_FUZZ_CHECK(t >= data && t + tn <= data + n);

    memcpy(dec, data, n);
    dec[n] = '\0';
    check_float(strtod(dec, NULL));
    if ((in->flags & F_DOUBLE_BITS) && n >= sizeof(double)) {
        double d;
        memcpy(&d, data, sizeof(d));
        check_float(d);
    }
    free(dec);
}

HM_FUZZ_ENTRY(body)

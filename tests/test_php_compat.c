/* bench_app's PHP and OpenSwoole compatibility layer (bench_app/php_compat.h)
 * against what PHP documents and does: json_encode() of strings (escaped
 * slashes, \uXXXX with surrogate pairs, control characters), (string) of a
 * float at precision 14 (fixed/exponent switch, rounding, -0, INF/NAN as
 * zend_gcvt() writes them), (int) and (string) casts of decoded JSON
 * values, truthiness, json_decode()'s array/object-only use and its depth
 * limit, urlencode()/urldecode(), parse_str() field lookup, OpenSwoole's
 * cookie parsing and cookie date, trim(). The expected strings are PHP 8's
 * output for the same input. */
#include "bench_app/php_compat.h"
#include "hm_test.h"

#include <math.h>

static ba_buf buf; /* reused by every check, freed at the end */

static const char *json_str(const char *s, size_t n)
{
    buf.len = 0;
    ASSERT_EQ(ba_php_json_string_append(&buf, s, n), 0);
    ASSERT_EQ(strlen(buf.data), buf.len);
    return buf.data;
}

#define JSON_STR(lit) json_str(lit, sizeof(lit) - 1)

static void test_json_encode_string(void)
{
    ASSERT_STREQ(JSON_STR(""), "\"\"");
    ASSERT_STREQ(JSON_STR("plain text 123"), "\"plain text 123\"");
    ASSERT_STREQ(JSON_STR("a/b</script>"), "\"a\\/b<\\/script>\"");
    ASSERT_STREQ(JSON_STR("say \"hi\" \\o/"), "\"say \\\"hi\\\" \\\\o\\/\"");
    ASSERT_STREQ(JSON_STR("\b\f\n\r\t"), "\"\\b\\f\\n\\r\\t\"");
    ASSERT_STREQ(JSON_STR("\x01\x1f"), "\"\\u0001\\u001f\"");
    ASSERT_STREQ(JSON_STR("a\0b"), "\"a\\u0000b\"");
    ASSERT_STREQ(JSON_STR("\x7f"), "\"\x7f\""); /* DEL is not escaped */
    ASSERT_STREQ(JSON_STR("caf\xc3\xa9"), "\"caf\\u00e9\"");
    ASSERT_STREQ(JSON_STR("\xe2\x82\xac"), "\"\\u20ac\"");
    ASSERT_STREQ(JSON_STR("\xf0\x9f\x98\x80"), "\"\\ud83d\\ude00\""); /* U+1F600 */
    ASSERT_STREQ(JSON_STR("\xf4\x8f\xbf\xbf"), "\"\\udbff\\udfff\""); /* U+10FFFF */
    /* Not UTF-8 (PHP's json_encode() fails): one \ufffd per bad byte. */
    ASSERT_STREQ(JSON_STR("\xff"), "\"\\ufffd\"");
    ASSERT_STREQ(JSON_STR("\xc0\xaf"), "\"\\ufffd\\ufffd\"");            /* overlong '/' */
    ASSERT_STREQ(JSON_STR("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\""); /* a surrogate */
    ASSERT_STREQ(JSON_STR("\xf4\x90\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); /* > U+10FFFF */
    ASSERT_STREQ(JSON_STR("x\xe2\x82"), "\"x\\ufffd\\ufffd\"");                     /* cut short */
    /* Appends: what was in the buffer stays. */
    buf.len = 0;
    ASSERT_EQ(ba_buf_lit(&buf, "{\"k\":"), 0);
    ASSERT_EQ(ba_php_json_string_append(&buf, "v/", 2), 0);
    ASSERT_STREQ(buf.data, "{\"k\":\"v\\/\"");
    printf("json_encode of strings: slashes, quotes, control characters, \\uXXXX and "
           "surrogate pairs, invalid UTF-8 as \\ufffd: ok\n");
}

static void check_float(double d, const char *want)
{
    char out[BA_PHP_FLOAT_STR_MAX];
    size_t n = ba_php_float_str(d, out);
    ASSERT_EQ(n, strlen(out));
    if (strcmp(out, want) != 0) HM_FAIL_("(string) %.17g: \"%s\", PHP says \"%s\"", d, out, want);
}

static void test_float_to_string(void)
{
    check_float(0.0, "0");
    check_float(-0.0, "-0");
    check_float(1.0, "1");
    check_float(-1.5, "-1.5");
    check_float(0.1, "0.1");
    check_float(0.1 + 0.2, "0.3"); /* 14 digits, not serialize_precision's 17 */
    check_float(1.0 / 3, "0.33333333333333");
    check_float(2.0 / 3, "0.66666666666667");
    check_float(123456.5, "123456.5");
    check_float(0.0001, "0.0001");
    check_float(0.00001, "1.0E-5");
    check_float(1.5e-7, "1.5E-7");
    check_float(1e13, "10000000000000");
    check_float(12345678901234.0, "12345678901234");
    check_float(1e14, "1.0E+14");
    check_float(123456789012345.678, "1.2345678901235E+14");
    check_float(99999999999999.99, "1.0E+14"); /* rounding carries into the exponent */
    check_float(1e25, "1.0E+25");
    check_float(-2.5e100, "-2.5E+100");
    check_float(1.7976931348623157e308, "1.7976931348623E+308");
    check_float(4.9406564584124654e-324, "4.9406564584125E-324");
    check_float(INFINITY, "INF");
    check_float(-INFINITY, "-INF");
    check_float(NAN, "NAN");
    check_float(-NAN, "NAN");
    /* JSON has no way to write them, so no client can send one. */
    json_error_t err;
    ASSERT(json_loads("[1e400]", 0, &err) == NULL);
    printf("(string) of floats at precision 14: digits, rounding, fixed/exponent switch, -0, "
           "INF/-INF/NAN: ok\n");
}

static json_t *J(const char *text)
{
    json_error_t err;
    json_t *j = json_loads(text, JSON_DECODE_ANY, &err);
    if (!j) HM_FAIL_("bad test JSON %s: %s", text, err.text);
    return j;
}

static void check_int(const char *json, int64_t want)
{
    json_t *j = J(json);
    int64_t got = ba_php_int_of_json(j);
    json_decref(j);
    if (got != want) HM_FAIL_("(int) %s: %" PRId64 ", PHP says %" PRId64, json, got, want);
}

static void check_string(const char *json, const char *want)
{
    json_t *j = J(json);
    char num[BA_PHP_FLOAT_STR_MAX];
    const char *s;
    size_t n = ba_php_string_of_json(j, num, &s);
    if (n != strlen(want) || memcmp(s, want, n) != 0)
        HM_FAIL_("(string) %s: \"%.*s\", PHP says \"%s\"", json, (int)n, s, want);
    json_decref(j);
}

static void check_falsy(const char *json, bool want)
{
    json_t *j = J(json);
    if (ba_php_falsy(j) != want) HM_FAIL_("!%s should be %s", json, want ? "true" : "false");
    json_decref(j);
}

static void test_casts(void)
{
    check_int("42", 42);
    check_int("-7", -7);
    check_int("3.99", 3);
    check_int("-3.99", -3);
    check_int("1e300", INT64_MAX); /* PHP: undefined; we saturate */
    check_int("-1e300", INT64_MIN);
    check_int("\"12abc\"", 12);
    check_int("\" 42\"", 42);
    check_int("\"1e3\"", 1000);
    check_int("\"-7.9\"", -7);
    check_int("\"abc\"", 0);
    check_int("\"\"", 0);
    check_int("\"99999999999999999999\"", INT64_MAX);
    check_int("true", 1);
    check_int("false", 0);
    check_int("null", 0);
    check_int("[]", 0);
    check_int("[0]", 1);
    check_int("{}", 0);
    check_int("{\"a\":1}", 1);
    ASSERT_EQ(ba_php_int_of_double(INFINITY), 0);
    ASSERT_EQ(ba_php_int_of_double(-INFINITY), 0);
    ASSERT_EQ(ba_php_int_of_double(NAN), 0);
    ASSERT_EQ(ba_php_int_of_double(-0.5), 0);

    check_string("\"a/b\"", "a/b");
    check_string("42", "42");
    check_string("-9223372036854775808", "-9223372036854775808");
    check_string("0.1", "0.1");
    check_string("1e25", "1.0E+25");
    check_string("-0.0", "-0");
    check_string("true", "1");
    check_string("false", "");
    check_string("null", "");
    check_string("[1,2]", "Array");
    check_string("{}", "Array");

    check_falsy("null", true);
    check_falsy("false", true);
    check_falsy("0", true);
    check_falsy("0.0", true);
    check_falsy("\"\"", true);
    check_falsy("\"0\"", true);
    check_falsy("[]", true);
    check_falsy("{}", true);
    check_falsy("true", false);
    check_falsy("-1", false);
    check_falsy("0.1", false);
    check_falsy("\"0.0\"", false);
    check_falsy("\" \"", false);
    check_falsy("\"a\"", false);
    check_falsy("[0]", false);
    check_falsy("{\"a\":0}", false);
    ASSERT(ba_php_falsy(NULL)); /* a missing key */
    printf("(int), (string) and ! of decoded JSON values: ok\n");
}

static void test_json_decode(void)
{
    static const struct {
        const char *text;
        bool kept;
    } cases[] = {
        {"{}", true},    {"[1]", true}, {" {\"a\":[]} ", true}, {"1", false},    {"\"s\"", false},
        {"null", false}, {"", false},   {"{", false},           {"{} x", false}, {"[1,]", false},
    };
    for (size_t i = 0; i < HM_ARRAY_LEN(cases); i++) {
        json_t *j = ba_php_json_decode(cases[i].text, strlen(cases[i].text));
        if (!j != !cases[i].kept) HM_FAIL_("json_decode %s", cases[i].text);
        json_decref(j);
    }
    /* Depth: BA_PHP_JSON_MAX_DEPTH levels decode, one more does not;
     * brackets inside a string do not count. */
    char deep[2 * BA_PHP_JSON_MAX_DEPTH + 8];
    for (int levels = BA_PHP_JSON_MAX_DEPTH; levels <= BA_PHP_JSON_MAX_DEPTH + 1; levels++) {
        size_t k = 0;
        for (int i = 0; i < levels; i++)
            deep[k++] = '[';
        for (int i = 0; i < levels; i++)
            deep[k++] = ']';
        json_t *j = ba_php_json_decode(deep, k);
        ASSERT_EQ(j != NULL, levels <= BA_PHP_JSON_MAX_DEPTH);
        json_decref(j);
    }
    char quoted[3 * BA_PHP_JSON_MAX_DEPTH];
    int k = snprintf(quoted, sizeof(quoted), "[\"");
    for (int i = 0; i < 2 * BA_PHP_JSON_MAX_DEPTH; i++)
        quoted[k++] = i % 2 ? '{' : '[';
    k += snprintf(quoted + k, sizeof(quoted) - (size_t)k, "\\\"\"]");
    json_t *j = ba_php_json_decode(quoted, (size_t)k);
    ASSERT(json_is_array(j));
    json_decref(j);
    printf("json_decode: arrays and objects only, depth limit, brackets in strings: ok\n");
}

static const char *urlencode(const char *s, size_t n)
{
    buf.len = 0;
    ASSERT_EQ(ba_php_urlencode_append(&buf, s, n), 0);
    return buf.data;
}

static const char *urldecode(const char *s)
{
    buf.len = 0;
    ASSERT_EQ(ba_php_urldecode_append(&buf, s, strlen(s)), 0);
    return buf.data;
}

static void test_url(void)
{
    ASSERT_STREQ(urlencode("", 0), "");
    ASSERT_STREQ(urlencode("aZ09-_.", 7), "aZ09-_.");
    ASSERT_STREQ(urlencode("a b&c=d/e~f*", 12), "a+b%26c%3Dd%2Fe%7Ef%2A");
    ASSERT_STREQ(urlencode("caf\xc3\xa9", 5), "caf%C3%A9");
    ASSERT_STREQ(urlencode("\0\n", 2), "%00%0A");

    ASSERT_STREQ(urldecode("a+b%20c%2fd%2F"), "a b c/d/");
    ASSERT_STREQ(urldecode("%41%42%43"), "ABC");
    ASSERT_STREQ(urldecode("%e9"), "\xe9");
    ASSERT_STREQ(urldecode("%zz%4g%"), "%zz%4g%"); /* malformed escapes stay */
    ASSERT_STREQ(urldecode("100%"), "100%");
    ASSERT_STREQ(urldecode("%4"), "%4");
    char inplace[] = "x%2By+z";
    ASSERT_EQ(ba_php_urldecode(inplace, inplace, strlen(inplace)), 5);
    ASSERT_MEMEQ(inplace, 5, "x+y z");
    /* What PHP's urldecode(urlencode($s)) gives back: $s. */
    static const char all[] = "\x01 !\"#$%&'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~\x7f\x80\xff";
    ba_buf round = {0};
    ASSERT_EQ(ba_php_urlencode_append(&round, all, sizeof(all) - 1), 0);
    ASSERT_STREQ(urldecode(round.data), all);
    ba_buf_free(&round);

    static const struct {
        const char *form, *key, *value; /* value NULL: not there */
    } fields[] = {
        {"a=1&b=2", "b", "2"},
        {"a=1&b=2&a=3", "a", "3"}, /* the last one wins */
        {"x=1", "a", NULL},
        {"", "a", NULL},
        {"a", "a", ""},
        {"a=", "a", ""},
        {"&&a=1&", "a", "1"},
        {"d%61tastar=%7B%7D", "datastar", "{}"}, /* names are decoded too */
        {"a%3D=1", "a", NULL},
        {"ab=1", "a", NULL},
        {"a=1+2%2B3", "a", "1 2+3"},
        {"a=x=y", "a", "x=y"},
    };
    for (size_t i = 0; i < HM_ARRAY_LEN(fields); i++) {
        buf.len = 0;
        bool found = ba_php_form_get(fields[i].form, strlen(fields[i].form), fields[i].key, &buf);
        if (found != (fields[i].value != NULL))
            HM_FAIL_("form \"%s\" [%s]: found=%d", fields[i].form, fields[i].key, found);
        if (found) ASSERT_STREQ(buf.data, fields[i].value);
    }
    printf("urlencode, urldecode, parse_str field lookup: ok\n");
}

static void test_cookies(void)
{
    static const struct {
        const char *header, *value; /* value NULL: absent */
    } cases[] = {
        {"via=x", "x"},
        {"a=1; via=x; b=2", "x"},
        {"via=x; via=y", "y"}, /* the last one wins */
        {"  \tvia=z", "z"},
        {"via=\"a%20b\"", "a b"}, /* quotes go, then urldecode */
        {"via=a+b%2Fc", "a b/c"},
        {"via=", ""},
        {"via=a=b", "a=b"},
        {"xvia=1; via_s=2; VIA=3", NULL},
        {"via", NULL},
        {"", NULL},
    };
    char out[BA_SWOOLE_COOKIE_MAX];
    size_t n;
    for (size_t i = 0; i < HM_ARRAY_LEN(cases); i++) {
        const char *h = cases[i].header;
        bool found = ba_swoole_cookie_get(h, strlen(h), "via", out, &n);
        if (found != (cases[i].value != NULL)) HM_FAIL_("cookie \"%s\": found=%d", h, found);
        if (found) ASSERT_MEMEQ(out, n, cases[i].value);
    }
    ASSERT(!ba_swoole_cookie_get(NULL, 0, "via", out, &n));
    /* A value of 4096 bytes or more is dropped; 4095 is kept. */
    static char big[BA_SWOOLE_COOKIE_MAX + 16];
    for (size_t len = BA_SWOOLE_COOKIE_MAX - 1; len <= BA_SWOOLE_COOKIE_MAX; len++) {
        int k = snprintf(big, sizeof(big), "via=");
        memset(big + k, 'v', len);
        bool found = ba_swoole_cookie_get(big, (size_t)k + len, "via", out, &n);
        ASSERT_EQ(found, len < BA_SWOOLE_COOKIE_MAX);
        if (found) ASSERT_EQ(n, len);
    }

    char date[BA_SWOOLE_COOKIE_DATE_MAX];
    ba_swoole_cookie_date(0, date);
    ASSERT_STREQ(date, "Thu, 01-Jan-1970 00:00:00 GMT");
    ba_swoole_cookie_date(951782400, date);
    ASSERT_STREQ(date, "Tue, 29-Feb-2000 00:00:00 GMT");
    ba_swoole_cookie_date(1700000000, date);
    ASSERT_STREQ(date, "Tue, 14-Nov-2023 22:13:20 GMT");
    printf("OpenSwoole cookie parsing (last wins, quotes, decoding, 4096-byte limit) and "
           "cookie dates: ok\n");
}

static void check_trim(const char *s, size_t n, const char *want)
{
    ba_php_trim(&s, &n);
    ASSERT_MEMEQ(s, n, want);
}

static void test_trim(void)
{
    check_trim("  \t\nabc \v\r", 10, "abc");
    check_trim("\0x\0", 3, "x");
    check_trim("a b", 3, "a b");
    check_trim("   ", 3, "");
    check_trim("", 0, "");
    check_trim("\fx", 2, "\fx"); /* form feed is not in trim()'s default set */
    printf("trim: ok\n");
}

int main(void)
{
    test_json_encode_string();
    test_float_to_string();
    test_casts();
    test_json_decode();
    test_url();
    test_cookies();
    test_trim();
    ba_buf_free(&buf);
    return 0;
}

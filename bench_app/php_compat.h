/* php_compat.h — the PHP and OpenSwoole behaviour bench_app reproduces
 * byte for byte, apart from php-via itself: urlencode()/urldecode(), how
 * $_GET/$_POST and OpenSwoole's $request->cookie read their values,
 * json_decode($s, true) and json_encode() of a string, PHP's (int) and
 * (string) casts of a decoded JSON value, truthiness, trim(), and the date
 * OpenSwoole writes in a cookie's expires. Pure functions: no app state,
 * nothing static, safe from any thread.
 *
 * Where bench_app departs from PHP it says so below (invalid UTF-8 in
 * json_encode, out-of-range floats in (int), JSON nested too deeply).
 *
 * Ownership: output goes to a caller's ba_buf (grown with ba_buf_reserve,
 * so -ENOMEM is the only failure) or a caller's array of the stated size;
 * json_t values returned are the caller's to json_decref(). */
#ifndef BA_PHP_COMPAT_H
#define BA_PHP_COMPAT_H

#include "bench_app/internal.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* ---- URLs, forms and cookies ------------------------------------------ */

/* PHP urldecode() of s[0..n) into dst (room for n bytes; dst may be s):
 * '+' is a space, %XX a byte, a malformed escape stays as it is. Returns
 * the decoded length; writes no NUL. */
size_t ba_php_urldecode(char *dst, const char *s, size_t n);
/* The same, appended to out (NUL-terminated). 0 or -ENOMEM. */
int ba_php_urldecode_append(ba_buf *out, const char *s, size_t n);
/* PHP urlencode(): alphanumerics and -_. stay, a space is '+', every other
 * byte %XX in upper case (also '~', which rawurlencode() keeps). Appends to
 * out (NUL-terminated). 0 or -ENOMEM. */
int ba_php_urlencode_append(ba_buf *out, const char *s, size_t n);

/* $_GET[key] / $_POST[key] of an application/x-www-form-urlencoded string,
 * as parse_str() fills them: names and values urldecode()d, the last
 * occurrence wins, a name without '=' has the value "". True when key is
 * there; its value then replaces out's contents (NUL-terminated). False
 * also when out cannot grow. */
bool ba_php_form_get(const char *s, size_t n, const char *key, ba_buf *out);

/* OpenSwoole keeps no cookie value of this many bytes or more. */
#define BA_SWOOLE_COOKIE_MAX 4096

/* $request->cookie[name] from a Cookie header's value, as OpenSwoole
 * parses it (openswoole_http_parse_cookie): pairs split on ';', leading
 * blanks skipped, the last occurrence wins, surrounding double quotes go,
 * the value is urldecode()d; a raw value of BA_SWOOLE_COOKIE_MAX bytes or
 * more counts as absent. Decodes into out (BA_SWOOLE_COOKIE_MAX bytes, no
 * NUL) and sets *olen; false when absent. hdr NULL: absent. */
bool ba_swoole_cookie_get(const char *hdr, size_t hdr_len, const char *name, char *out,
                          size_t *olen);

/* A cookie's expires as OpenSwoole's cookie() writes it (PHP date
 * "D, d-M-Y H:i:s T" in GMT): "Www, DD-Mon-YYYY HH:MM:SS GMT" of t, into
 * out (room for BA_SWOOLE_COOKIE_DATE_MAX bytes, NUL-terminated). */
#define BA_SWOOLE_COOKIE_DATE_MAX 40
void ba_swoole_cookie_date(time_t t, char *out);

/* ---- JSON ------------------------------------------------------------- */

/* Deeper JSON counts as invalid: jansson's parser recurses once per level
 * (up to 2048), which a 64 KiB coroutine stack cannot afford. PHP's own
 * json_decode() limit is 512. */
#define BA_PHP_JSON_MAX_DEPTH 64

/* json_decode($s, true), kept only when it is an array or an object (what
 * php-via reads signals from), and NULL for anything else: empty input,
 * invalid JSON, a scalar at the top, nesting deeper than
 * BA_PHP_JSON_MAX_DEPTH (checked before parsing). */
json_t *ba_php_json_decode(const char *s, size_t n);

/* json_encode() of a string with PHP's default flags, quotes included:
 * '/' as \/, '"' and '\\' escaped, \b \f \n \r \t by name, other bytes
 * below 0x20 as \u00XX, everything beyond ASCII as \uXXXX (lower-case hex,
 * surrogate pairs above U+FFFF); DEL (0x7f) stays as it is. Unlike PHP,
 * which fails on invalid UTF-8 (json_encode() returns false), each byte
 * that does not start a well-formed sequence becomes \ufffd (the strings
 * bench_app encodes came through jansson, which accepts only UTF-8).
 * Appends to b (NUL-terminated). 0 or -ENOMEM. */
int ba_php_json_string_append(ba_buf *b, const char *s, size_t n);

/* ---- casts of decoded JSON values ------------------------------------- */

/* PHP's (int) of a float: truncation toward zero; INF, -INF and NAN give
 * 0, as PHP 7+ documents. A finite float outside the int64 range, where
 * PHP's result is undefined, saturates to INT64_MIN / INT64_MAX. */
int64_t ba_php_int_of_double(double d);

/* PHP's (int) of json_decode(..., true)'s value v: integers as they are,
 * floats as above, a string's leading numeric prefix ("12abc" is 12,
 * "1e3" is 1000, "abc" is 0; overflow saturates), true 1, false and null
 * 0, an array or object 1 when non-empty, else 0 (objects decode to PHP
 * arrays). */
int64_t ba_php_int_of_json(const json_t *v);

/* (string) of a float: BA_PHP_FLOAT_STR_MAX bytes always suffice. */
#define BA_PHP_FLOAT_STR_MAX 32

/* PHP's (string) of a float (also echo and string interpolation), with the
 * default `precision` of 14 (not serialize_precision, which json_encode()
 * and var_export() use): 14 significant digits, correctly rounded, trailing
 * zeros dropped; fixed notation while the decimal exponent is from -4 to
 * 13 (0.0001, 12345678901234), else "1.0E+25" style (the mantissa always
 * has a fraction, the exponent no leading zeros); -0.0 is "-0". INF, -INF and NAN are "INF",
 * "-INF" and "NAN", as PHP's zend_gcvt() writes them; json_encode() of
 * such a string is an ordinary string, so a signal holding one encodes
 * fine (json_encode() of the float itself would fail). JSON cannot carry
 * these values, so a client cannot send them. Writes a NUL-terminated
 * string to out (BA_PHP_FLOAT_STR_MAX bytes); returns its length. */
size_t ba_php_float_str(double d, char *out);

/* PHP's (string) of json_decode(..., true)'s value v: a string as it is,
 * an integer in decimal, a float as ba_php_float_str(), true "1", false
 * and null "", an array or object "Array". Sets *s to the text (v's own
 * string, a literal, or num, which has BA_PHP_FLOAT_STR_MAX bytes);
 * returns its length. */
size_t ba_php_string_of_json(const json_t *v, char *num, const char **s);

/* PHP's `!$x` for json_decode(..., true)'s value v (NULL: a missing key,
 * which is null): true for null, false, 0, 0.0, "", "0", and empty arrays
 * and objects. */
bool ba_php_falsy(const json_t *v);

/* ---- strings ---------------------------------------------------------- */

/* PHP trim() with its default characters (" \t\n\r\0\x0B"): narrows
 * [*s, *s + *n) in place. */
void ba_php_trim(const char **s, size_t *n);

#endif

/* shard.c — --shard, --start-at and --run-id; see shard.h. */
#include "cli/shard.h"

#include <ctype.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/options.h"
#include "stats/json_text.h"

static int64_t wall_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int hm_shard_parse_spec(hm_shard *s, const char *arg)
{
    const char *slash = strchr(arg, '/');
    char index[32];
    long long i, n;
    if (!slash || (size_t)(slash - arg) >= sizeof(index)) return -EINVAL;
    snprintf(index, sizeof(index), "%.*s", (int)(slash - arg), arg);
    if (hm_parse_int(slash + 1, 1, 100000, &n) < 0 || hm_parse_int(index, 0, n - 1, &i) < 0)
        return -EINVAL;
    s->index = (int)i;
    s->count = (int)n;
    return 0;
}

/* "[.fraction](Z|+hh:mm|-hh:mm)" after the seconds of an RFC 3339 time. */
static int parse_fraction_and_zone(const char *p, int64_t *frac_ns, int *offset_s)
{
    *frac_ns = 0;
    *offset_s = 0;
    if (*p == '.') {
        int digits = 0;
        for (p++; isdigit((unsigned char)*p); p++, digits++)
            if (digits < 9) *frac_ns = *frac_ns * 10 + (*p - '0');
        if (digits == 0) return -EINVAL;
        for (; digits < 9; digits++)
            *frac_ns *= 10;
    }
    if (*p == 'Z' || *p == 'z') return p[1] ? -EINVAL : 0;
    if (*p != '+' && *p != '-') return -EINVAL; /* RFC 3339 always names the offset */
    int sign = *p == '-' ? -1 : 1;
    if (!isdigit((unsigned char)p[1]) || !isdigit((unsigned char)p[2]) || p[3] != ':' ||
        !isdigit((unsigned char)p[4]) || !isdigit((unsigned char)p[5]) || p[6])
        return -EINVAL;
    int hh = (p[1] - '0') * 10 + (p[2] - '0'), mm = (p[4] - '0') * 10 + (p[5] - '0');
    if (hh > 23 || mm > 59) return -EINVAL;
    *offset_s = sign * (hh * 3600 + mm * 60);
    return 0;
}

int hm_shard_parse_start_at(const char *arg, int64_t *epoch_ns)
{
    if (arg[0] == '+') {
        int64_t after;
        if (hm_parse_duration(arg + 1, &after) < 0) return -EINVAL;
        *epoch_ns = wall_now_ns() + after;
        return 0;
    }
    struct tm tm = {0};
    const char *p = strptime(arg, "%Y-%m-%d", &tm);
    if (!p || (*p != 'T' && *p != 't') || !isdigit((unsigned char)p[1])) return -EINVAL;
    p = strptime(p + 1, "%H:%M:%S", &tm);
    int64_t frac_ns;
    int offset_s;
    if (!p || parse_fraction_and_zone(p, &frac_ns, &offset_s) < 0) return -EINVAL;
    time_t t = timegm(&tm);
    if (t == (time_t)-1) return -EINVAL;
    *epoch_ns = ((int64_t)t - offset_s) * 1000000000 + frac_ns;
    return 0;
}

/* ---- the shares -------------------------------------------------------------- */

static int64_t share_of(int64_t whole, int n, int i)
{
    return whole / n + (i < whole % n ? 1 : 0);
}

/* Whole actions per second split like -n; a fraction goes to shard 0. */
static double rate_share(double rate, int n, int i)
{
    double whole = floor(rate);
    double s = (double)share_of((int64_t)whole, n, i);
    return i == 0 ? s + (rate - whole) : s;
}

static int nothing_left(const char *what, const char *value, int n)
{
    fprintf(stderr,
            "hammer: %s %s over %d shards leaves the last shard nothing; it must be at least "
            "the number of shards\n",
            what, value, n);
    return HM_EXIT_USAGE;
}

int hm_shard_split(hm_cli *cli)
{
    hm_shard *s = &cli->shard;
    hm_options *o = &cli->o;
    if (s->count == 0) s->count = 1;
    s->concurrency = o->concurrency;
    s->actions = o->actions;
    s->rate = o->rate;
    if (s->count == 1) return HM_CLI_GO;
    int n = s->count, last = n - 1;
    char v[32];
    if (share_of(o->concurrency, n, last) == 0) {
        snprintf(v, sizeof(v), "%d", o->concurrency);
        return nothing_left("-c", v, n);
    }
    /* -n counts only when it bounds the run (not -d alone). */
    bool by_count = !o->duration_ns || cli->actions_given;
    if (by_count && share_of(o->actions, n, last) == 0) {
        snprintf(v, sizeof(v), "%lld", (long long)o->actions);
        return nothing_left("-n", v, n);
    }
    if (o->rate > 0 && rate_share(o->rate, n, last) <= 0) {
        snprintf(v, sizeof(v), "%g", o->rate);
        return nothing_left("-R", v, n);
    }
    o->concurrency = (int)share_of(o->concurrency, n, s->index);
    if (by_count) o->actions = share_of(o->actions, n, s->index);
    if (o->rate > 0) o->rate = rate_share(o->rate, n, s->index);
    return HM_CLI_GO;
}

/* ---- identity ------------------------------------------------------------------ */

static json_t *string_array(const char *const *v, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, hm_json_text(v[i]));
    return a;
}

/* Everything that makes two processes parts of the same run, with the
 * whole run's -c, -n and -R; not the engine or threads, which may differ
 * from machine to machine. */
static json_t *options_record(const hm_cli *cli)
{
    const hm_options *o = &cli->o;
    const hm_shard *s = &cli->shard;
    json_t *r = json_object();
    json_object_set_new(r, "scenario", hm_json_text(o->scenario));
    json_object_set_new(r, "workload", hm_json_text(cli->workload_name));
    json_object_set_new(r, "mode", json_string(o->browser ? "browser" : "hammer"));
    json_object_set_new(r, "target", hm_json_text(o->url ? o->url : "embedded"));
    json_object_set_new(r, "route", hm_json_text(o->route));
    json_object_set_new(r, "action", hm_json_text(o->action));
    json_object_set_new(r, "signal", hm_json_text(o->signal));
    json_object_set_new(r, "signals", hm_json_text(o->signals_json));
    json_object_set_new(r, "concurrency", json_integer(s->concurrency));
    json_object_set_new(r, "actions", json_integer(o->actions ? s->actions : 0));
    json_object_set_new(r, "duration_s", json_real((double)o->duration_ns / 1e9));
    json_object_set_new(r, "rate", json_real(s->rate));
    json_object_set_new(r, "observers", json_integer(o->observers));
    json_object_set_new(
        r, "think_s",
        json_pack("[f,f]", (double)o->think_min_ns / 1e9, (double)o->think_max_ns / 1e9));
    json_object_set_new(r, "timeout_s", json_real((double)o->timeout_ns / 1e9));
    json_object_set_new(r, "no_origin", json_boolean(o->no_origin));
    json_object_set_new(r, "no_cookies", json_boolean(o->no_cookies));
    if (o->http2) { /* only then: the run ids of HTTP/1.1 runs stay as they were */
        json_object_set_new(r, "http2", json_true());
        json_object_set_new(r, "streams", json_integer(o->streams));
    }
    json_object_set_new(r, "passes", string_array(cli->pass_names, cli->n_passes));
    const char *th[HM_MAX_THRESHOLDS];
    for (int i = 0; i < cli->n_thresholds; i++)
        th[i] = cli->thresholds[i].text;
    json_object_set_new(r, "thresholds", string_array(th, cli->n_thresholds));
    json_object_set_new(r, "plugin_opts", string_array(cli->plugin_opts, o->n_plugin_opts));
    json_object_set_new(r, "shards", json_integer(s->count));
    return r;
}

/* The first 16 hex digits of SHA-256 over the options and the start time:
 * the same on every shard started with the same words. */
static int derive_run_id(hm_shard *s)
{
    char *text = json_dumps(s->options, JSON_COMPACT | JSON_SORT_KEYS);
    if (!text) return -ENOMEM;
    char stamp[32];
    snprintf(stamp, sizeof(stamp), "|%lld", (long long)(s->start_at_ns / 1000000));
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    int ok = md && EVP_DigestInit_ex(md, EVP_sha256(), NULL) &&
             EVP_DigestUpdate(md, text, strlen(text)) &&
             EVP_DigestUpdate(md, stamp, strlen(stamp)) && EVP_DigestFinal_ex(md, digest, &len);
    EVP_MD_CTX_free(md);
    free(text);
    if (!ok || len < 8) return -EIO;
    for (int i = 0; i < 8; i++)
        snprintf(s->run_id + 2 * i, 3, "%02x", digest[i]);
    return 0;
}

static void format_utc(int64_t epoch_ns, char *buf, size_t len)
{
    time_t t = (time_t)(epoch_ns / 1000000000);
    struct tm tm;
    char base[32];
    strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", gmtime_r(&t, &tm));
    snprintf(buf, len, "%s.%03dZ", base, (int)(epoch_ns % 1000000000 / 1000000));
}

int hm_shard_identify(hm_cli *cli)
{
    hm_shard *s = &cli->shard;
    if (s->count == 0) s->count = 1;
    s->options = options_record(cli);
    if (!s->options) return HM_EXIT_FAILED;
    if (s->run_id_arg)
        snprintf(s->run_id, sizeof(s->run_id), "%s", s->run_id_arg);
    else if (derive_run_id(s) < 0)
        return HM_EXIT_FAILED;
    cli->o.start_at_ns = s->start_at_ns;
    if (!s->start_at_ns) return HM_CLI_GO;
    int64_t now = wall_now_ns();
    char when[48];
    format_utc(s->start_at_ns, when, sizeof(when));
    /* Said even with -q: a late shard skews the merged run. */
    if (now > s->start_at_ns)
        fprintf(stderr, "hammer: --start-at %s passed %.3f s ago; starting as soon as set up\n",
                when, (double)(now - s->start_at_ns) / 1e9);
    else if (!cli->o.quiet && s->count > 1)
        fprintf(stderr, "hammer: shard %d/%d of run %s starts its load at %s (in %.1f s)\n",
                s->index, s->count, s->run_id, when, (double)(s->start_at_ns - now) / 1e9);
    else if (!cli->o.quiet)
        fprintf(stderr, "hammer: run %s starts its load at %s (in %.1f s)\n", s->run_id, when,
                (double)(s->start_at_ns - now) / 1e9);
    return HM_CLI_GO;
}

bool hm_shard_defers_thresholds(const hm_cli *cli)
{
    return cli->shard.count > 1;
}

json_t *hm_shard_json(const hm_cli *cli, int64_t load_started_ns)
{
    const hm_shard *s = &cli->shard;
    const hm_options *o = &cli->o;
    json_t *r = json_object();
    json_object_set_new(r, "index", json_integer(s->index));
    json_object_set_new(r, "count", json_integer(s->count ? s->count : 1));
    json_object_set_new(r, "run_id", json_string(s->run_id));
    json_object_set_new(r, "options", s->options ? json_deep_copy(s->options) : json_null());
    json_object_set_new(r, "start_at",
                        s->start_at_ns ? json_real((double)s->start_at_ns / 1e9) : json_null());
    json_object_set_new(r, "started",
                        load_started_ns ? json_real((double)load_started_ns / 1e9) : json_null());
    const char *th[HM_MAX_THRESHOLDS];
    for (int i = 0; i < cli->n_thresholds; i++)
        th[i] = cli->thresholds[i].text;
    json_object_set_new(r, "thresholds", string_array(th, cli->n_thresholds));
    json_object_set_new(r, "share",
                        json_pack("{s:i, s:I, s:f}", "concurrency", o->concurrency, "actions",
                                  (json_int_t)o->actions, "rate", o->rate));
    return r;
}

void hm_shard_free(hm_shard *s)
{
    json_decref(s->options);
    s->options = NULL;
}

/* matrix_profiles.c — the profiles file of hammer matrix; see
 * matrix_profiles.h. */
#include "cli/matrix_profiles.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hm_base.h"
#include "scenarios/scenario.h"
#include "stats/json_text.h"

/* Copies as much of src as fits (always terminated). */
static void copy_str(char *dst, size_t len, const char *src)
{
    size_t n = strnlen(src, len - 1);
    memcpy(dst, src, n);
    dst[n] = 0;
}

/* ---- one KEY = VALUE at a time ------------------------------------------- */

/* 0, or -ENOMEM (the slot is then NULL). */
static int set_str(char **slot, const char *value)
{
    hm_free(*slot);
    *slot = hm_strdup(value);
    return *slot ? 0 : -ENOMEM;
}

/* 0, or -EINVAL with c->error set. */
static int set_duration(int64_t *slot, const char *value, hm_matrix_config *c, const char *key)
{
    if (hm_parse_duration(value, slot) == 0 && *slot > 0) return 0;
    snprintf(c->error, sizeof(c->error), "%s: '%s' is not a duration (e.g. 10s)", key, value);
    return -EINVAL;
}

/* Profiles and workloads both start with their name. */
_Static_assert(offsetof(hm_matrix_profile, name) == 0, "name first");
_Static_assert(offsetof(hm_matrix_workload, name) == 0, "name first");

/* The entry a [KIND NAME] line belongs to: the last one while its keys
 * continue, else a new one. NULL with c->error set for a name used twice
 * or one entry too many. */
static void *named_entry(hm_matrix_config *c, const char *kind, const char *name, void *array,
                         size_t size, int *n, int max)
{
    char *a = array;
    if (*n && !strcmp(*(char **)(void *)(a + (size_t)(*n - 1) * size), name))
        return a + (size_t)(*n - 1) * size;
    for (int i = 0; i < *n; i++)
        if (!strcmp(*(char **)(void *)(a + (size_t)i * size), name)) {
            snprintf(c->error, sizeof(c->error), "%s '%s' is defined twice", kind, name);
            return NULL;
        }
    if (*n == max) {
        snprintf(c->error, sizeof(c->error), "more than %d %ss", max, kind);
        return NULL;
    }
    char *e = a + (size_t)(*n)++ * size;
    return set_str((char **)(void *)e, name) == 0 ? e : NULL;
}

static int matrix_key(hm_matrix_config *c, const char *key, const char *value)
{
    if (!strcmp(key, "runs")) {
        long long v;
        if (hm_parse_int(value, 1, 1000, &v) < 0) {
            snprintf(c->error, sizeof(c->error), "runs must be 1..1000, not '%s'", value);
            return -EINVAL;
        }
        c->runs = (int)v;
        return 0;
    }
    struct {
        const char *key;
        char **slot;
    } strs[] = {{"actions", &c->actions},         {"duration", &c->duration},
                {"concurrency", &c->concurrency}, {"timeout", &c->timeout},
                {"engine", &c->engine},           {"threads", &c->threads},
                {"passes", &c->passes},           {"args", &c->args},
                {"baseline", &c->baseline},       {"server_cpus", &c->server_cpus},
                {"hammer_cpus", &c->hammer_cpus}};
    for (size_t i = 0; i < HM_ARRAY_LEN(strs); i++)
        if (!strcmp(key, strs[i].key)) return set_str(strs[i].slot, value);
    if (!strcmp(key, "health_timeout")) return set_duration(&c->health_timeout_ns, value, c, key);
    if (!strcmp(key, "stop_grace")) return set_duration(&c->stop_grace_ns, value, c, key);
    if (!strcmp(key, "run_timeout")) return set_duration(&c->run_timeout_ns, value, c, key);
    snprintf(c->error, sizeof(c->error), "unknown key '%s' in [matrix]", key);
    return -EINVAL;
}

static int profile_key(hm_matrix_config *c, const char *section, const char *key, const char *value)
{
    const char *name = section + strlen("profile ");
    hm_matrix_profile *p = named_entry(c, "profile", name, c->profiles, sizeof(*p), &c->n_profiles,
                                       HM_MATRIX_MAX_PROFILES);
    if (!p) return -EINVAL;
    struct {
        const char *key;
        char **slot;
    } strs[] = {
        {"command", &p->command}, {"health", &p->health}, {"url", &p->url}, {"cwd", &p->cwd}};
    for (size_t i = 0; i < HM_ARRAY_LEN(strs); i++)
        if (!strcmp(key, strs[i].key)) return set_str(strs[i].slot, value);
    if (!strcmp(key, "port")) {
        long long v;
        if (hm_parse_int(value, 0, 65535, &v) < 0) {
            snprintf(c->error, sizeof(c->error), "profile %s: bad port '%s'", name, value);
            return -EINVAL;
        }
        p->port = (int)v;
        return 0;
    }
    if (!strcmp(key, "listener")) {
        if (strcmp(value, "any") && strcmp(value, "tree")) {
            snprintf(c->error, sizeof(c->error), "profile %s: listener wants tree or any, not '%s'",
                     name, value);
            return -EINVAL;
        }
        p->any_listener = !strcmp(value, "any");
        return 0;
    }
    if (!strcmp(key, "env")) {
        if (!strchr(value, '=') || p->n_env == HM_MATRIX_MAX_ENV) {
            snprintf(c->error, sizeof(c->error),
                     "profile %s: env wants NAME=VALUE (at most %d), not '%s'", name,
                     HM_MATRIX_MAX_ENV, value);
            return -EINVAL;
        }
        return set_str(&p->env[p->n_env++], value);
    }
    snprintf(c->error, sizeof(c->error), "unknown key '%s' in [%s]", key, section);
    return -EINVAL;
}

static int workload_key(hm_matrix_config *c, const char *section, const char *key,
                        const char *value)
{
    const char *name = section + strlen("workload ");
    hm_matrix_workload *w = named_entry(c, "workload", name, c->workloads, sizeof(*w),
                                        &c->n_workloads, HM_MATRIX_MAX_WORKLOADS);
    if (!w) return -EINVAL;
    struct {
        const char *key;
        char **slot;
    } strs[] = {{"scenario", &w->scenario},
                {"args", &w->args},
                {"actions", &w->actions},
                {"duration", &w->duration},
                {"concurrency", &w->concurrency}};
    for (size_t i = 0; i < HM_ARRAY_LEN(strs); i++)
        if (!strcmp(key, strs[i].key)) return set_str(strs[i].slot, value);
    snprintf(c->error, sizeof(c->error), "unknown key '%s' in [%s]", key, section);
    return -EINVAL;
}

/* ---- checks once the whole file is read ---------------------------------- */

static void dir_of(const char *path, char *out, size_t outlen)
{
    char buf[PATH_MAX];
    if (!realpath(path, buf)) snprintf(buf, sizeof(buf), "%s", path);
    char *slash = strrchr(buf, '/');
    if (slash) *slash = 0;
    snprintf(out, outlen, "%s", slash ? (buf[0] ? buf : "/") : ".");
}

/* A CPU list as taskset takes it ("1", "0-3", "0,2-3") into set; every CPU
 * in it must be one hammer may run on (online, and in its own affinity).
 * 0, or -EINVAL with c->error set. */
static int parse_cpus(hm_matrix_config *c, const char *key, const char *list, cpu_set_t *set)
{
    CPU_ZERO(set);
    const char *p = list;
    while (*p) {
        char *end;
        long lo = strtol(p, &end, 10), hi = lo;
        if (end == p) goto bad;
        if (*end == '-') {
            p = end + 1;
            hi = strtol(p, &end, 10);
            if (end == p) goto bad;
        }
        if (lo < 0 || hi < lo || hi >= CPU_SETSIZE) goto bad;
        for (long i = lo; i <= hi; i++)
            CPU_SET((int)i, set);
        p = end;
        if (*p == ',')
            p++;
        else if (*p)
            goto bad;
    }
    cpu_set_t mine;
    if (!CPU_COUNT(set) || sched_getaffinity(0, sizeof(mine), &mine) < 0) goto bad;
    for (int i = 0; i < CPU_SETSIZE; i++)
        if (CPU_ISSET(i, set) && !CPU_ISSET(i, &mine)) {
            snprintf(c->error, sizeof(c->error), "%s = %s: CPU %d is not available here", key, list,
                     i);
            return -EINVAL;
        }
    return 0;
bad:
    snprintf(c->error, sizeof(c->error), "%s = %s: not a CPU list like 1, 0-3 or 0,2", key, list);
    return -EINVAL;
}

/* The [matrix] values (w NULL) or a workload's that become hammer options:
 * 0 when they are fine, else -EINVAL and why not in why. */
static int check_run_values(const hm_matrix_config *c, const hm_matrix_workload *w, char *why,
                            size_t whylen)
{
    const char *where = w ? w->name : "matrix";
    struct {
        const char *key, *value;
        long long max;
    } ints[] = {{"actions", w ? w->actions : c->actions, INT32_MAX},
                {"concurrency", w ? w->concurrency : c->concurrency, 1000000},
                {"threads", w ? NULL : c->threads, 1024}};
    for (size_t i = 0; i < HM_ARRAY_LEN(ints); i++) {
        long long v;
        if (ints[i].value && hm_parse_int(ints[i].value, 1, ints[i].max, &v) < 0) {
            snprintf(why, whylen, "[%s] %s = %s: not a number from 1 to %lld", where, ints[i].key,
                     ints[i].value, ints[i].max);
            return -EINVAL;
        }
    }
    struct {
        const char *key, *value;
    } durations[] = {{"duration", w ? w->duration : c->duration},
                     {"timeout", w ? NULL : c->timeout}};
    for (size_t i = 0; i < HM_ARRAY_LEN(durations); i++) {
        int64_t ns;
        const char *v = durations[i].value;
        /* hammer takes bare seconds for -d only; --timeout needs a unit */
        bool unit_missing = v && i == 1 && *v && isdigit((unsigned char)v[strlen(v) - 1]);
        if (v && (hm_parse_duration(v, &ns) < 0 || ns <= 0 || unit_missing)) {
            snprintf(why, whylen, "[%s] %s = %s: not a duration like 30s", where, durations[i].key,
                     durations[i].value);
            return -EINVAL;
        }
    }
    /* A plugin named in args may add the scenario; then the run will tell. */
    bool plugin =
        (c->args && strstr(c->args, "--plugin")) || (w && w->args && strstr(w->args, "--plugin"));
    if (w && !plugin && !hm_scenario_find(w->scenario)) {
        snprintf(why, whylen, "[workload %s] scenario = %s: no such scenario (hammer list)",
                 w->name, w->scenario);
        return -EINVAL;
    }
    return 0;
}

/* Everything a whole file must hold, once it is read; 0, or -EINVAL with
 * c->error set (without the path), or -ENOMEM. */
static int check_config(hm_matrix_config *c)
{
    if (!c->n_profiles || !c->n_workloads) {
        snprintf(c->error, sizeof(c->error),
                 "needs at least one [profile NAME] and one [workload NAME]");
        return -EINVAL;
    }
    for (int i = 0; i < c->n_profiles; i++)
        if (!c->profiles[i].command || !c->profiles[i].command[0]) {
            snprintf(c->error, sizeof(c->error), "profile %s has no command", c->profiles[i].name);
            return -EINVAL;
        }
    for (int i = 0; i < c->n_workloads; i++)
        if (!c->workloads[i].scenario) {
            snprintf(c->error, sizeof(c->error), "workload %s has no scenario",
                     c->workloads[i].name);
            return -EINVAL;
        }
    if (c->baseline) {
        bool found = false;
        for (int i = 0; i < c->n_profiles; i++)
            found = found || !strcmp(c->profiles[i].name, c->baseline);
        if (!found) {
            snprintf(c->error, sizeof(c->error), "baseline '%s' is not a profile", c->baseline);
            return -EINVAL;
        }
    } else if (set_str(&c->baseline, c->profiles[0].name) < 0) {
        return -ENOMEM;
    }
    /* What goes to the child hammers is checked here, so a typo is one
     * error now rather than every run failing after the servers started. */
    int rc = check_run_values(c, NULL, c->error, sizeof(c->error));
    for (int i = 0; rc == 0 && i < c->n_workloads; i++)
        rc = check_run_values(c, &c->workloads[i], c->error, sizeof(c->error));
    if (rc < 0) return rc;
    if ((c->server_cpus && (rc = parse_cpus(c, "server_cpus", c->server_cpus, &c->server_set))) ||
        (c->hammer_cpus && (rc = parse_cpus(c, "hammer_cpus", c->hammer_cpus, &c->hammer_set))))
        return rc;
    if (!c->passes && set_str(&c->passes, "cold,warm") < 0) return -ENOMEM;
    const char *comma = strchr(c->passes, ',');
    bool names_ok = comma && comma != c->passes && comma[1] && !strchr(comma + 1, ',');
    for (const char *q = c->passes; names_ok && *q; q++)
        names_ok = *q == ',' || *q == '-' || *q == '_' || isalnum((unsigned char)*q);
    if (!names_ok) {
        snprintf(c->error, sizeof(c->error),
                 "passes must be two names (letters, digits, - or _), like cold,warm");
        return -EINVAL;
    }
    return 0;
}

/* Prefixes c->error with prefix (the path, or path:line). */
static void error_at(hm_matrix_config *c, const char *prefix)
{
    char why[2 * PATH_MAX];
    snprintf(why, sizeof(why), "%s: %s", prefix, c->error);
    copy_str(c->error, sizeof(c->error), why);
}

/* ---- reading the file ------------------------------------------------------ */

/* The longest line hammer lets inih read, newline included. inih cuts a
 * longer line and parses its tail as a new line ("unknown key 'sumption'"),
 * and Debian builds it with 200 bytes; its run-time settings (ini_max_line
 * and friends, Debian's libinih 55) raise that for our parse, and the
 * reader below refuses any line that still does not fit, naming it. */
#define MAX_LINE (1024 * 1024)

/* inih's stream and handler state: the line being parsed, and whether it
 * continues the key above (inih: a line starting with a space or tab after
 * KEY = VALUE in the same section). */
typedef struct parse_state {
    hm_matrix_config *c;
    FILE *f;
    char *buf; /* getline's */
    size_t cap;
    int line;        /* number of the line inih parses now */
    bool indented;   /* it starts with a space or tab */
    bool have_key;   /* a KEY = VALUE since the last [section]: inih's "prev_name" */
    char error[200]; /* the reader's own complaint, about line */
} parse_state;

/* inih's reader (fgets-like: at most num - 1 bytes into str). Hands inih
 * whole lines only: a line that does not fit ends the parse with an error
 * instead of being cut. */
static char *read_line(char *str, int num, void *stream)
{
    parse_state *st = stream;
    ssize_t n = getline(&st->buf, &st->cap, st->f);
    if (n < 0) return NULL;
    st->line++;
    if (memchr(st->buf, 0, (size_t)n)) {
        snprintf(st->error, sizeof(st->error), "a NUL byte: not a text file");
        return NULL;
    }
    if (num < 1 || (size_t)n > (size_t)num - 1) {
        snprintf(st->error, sizeof(st->error),
                 "this line is %zd bytes, more than the %d a line may hold; continue a long "
                 "value on the next lines, each starting with a space",
                 n, num - 1);
        return NULL;
    }
    memcpy(str, st->buf, (size_t)n + 1);
    st->indented = str[0] == ' ' || str[0] == '\t';
    const char *start = str + strspn(str, " \t");
    /* A [section] line, unless inih takes it as a continuation. */
    if (*start == '[' && !(st->indented && st->have_key)) st->have_key = false;
    return str;
}

/* The keys a section takes, to tell an indented key from a continuation. */
static bool is_key_of(const char *section, const char *word, size_t len)
{
    static const char *const matrix_keys[] = {
        "runs",        "actions",     "duration",       "concurrency", "timeout",
        "engine",      "threads",     "passes",         "args",        "baseline",
        "server_cpus", "hammer_cpus", "health_timeout", "stop_grace",  "run_timeout"};
    static const char *const profile_keys[] = {"command", "env", "port", "health", "url", "cwd"};
    static const char *const workload_keys[] = {"scenario", "args", "actions", "duration",
                                                "concurrency"};
    const char *const *keys = matrix_keys;
    size_t n = HM_ARRAY_LEN(matrix_keys);
    if (!strncmp(section, "profile ", 8))
        keys = profile_keys, n = HM_ARRAY_LEN(profile_keys);
    else if (!strncmp(section, "workload ", 9))
        keys = workload_keys, n = HM_ARRAY_LEN(workload_keys);
    for (size_t i = 0; i < n; i++)
        if (strlen(keys[i]) == len && !strncmp(keys[i], word, len)) return true;
    return false;
}

/* A continuation line: its text joins the value above with one space.
 * Only word lists continue (command, args): in any other value a space
 * would change its meaning (env = PATH=...; write one env line per
 * variable). */
static int continue_value(parse_state *st, const char *section, const char *key, const char *text)
{
    hm_matrix_config *c = st->c;
    size_t word = strcspn(text, "=:");
    while (word && (text[word - 1] == ' ' || text[word - 1] == '\t'))
        word--;
    if (text[0] == '[') {
        snprintf(c->error, sizeof(c->error),
                 "this line starts with a space or tab, so it continues '%s' above; unindent it "
                 "to start a section",
                 key);
        return -EINVAL;
    }
    if (text[strcspn(text, "=:")] && is_key_of(section, text, word)) {
        snprintf(c->error, sizeof(c->error),
                 "this line starts with a space or tab, so it continues '%s' above; unindent "
                 "'%.*s' to make it a key of its own",
                 key, (int)word, text);
        return -EINVAL;
    }
    char **slot = NULL;
    if (!strcmp(section, "matrix") && !strcmp(key, "args")) {
        slot = &c->args;
    } else if (!strncmp(section, "profile ", 8) && c->n_profiles) {
        hm_matrix_profile *p = &c->profiles[c->n_profiles - 1];
        if (!strcmp(key, "command")) slot = &p->command;
    } else if (!strncmp(section, "workload ", 9) && c->n_workloads && !strcmp(key, "args")) {
        slot = &c->workloads[c->n_workloads - 1].args;
    }
    if (!slot || !*slot) {
        snprintf(c->error, sizeof(c->error),
                 "this line starts with a space or tab, so it continues '%s' above, which takes "
                 "one line (only command and args continue)",
                 key);
        return -EINVAL;
    }
    size_t a = strlen(*slot), b = strlen(text);
    char *joined = hm_alloc(a + 1 + b + 1);
    if (!joined) return -ENOMEM;
    memcpy(joined, *slot, a);
    joined[a] = ' ';
    memcpy(joined + a + 1, text, b + 1);
    hm_free(*slot);
    *slot = joined;
    return 0;
}

/* inih's handler: nonzero to go on. */
static int on_ini(void *user, const char *section, const char *key, const char *value)
{
    parse_state *st = user;
    hm_matrix_config *c = st->c;
    int rc;
    if (!hm_utf8_valid(section) || !hm_utf8_valid(key) || !hm_utf8_valid(value)) {
        snprintf(c->error, sizeof(c->error), "not UTF-8 text");
        rc = -EINVAL;
    } else if (st->indented && st->have_key) {
        rc = continue_value(st, section, key, value);
    } else if (!strcmp(section, "matrix")) {
        rc = matrix_key(c, key, value);
    } else if (!strncmp(section, "profile ", 8) && section[8]) {
        rc = profile_key(c, section, key, value);
    } else if (!strncmp(section, "workload ", 9) && section[9]) {
        rc = workload_key(c, section, key, value);
    } else {
        snprintf(c->error, sizeof(c->error),
                 "unknown section [%s]: use [matrix], [profile NAME] or [workload NAME]", section);
        rc = -EINVAL;
    }
    st->have_key = true;
    return rc == 0;
}

/* Parses f with inih, set up for lines of up to MAX_LINE bytes and
 * continuation lines; 0, or -EINVAL with c->error saying where and what. */
static int parse_file(hm_matrix_config *c, FILE *f)
{
    parse_state st = {.c = c, .f = f};
    /* Debian's libinih takes its limits at run time; restored afterwards. */
    bool use_stack = ini_use_stack, allow_realloc = ini_allow_realloc;
    bool multiline = ini_allow_multiline, stop_first = ini_stop_on_first_error;
    int max_line = ini_max_line, initial_alloc = ini_initial_alloc;
    ini_use_stack = false;
    ini_allow_realloc = false; /* one buffer of MAX_LINE: the reader gets num = MAX_LINE */
    ini_max_line = ini_initial_alloc = MAX_LINE;
    ini_allow_multiline = true;
    ini_stop_on_first_error = true; /* c->error then belongs to the line inih names */
    int line = ini_parse_stream(read_line, &st, on_ini, &st);
    ini_use_stack = use_stack, ini_allow_realloc = allow_realloc;
    ini_allow_multiline = multiline, ini_stop_on_first_error = stop_first;
    ini_max_line = max_line, ini_initial_alloc = initial_alloc;
    free(st.buf);
    if (line == -2) return -ENOMEM;
    if (line <= 0 && !st.error[0]) return 0;
    if (line > 0 && !c->error[0])
        snprintf(c->error, sizeof(c->error),
                 "not an INI line (KEY = VALUE, [section] or ; comment)");
    if (line <= 0) { /* the reader stopped: its line, its reason */
        line = st.line;
        snprintf(c->error, sizeof(c->error), "%s", st.error);
    }
    char where[PATH_MAX + 16];
    snprintf(where, sizeof(where), "%s:%d", c->path, line);
    error_at(c, where);
    return -EINVAL;
}

int hm_matrix_config_load(hm_matrix_config *c, const char *path)
{
    c->path = path;
    c->runs = 3;
    c->health_timeout_ns = 30 * INT64_C(1000000000);
    c->stop_grace_ns = 5 * INT64_C(1000000000);
    c->run_timeout_ns = 600 * INT64_C(1000000000);
    dir_of(path, c->dir, sizeof(c->dir));
    ssize_t n = readlink("/proc/self/exe", c->self, sizeof(c->self) - 1);
    if (n <= 0) {
        snprintf(c->error, sizeof(c->error), "cannot find hammer's own executable");
        return -EINVAL;
    }
    c->self[n] = 0;
    dir_of(c->self, c->bindir, sizeof(c->bindir));
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(c->error, sizeof(c->error), "cannot read %s: %s", path, strerror(errno));
        return -EINVAL;
    }
    int rc = parse_file(c, f);
    fclose(f);
    if (rc < 0) return rc;
    rc = check_config(c);
    if (rc == -EINVAL) error_at(c, path);
    return rc;
}

int hm_matrix_config_override(hm_matrix_config *c, const char *runs, const char *actions,
                              const char *concurrency)
{
    long long v;
    if (runs) {
        if (hm_parse_int(runs, 1, 1000, &v) < 0) {
            snprintf(c->error, sizeof(c->error), "--runs must be 1..1000");
            return -EINVAL;
        }
        c->runs = (int)v;
    }
    if ((actions && hm_parse_int(actions, 1, INT32_MAX, &v) < 0) ||
        (concurrency && hm_parse_int(concurrency, 1, 1000000, &v) < 0)) {
        snprintf(c->error, sizeof(c->error), "-n and -c take a positive number");
        return -EINVAL;
    }
    if ((actions && set_str(&c->actions, actions) < 0) ||
        (concurrency && set_str(&c->concurrency, concurrency) < 0))
        return -ENOMEM;
    if (actions) { /* -n on the command line wins over any duration */
        hm_free(c->duration);
        c->duration = NULL;
        for (int i = 0; i < c->n_workloads; i++) {
            hm_free(c->workloads[i].actions), hm_free(c->workloads[i].duration);
            c->workloads[i].actions = c->workloads[i].duration = NULL;
        }
    }
    return 0;
}

void hm_matrix_config_free(hm_matrix_config *c)
{
    char **strs[] = {&c->actions,  &c->duration,    &c->concurrency, &c->timeout,
                     &c->engine,   &c->threads,     &c->passes,      &c->args,
                     &c->baseline, &c->server_cpus, &c->hammer_cpus};
    for (size_t i = 0; i < HM_ARRAY_LEN(strs); i++)
        hm_free(*strs[i]);
    for (int i = 0; i < c->n_profiles; i++) {
        hm_matrix_profile *p = &c->profiles[i];
        hm_free(p->name), hm_free(p->command), hm_free(p->health), hm_free(p->url), hm_free(p->cwd);
        for (int e = 0; e < p->n_env; e++)
            hm_free(p->env[e]);
    }
    for (int i = 0; i < c->n_workloads; i++) {
        hm_matrix_workload *w = &c->workloads[i];
        hm_free(w->name), hm_free(w->scenario), hm_free(w->args);
        hm_free(w->actions), hm_free(w->duration), hm_free(w->concurrency);
    }
}

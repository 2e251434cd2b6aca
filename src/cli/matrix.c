/* matrix.c — hammer matrix: see matrix.h and docs/matrix.md. */
#include "cli/matrix.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <ini.h>
#include <jansson.h>
#include <limits.h>
#include <stddef.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <wordexp.h>

#include "base/hm_base.h"
#include "engine/engine.h"
#include "proto/http_client.h"
#include "proto/tls.h"
#include "scenarios/scenario.h"
#include "stats/matrix_report.h"
#include "stats/results.h"

extern char **environ;

#define MX_MAX_PROFILES 32
#define MX_MAX_WORKLOADS 32
#define MX_MAX_ENV 32

typedef struct mx_profile {
    char *name;
    char *command; /* template: {port}, {bindir}, {dir} */
    char *env[MX_MAX_ENV];
    int n_env;
    int port;     /* 0: a free port for each start */
    char *health; /* path that answers 2xx once the server is ready */
    char *url;    /* template, default http://127.0.0.1:{port} */
    char *cwd;
} mx_profile;

typedef struct mx_workload {
    char *name;
    char *scenario;
    char *args;        /* extra hammer options, before "scenario" */
    char *actions;     /* per-workload -n, or NULL for the matrix's */
    char *duration;    /* per-workload -d */
    char *concurrency; /* per-workload -c */
} mx_workload;

typedef struct mx_config {
    const char *path;
    char dir[PATH_MAX];    /* the profiles file's directory, for {dir} */
    char bindir[PATH_MAX]; /* hammer's directory, for {bindir} */
    char self[PATH_MAX];   /* hammer itself, for the child runs */
    int runs;
    char *actions, *duration, *concurrency, *timeout, *engine, *threads, *passes, *args;
    char *baseline;
    char *server_cpus, *hammer_cpus; /* CPU lists, or NULL for no pinning */
    cpu_set_t server_set, hammer_set;
    int64_t health_timeout_ns, stop_grace_ns, run_timeout_ns;
    mx_profile profiles[MX_MAX_PROFILES];
    int n_profiles;
    mx_workload workloads[MX_MAX_WORKLOADS];
    int n_workloads;
    char error[300];
} mx_config;

static atomic_bool interrupted;

/* Copies as much of src as fits (always terminated). */
static void copy_str(char *dst, size_t len, const char *src)
{
    size_t n = strnlen(src, len - 1);
    memcpy(dst, src, n);
    dst[n] = 0;
}

static void on_signal(int sig)
{
    (void)sig;
    atomic_store(&interrupted, true);
}

/* Length of the valid UTF-8 sequence at p (1-4), or 0 if it is not one. */
static int utf8_seq(const unsigned char *p)
{
    if (p[0] < 0x80) return 1;
    int n = p[0] >= 0xf0 && p[0] <= 0xf4  ? 4
            : p[0] >= 0xe0                ? 3
            : p[0] >= 0xc2 && p[0] < 0xe0 ? 2
                                          : 0;
    if (!n) return 0;
    for (int i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80) return 0;
    if (n == 3 && ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0))) return 0;
    if (n == 4 && ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))) return 0;
    return n;
}

/* A JSON string of text from outside (server logs, system files): bytes
 * that are not UTF-8 become '?', since jansson refuses them and a refused
 * string would silently drop the run it belongs to. */
static json_t *jtext(const char *s)
{
    size_t n = strlen(s);
    char *clean = hm_alloc(n + 1);
    if (!clean) return json_string("");
    const unsigned char *p = (const unsigned char *)s;
    size_t o = 0;
    while (*p) {
        int k = utf8_seq(p);
        if (k)
            memcpy(clean + o, p, (size_t)k), o += (size_t)k, p += k;
        else
            clean[o++] = '?', p++;
    }
    clean[o] = 0;
    json_t *j = json_string(clean);
    hm_free(clean);
    return j;
}

static bool is_utf8(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int k = utf8_seq(p);
        if (!k) return false;
        p += k;
    }
    return true;
}

/* ---- the profiles file ------------------------------------------------- */

static bool set_str(char **slot, const char *value)
{
    hm_free(*slot);
    *slot = hm_strdup(value);
    return *slot != NULL;
}

static bool set_duration(int64_t *slot, const char *value, mx_config *c, const char *key)
{
    if (hm_parse_duration(value, slot) == 0 && *slot > 0) return true;
    snprintf(c->error, sizeof(c->error), "%s: '%s' is not a duration (e.g. 10s)", key, value);
    return false;
}

/* Profiles and workloads both start with their name. */
_Static_assert(offsetof(mx_profile, name) == 0, "name first");
_Static_assert(offsetof(mx_workload, name) == 0, "name first");

/* The entry a [KIND NAME] line belongs to: the last one while its keys
 * continue, else a new one. NULL with c->error set for a name used twice
 * or one entry too many. */
static void *named_entry(mx_config *c, const char *kind, const char *name, void *array, size_t size,
                         int *n, int max)
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
    return set_str((char **)(void *)e, name) ? e : NULL;
}

static int on_ini(void *user, const char *section, const char *key, const char *value)
{
    mx_config *c = user;
    if (!is_utf8(section) || !is_utf8(key) || !is_utf8(value)) {
        snprintf(c->error, sizeof(c->error), "not UTF-8 text");
        return 0;
    }
    if (!strcmp(section, "matrix")) {
        if (!strcmp(key, "runs")) {
            long long v;
            if (hm_parse_int(value, 1, 1000, &v) < 0) {
                snprintf(c->error, sizeof(c->error), "runs must be 1..1000, not '%s'", value);
                return 0;
            }
            c->runs = (int)v;
            return 1;
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
        if (!strcmp(key, "health_timeout"))
            return set_duration(&c->health_timeout_ns, value, c, key);
        if (!strcmp(key, "stop_grace")) return set_duration(&c->stop_grace_ns, value, c, key);
        if (!strcmp(key, "run_timeout")) return set_duration(&c->run_timeout_ns, value, c, key);
    } else if (!strncmp(section, "profile ", 8) && section[8]) {
        const char *name = section + 8;
        mx_profile *p = named_entry(c, "profile", name, c->profiles, sizeof(*p), &c->n_profiles,
                                    MX_MAX_PROFILES);
        if (!p) return 0;
        if (!strcmp(key, "command")) return set_str(&p->command, value);
        if (!strcmp(key, "health")) return set_str(&p->health, value);
        if (!strcmp(key, "url")) return set_str(&p->url, value);
        if (!strcmp(key, "cwd")) return set_str(&p->cwd, value);
        if (!strcmp(key, "port")) {
            long long v;
            if (hm_parse_int(value, 0, 65535, &v) < 0) {
                snprintf(c->error, sizeof(c->error), "profile %s: bad port '%s'", name, value);
                return 0;
            }
            p->port = (int)v;
            return 1;
        }
        if (!strcmp(key, "env")) {
            if (!strchr(value, '=') || p->n_env == MX_MAX_ENV) {
                snprintf(c->error, sizeof(c->error),
                         "profile %s: env wants NAME=VALUE (at most %d), not '%s'", name,
                         MX_MAX_ENV, value);
                return 0;
            }
            return set_str(&p->env[p->n_env++], value);
        }
    } else if (!strncmp(section, "workload ", 9) && section[9]) {
        const char *name = section + 9;
        mx_workload *w = named_entry(c, "workload", name, c->workloads, sizeof(*w), &c->n_workloads,
                                     MX_MAX_WORKLOADS);
        if (!w) return 0;
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
    } else {
        snprintf(c->error, sizeof(c->error),
                 "unknown section [%s]: use [matrix], [profile NAME] or [workload NAME]", section);
        return 0;
    }
    snprintf(c->error, sizeof(c->error), "unknown key '%s' in [%s]", key, section);
    return 0;
}

static void config_free(mx_config *c)
{
    char **strs[] = {&c->actions,  &c->duration,    &c->concurrency, &c->timeout,
                     &c->engine,   &c->threads,     &c->passes,      &c->args,
                     &c->baseline, &c->server_cpus, &c->hammer_cpus};
    for (size_t i = 0; i < HM_ARRAY_LEN(strs); i++)
        hm_free(*strs[i]);
    for (int i = 0; i < c->n_profiles; i++) {
        mx_profile *p = &c->profiles[i];
        hm_free(p->name), hm_free(p->command), hm_free(p->health), hm_free(p->url), hm_free(p->cwd);
        for (int e = 0; e < p->n_env; e++)
            hm_free(p->env[e]);
    }
    for (int i = 0; i < c->n_workloads; i++) {
        mx_workload *w = &c->workloads[i];
        hm_free(w->name), hm_free(w->scenario), hm_free(w->args);
        hm_free(w->actions), hm_free(w->duration), hm_free(w->concurrency);
    }
}

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
 * false with c->error set. */
static bool parse_cpus(mx_config *c, const char *key, const char *list, cpu_set_t *set)
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
            return false;
        }
    return true;
bad:
    snprintf(c->error, sizeof(c->error), "%s = %s: not a CPU list like 1, 0-3 or 0,2", key, list);
    return false;
}

/* The [matrix] values (w NULL) or a workload's that become hammer options;
 * NULL when they are fine, else why not (in a static buffer). */
static const char *check_run_values(const mx_config *c, const mx_workload *w)
{
    static char why[300];
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
            snprintf(why, sizeof(why), "[%s] %s = %s: not a number from 1 to %lld", where,
                     ints[i].key, ints[i].value, ints[i].max);
            return why;
        }
    }
    struct {
        const char *key, *value;
    } durations[] = {{"duration", w ? w->duration : c->duration},
                     {"timeout", w ? NULL : c->timeout}};
    for (size_t i = 0; i < HM_ARRAY_LEN(durations); i++) {
        int64_t ns;
        if (durations[i].value && (hm_parse_duration(durations[i].value, &ns) < 0 || ns <= 0)) {
            snprintf(why, sizeof(why), "[%s] %s = %s: not a duration like 30s", where,
                     durations[i].key, durations[i].value);
            return why;
        }
    }
    /* A plugin named in args may add the scenario; then the run will tell. */
    bool plugin =
        (c->args && strstr(c->args, "--plugin")) || (w && w->args && strstr(w->args, "--plugin"));
    if (w && !plugin && !hm_scenario_find(w->scenario)) {
        snprintf(why, sizeof(why), "[workload %s] scenario = %s: no such scenario (hammer list)",
                 w->name, w->scenario);
        return why;
    }
    return NULL;
}

/* Reads and checks the file; 0, or -EINVAL with c->error set. */
static int config_load(mx_config *c, const char *path)
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
    int line = ini_parse_file(f, on_ini, c);
    fclose(f);
    if (line != 0) {
        char why[700];
        snprintf(why, sizeof(why), "%s:%d: %s", path, line,
                 c->error[0] ? c->error : "not an INI line (KEY = VALUE, [section] or ; comment)");
        copy_str(c->error, sizeof(c->error), why);
        return -EINVAL;
    }
    if (!c->n_profiles || !c->n_workloads) {
        snprintf(c->error, sizeof(c->error),
                 "%s: needs at least one [profile NAME] and one [workload NAME]", path);
        return -EINVAL;
    }
    for (int i = 0; i < c->n_profiles; i++)
        if (!c->profiles[i].command) {
            snprintf(c->error, sizeof(c->error), "%s: profile %s has no command", path,
                     c->profiles[i].name);
            return -EINVAL;
        }
    for (int i = 0; i < c->n_workloads; i++)
        if (!c->workloads[i].scenario) {
            snprintf(c->error, sizeof(c->error), "%s: workload %s has no scenario", path,
                     c->workloads[i].name);
            return -EINVAL;
        }
    if (c->baseline) {
        bool found = false;
        for (int i = 0; i < c->n_profiles; i++)
            found = found || !strcmp(c->profiles[i].name, c->baseline);
        if (!found) {
            snprintf(c->error, sizeof(c->error), "%s: baseline '%s' is not a profile", path,
                     c->baseline);
            return -EINVAL;
        }
    } else if (!set_str(&c->baseline, c->profiles[0].name)) {
        return -ENOMEM;
    }
    /* What goes to the child hammers is checked here, so a typo is one
     * error now rather than every run failing after the servers started. */
    const char *bad = check_run_values(c, NULL);
    for (int i = 0; !bad && i < c->n_workloads; i++)
        bad = check_run_values(c, &c->workloads[i]);
    if (bad) {
        char msg[400];
        snprintf(msg, sizeof(msg), "%s: %s", path, bad);
        copy_str(c->error, sizeof(c->error), msg);
        return -EINVAL;
    }
    if ((c->server_cpus && !parse_cpus(c, "server_cpus", c->server_cpus, &c->server_set)) ||
        (c->hammer_cpus && !parse_cpus(c, "hammer_cpus", c->hammer_cpus, &c->hammer_set))) {
        char why[400];
        snprintf(why, sizeof(why), "%s: %s", path, c->error);
        copy_str(c->error, sizeof(c->error), why);
        return -EINVAL;
    }
    if (!c->passes && !set_str(&c->passes, "cold,warm")) return -ENOMEM;
    const char *comma = strchr(c->passes, ',');
    bool names_ok = comma && comma != c->passes && comma[1] && !strchr(comma + 1, ',');
    for (const char *q = c->passes; names_ok && *q; q++)
        names_ok = *q == ',' || *q == '-' || *q == '_' || isalnum((unsigned char)*q);
    if (!names_ok) {
        snprintf(c->error, sizeof(c->error),
                 "%s: passes must be two names (letters, digits, - or _), like cold,warm", path);
        return -EINVAL;
    }
    return 0;
}

/* ---- command lines ----------------------------------------------------- */

/* Appends s to out single-quoted, so a path with spaces stays one word. */
static void append_quoted(char *out, size_t cap, const char *s)
{
    size_t n = strlen(out);
    if (n + 1 < cap) out[n++] = '\'';
    for (; *s && n + 5 < cap; s++) {
        if (*s == '\'') {
            memcpy(out + n, "'\\''", 4);
            n += 4;
        } else {
            out[n++] = *s;
        }
    }
    if (n + 1 < cap) out[n++] = '\'';
    out[n] = 0;
}

/* Appends path to out so that it stays one literal word wherever it sits:
 * single-quoted outside quotes, backslash-escaped inside double quotes,
 * as it is inside single quotes (where nothing can be escaped). */
static void append_path(char *out, size_t cap, const char *path, char quote)
{
    if (quote == 0) {
        append_quoted(out, cap, path);
        return;
    }
    size_t n = strlen(out);
    for (; *path && n + 3 < cap; path++) {
        if (quote == '"' && strchr("$`\"\\", *path)) out[n++] = '\\';
        out[n++] = *path;
    }
    out[n] = 0;
}

/* Replaces {port}, {bindir} and {dir} in tmpl, minding the quotes around
 * them (the result goes to split_words). */
static int expand(const mx_config *c, const char *tmpl, int port, char *out, size_t cap)
{
    out[0] = 0;
    char quote = 0; /* the quote we are inside, if any */
    for (const char *p = tmpl; *p;) {
        size_t n = strlen(out);
        if (n + 16 >= cap) return -E2BIG;
        if (!strncmp(p, "{port}", 6)) {
            snprintf(out + n, cap - n, "%d", port);
            p += 6;
        } else if (!strncmp(p, "{bindir}", 8)) {
            append_path(out, cap, c->bindir, quote);
            p += 8;
        } else if (!strncmp(p, "{dir}", 5)) {
            append_path(out, cap, c->dir, quote);
            p += 5;
        } else {
            if (*p == '\\' && quote != '\'' && p[1]) { /* an escaped character stays as it is */
                out[n++] = *p++;
            } else if ((*p == '\'' || *p == '"') && (!quote || quote == *p)) {
                quote = quote ? 0 : *p;
            }
            out[n] = *p++;
            out[n + 1] = 0;
        }
    }
    return 0;
}

/* Splits a command line into words the way a shell would (quotes, $VAR,
 * ~), with no shell: command substitution is refused. */
static int split_words(const char *line, wordexp_t *we, char *why, size_t whylen)
{
    int rc = wordexp(line, we, WRDE_NOCMD | WRDE_UNDEF);
    if (rc == 0) return 0;
    const char *what = rc == WRDE_CMDSUB    ? "command substitution is not allowed"
                       : rc == WRDE_BADVAL  ? "it uses an undefined variable"
                       : rc == WRDE_BADCHAR ? "it has a character that needs quoting (|&;<>(){})"
                       : rc == WRDE_SYNTAX  ? "unbalanced quotes"
                                            : "out of memory";
    snprintf(why, whylen, "cannot split '%s': %s", line, what);
    return -EINVAL;
}

/* ---- processes ----------------------------------------------------------- */

/* Starts file (argv[0] when NULL; PATH searched when it has no slash) with
 * argv, stdout and stderr appended to log_path; own_group puts it in a new
 * process group so the terminal's Ctrl-C reaches hammer, not the server,
 * and the whole group (e.g. php's workers) can be stopped at once. */
static int spawn(const char *file, char *const argv[], char *const envp[], const char *cwd,
                 const char *log_path, bool own_group, const cpu_set_t *cpus, pid_t *pid)
{
    /* A child inherits its parent's CPU affinity: pin ourselves for the
     * spawn (the matrix is single-threaded), then go back. */
    cpu_set_t mine;
    if (cpus) {
        if (sched_getaffinity(0, sizeof(mine), &mine) < 0) return -errno;
        if (sched_setaffinity(0, sizeof(*cpus), cpus) < 0) return -errno;
    }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    if (cwd) posix_spawn_file_actions_addchdir_np(&fa, cwd);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGTERM);
    sigaddset(&defaults, SIGPIPE);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &defaults);
    short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    if (own_group) {
        flags |= POSIX_SPAWN_SETPGROUP;
        posix_spawnattr_setpgroup(&at, 0);
    }
    posix_spawnattr_setflags(&at, flags);
    int rc = posix_spawnp(pid, file ? file : argv[0], &fa, &at, argv, envp);
    if (cpus) sched_setaffinity(0, sizeof(mine), &mine);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    return -rc;
}

static void describe_status(int status, char *out, size_t len)
{
    if (WIFEXITED(status))
        snprintf(out, len, "exited with status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(out, len, "was killed by signal %d", WTERMSIG(status));
    else
        snprintf(out, len, "stopped");
}

/* Waits up to timeout_ns for pid; true (and *status) once it has exited. */
static bool wait_for(pid_t pid, int64_t timeout_ns, int *status)
{
    int64_t end = hm_now_ns() + timeout_ns;
    for (;;) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid || (r < 0 && errno == ECHILD)) return true;
        if (hm_now_ns() >= end) return false;
        struct timespec ts = {0, 20 * 1000000};
        nanosleep(&ts, NULL);
    }
}

/* SIGTERM to the server's group, SIGKILL after the grace period. Says how
 * it went in how. */
static void stop_server(pid_t pid, int64_t grace_ns, char *how, size_t howlen)
{
    int status = 0;
    kill(-pid, SIGTERM);
    if (wait_for(pid, grace_ns, &status)) {
        snprintf(how, howlen, "SIGTERM");
    } else {
        kill(-pid, SIGKILL);
        waitpid(pid, &status, 0);
        snprintf(how, howlen, "SIGKILL after %.1f s", (double)grace_ns / 1e9);
    }
    kill(-pid, SIGKILL); /* anything of the group still around */
}

/* The last non-empty line of a log, for a reason that says something. */
static void last_line(const char *path, char *out, size_t len)
{
    out[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (line[0]) copy_str(out, len, line);
    }
    fclose(f);
}

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -errno;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(a);
    int rc = bind(fd, (struct sockaddr *)&a, sizeof(a));
    if (rc == 0) rc = getsockname(fd, (struct sockaddr *)&a, &alen);
    int port = rc == 0 ? ntohs(a.sin_port) : -errno;
    close(fd);
    return port;
}

/* ---- one profile in one round ------------------------------------------ */

typedef struct mx_server {
    pid_t pid;
    int port;
    char url[512];
    char log[2 * PATH_MAX];
} mx_server;

static char **profile_env(const mx_profile *p)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = hm_calloc(n + (size_t)p->n_env + 1, sizeof(char *));
    if (!env) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool overridden = false;
        for (int e = 0; e < p->n_env && !overridden; e++) {
            size_t nl = strcspn(p->env[e], "=");
            overridden = !strncmp(environ[i], p->env[e], nl + 1);
        }
        if (!overridden) env[k++] = environ[i];
    }
    for (int e = 0; e < p->n_env; e++)
        env[k++] = p->env[e];
    return env;
}

/* The second half of start_server, once the URL is known: starts the
 * command and polls its health path. */
static int launch_and_wait(const mx_config *c, const mx_profile *p, const hm_http_target *target,
                           const char *logdir, int round, hm_backend_kind backend, mx_server *s,
                           const char *line, char *why, size_t whylen)
{
    int rc;
    const char *health = p->health ? p->health : "/";
    int status;
    char probe_why[300];
    /* Something already answering would pass the health check for us. */
    if (hm_probe_get(backend, target, health, 1000000000, &status, probe_why, sizeof(probe_why)) ==
        0) {
        snprintf(why, whylen, "port %d is already in use: another server answers %s", s->port,
                 s->url);
        return -1;
    }
    wordexp_t we;
    if (split_words(line, &we, why, whylen) < 0) return -1;
    if (we.we_wordc == 0) {
        wordfree(&we);
        snprintf(why, whylen, "empty command");
        return -1;
    }
    snprintf(s->log, sizeof(s->log), "%s/server-%s-r%d.log", logdir, p->name, round);
    /* cwd takes the same placeholders and quoting, as one word. */
    wordexp_t wd = {0};
    if (p->cwd) {
        char cwd[PATH_MAX];
        if (expand(c, p->cwd, s->port, cwd, sizeof(cwd)) < 0 ||
            split_words(cwd, &wd, why, whylen) < 0 || wd.we_wordc != 1) {
            if (wd.we_wordc > 1) snprintf(why, whylen, "cwd '%s' is not one path", p->cwd);
            if (wd.we_wordv) wordfree(&wd);
            wordfree(&we);
            return -1;
        }
        struct stat st;
        if (stat(wd.we_wordv[0], &st) < 0 || !S_ISDIR(st.st_mode)) {
            snprintf(why, whylen, "cwd %s is not a directory", wd.we_wordv[0]);
            wordfree(&wd);
            wordfree(&we);
            return -1;
        }
    }
    char **env = profile_env(p);
    rc = env ? spawn(NULL, we.we_wordv, env, p->cwd ? wd.we_wordv[0] : NULL, s->log, true,
                     c->server_cpus ? &c->server_set : NULL, &s->pid)
             : -ENOMEM;
    hm_free(env);
    if (p->cwd) wordfree(&wd);
    if (rc < 0) {
        snprintf(why, whylen, "cannot start %s: %s", we.we_wordv[0], strerror(-rc));
        wordfree(&we);
        s->pid = -1;
        return -1;
    }
    wordfree(&we);
    int64_t start = hm_now_ns(), end = start + c->health_timeout_ns;
    snprintf(probe_why, sizeof(probe_why), "no answer yet");
    while (!atomic_load(&interrupted)) {
        int wst;
        if (waitpid(s->pid, &wst, WNOHANG) == s->pid) {
            char st[64], tail[256];
            describe_status(wst, st, sizeof(st));
            last_line(s->log, tail, sizeof(tail));
            snprintf(why, whylen, "the server %s before becoming healthy%s%s%s", st,
                     tail[0] ? " (last output: " : "", tail, tail[0] ? ")" : "");
            kill(-s->pid, SIGKILL); /* workers it forked may live on in its group */
            s->pid = -1;
            return -1;
        }
        int64_t left = end - hm_now_ns();
        if (left <= 0) break;
        if (hm_probe_get(backend, target, health, left < 1000000000 ? left : 1000000000, &status,
                         probe_why, sizeof(probe_why)) == 0) {
            if (status >= 200 && status < 300) return 0;
            snprintf(probe_why, sizeof(probe_why), "%s answered HTTP %d", health, status);
        }
        struct timespec ts = {0, 50 * 1000000};
        nanosleep(&ts, NULL);
    }
    char how[64];
    stop_server(s->pid, c->stop_grace_ns, how, sizeof(how));
    s->pid = -1;
    if (atomic_load(&interrupted)) {
        snprintf(why, whylen, "interrupted while waiting for health");
    } else {
        char tail[200];
        last_line(s->log, tail, sizeof(tail));
        snprintf(why, whylen, "not healthy after %.1f s (last: %s%s%s)",
                 (double)c->health_timeout_ns / 1e9, probe_why,
                 tail[0] ? "; its last output: " : "", tail);
    }
    return -1;
}

/* Starts the profile's server and waits until its health path answers 2xx.
 * 0, or -1 with the reason in why (the server is stopped again). */
static int start_server(const mx_config *c, const mx_profile *p, const char *logdir, int round,
                        hm_backend_kind backend, mx_server *s, char *why, size_t whylen)
{
    memset(s, 0, sizeof(*s));
    s->pid = -1;
    s->port = p->port ? p->port : free_port();
    if (s->port <= 0) {
        snprintf(why, whylen, "no free port: %s", hm_strerror(s->port));
        return -1;
    }
    char line[4096];
    if (expand(c, p->url ? p->url : "http://127.0.0.1:{port}", s->port, s->url, sizeof(s->url)) <
            0 ||
        expand(c, p->command, s->port, line, sizeof(line)) < 0) {
        snprintf(why, whylen, "command or url too long");
        return -1;
    }
    hm_http_target target;
    char *path = NULL;
    int rc = hm_http_target_from_url(s->url, &target, &path);
    hm_free(path);
    if (rc < 0) {
        snprintf(why, whylen, "bad url %s: %s", s->url, hm_strerror(rc));
        return -1;
    }
    /* https: the health check only asks whether the server is up; whether
     * its certificate is trusted is the hammer run's business (its args). */
    hm_tls_config *tls = NULL;
    if (target.tls) {
        char tls_why[300];
        if (hm_tls_config_create(&tls, true, NULL, tls_why, sizeof(tls_why)) < 0) {
            snprintf(why, whylen, "TLS for the health check: %s", tls_why);
            return -1;
        }
        target.tls_cfg = tls;
    }
    rc = launch_and_wait(c, p, &target, logdir, round, backend, s, line, why, whylen);
    hm_tls_config_free(tls);
    return rc;
}

/* The numbers of one pass, from the child's JSON. */
static json_t *pass_numbers(json_t *run)
{
    json_t *lat = json_object_get(json_object_get(run, "latency_us"), "action");
    json_t *a = json_object_get(run, "actions");
    long long sent = json_integer_value(json_object_get(a, "sent"));
    long long ok = json_integer_value(json_object_get(a, "ok"));
    json_t *o = json_pack("{s:f, s:I, s:I, s:f, s:f, s:b, s:b}", "rps",
                          json_number_value(json_object_get(run, "throughput_rps")), "sent",
                          (json_int_t)sent, "ok", (json_int_t)ok, "ok_pct",
                          sent ? 100.0 * (double)ok / (double)sent : 0.0, "wall_seconds",
                          json_number_value(json_object_get(run, "wall_seconds")), "passed",
                          json_is_true(json_object_get(run, "passed")), "interrupted",
                          json_is_true(json_object_get(run, "interrupted")));
    json_object_set_new(o, "threads",
                        json_integer(json_integer_value(json_object_get(run, "threads"))));
    json_object_set(o, "latency_us", lat ? lat : json_null());
    return o;
}

/* Runs one workload's passes against the server as a child hammer; fills
 * run with "passes" or a failure reason. */
static void run_workload(const mx_config *c, const mx_workload *w, const mx_server *s,
                         const char *logdir, int round, const char *profile, json_t *run)
{
    char json_path[2 * PATH_MAX], log[2 * PATH_MAX], why[600] = "";
    snprintf(json_path, sizeof(json_path), "%s/run-%s-%s-r%d.json", logdir, profile, w->name,
             round);
    snprintf(log, sizeof(log), "%s/hammer-%s-%s-r%d.log", logdir, profile, w->name, round);
    /* hammer's options, then the workload's, as one command line. */
    char line[8192];
    line[0] = 0;
    const char *actions = w->actions ? w->actions : c->actions;
    const char *duration = w->duration ? w->duration : c->duration;
    const char *conc = w->concurrency ? w->concurrency : c->concurrency;
    append_quoted(line, sizeof(line), c->self);
    struct {
        const char *flag, *value;
    } opts[] = {{"-n", duration ? NULL : actions}, {"-d", duration},        {"-c", conc},
                {"--timeout", c->timeout},         {"--engine", c->engine}, {"-t", c->threads},
                {"--passes", c->passes},           {"--json", json_path},   {"--url", s->url}};
    for (size_t i = 0; i < HM_ARRAY_LEN(opts); i++) {
        if (!opts[i].value) continue;
        size_t n = strlen(line);
        snprintf(line + n, sizeof(line) - n, " %s ", opts[i].flag);
        append_quoted(line, sizeof(line), opts[i].value);
    }
    size_t n = strlen(line);
    snprintf(line + n, sizeof(line) - n, " -q %s %s scenario ", c->args ? c->args : "",
             w->args ? w->args : "");
    append_quoted(line, sizeof(line), w->scenario);
    json_object_set_new(run, "hammer_log", jtext(log));
    wordexp_t we;
    if (split_words(line, &we, why, sizeof(why)) < 0) goto failed;
    pid_t pid;
    unlink(json_path);
    /* /proc/self/exe: this very binary, even if a rebuild has replaced the
     * file at its path since the matrix started. */
    int rc = spawn("/proc/self/exe", we.we_wordv, environ, NULL, log, false,
                   c->hammer_cpus ? &c->hammer_set : NULL, &pid);
    wordfree(&we);
    if (rc < 0) {
        snprintf(why, sizeof(why), "cannot start hammer: %s", strerror(-rc));
        goto failed;
    }
    int status = 0;
    /* SIGINT lets hammer finish its requests in flight and write its JSON;
     * SIGKILL if it does not within 30 s (Ctrl-C) or 10 s (run_timeout). */
    int64_t deadline = hm_now_ns() + c->run_timeout_ns, kill_at = INT64_MAX;
    bool forwarded = false, timed_out = false;
    while (!wait_for(pid, 50000000, &status)) {
        int64_t now = hm_now_ns();
        if (atomic_load(&interrupted) && !forwarded) {
            kill(pid, SIGINT);
            forwarded = true;
            if (now + 30 * INT64_C(1000000000) < kill_at) kill_at = now + 30 * INT64_C(1000000000);
        }
        if (!timed_out && now > deadline) {
            kill(pid, SIGINT);
            timed_out = true;
            if (now + 10 * INT64_C(1000000000) < kill_at) kill_at = now + 10 * INT64_C(1000000000);
        }
        if (now > kill_at) kill(pid, SIGKILL);
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    json_object_set_new(run, "hammer_exit", json_integer(code));
    json_error_t jerr;
    json_t *doc = (code == 0 || code == 1) ? json_load_file(json_path, 0, &jerr) : NULL;
    if (!doc) {
        char st[64], tail[400];
        describe_status(status, st, sizeof(st));
        last_line(log, tail, sizeof(tail));
        snprintf(why, sizeof(why), "hammer %s%s%s%s", timed_out ? "timed out and " : "", st,
                 tail[0] ? ": " : "", tail);
        goto failed;
    }
    json_t *passes = json_object();
    json_t *arr = json_object_get(doc, "passes");
    size_t i;
    json_t *pj;
    bool cut_short = json_array_size(arr) < 2;
    if (!arr) { /* stopped in the first pass: hammer wrote a one-run document */
        char first[64];
        snprintf(first, sizeof(first), "%.*s", (int)strcspn(c->passes, ","), c->passes);
        json_object_set_new(passes, first, pass_numbers(doc));
    }
    json_array_foreach(arr, i, pj)
    {
        const char *name = json_string_value(json_object_get(pj, "pass"));
        json_object_set_new(passes, name ? name : "run", pass_numbers(pj));
        cut_short = cut_short || json_is_true(json_object_get(pj, "interrupted"));
    }
    json_decref(doc);
    json_object_set_new(run, "passes", passes);
    /* A pass cut short is kept in the data but not in the medians. */
    const char *outcome = timed_out ? "failed" : cut_short ? "interrupted" : "ok";
    json_object_set_new(run, "status", json_string(outcome));
    if (timed_out)
        json_object_set_new(run, "reason", json_string("hammer did not finish within run_timeout"));
    else if (cut_short)
        json_object_set_new(run, "reason", json_string("interrupted before both passes completed"));
    return;
failed:
    json_object_set_new(run, "status", json_string("failed"));
    json_object_set_new(run, "reason", jtext(why));
}

/* ---- the environment ----------------------------------------------------- */

static json_t *environment(hm_backend_kind engine)
{
    json_t *env = json_object();
    char model[256] = "unknown";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof(line), f))
            if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
                snprintf(model, sizeof(model), "%s", strchr(line, ':') + 2);
                model[strcspn(model, "\n")] = 0;
                break;
            }
        fclose(f);
    }
    char os[256] = "unknown";
    if ((f = fopen("/etc/os-release", "r"))) {
        char line[512];
        while (fgets(line, sizeof(line), f))
            if (!strncmp(line, "PRETTY_NAME=", 12)) {
                char *v = line + 12;
                v[strcspn(v, "\n")] = 0;
                if (*v == '"') v++, v[strcspn(v, "\"")] = 0;
                copy_str(os, sizeof(os), v);
            }
        fclose(f);
    }
    struct utsname u;
    uname(&u);
    char kernel[400];
    snprintf(kernel, sizeof(kernel), "%s %s %s", u.sysname, u.release, u.machine);
    json_object_set_new(env, "cpu", jtext(model));
    json_object_set_new(env, "cpus", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
    json_object_set_new(
        env, "memory_gib",
        json_real((double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE) / 1073741824.0));
    json_object_set_new(env, "kernel", jtext(kernel));
    json_object_set_new(env, "os", jtext(os));
    json_object_set_new(env, "hostname", jtext(u.nodename));
    json_object_set_new(env, "engine", json_string(hm_backend_name(engine)));
    json_object_set_new(env, "hammer_version", json_string(HM_VERSION));
    return env;
}

static void now_iso(char *out, size_t len)
{
    time_t t = time(NULL);
    struct tm tm;
    strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
}

static json_t *jstr_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *parameters(const mx_config *c)
{
    return json_pack("{s:o, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:s, s:s, s:f, s:f, s:o, s:o, s:o}",
                     "profiles_file", jtext(c->path), "runs", c->runs, "actions",
                     jstr_or_null(c->actions), "duration", jstr_or_null(c->duration), "concurrency",
                     jstr_or_null(c->concurrency), "timeout", jstr_or_null(c->timeout), "engine",
                     jstr_or_null(c->engine), "threads", jstr_or_null(c->threads), "passes",
                     c->passes, "baseline", c->baseline, "health_timeout_s",
                     (double)c->health_timeout_ns / 1e9, "stop_grace_s",
                     (double)c->stop_grace_ns / 1e9, "args", jstr_or_null(c->args), "server_cpus",
                     jstr_or_null(c->server_cpus), "hammer_cpus", jstr_or_null(c->hammer_cpus));
}

/* ---- main ---------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: hammer matrix [options] PROFILES.ini\n"
            "       hammer matrix --render MATRIX.json [--markdown F] [--html F] [--json F] [-q]\n"
            "Runs every workload against every server profile, a cold and a warm pass\n"
            "each, over interleaved rounds, and reports medians with ranges in the\n"
            "layout of php-via's BENCHMARK_RESULTS.md (docs/matrix.md).\n"
            "\n"
            "      --runs N         rounds (overrides the file's runs)\n"
            "  -n, --actions N      actions per pass (overrides the file's actions)\n"
            "  -c, --concurrency N  (overrides the file's concurrency)\n"
            "      --markdown FILE  write the Markdown report (it is also printed)\n"
            "      --json FILE      write every run's numbers and the environment\n"
            "      --html FILE      write a self-contained HTML report with latency plots\n"
            "      --logs DIR       keep server and hammer logs here (default: a new\n"
            "                       directory under $TMPDIR or /tmp)\n"
            "      --render FILE    no measuring: the reports again from a saved --json\n"
            "  -q, --quiet          do not print the report\n"
            "  -h, --help           this help\n");
}

static int write_text(const char *path, json_t *doc, int (*render)(FILE *, json_t *))
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) return -errno;
    int rc = render(f, doc);
    if (fclose(f) != 0 && rc == 0) rc = -EIO;
    if (rc == 0 && rename(tmp, path) < 0) rc = -errno;
    if (rc < 0) unlink(tmp);
    return rc;
}

typedef struct mx_outputs {
    const char *markdown, *html, *json;
    bool quiet;
} mx_outputs;

/* Summarizes doc and writes every report asked for; the exit status. */
static int report(json_t *doc, const mx_outputs *out)
{
    hm_matrix_summarize(doc);
    int exit_code = hm_matrix_all_passed(doc) ? 0 : 1;
    if (!out->quiet) hm_matrix_markdown(stdout, doc);
    struct {
        const char *path;
        int (*render)(FILE *, json_t *);
    } outs[] = {{out->markdown, hm_matrix_markdown},
                {out->html, hm_matrix_html},
                {out->json, hm_matrix_json}};
    for (size_t i = 0; i < HM_ARRAY_LEN(outs); i++) {
        if (!outs[i].path) continue;
        int rc = write_text(outs[i].path, doc, outs[i].render);
        if (rc < 0) {
            fprintf(stderr, "hammer matrix: cannot write %s: %s\n", outs[i].path, hm_strerror(rc));
            exit_code = 1;
        }
    }
    return exit_code;
}

/* --render FILE.json: the reports again from a saved matrix, no measuring. */
static int render_saved(const char *path, const mx_outputs *out)
{
    json_error_t err;
    json_t *doc = json_load_file(path, 0, &err);
    if (!doc) {
        fprintf(stderr, "hammer matrix: %s:%d: %s\n", path, err.line, err.text);
        return 2;
    }
    const char *schema = json_string_value(json_object_get(doc, "schema"));
    if (!schema || strcmp(schema, "hammer_matrix") ||
        !json_is_array(json_object_get(doc, "runs"))) {
        fprintf(stderr, "hammer matrix: %s is not a hammer matrix --json file\n", path);
        json_decref(doc);
        return 2;
    }
    int rc = report(doc, out);
    json_decref(doc);
    return rc;
}

int hm_matrix_main(int argc, char **argv)
{
    mx_outputs out = {0};
    const char *logs = NULL, *saved = NULL;
    const char *runs_arg = NULL, *actions_arg = NULL, *conc_arg = NULL;
    enum { OPT_RUNS = 1000, OPT_MD, OPT_JSON, OPT_HTML, OPT_LOGS, OPT_RENDER };
    static const struct option longopts[] = {{"runs", required_argument, 0, OPT_RUNS},
                                             {"actions", required_argument, 0, 'n'},
                                             {"concurrency", required_argument, 0, 'c'},
                                             {"markdown", required_argument, 0, OPT_MD},
                                             {"json", required_argument, 0, OPT_JSON},
                                             {"html", required_argument, 0, OPT_HTML},
                                             {"logs", required_argument, 0, OPT_LOGS},
                                             {"quiet", no_argument, 0, 'q'},
                                             {"render", required_argument, 0, OPT_RENDER},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "n:c:qh", longopts, NULL)) != -1) {
        switch (ch) {
        case OPT_RUNS:
            runs_arg = optarg;
            break;
        case 'n':
            actions_arg = optarg;
            break;
        case 'c':
            conc_arg = optarg;
            break;
        case OPT_MD:
            out.markdown = optarg;
            break;
        case OPT_JSON:
            out.json = optarg;
            break;
        case OPT_HTML:
            out.html = optarg;
            break;
        case OPT_LOGS:
            logs = optarg;
            break;
        case OPT_RENDER:
            saved = optarg;
            break;
        case 'q':
            out.quiet = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (saved && optind == argc) return render_saved(saved, &out);
    if (saved || optind != argc - 1) {
        usage(stderr);
        return 2;
    }
    static mx_config c;
    memset(&c, 0, sizeof(c));
    if (config_load(&c, argv[optind]) < 0) {
        fprintf(stderr, "hammer matrix: %s\n", c.error);
        config_free(&c);
        return 2;
    }
    long long v;
    if (runs_arg) {
        if (hm_parse_int(runs_arg, 1, 1000, &v) < 0) {
            fprintf(stderr, "hammer matrix: --runs must be 1..1000\n");
            config_free(&c);
            return 2;
        }
        c.runs = (int)v;
    }
    if ((actions_arg && hm_parse_int(actions_arg, 1, INT32_MAX, &v) < 0) ||
        (conc_arg && hm_parse_int(conc_arg, 1, 1000000, &v) < 0)) {
        fprintf(stderr, "hammer matrix: -n and -c take a positive number\n");
        config_free(&c);
        return 2;
    }
    if ((actions_arg && !set_str(&c.actions, actions_arg)) ||
        (conc_arg && !set_str(&c.concurrency, conc_arg))) {
        config_free(&c);
        return 2;
    }
    if (actions_arg) { /* -n on the command line wins over any duration */
        hm_free(c.duration);
        c.duration = NULL;
        for (int i = 0; i < c.n_workloads; i++) {
            hm_free(c.workloads[i].actions), hm_free(c.workloads[i].duration);
            c.workloads[i].actions = c.workloads[i].duration = NULL;
        }
    }
    hm_backend_kind engine = HM_BACKEND_AUTO;
    if (c.engine && hm_backend_parse(c.engine, &engine) < 0) {
        fprintf(stderr, "hammer matrix: engine must be auto, io_uring or epoll, not '%s'\n",
                c.engine);
        config_free(&c);
        return 2;
    }
    engine = hm_backend_resolve(engine, NULL);
    char logdir[PATH_MAX];
    if (logs) {
        snprintf(logdir, sizeof(logdir), "%s", logs);
        if (mkdir(logdir, 0755) < 0 && errno != EEXIST) {
            fprintf(stderr, "hammer matrix: cannot create %s: %s\n", logdir, strerror(errno));
            config_free(&c);
            return 2;
        }
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(logdir, sizeof(logdir), "%s/hammer-matrix-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(logdir)) {
            fprintf(stderr, "hammer matrix: cannot create a log directory: %s\n", strerror(errno));
            config_free(&c);
            return 2;
        }
    }

    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL); /* a closed terminal must still stop the servers */

    json_t *doc = json_object();
    char when[32];
    now_iso(when, sizeof(when));
    json_object_set_new(doc, "schema", json_string("hammer_matrix"));
    json_object_set_new(doc, "schema_version", json_integer(1));
    json_object_set_new(doc, "started", json_string(when));
    json_object_set_new(doc, "environment", environment(engine));
    json_object_set_new(doc, "parameters", parameters(&c));
    json_object_set_new(doc, "logs_dir", jtext(logdir));
    json_t *jprofiles = json_array(), *jworkloads = json_array(), *runs = json_array();
    for (int i = 0; i < c.n_profiles; i++) {
        const mx_profile *p = &c.profiles[i];
        json_t *env = json_array();
        for (int e = 0; e < p->n_env; e++)
            json_array_append_new(env, json_string(p->env[e]));
        json_array_append_new(jprofiles, json_pack("{s:s, s:s, s:o, s:s}", "name", p->name,
                                                   "command", p->command, "env", env, "health",
                                                   p->health ? p->health : "/"));
    }
    for (int i = 0; i < c.n_workloads; i++) {
        const mx_workload *w = &c.workloads[i];
        json_array_append_new(jworkloads, json_pack("{s:s, s:s, s:o}", "name", w->name, "scenario",
                                                    w->scenario, "args", jstr_or_null(w->args)));
    }
    json_object_set_new(doc, "profiles", jprofiles);
    json_object_set_new(doc, "workloads", jworkloads);
    json_object_set_new(doc, "runs", runs);

    fprintf(stderr, "hammer matrix: %d profiles x %d workloads x %d runs; logs in %s\n",
            c.n_profiles, c.n_workloads, c.runs, logdir);
    for (int round = 1; round <= c.runs && !atomic_load(&interrupted); round++) {
        /* Interleaved: every profile once per round, the order rotated so no
         * profile always runs first (or right after the same neighbour). */
        for (int k = 0; k < c.n_profiles && !atomic_load(&interrupted); k++) {
            const mx_profile *p = &c.profiles[(k + round - 1) % c.n_profiles];
            fprintf(stderr, "[round %d/%d] %s: ", round, c.runs, p->name);
            mx_server s;
            char why[600];
            int64_t t0 = hm_now_ns();
            int rc = start_server(&c, p, logdir, round, engine, &s, why, sizeof(why));
            if (rc < 0) {
                fprintf(stderr, "SKIPPED: %s\n", why);
                for (int wi = 0; wi < c.n_workloads; wi++)
                    json_array_append_new(runs, json_pack("{s:i, s:s, s:s, s:s, s:o}", "round",
                                                          round, "profile", p->name, "workload",
                                                          c.workloads[wi].name, "status", "skipped",
                                                          "reason", jtext(why)));
                continue;
            }
            fprintf(stderr, "healthy in %.2f s on %s;", (double)(hm_now_ns() - t0) / 1e9, s.url);
            json_t *these[MX_MAX_WORKLOADS];
            for (int wi = 0; wi < c.n_workloads; wi++) {
                const mx_workload *w = &c.workloads[wi];
                json_t *run = json_pack("{s:i, s:s, s:s, s:o}", "round", round, "profile", p->name,
                                        "workload", w->name, "url", jtext(s.url));
                if (atomic_load(&interrupted)) {
                    json_object_set_new(run, "status", json_string("skipped"));
                    json_object_set_new(run, "reason", json_string("interrupted"));
                } else {
                    run_workload(&c, w, &s, logdir, round, p->name, run);
                }
                json_t *warm = json_object_get(json_object_get(run, "passes"), "warm");
                if (warm)
                    fprintf(stderr, " %s %.0f/s", w->name,
                            json_number_value(json_object_get(warm, "rps")));
                else
                    fprintf(stderr, " %s %s", w->name,
                            json_string_value(json_object_get(run, "status")));
                these[wi] = run;
            }
            char how[64];
            stop_server(s.pid, c.stop_grace_ns, how, sizeof(how));
            fprintf(stderr, "; stopped (%s)\n", how);
            for (int wi = 0; wi < c.n_workloads; wi++) {
                json_object_set_new(these[wi], "server_stopped", json_string(how));
                json_array_append_new(runs, these[wi]);
            }
        }
    }
    now_iso(when, sizeof(when));
    json_object_set_new(doc, "finished", json_string(when));
    json_object_set_new(doc, "interrupted", json_boolean(atomic_load(&interrupted)));
    int exit_code = report(doc, &out);
    json_decref(doc);
    config_free(&c);
    return exit_code;
}

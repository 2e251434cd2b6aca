/* matrix_spawn.c — servers and child hammers of hammer matrix; see
 * matrix_spawn.h. */
#include "cli/matrix_spawn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <wordexp.h>

#include "base/hm_base.h"
#include "cli/matrix_summary.h"
#include "cli/procfs.h"
#include "proto/http_client.h"
#include "proto/tls.h"
#include "scenarios/scenario.h"
#include "stats/json_text.h"

extern char **environ;

/* Copies as much of src as fits (always terminated). */
static void copy_str(char *dst, size_t len, const char *src)
{
    size_t n = strnlen(src, len - 1);
    memcpy(dst, src, n);
    dst[n] = 0;
}

/* ---- command lines ----------------------------------------------------- */

/* Writes s single-quoted, so a path with spaces stays one word. */
static void put_quoted(FILE *out, const char *s)
{
    fputc('\'', out);
    for (; *s; s++)
        if (*s == '\'')
            fputs("'\\''", out);
        else
            fputc(*s, out);
    fputc('\'', out);
}

/* Writes path so that it stays one literal word wherever it sits:
 * single-quoted outside quotes, backslash-escaped inside double quotes,
 * as it is inside single quotes (where nothing can be escaped). */
static void put_path(FILE *out, const char *path, char quote)
{
    if (quote == 0) {
        put_quoted(out, path);
        return;
    }
    for (; *path; path++) {
        if (quote == '"' && strchr("$`\"\\", *path)) fputc('\\', out);
        fputc(*path, out);
    }
}

/* tmpl with {port}, {bindir} and {dir} replaced, in a new string the
 * caller free()s; NULL when out of memory. shell: the result goes to
 * split_words, so each path stays one literal word whatever quotes are
 * around it; else (an env value) the values go in as they are. */
static char *expand(const hm_matrix_config *c, const char *tmpl, int port, bool shell)
{
    char *text = NULL;
    size_t len;
    FILE *out = open_memstream(&text, &len);
    if (!out) return NULL;
    char quote = 0; /* the quote we are inside, if any */
    for (const char *p = tmpl; *p;) {
        if (!strncmp(p, "{port}", 6)) {
            fprintf(out, "%d", port);
            p += 6;
        } else if (!strncmp(p, "{bindir}", 8)) {
            shell ? put_path(out, c->bindir, quote) : (void)fputs(c->bindir, out);
            p += 8;
        } else if (!strncmp(p, "{dir}", 5)) {
            shell ? put_path(out, c->dir, quote) : (void)fputs(c->dir, out);
            p += 5;
        } else {
            if (shell && *p == '\\' && quote != '\'' && p[1]) { /* an escaped character stays */
                fputc(*p++, out);
            } else if (shell && (*p == '\'' || *p == '"') && (!quote || quote == *p)) {
                quote = quote ? 0 : *p;
            }
            fputc(*p++, out);
        }
    }
    if (ferror(out)) {
        fclose(out);
        free(text);
        return NULL;
    }
    fclose(out);
    return text;
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

/* Waits up to timeout_ns for pid: 0 (and *status) once it has exited,
 * -ETIMEDOUT while it runs on. */
static int wait_for(pid_t pid, int64_t timeout_ns, int *status)
{
    int64_t end = hm_now_ns() + timeout_ns;
    for (;;) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid || (r < 0 && errno == ECHILD)) return 0;
        if (hm_now_ns() >= end) return -ETIMEDOUT;
        struct timespec ts = {0, 20 * 1000000};
        nanosleep(&ts, NULL);
    }
}

void hm_matrix_server_stop(pid_t pid, int64_t grace_ns, char *how, size_t howlen)
{
    int status = 0;
    kill(-pid, SIGTERM);
    if (wait_for(pid, grace_ns, &status) == 0) {
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

/* Whether port is free on loopback now (bound, then released). */
static bool port_free(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return false;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    close(fd);
    return ok;
}

/* A free loopback port below the kernel's ephemeral range: a port the
 * kernel hands out could be taken, before the server binds it, as the
 * source port of any connection on the machine (hammer runs make
 * thousands). Random in the range's lower half, so matrices started
 * together do not try the same ports in the same order; the kernel's
 * pick when that range is too small to pick from. */
static int free_port(void)
{
    static unsigned seed;
    if (!seed) seed = (unsigned)getpid() * 2654435761u ^ (unsigned)time(NULL) ^ 1u;
    int low = 0;
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    if (f) {
        if (fscanf(f, "%d", &low) != 1) low = 0;
        fclose(f);
    }
    for (int tries = 0; low >= 4096 && tries < 50; tries++) {
        int port = low / 2 + (int)((unsigned)rand_r(&seed) % (unsigned)(low - low / 2));
        if (port_free(port)) return port;
    }
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

/* ---- a profile's server ------------------------------------------------- */

/* hammer's environment with the profile's env (already expanded) added or
 * replacing; an array the caller hm_free()s (the strings are borrowed). */
static char **profile_env(char *const *penv, int n_penv)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = hm_calloc(n + (size_t)n_penv + 1, sizeof(char *));
    if (!env) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool overridden = false;
        for (int e = 0; e < n_penv && !overridden; e++) {
            size_t nl = strcspn(penv[e], "=");
            overridden = !strncmp(environ[i], penv[e], nl + 1);
        }
        if (!overridden) env[k++] = environ[i];
    }
    for (int e = 0; e < n_penv; e++)
        env[k++] = penv[e];
    return env;
}

/* The profile's cwd, expanded and split like the command, into out: 0, or
 * a negative errno with why. */
static int server_cwd(const hm_matrix_config *c, const hm_matrix_profile *p, int port, char *out,
                      size_t len, char *why, size_t whylen)
{
    char *cwd = expand(c, p->cwd, port, true);
    if (!cwd) return -ENOMEM;
    wordexp_t wd;
    int rc = split_words(cwd, &wd, why, whylen);
    free(cwd);
    if (rc < 0) return rc;
    struct stat st;
    if (wd.we_wordc != 1) {
        snprintf(why, whylen, "cwd '%s' is not one path", p->cwd);
        rc = -EINVAL;
    } else if (strlen(wd.we_wordv[0]) >= len) {
        snprintf(why, whylen, "cwd '%s' is too long", p->cwd);
        rc = -ENAMETOOLONG;
    } else if (stat(wd.we_wordv[0], &st) < 0 || !S_ISDIR(st.st_mode)) {
        snprintf(why, whylen, "cwd %s is not a directory", wd.we_wordv[0]);
        rc = -ENOTDIR;
    } else {
        snprintf(out, len, "%s", wd.we_wordv[0]);
    }
    wordfree(&wd);
    return rc;
}

/* Splits the expanded command line, records what will run in s->ran and
 * starts it in its cwd with its env: 0 with s->pid set, or a negative
 * errno with why. */
static int spawn_server(const hm_matrix_config *c, const hm_matrix_profile *p, const char *line,
                        hm_matrix_server *s, char *why, size_t whylen)
{
    char *penv[HM_MATRIX_MAX_ENV] = {0};
    json_t *jenv = json_array();
    int rc = 0;
    for (int e = 0; e < p->n_env && rc == 0; e++) {
        penv[e] = expand(c, p->env[e], s->port, false);
        rc = penv[e] ? json_array_append_new(jenv, hm_json_text(penv[e])) : -ENOMEM;
    }
    json_object_set_new(s->ran, "server_env", jenv);
    wordexp_t we = {0};
    char cwd[PATH_MAX];
    if (rc == 0) rc = split_words(line, &we, why, whylen);
    if (rc == 0) {
        json_t *argv = json_array();
        for (size_t i = 0; i < we.we_wordc; i++)
            json_array_append_new(argv, hm_json_text(we.we_wordv[i]));
        json_object_set_new(s->ran, "server_argv", argv);
        if (we.we_wordc == 0) {
            snprintf(why, whylen, "empty command");
            rc = -EINVAL;
        }
    }
    if (rc == 0 && p->cwd) rc = server_cwd(c, p, s->port, cwd, sizeof(cwd), why, whylen);
    if (rc == 0) {
        char **env = profile_env(penv, p->n_env);
        rc = env ? spawn(NULL, we.we_wordv, env, p->cwd ? cwd : NULL, s->log, true,
                         c->server_cpus ? &c->server_set : NULL, &s->pid)
                 : -ENOMEM;
        hm_free(env);
        if (rc < 0) {
            snprintf(why, whylen, "cannot start %s: %s", we.we_wordv[0], strerror(-rc));
            s->pid = -1;
        }
    }
    if (rc == -ENOMEM && !why[0]) snprintf(why, whylen, "out of memory");
    if (we.we_wordv) wordfree(&we);
    for (int e = 0; e < p->n_env; e++)
        free(penv[e]);
    return rc;
}

/* The TCP port the target's address names. */
static int target_port(const hm_http_target *t)
{
    return t->addr.ss_family == AF_INET6 ? ntohs(((const struct sockaddr_in6 *)&t->addr)->sin6_port)
                                         : ntohs(((const struct sockaddr_in *)&t->addr)->sin_port);
}

/* Polls the started server's health path until it answers 2xx (0), the
 * server exits (-ESRCH), health_timeout passes (-ETIMEDOUT) or *stop is
 * set (-EINTR). On failure the server is gone and why says what happened. */
static int wait_healthy(const hm_matrix_config *c, const hm_matrix_profile *p,
                        const hm_http_target *target, hm_backend_kind backend,
                        const atomic_bool *stop, hm_matrix_server *s, char *why, size_t whylen)
{
    const char *health = p->health ? p->health : "/";
    int64_t end = hm_now_ns() + c->health_timeout_ns;
    char probe_why[300];
    snprintf(probe_why, sizeof(probe_why), "no answer yet");
    while (!atomic_load(stop)) {
        int wst;
        if (waitpid(s->pid, &wst, WNOHANG) == s->pid) {
            char st[64], tail[256];
            describe_status(wst, st, sizeof(st));
            last_line(s->log, tail, sizeof(tail));
            snprintf(why, whylen, "the server %s before becoming healthy%s%s%s", st,
                     tail[0] ? " (last output: " : "", tail, tail[0] ? ")" : "");
            kill(-s->pid, SIGKILL); /* workers it forked may live on in its group */
            s->pid = -1;
            return -ESRCH;
        }
        int64_t left = end - hm_now_ns();
        if (left <= 0) break;
        int status;
        if (hm_probe_get(backend, target, health, left < 1000000000 ? left : 1000000000, &status,
                         probe_why, sizeof(probe_why)) == 0) {
            /* A 2xx from a listener the command did not start is another
             * program that took the port first: keep waiting for ours. */
            char comm[32];
            bool ok = status >= 200 && status < 300;
            pid_t other =
                ok && !p->any_listener
                    ? hm_port_foreign_listener(target_port(target), s->pid, comm, sizeof(comm))
                    : 0;
            if (ok && !other) return 0;
            if (other)
                snprintf(probe_why, sizeof(probe_why),
                         "%s answered, but from pid %d (%s), which the command did not start",
                         health, (int)other, comm);
            else
                snprintf(probe_why, sizeof(probe_why), "%s answered HTTP %d", health, status);
        }
        struct timespec ts = {0, 50 * 1000000};
        nanosleep(&ts, NULL);
    }
    char how[64];
    hm_matrix_server_stop(s->pid, c->stop_grace_ns, how, sizeof(how));
    s->pid = -1;
    if (atomic_load(stop)) {
        snprintf(why, whylen, "interrupted while waiting for health");
        return -EINTR;
    }
    char tail[200];
    last_line(s->log, tail, sizeof(tail));
    snprintf(why, whylen, "not healthy after %.1f s (last: %s%s%s)",
             (double)c->health_timeout_ns / 1e9, probe_why, tail[0] ? "; its last output: " : "",
             tail);
    return -ETIMEDOUT;
}

int hm_matrix_server_start(const hm_matrix_config *c, const hm_matrix_profile *p,
                           const char *logdir, int round, hm_backend_kind backend,
                           const atomic_bool *stop, hm_matrix_server *s, char *why, size_t whylen)
{
    memset(s, 0, sizeof(*s));
    s->pid = -1;
    s->ran = json_object();
    s->port = p->port ? p->port : free_port();
    if (s->port <= 0) {
        snprintf(why, whylen, "no free port: %s", hm_strerror(s->port));
        return s->port < 0 ? s->port : -EADDRNOTAVAIL;
    }
    json_object_set_new(s->ran, "server_port", json_integer(s->port));
    char *url = expand(c, p->url ? p->url : "http://127.0.0.1:{port}", s->port, true);
    char *line = expand(c, p->command, s->port, true);
    int rc = url && line ? 0 : -ENOMEM;
    if (rc == 0 && strlen(url) >= sizeof(s->url)) rc = -E2BIG;
    if (rc == 0) {
        snprintf(s->url, sizeof(s->url), "%s", url);
        json_object_set_new(s->ran, "server_command", hm_json_text(line));
    }
    free(url);
    if (rc < 0) {
        snprintf(why, whylen, rc == -E2BIG ? "url too long" : "out of memory");
        free(line);
        return rc;
    }
    hm_http_target target;
    char *path = NULL;
    rc = hm_http_target_from_url(s->url, &target, &path);
    hm_free(path);
    if (rc < 0) {
        snprintf(why, whylen, "bad url %s: %s", s->url, hm_strerror(rc));
        free(line);
        return rc;
    }
    /* https: the health check only asks whether the server is up; whether
     * its certificate is trusted is the hammer run's business (its args). */
    hm_tls_config *tls = NULL;
    if (target.tls) {
        char tls_why[300];
        rc = hm_tls_config_create(&tls, true, NULL, tls_why, sizeof(tls_why));
        if (rc < 0) {
            snprintf(why, whylen, "TLS for the health check: %s", tls_why);
            free(line);
            return rc;
        }
        target.tls_cfg = tls;
    }
    /* Something already answering would pass the health check for us. */
    const char *health = p->health ? p->health : "/";
    int status;
    char probe_why[300];
    if (hm_probe_get(backend, &target, health, 1000000000, &status, probe_why, sizeof(probe_why)) ==
        0) {
        snprintf(why, whylen, "port %d is already in use: another server answers %s", s->port,
                 s->url);
        rc = -EADDRINUSE;
    } else {
        snprintf(s->log, sizeof(s->log), "%s/server-%s-r%d.log", logdir, p->name, round);
        rc = spawn_server(c, p, line, s, why, whylen);
        if (rc == 0) rc = wait_healthy(c, p, &target, backend, stop, s, why, whylen);
    }
    hm_tls_config_free(tls);
    free(line);
    return rc;
}

/* ---- one workload's run -------------------------------------------------- */

/* Why one pass of the child did not pass: hammer's own result.reasons
 * when its JSON has them, else what its figures show. [] when it passed. */
static json_t *pass_reasons(json_t *run, bool passed)
{
    json_t *given = json_object_get(json_object_get(run, "result"), "reasons");
    if (json_is_array(given)) return json_deep_copy(given);
    json_t *out = json_array();
    if (passed) return out;
    const char *fatal = json_string_value(json_object_get(run, "fatal"));
    if (fatal) json_array_append_new(out, json_string(fatal));
    json_t *a = json_object_get(run, "actions");
    long long sent = json_integer_value(json_object_get(a, "sent"));
    long long ok = json_integer_value(json_object_get(a, "ok"));
    if (ok < sent)
        json_array_append_new(out,
                              json_sprintf("OK %.2f%%: %lld of %lld actions failed",
                                           100.0 * (double)ok / (double)sent, sent - ok, sent));
    json_t *check = json_object_get(run, "check");
    if (json_is_false(json_object_get(check, "passed")))
        json_array_append_new(out,
                              json_sprintf("check failed: %s (%s)", hm_matrix_text(check, "name"),
                                           hm_matrix_text(check, "detail")));
    size_t i;
    json_t *th;
    json_array_foreach(json_object_get(run, "thresholds"), i, th)
    {
        if (json_is_false(json_object_get(th, "passed")))
            json_array_append_new(
                out, json_sprintf("threshold %s failed", hm_matrix_text(th, "threshold")));
    }
    if (!json_array_size(out)) json_array_append_new(out, json_string("the pass did not pass"));
    return out;
}

/* The numbers of one pass, from the child's JSON, with its status
 * ("passed" or "failed") and reasons. */
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
    json_t *result = json_object_get(run, "result");
    bool passed = json_is_boolean(json_object_get(result, "passed"))
                      ? json_is_true(json_object_get(result, "passed"))
                      : json_is_true(json_object_get(run, "passed"));
    json_object_set_new(o, "status", json_string(passed ? "passed" : "failed"));
    json_object_set_new(o, "reasons", pass_reasons(run, passed));
    return o;
}

/* The child hammer's command line: hammer's options, then the [matrix]
 * and workload args, then the scenario. A new string the caller free()s;
 * NULL when out of memory. */
static char *hammer_command(const hm_matrix_config *c, const hm_matrix_workload *w,
                            const hm_matrix_server *s, const char *json_path)
{
    char *line = NULL;
    size_t len;
    FILE *out = open_memstream(&line, &len);
    if (!out) return NULL;
    const char *actions = w->actions ? w->actions : c->actions;
    const char *duration = w->duration ? w->duration : c->duration;
    const char *conc = w->concurrency ? w->concurrency : c->concurrency;
    put_quoted(out, c->self);
    /* The server's processes (its group leader and what it forked) are
     * sampled for the run's server resources. */
    char pid[24] = "";
    if (s->pid > 0) snprintf(pid, sizeof(pid), "%d", (int)s->pid);
    struct {
        const char *flag, *value;
    } opts[] = {{"-n", duration ? NULL : actions},
                {"-d", duration},
                {"-c", conc},
                {"--timeout", c->timeout},
                {"--engine", c->engine},
                {"-t", c->threads},
                {"--passes", c->passes},
                {"--json", json_path},
                {"--url", s->url},
                {"--server-pid", pid[0] ? pid : NULL}};
    for (size_t i = 0; i < HM_ARRAY_LEN(opts); i++) {
        if (!opts[i].value) continue;
        fprintf(out, " %s ", opts[i].flag);
        put_quoted(out, opts[i].value);
    }
    fprintf(out, " -q %s %s scenario ", c->args ? c->args : "", w->args ? w->args : "");
    put_quoted(out, w->scenario);
    bool failed = ferror(out);
    fclose(out);
    if (failed) {
        free(line);
        return NULL;
    }
    return line;
}

/* Waits for the child hammer to exit. SIGINT lets it finish its requests
 * in flight and write its JSON; SIGKILL if it does not within 30 s (after
 * *stop) or 10 s (after run_timeout). True when run_timeout passed. */
static bool wait_hammer(const hm_matrix_config *c, pid_t pid, const atomic_bool *stop, int *status)
{
    int64_t deadline = hm_now_ns() + c->run_timeout_ns, kill_at = INT64_MAX;
    bool forwarded = false, timed_out = false;
    while (wait_for(pid, 50000000, status) < 0) {
        int64_t now = hm_now_ns();
        if (atomic_load(stop) && !forwarded) {
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
    return timed_out;
}

/* run["passes"], run["status"] and why, from the child's JSON document
 * and exit code: a run whose hammer failed (exit 1) is "failed" with each
 * pass's reasons, and its figures are still "measured" (in the medians,
 * marked) when both passes completed. */
static void collect_passes(const hm_matrix_config *c, json_t *doc, bool timed_out, int code,
                           json_t *run)
{
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
    /* A pass cut short is kept in the data but not in the medians. */
    json_object_set_new(run, "measured", json_boolean(!timed_out && !cut_short));
    json_t *reasons = json_array();
    if (timed_out) {
        json_array_append_new(reasons, json_string("hammer did not finish within run_timeout"));
    } else if (!cut_short) {
        const char *name;
        json_t *pass;
        json_object_foreach(passes, name, pass)
        {
            json_t *r;
            json_array_foreach(json_object_get(pass, "reasons"), i, r)
            {
                json_array_append_new(reasons, json_sprintf("%s: %s", name, json_string_value(r)));
            }
        }
        if (code != 0 && !json_array_size(reasons))
            json_array_append_new(reasons, json_sprintf("hammer exited %d", code));
    }
    json_object_set_new(run, "passes", passes);
    const char *outcome = timed_out                  ? "failed"
                          : cut_short                ? "interrupted"
                          : json_array_size(reasons) ? "failed"
                                                     : "ok";
    json_object_set_new(run, "status", json_string(outcome));
    if (cut_short && !timed_out)
        json_array_append_new(reasons, json_string("interrupted before both passes completed"));
    if (json_array_size(reasons)) {
        char *line = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&line, &len);
        json_t *r;
        json_array_foreach(reasons, i, r)
        {
            if (out) fprintf(out, "%s%s", i ? "; " : "", json_string_value(r));
        }
        if (out) fclose(out);
        json_object_set_new(run, "reason", hm_json_text(line ? line : "?"));
        free(line);
    }
    json_object_set_new(run, "reasons", reasons);
}

void hm_matrix_run_workload(const hm_matrix_config *c, const hm_matrix_workload *w,
                            const hm_matrix_server *s, const char *logdir, int round,
                            const char *profile, const atomic_bool *stop, json_t *run)
{
    char json_path[2 * PATH_MAX], log[2 * PATH_MAX], why[600] = "";
    snprintf(json_path, sizeof(json_path), "%s/run-%s-%s-r%d.json", logdir, profile, w->name,
             round);
    snprintf(log, sizeof(log), "%s/hammer-%s-%s-r%d.log", logdir, profile, w->name, round);
    json_object_set_new(run, "hammer_log", hm_json_text(log));
    char *line = hammer_command(c, w, s, json_path);
    wordexp_t we;
    int rc = line ? split_words(line, &we, why, sizeof(why)) : -ENOMEM;
    free(line);
    if (rc == -ENOMEM) snprintf(why, sizeof(why), "out of memory");
    if (rc < 0) goto failed;
    pid_t pid;
    unlink(json_path);
    /* /proc/self/exe: this very binary, even if a rebuild has replaced the
     * file at its path since the matrix started. */
    rc = spawn("/proc/self/exe", we.we_wordv, environ, NULL, log, false,
               c->hammer_cpus ? &c->hammer_set : NULL, &pid);
    wordfree(&we);
    if (rc < 0) {
        snprintf(why, sizeof(why), "cannot start hammer: %s", strerror(-rc));
        goto failed;
    }
    int status = 0;
    bool timed_out = wait_hammer(c, pid, stop, &status);
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
    collect_passes(c, doc, timed_out, code, run);
    json_decref(doc);
    return;
failed:
    json_object_set_new(run, "status", json_string("failed"));
    json_object_set_new(run, "reason", hm_json_text(why));
}

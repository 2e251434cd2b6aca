/* matrix.c — hammer matrix: the command line, the rounds, the document
 * and its reports; see matrix.h and docs/matrix.md. The profiles file is
 * read in matrix_profiles.c, servers and child hammers run in
 * matrix_spawn.c, the reports are rendered in matrix_summary.c,
 * matrix_markdown.c and matrix_html.c. */
#include "cli/matrix.h"
#include "cli/json_file.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "base/hm_base.h"
#include "base/hm_file.h"
#include "cli/matrix_profiles.h"
#include "stats/json_text.h"
#include "cli/matrix_report.h"
#include "cli/matrix_spawn.h"
#include "cli/matrix_summary.h"
#include "engine/engine.h"

/* Set by SIGINT, SIGTERM and SIGHUP: finish the current run, stop the
 * server, write the reports. */
static atomic_bool interrupted;

static void on_signal(int sig)
{
    (void)sig;
    atomic_store(&interrupted, true);
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
                snprintf(os, sizeof(os), "%.255s", v);
            }
        fclose(f);
    }
    struct utsname u;
    uname(&u);
    char kernel[400];
    snprintf(kernel, sizeof(kernel), "%s %s %s", u.sysname, u.release, u.machine);
    json_object_set_new(env, "cpu", hm_json_text(model));
    json_object_set_new(env, "cpus", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
    json_object_set_new(
        env, "memory_gib",
        json_real((double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE) / 1073741824.0));
    json_object_set_new(env, "kernel", hm_json_text(kernel));
    json_object_set_new(env, "os", hm_json_text(os));
    json_object_set_new(env, "hostname", hm_json_text(u.nodename));
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

static json_t *parameters(const hm_matrix_config *c)
{
    return json_pack("{s:o, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:s, s:s, s:f, s:f, s:o, s:o, s:o}",
                     "profiles_file", hm_json_text(c->path), "runs", c->runs, "actions",
                     hm_json_text(c->actions), "duration", hm_json_text(c->duration), "concurrency",
                     hm_json_text(c->concurrency), "timeout", hm_json_text(c->timeout), "engine",
                     hm_json_text(c->engine), "threads", hm_json_text(c->threads), "passes",
                     c->passes, "baseline", c->baseline, "health_timeout_s",
                     (double)c->health_timeout_ns / 1e9, "stop_grace_s",
                     (double)c->stop_grace_ns / 1e9, "args", hm_json_text(c->args), "server_cpus",
                     hm_json_text(c->server_cpus), "hammer_cpus", hm_json_text(c->hammer_cpus));
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

/* The document itself, indented: --json. */
static int write_json(FILE *f, json_t *doc)
{
    if (json_dumpf(doc, f, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) < 0) return -EIO;
    fputc('\n', f);
    return ferror(f) ? -EIO : 0;
}

typedef struct render_job {
    json_t *doc;
    int (*render)(FILE *, json_t *);
} render_job;

static int render_doc(FILE *f, void *job)
{
    const render_job *j = job;
    return j->render(f, j->doc);
}

/* Renders doc into path whole (hm_file_replace): a failed write never
 * leaves half a report. 0 or a negative errno. */
static int write_text(const char *path, json_t *doc, int (*render)(FILE *, json_t *))
{
    render_job j = {doc, render};
    return hm_file_replace(path, render_doc, &j);
}

typedef struct matrix_outputs {
    const char *markdown, *html, *json;
    bool quiet;
} matrix_outputs;

/* Summarizes doc and writes every report asked for; the exit status. */
static int report(json_t *doc, const matrix_outputs *out)
{
    hm_matrix_summarize(doc);
    int exit_code = hm_matrix_all_passed(doc) ? 0 : 1;
    if (!out->quiet) hm_matrix_markdown(stdout, doc);
    struct {
        const char *path;
        int (*render)(FILE *, json_t *);
    } outs[] = {
        {out->markdown, hm_matrix_markdown}, {out->html, hm_matrix_html}, {out->json, write_json}};
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
static int render_saved(const char *path, const matrix_outputs *out)
{
    char why[4200];
    json_t *doc = hm_json_file_load(path, why, sizeof(why));
    if (!doc) {
        fprintf(stderr, "hammer matrix: %s\n", why);
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

/* The matrix's log directory: dir, created if need be, or a new one under
 * $TMPDIR. 0, or a negative errno with the message printed. */
static int make_logdir(const char *dir, char *out, size_t len)
{
    if (dir) {
        snprintf(out, len, "%s", dir);
        if (mkdir(out, 0755) < 0 && errno != EEXIST) {
            int rc = -errno;
            fprintf(stderr, "hammer matrix: cannot create %s: %s\n", out, strerror(-rc));
            return rc;
        }
        return 0;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(out, len, "%s/hammer-matrix-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(out)) {
        int rc = -errno;
        fprintf(stderr, "hammer matrix: cannot create a log directory: %s\n", strerror(-rc));
        return rc;
    }
    return 0;
}

/* The document before any run: what was measured, where and how. */
static json_t *new_document(const hm_matrix_config *c, hm_backend_kind engine, const char *logdir)
{
    json_t *doc = json_object();
    char when[32];
    now_iso(when, sizeof(when));
    json_object_set_new(doc, "schema", json_string("hammer_matrix"));
    json_object_set_new(doc, "schema_version", json_integer(1));
    json_object_set_new(doc, "started", json_string(when));
    json_object_set_new(doc, "environment", environment(engine));
    json_object_set_new(doc, "parameters", parameters(c));
    json_object_set_new(doc, "logs_dir", hm_json_text(logdir));
    json_t *jprofiles = json_array(), *jworkloads = json_array();
    for (int i = 0; i < c->n_profiles; i++) {
        const hm_matrix_profile *p = &c->profiles[i];
        json_t *env = json_array();
        for (int e = 0; e < p->n_env; e++)
            json_array_append_new(env, json_string(p->env[e]));
        json_array_append_new(jprofiles, json_pack("{s:s, s:s, s:o, s:s}", "name", p->name,
                                                   "command", p->command, "env", env, "health",
                                                   p->health ? p->health : "/"));
    }
    for (int i = 0; i < c->n_workloads; i++) {
        const hm_matrix_workload *w = &c->workloads[i];
        json_array_append_new(jworkloads, json_pack("{s:s, s:s, s:o}", "name", w->name, "scenario",
                                                    w->scenario, "args", hm_json_text(w->args)));
    }
    json_object_set_new(doc, "profiles", jprofiles);
    json_object_set_new(doc, "workloads", jworkloads);
    json_object_set_new(doc, "runs", json_array());
    return doc;
}

/* One profile in one round: start its server, run every workload against
 * it, stop it; one object per workload appended to runs. */
static void run_profile(const hm_matrix_config *c, const hm_matrix_profile *p, int round,
                        hm_backend_kind engine, const char *logdir, json_t *runs)
{
    fprintf(stderr, "[round %d/%d] %s: ", round, c->runs, p->name);
    hm_matrix_server s;
    char why[600];
    int64_t t0 = hm_now_ns();
    if (hm_matrix_server_start(c, p, logdir, round, engine, &interrupted, &s, why, sizeof(why)) <
        0) {
        fprintf(stderr, "SKIPPED: %s\n", why);
        for (int wi = 0; wi < c->n_workloads; wi++) {
            json_t *run = json_pack("{s:i, s:s, s:s, s:s, s:o}", "round", round, "profile", p->name,
                                    "workload", c->workloads[wi].name, "status", "skipped",
                                    "reason", hm_json_text(why));
            json_object_update(run, s.ran);
            json_array_append_new(runs, run);
        }
        json_decref(s.ran);
        return;
    }
    fprintf(stderr, "healthy in %.2f s on %s;", (double)(hm_now_ns() - t0) / 1e9, s.url);
    json_t *these[HM_MATRIX_MAX_WORKLOADS];
    for (int wi = 0; wi < c->n_workloads; wi++) {
        const hm_matrix_workload *w = &c->workloads[wi];
        json_t *run = json_pack("{s:i, s:s, s:s, s:o}", "round", round, "profile", p->name,
                                "workload", w->name, "url", hm_json_text(s.url));
        if (atomic_load(&interrupted)) {
            json_object_set_new(run, "status", json_string("skipped"));
            json_object_set_new(run, "reason", json_string("interrupted"));
        } else {
            hm_matrix_run_workload(c, w, &s, logdir, round, p->name, &interrupted, run);
        }
        json_t *warm = json_object_get(json_object_get(run, "passes"), "warm");
        if (warm)
            fprintf(stderr, " %s %.0f/s%s", w->name,
                    json_number_value(json_object_get(warm, "rps")),
                    strcmp(hm_matrix_text(run, "status"), "ok") ? " FAILED" : "");
        else
            fprintf(stderr, " %s %s", w->name, json_string_value(json_object_get(run, "status")));
        these[wi] = run;
    }
    char how[64];
    hm_matrix_server_stop(s.pid, c->stop_grace_ns, how, sizeof(how));
    fprintf(stderr, "; stopped (%s)\n", how);
    for (int wi = 0; wi < c->n_workloads; wi++) {
        json_object_set_new(these[wi], "server_stopped", json_string(how));
        json_object_update(these[wi], s.ran);
        json_array_append_new(runs, these[wi]);
    }
    json_decref(s.ran);
}

/* Every round, then the reports; the exit status. */
static int run_matrix(const hm_matrix_config *c, hm_backend_kind engine, const char *logdir,
                      const matrix_outputs *out)
{
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL); /* a closed terminal must still stop the servers */

    json_t *doc = new_document(c, engine, logdir);
    json_t *runs = json_object_get(doc, "runs");
    fprintf(stderr, "hammer matrix: %d profiles x %d workloads x %d runs; logs in %s\n",
            c->n_profiles, c->n_workloads, c->runs, logdir);
    for (int round = 1; round <= c->runs && !atomic_load(&interrupted); round++) {
        /* Interleaved: every profile once per round, the order rotated so no
         * profile always runs first (or right after the same neighbour). */
        for (int k = 0; k < c->n_profiles && !atomic_load(&interrupted); k++)
            run_profile(c, &c->profiles[(k + round - 1) % c->n_profiles], round, engine, logdir,
                        runs);
    }
    char when[32];
    now_iso(when, sizeof(when));
    json_object_set_new(doc, "finished", json_string(when));
    json_object_set_new(doc, "interrupted", json_boolean(atomic_load(&interrupted)));
    int exit_code = report(doc, out);
    json_decref(doc);
    return exit_code;
}

/* Loads the profiles file with the command line's overrides and runs it;
 * the exit status. */
static int measure(const char *path, const char *runs, const char *actions, const char *concurrency,
                   const char *logs, const matrix_outputs *out)
{
    static hm_matrix_config c;
    memset(&c, 0, sizeof(c));
    int exit_code = 2;
    if (hm_matrix_config_load(&c, path) < 0 ||
        hm_matrix_config_override(&c, runs, actions, concurrency) < 0) {
        if (c.error[0]) fprintf(stderr, "hammer matrix: %s\n", c.error);
        goto done;
    }
    hm_backend_kind engine = HM_BACKEND_AUTO;
    if (c.engine && hm_backend_parse(c.engine, &engine) < 0) {
        fprintf(stderr, "hammer matrix: engine must be auto, io_uring or epoll, not '%s'\n",
                c.engine);
        goto done;
    }
    engine = hm_backend_resolve(engine, NULL);
    /* A matrix takes minutes to hours: a report it could not write at the
     * end is refused now. */
    const char *reports[] = {out->markdown, out->html, out->json};
    for (size_t i = 0; i < HM_ARRAY_LEN(reports); i++) {
        int rc = reports[i] ? hm_file_writable(reports[i]) : 0;
        if (rc < 0) {
            fprintf(stderr, "hammer matrix: cannot write %s: %s\n", reports[i], hm_strerror(rc));
            goto done;
        }
    }
    char logdir[PATH_MAX];
    if (make_logdir(logs, logdir, sizeof(logdir)) < 0) goto done;
    exit_code = run_matrix(&c, engine, logdir, out);
done:
    hm_matrix_config_free(&c);
    return exit_code;
}

int hm_matrix_main(int argc, char **argv)
{
    matrix_outputs out = {0};
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
    return measure(argv[optind], runs_arg, actions_arg, conc_arg, logs, &out);
}

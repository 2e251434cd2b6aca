/* server_resources.c — the server's processes sampled from /proc and from
 * a Prometheus endpoint (server_resources.h). */
#include "cli/server_resources.h"

#include "cli/procfs.h"

#include "scenarios/scenario.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define METRICS_MAX_BODY (4 * 1024 * 1024)

/* One sample's figures; NAN: not known. */
typedef struct figures {
    double rss, cpu, fds, threads;
} figures;

static void figures_add(figures *sum, const figures *f)
{
    double *s[] = {&sum->rss, &sum->cpu, &sum->fds, &sum->threads};
    const double v[] = {f->rss, f->cpu, f->fds, f->threads};
    for (int i = 0; i < 4; i++)
        if (!isnan(v[i])) *s[i] = isnan(*s[i]) ? v[i] : *s[i] + v[i];
}

/* ---- /proc ----------------------------------------------------------------- */

/* Open descriptors of pid; NAN when /proc/PID/fd cannot be read (another
 * user's process). */
static double count_fds(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
    DIR *d = opendir(path);
    if (!d) return NAN;
    double n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

/* Every process's parent, once per sample: descendants are found by it. */
typedef struct proc_list {
    pid_t *pid, *ppid;
    size_t n, cap;
} proc_list;

static void list_procs(proc_list *l)
{
    l->n = 0;
    DIR *d = opendir("/proc");
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));) {
        if (!isdigit((unsigned char)e->d_name[0])) continue;
        pid_t pid = (pid_t)atoi(e->d_name);
        hm_proc_stat ps;
        if (!hm_proc_stat_read(pid, &ps)) continue;
        if (l->n == l->cap) {
            size_t cap = l->cap ? 2 * l->cap : 512;
            pid_t *a = realloc(l->pid, cap * sizeof(*a)), *b;
            if (!a) break;
            l->pid = a;
            if (!(b = realloc(l->ppid, cap * sizeof(*b)))) break;
            l->ppid = b;
            l->cap = cap;
        }
        l->pid[l->n] = pid;
        l->ppid[l->n++] = ps.ppid;
    }
    closedir(d);
}

/* pid and its descendants, summed (their tree is walked through the list). */
static void tree_figures(const proc_list *l, pid_t root, figures *out)
{
    static double page_bytes, ticks_per_s;
    if (!page_bytes) {
        page_bytes = (double)sysconf(_SC_PAGESIZE);
        ticks_per_s = (double)sysconf(_SC_CLK_TCK);
    }
    pid_t stack[4096];
    int top = 0;
    stack[top++] = root;
    while (top > 0) {
        pid_t pid = stack[--top];
        hm_proc_stat ps;
        if (hm_proc_stat_read(pid, &ps)) {
            figures f = {ps.rss_pages * page_bytes, ps.cpu_ticks / ticks_per_s, count_fds(pid),
                         ps.threads};
            figures_add(out, &f);
        }
        for (size_t i = 0; i < l->n && top < (int)HM_ARRAY_LEN(stack); i++)
            if (l->ppid[i] == pid && l->pid[i] != pid) stack[top++] = l->pid[i];
    }
}

/* ---- a Prometheus endpoint --------------------------------------------------- */

typedef struct scrape {
    hm_http_target target;
    char *path;
    int64_t timeout_ns;
    figures f;
    int rc;
    char why[200];
} scrape;

/* The families read, by source: process-exporter's groups, else a client
 * library's own process (process-exporter serves both: its process_* are
 * its own). */
enum { F_RSS, F_CPU, F_FDS, F_THREADS };
static const char *const named_families[] = {
    "namedprocess_namegroup_memory_bytes", "namedprocess_namegroup_cpu_seconds_total",
    "namedprocess_namegroup_open_filedesc", "namedprocess_namegroup_num_threads"};
static const char *const process_families[] = {
    "process_resident_memory_bytes", "process_cpu_seconds_total", "process_open_fds", NULL};

/* Sums the families' samples of the exposition text body (len bytes). */
static void parse_exposition(const char *body, size_t len, figures *out)
{
    double named[4] = {NAN, NAN, NAN, NAN}, proc[4] = {NAN, NAN, NAN, NAN};
    const char *p = body, *end = body + len;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol) eol = end;
        char line[1024];
        size_t n = (size_t)(eol - p) < sizeof(line) - 1 ? (size_t)(eol - p) : sizeof(line) - 1;
        memcpy(line, p, n);
        line[n] = 0;
        p = eol + 1;
        if (line[0] == '#' || !line[0]) continue;
        size_t name_len = strcspn(line, "{ \t");
        const char *labels = line[name_len] == '{' ? line + name_len : "";
        const char *value = line[name_len] == '{' ? strchr(line + name_len, '}') : line + name_len;
        if (!value) continue;
        if (*value == '}') value++;
        char *vend;
        double v = strtod(value, &vend);
        if (vend == value || isnan(v)) continue;
        for (int k = 0; k < 4; k++) {
            double *slot = NULL;
            if (strlen(named_families[k]) == name_len &&
                !strncmp(line, named_families[k], name_len))
                slot = &named[k];
            else if (process_families[k] && strlen(process_families[k]) == name_len &&
                     !strncmp(line, process_families[k], name_len))
                slot = &proc[k];
            if (!slot) continue;
            /* process-exporter's memory by type: the resident set only */
            if (slot == &named[F_RSS] && !strstr(labels, "memtype=\"resident\"")) continue;
            *slot = isnan(*slot) ? v : *slot + v;
        }
    }
    const double *src = !isnan(named[F_RSS]) || !isnan(named[F_CPU]) ? named : proc;
    *out = (figures){src[F_RSS], src[F_CPU], src[F_FDS], src[F_THREADS]};
}

static void scrape_coro(void *arg)
{
    scrape *s = arg;
    hm_http_conn c;
    hm_http_limits lim = {.max_body_bytes = METRICS_MAX_BODY};
    hm_http_conn_init(&c, &s->target, &lim);
    char req[1024];
    const hm_http_header h[] = {{"Accept", "text/plain;version=0.0.4"}};
    ssize_t len = hm_http_write_request(req, sizeof(req), "GET", s->path, s->target.host_header, h,
                                        1, NULL, 0);
    hm_http_xopts xo = {.idempotent = true, .deadline = hm_now_ns() + s->timeout_ns};
    s->rc = len < 0 ? (int)len : hm_http_conn_exchange(&c, req, (size_t)len, &xo);
    s->f = (figures){NAN, NAN, NAN, NAN};
    if (s->rc < 0) {
        snprintf(s->why, sizeof(s->why), "GET %s failed: %s", s->path,
                 hm_http_conn_fail_reason(&c, s->rc));
    } else if (c.resp.status != 200) {
        s->rc = -HM_ESTATUS;
        snprintf(s->why, sizeof(s->why), "GET %s answered HTTP %d", s->path, c.resp.status);
    } else {
        parse_exposition(c.resp.body, c.resp.body_len, &s->f);
        if (isnan(s->f.rss) && isnan(s->f.cpu)) {
            s->rc = -HM_EPARSE;
            snprintf(s->why, sizeof(s->why),
                     "GET %s has no process_resident_memory_bytes, process_cpu_seconds_total "
                     "or namedprocess_namegroup_* samples",
                     s->path);
        }
    }
    hm_http_conn_free(&c);
}

/* ---- the sampler ------------------------------------------------------------ */

static struct {
    bool running;
    hm_server_resources_options o;
    bool gone[HM_SERVER_PIDS_MAX];       /* said once */
    double gone_cpu[HM_SERVER_PIDS_MAX]; /* its tree's CPU time when last seen */
    double last_cpu[HM_SERVER_PIDS_MAX];
    bool fds_said, metrics_said;
    proc_list procs;
    scrape s;
    int64_t t0;
    /* The samples so far per source, for the live verdicts (under mu). */
    pthread_mutex_t mu;
    struct samples {
        bool sampled; /* this source is on (stays after the end, for a last scrape) */
        double *t, *rss, *fds;
        size_t n, cap;
        hm_leak live_rss, live_fds;
    } kept[HM_RES__SOURCES];
} r = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void keep_sample(hm_res_source src, double at, const figures *f)
{
    struct samples *k = &r.kept[src];
    pthread_mutex_lock(&r.mu);
    k->sampled = true;
    if (k->n == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 256;
        double *a = realloc(k->t, cap * sizeof(double));
        if (a) k->t = a;
        double *b = a ? realloc(k->rss, cap * sizeof(double)) : NULL;
        if (b) k->rss = b;
        double *c = b ? realloc(k->fds, cap * sizeof(double)) : NULL;
        if (c) {
            k->fds = c;
            k->cap = cap;
        }
    }
    if (k->n < k->cap) {
        k->t[k->n] = at;
        k->rss[k->n] = f->rss;
        k->fds[k->n++] = f->fds;
        double run_s = r.o.duration_ns ? (double)r.o.duration_ns / 1e9 : at;
        hm_leak_judge(HM_LEAK_RSS, k->t, k->rss, (int)k->n, run_s, &k->live_rss);
        hm_leak_judge(HM_LEAK_FDS, k->t, k->fds, (int)k->n, run_s, &k->live_fds);
    }
    pthread_mutex_unlock(&r.mu);
}

bool hm_server_resources_live(hm_res_source src, hm_leak *rss, hm_leak *fds)
{
    pthread_mutex_lock(&r.mu);
    const struct samples *k = &r.kept[src];
    *rss = k->live_rss;
    *fds = k->live_fds;
    bool sampled = k->sampled;
    pthread_mutex_unlock(&r.mu);
    return sampled;
}

/* Publishes one source's figures (those known) as server watch fields and
 * keeps them for its live verdict. */
static void publish(hm_res_source src, const figures *f)
{
    const hm_res_names *nm = hm_res_names_of(src);
    const char *const all[] = {nm->rss, nm->cpu, nm->fds, nm->threads};
    const double v[] = {f->rss, f->cpu, f->fds, f->threads};
    const char *names[4];
    double values[4];
    int n = 0;
    for (int k = 0; k < 4; k++)
        if (!isnan(v[k])) {
            names[n] = all[k];
            values[n++] = v[k];
        }
    if (r.o.gauges && n) hm_server_watch_publish(r.o.gauges, n, names, values);
    keep_sample(src, (double)(hm_now_ns() - r.t0) / 1e9, f);
}

static void sample_now(void)
{
    figures sum = {NAN, NAN, NAN, NAN};
    if (r.o.n_pids) list_procs(&r.procs);
    for (int i = 0; i < r.o.n_pids; i++) {
        pid_t pid = r.o.pids[i];
        hm_proc_stat ps;
        if (!r.gone[i] && !hm_proc_stat_read(pid, &ps)) {
            r.gone[i] = true;
            r.gone_cpu[i] = r.last_cpu[i];
            fprintf(stderr, "hammer: server process %d is gone; its figures count no more\n",
                    (int)pid);
        }
        if (r.gone[i]) {
            /* Holds no memory now; the CPU it used stays used. */
            figures f = {0, r.gone_cpu[i], 0, 0};
            figures_add(&sum, &f);
            continue;
        }
        figures f = {NAN, NAN, NAN, NAN};
        tree_figures(&r.procs, pid, &f);
        r.last_cpu[i] = isnan(f.cpu) ? 0 : f.cpu;
        if (isnan(f.fds) && !r.fds_said) {
            r.fds_said = true;
            fprintf(stderr, "hammer: cannot count the open files of server process %d: %s\n",
                    (int)pid, strerror(EACCES));
        }
        figures_add(&sum, &f);
    }
    if (r.o.n_pids) publish(HM_RES_PIDS, &sum);
    if (r.o.metrics_url) {
        int rc = hm_run_on_temp_loop(HM_BACKEND_EPOLL, scrape_coro, &r.s);
        if (rc < 0) {
            r.s.rc = rc;
            snprintf(r.s.why, sizeof(r.s.why), "cannot create an event loop: %s", hm_strerror(rc));
        }
        if (r.s.rc == 0) {
            publish(HM_RES_EXPORTER, &r.s.f);
        } else if (!r.metrics_said) {
            /* Said once; the next interval asks again (a server restarting). */
            r.metrics_said = true;
            fprintf(stderr, "hammer: server metrics %s: %s\n", r.o.metrics_url, r.s.why);
        }
    }
}

int hm_server_resources_begin(const hm_server_resources_options *o, char *why, size_t whylen)
{
    hm_server_resources_end();
    if (!o->n_pids && !o->metrics_url) return 0;
    r.o = *o;
    memset(r.gone, 0, sizeof(r.gone));
    r.fds_said = r.metrics_said = false;
    if (o->metrics_url) {
        memset(&r.s, 0, sizeof(r.s));
        int rc = hm_http_target_from_url(o->metrics_url, &r.s.target, &r.s.path);
        if (rc == 0 && r.s.target.tls) {
            hm_free(r.s.path);
            r.s.path = NULL;
            snprintf(why, whylen, "--server-metrics %s: only http:// is read", o->metrics_url);
            return -EINVAL;
        }
        if (rc < 0) {
            snprintf(why, whylen, "--server-metrics %s: %s", o->metrics_url,
                     rc == -HM_EPARSE ? "not an http:// URL" : hm_strerror(rc));
            return -EINVAL;
        }
        r.s.target.accept_encoding = NULL;
        r.s.timeout_ns = o->timeout_ns < 2000000000LL ? o->timeout_ns : 2000000000LL;
    }
    pthread_mutex_lock(&r.mu);
    for (int src = 0; src < HM_RES__SOURCES; src++) {
        struct samples *k = &r.kept[src];
        k->n = 0;
        k->sampled = false;
        k->live_rss.known = k->live_fds.known = false;
    }
    pthread_mutex_unlock(&r.mu);
    r.t0 = hm_now_ns();
    r.running = true;
    sample_now();
    return 0;
}

void hm_server_resources_sample(void)
{
    if (r.running) sample_now();
}

void hm_server_resources_end(void)
{
    if (!r.running) return;
    r.running = false;
    hm_free(r.s.path);
    r.s.path = NULL; /* the live verdict stays for a last scrape */
}

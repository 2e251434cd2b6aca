/* merge.c — `hammer merge`: inputs, outputs and exit code; see merge.h. */
#include "cli/merge.h"
#include "cli/json_file.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/hm_base.h"
#include "base/hm_file.h"
#include "cli/options.h"
#include "cli/report.h"
#include "stats/hdr_log.h"
#include "stats/merge.h"
#include "stats/results.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: hammer merge [options] IN...\n"
               "\n"
               "Merges the shards of one run (hammer --shard I/N ... --json IN) into the\n"
               "document one process would have written: counts summed, histograms added and\n"
               "percentiles recomputed from them, checks passed only if every shard's did,\n"
               "thresholds evaluated on the merged run. Refuses files of different runs\n"
               "(run id) or options. Inputs that are --hdr-log files are merged by time into\n"
               "--hdr-log OUT. See docs/distributed.md.\n"
               "\n"
               "options:\n"
               "      --json OUT       write the merged document (docs/output.md)\n"
               "      --markdown OUT   write the merged report as Markdown\n"
               "      --html OUT       write the merged report as one HTML page (docs/reports.md)\n"
               "      --hdr-log OUT    merge the interval-log inputs into one log\n"
               "  -q, --quiet          no summary on stdout\n"
               "  -h, --help           this help\n"
               "\n"
               "exit: 0 the merged run passed, 1 it did not (or a shard is missing),\n"
               "2 usage error, unreadable input, or inputs that are not one run\n");
}

typedef struct merge_args {
    const char *json_out, *markdown_out, *html_out, *hlog_out;
    bool quiet;
    char **inputs;
    int n_inputs;
} merge_args;

enum { OPT_JSON = 1000, OPT_MARKDOWN, OPT_HTML, OPT_HDR_LOG };

static int parse_args(merge_args *a, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", required_argument, 0, OPT_JSON},
        {"markdown", required_argument, 0, OPT_MARKDOWN},
        {"html", required_argument, 0, OPT_HTML},
        {"hdr-log", required_argument, 0, OPT_HDR_LOG},
        {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    memset(a, 0, sizeof(*a));
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
        switch (ch) {
        case OPT_JSON:
            a->json_out = optarg;
            break;
        case OPT_MARKDOWN:
            a->markdown_out = optarg;
            break;
        case OPT_HTML:
            a->html_out = optarg;
            break;
        case OPT_HDR_LOG:
            a->hlog_out = optarg;
            break;
        case 'q':
            a->quiet = true;
            break;
        case 'h':
            usage(stdout);
            return HM_EXIT_PASS;
        default:
            usage(stderr);
            return HM_EXIT_USAGE;
        }
    }
    a->inputs = argv + optind;
    a->n_inputs = argc - optind;
    if (a->n_inputs < 1) {
        fprintf(stderr, "hammer merge: no input files (hammer merge --help)\n");
        return HM_EXIT_USAGE;
    }
    return HM_CLI_GO;
}

/* An interval log starts with a "#[" comment; a results document with '{'. */
static int classify(const char *path, bool *is_log)
{
    FILE *f = fopen(path, "r");
    if (!f) return -errno;
    int c;
    while ((c = fgetc(f)) == ' ' || c == '\n' || c == '\t' || c == '\r') {
    }
    fclose(f);
    *is_log = c == '#';
    return 0;
}

/* ---- interval logs ---------------------------------------------------------- */

typedef struct log_interval {
    double start_s; /* since the epoch */
    int src, seq;   /* input and line, so equal starts keep their order */
    hm_hlog_entry e;
} log_interval;

static int interval_cmp(const void *a, const void *b)
{
    const log_interval *x = a, *y = b;
    if (x->start_s != y->start_s) return x->start_s < y->start_s ? -1 : 1;
    if (x->src != y->src) return x->src - y->src;
    return x->seq - y->seq;
}

/* Every interval of every log, on one time line from the earliest StartTime. */
static int merge_logs(const char *out, char **paths, int n)
{
    log_interval *all = NULL;
    size_t len = 0, cap = 0;
    double base = 0;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        FILE *f = fopen(paths[i], "r");
        double start = 0;
        if (!f || hm_hlog_start_time(f, &start) < 0) {
            fprintf(stderr, "hammer merge: %s: %s\n", paths[i],
                    f ? "an interval log without a StartTime" : strerror(errno));
            rc = -EINVAL;
        }
        if (rc == 0 && (i == 0 || start < base)) base = start;
        for (int seq = 0; rc == 0; seq++) {
            if (len == cap) {
                cap = cap ? 2 * cap : 64;
                log_interval *grown = hm_realloc(all, cap * sizeof(*all));
                if (!grown) {
                    rc = -ENOMEM;
                    break;
                }
                all = grown;
            }
            int got = hm_hlog_read(f, &all[len].e);
            if (got == 0) break;
            if (got < 0) {
                fprintf(stderr, "hammer merge: %s: interval %d is malformed\n", paths[i], seq + 1);
                rc = got;
                break;
            }
            all[len].start_s = start + all[len].e.start_s;
            all[len].src = i;
            all[len].seq = seq;
            len++;
        }
        if (f) fclose(f);
    }
    if (rc == 0) {
        qsort(all, len, sizeof(*all), interval_cmp);
        hm_hlog log;
        rc = hm_hlog_open_at(&log, out, base);
        for (size_t i = 0; rc == 0 && i < len; i++) {
            int64_t from = (int64_t)((all[i].start_s - base) * 1e9 + 0.5);
            int64_t to = from + (int64_t)(all[i].e.length_s * 1e9 + 0.5);
            rc = hm_hlog_write(&log, all[i].e.tag[0] ? all[i].e.tag : NULL, from, to,
                               &all[i].e.hist);
        }
        int closed = log.f ? hm_hlog_close(&log) : 0;
        if (closed < 0 && rc == 0) rc = closed;
        if (rc < 0) fprintf(stderr, "hammer merge: cannot write %s: %s\n", out, hm_strerror(rc));
    }
    for (size_t i = 0; i < len; i++)
        hm_hdr_destroy(&all[i].e.hist);
    hm_free(all);
    return rc;
}

/* ---- documents -------------------------------------------------------------- */

static int render_markdown(FILE *f, void *doc)
{
    return hm_merge_markdown(f, doc);
}

/* Whole or not at all, with the system's errno (hm_file_replace). */
static int write_markdown(const char *path, json_t *doc)
{
    return hm_file_replace(path, render_markdown, doc);
}

/* Missing and repeated shards, said on stderr (also with -q). */
static void warn_coverage(json_t *doc)
{
    json_t *sh = json_object_get(doc, "shard");
    if (!sh) sh = json_object_get(json_array_get(json_object_get(doc, "passes"), 0), "shard");
    /* The summary's Missing and Repeated shards lines, word for word. */
    char cover[512];
    if (hm_merge_coverage_text(sh, "missing", cover, sizeof(cover)))
        fprintf(stderr,
                "hammer merge: missing shards %s: the merged run is incomplete and does not pass\n",
                cover);
    if (hm_merge_coverage_text(sh, "repeated", cover, sizeof(cover)))
        fprintf(stderr, "hammer merge: repeated shards %s\n", cover);
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(sh, "inexact"), i, v)
    {
        fprintf(stderr,
                "hammer merge: %s has no histograms to add: its counts, min and max are "
                "merged, its percentiles are null (the merged --hdr-log has them)\n",
                json_string_value(v));
    }
}

static int merge_documents(const merge_args *a, char **paths, int n)
{
    hm_merge_input *in = hm_calloc((size_t)n, sizeof(*in));
    if (!in) return HM_EXIT_FAILED;
    int code = HM_EXIT_USAGE;
    for (int i = 0; i < n; i++) {
        char why[4200];
        in[i].name = paths[i];
        in[i].doc = hm_json_file_load(paths[i], why, sizeof(why));
        if (!in[i].doc) {
            fprintf(stderr, "hammer merge: %s\n", why);
            goto out;
        }
    }
    char why[1024];
    json_t *doc = hm_results_merge(in, n, why, sizeof(why));
    if (!doc) {
        fprintf(stderr, "hammer merge: %s\n", why);
        goto out;
    }
    warn_coverage(doc);
    if (!a->quiet) hm_merge_print(stdout, doc);
    code = json_is_true(json_object_get(doc, "passed")) ? HM_EXIT_PASS : HM_EXIT_FAILED;
    int rc;
    if (a->json_out && (rc = hm_json_write_atomic(a->json_out, doc)) < 0) {
        fprintf(stderr, "hammer merge: cannot write %s: %s\n", a->json_out, hm_strerror(rc));
        code = HM_EXIT_FAILED;
    }
    if (a->markdown_out && (rc = write_markdown(a->markdown_out, doc)) < 0) {
        fprintf(stderr, "hammer merge: cannot write %s: %s\n", a->markdown_out, hm_strerror(rc));
        code = HM_EXIT_FAILED;
    }
    /* The same renderer as a single run's --html: the merged document has
     * a single run's shape (docs/distributed.md). */
    if (a->html_out && (rc = hm_report_html_write(a->html_out, doc)) < 0) {
        fprintf(stderr, "hammer merge: cannot write %s: %s\n", a->html_out, hm_strerror(rc));
        code = HM_EXIT_FAILED;
    }
    json_decref(doc);
out:
    for (int i = 0; i < n; i++)
        json_decref(in[i].doc);
    hm_free(in);
    return code;
}

int hm_merge_main(int argc, char **argv)
{
    merge_args a;
    int code = parse_args(&a, argc, argv);
    if (code != HM_CLI_GO) return code;
    /* Documents first, logs after, each group in the order given. */
    char **docs = hm_calloc((size_t)a.n_inputs, sizeof(char *));
    char **logs = hm_calloc((size_t)a.n_inputs, sizeof(char *));
    int n_docs = 0, n_logs = 0;
    code = docs && logs ? HM_CLI_GO : HM_EXIT_FAILED;
    for (int i = 0; i < a.n_inputs && code == HM_CLI_GO; i++) {
        bool is_log = false;
        int rc = classify(a.inputs[i], &is_log);
        if (rc < 0) {
            fprintf(stderr, "hammer merge: cannot read %s: %s\n", a.inputs[i], hm_strerror(rc));
            code = HM_EXIT_USAGE;
        } else if (is_log) {
            logs[n_logs++] = a.inputs[i];
        } else {
            docs[n_docs++] = a.inputs[i];
        }
    }
    if (code == HM_CLI_GO && n_logs && !a.hlog_out) {
        fprintf(stderr, "hammer merge: %s is an interval log: name the merged log with --hdr-log\n",
                logs[0]);
        code = HM_EXIT_USAGE;
    }
    if (code == HM_CLI_GO && a.hlog_out && !n_logs) {
        fprintf(stderr, "hammer merge: --hdr-log given but no input is an interval log\n");
        code = HM_EXIT_USAGE;
    }
    if (code == HM_CLI_GO && !n_docs && (a.json_out || a.markdown_out || a.html_out)) {
        fprintf(stderr,
                "hammer merge: --json, --markdown and --html need the shards' --json files\n");
        code = HM_EXIT_USAGE;
    }
    if (code == HM_CLI_GO && n_logs && merge_logs(a.hlog_out, logs, n_logs) < 0)
        code = HM_EXIT_USAGE;
    if (code == HM_CLI_GO) code = n_docs ? merge_documents(&a, docs, n_docs) : HM_EXIT_PASS;
    hm_free(docs);
    hm_free(logs);
    return code;
}

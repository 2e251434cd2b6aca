/* options.h — hammer's command line: parsing argv into a hm_cli, and
 * checking the result against the chosen scenario's capabilities.
 *
 * Exit codes (the CLI's contract, docs/output.md): 0 every check held, 1
 * the run completed with failures, 2 usage error, unreachable target, or
 * a scenario input that does not fit the app (hm_results.fatal_usage).
 * Every usage error prints one "hammer: ..." line to stderr.
 *
 * Ownership: a hm_cli lives as long as the run (main's). Strings in it
 * point into argv or into the hm_cli itself, so it must not be copied or
 * moved after hm_cli_parse. */
#ifndef HM_CLI_OPTIONS_H
#define HM_CLI_OPTIONS_H

#include "cli/server_resources.h"
#include "cli/shard.h"
#include "scenarios/scenario.h"

enum {
    HM_EXIT_PASS = 0,
    HM_EXIT_FAILED = 1,
    HM_EXIT_USAGE = 2,
    HM_CLI_GO = -1, /* not an exit code: carry on with the run */
};

#define HM_CLI_MAX_PASSES 4
#define HM_CLI_MAX_PLUGIN_OPTS 64

typedef struct hm_cli {
    hm_options o;              /* what the scenario gets */
    const hm_scenario_def *sc; /* set by hm_cli_validate */
    const char *scenario_name; /* NAME of "scenario NAME" */
    bool actions_given, mode_given;
    const char *duration_arg;   /* -d as given */
    bool help_asked;            /* -h: printed once the words after the options are known */
    bool insecure;              /* -k */
    const char *cafile;         /* --cacert */
    int tls_handshakes;         /* --tls-handshakes (HM_TLS_HANDSHAKES_DEFAULT) */
    const char *workload_name;  /* --workload */
    int64_t interval_ns;        /* --interval, 0 when not given */
    const char *interval_json;  /* --interval-json */
    const char *hdr_log_path;   /* --hdr-log */
    const char *hgrm_path;      /* --hgrm */
    const char *html_path;      /* --html */
    const char *metrics_listen; /* --metrics-listen HOST:PORT */
    int64_t metrics_linger_ns;  /* --metrics-linger, 0 when not given */
    int compressed;             /* --compressed 1, --no-compressed 0, else -1 */
    bool no_server_watch;       /* --no-server-watch */
    bool no_tui;                /* --no-tui: the live line, not the live view */
    int64_t watch_grace_ns;     /* --watch-grace (10 s) */
    bool watch_grace_given;     /* --watch-grace: check after -n runs too */
    pid_t server_pids[HM_SERVER_PIDS_MAX]; /* --server-pid, repeatable */
    int n_server_pids;
    const char *server_metrics;                /* --server-metrics URL */
    const char *pass_names[HM_CLI_MAX_PASSES]; /* --passes, or {"run"} */
    int n_passes;
    char passes_buf[256]; /* storage pass_names point into */
    hm_threshold thresholds[HM_MAX_THRESHOLDS];
    int n_thresholds;
    const char *plugin_opts[HM_CLI_MAX_PLUGIN_OPTS]; /* --opt, in o.plugin_opts */
    hm_shard shard;                                  /* --shard, --start-at, --run-id (shard.h) */
    const char *headers[HM_MAX_REQUEST_HEADERS];     /* -H, in o.headers */
    const char *body_path;                           /* --body FILE, or "-" */
    char *body;                                      /* its bytes (owned; hm_cli_free) */
    int argc;    /* the command line as given, for the reports */
    char **argv; /* a copy of main's array (getopt reorders that one); hm_cli_free */
} hm_cli;

/* Fills cli with the defaults and then argv (argv[0] is the program);
 * loads --plugin files as they come. Returns HM_CLI_GO, or the exit code
 * when there is nothing to run: --help, --version and `list` (0), a bad
 * option or value (2, with the message printed). */
int hm_cli_parse(hm_cli *cli, int argc, char **argv);

/* Finds the scenario, applies its defaults (route, action, signal,
 * workload) and checks the options against its capabilities, the open-file
 * limit and the engine. Returns HM_CLI_GO or HM_EXIT_USAGE (message printed). */
int hm_cli_validate(hm_cli *cli);

/* Releases what hm_cli_parse allocated (the --body bytes). */
void hm_cli_free(hm_cli *cli);

#endif

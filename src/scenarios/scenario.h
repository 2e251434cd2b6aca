/* scenario.h — the scenario table: what each scenario is, what it can be
 * combined with, and how the CLI hands a run to it.
 *
 * The CLI parses options into hm_options (load/run.h), resolves the target
 * and starts the embedded bench_app when there is no --url. A scenario's
 * run function (its own, or one of the php-via load models of src/load
 * and src/flow) drives the engine threads and fills hm_results; the CLI
 * reports them. The table is static; plugins' scenarios are added once,
 * before any run, by hm_plugin_load. */
#ifndef HM_SCENARIOS_SCENARIO_H
#define HM_SCENARIOS_SCENARIO_H

#include "load/request.h"
#include "load/run.h"

typedef int (*hm_scenario_run_fn)(const hm_options *o, hm_results *r);

/* What a scenario can be combined with. The CLI checks a run's options
 * against these before it starts anything, so no scenario name appears in
 * the CLI. */
typedef struct hm_scenario_caps {
    bool needs_url;          /* nothing of the embedded bench_app to drive (get) */
    bool browser;            /* --mode browser is accepted */
    bool browser_only;       /* runs in the browser model only (plugins) */
    bool rate;               /* -R: an open-loop schedule (in the hammer model) */
    const char *no_duration; /* why -d is refused ("compares variants by -n"), or NULL */
    bool is_workload;        /* may be named by --workload */
    bool takes_workload;     /* --workload NAME picks its page, action and check */
    int app_workers;         /* the embedded bench_app's workers (0: one); more than one
                              * dispatch by session, as php-via's dispatch_func */
    bool flow_file;          /* reads its steps from a flow file (hammer flow FILE) */
    bool custom_request;     /* takes -m, -H and --body (get) */
    bool streams;            /* --streams: several HTTP/2 streams per connection (in the
                              * hammer model; a browser VU has its own connection) */
} hm_scenario_caps;

typedef struct hm_scenario_def {
    const char *name;
    const char *help;            /* one line */
    const char *route;           /* default --route, NULL when not a php-via scenario */
    const char *action;          /* default --action */
    const char *signal;          /* default --signal */
    const hm_workload *workload; /* php-via scenarios: what is checked */
    const char *check_name;      /* one line for the summary */
    hm_scenario_run_fn run;      /* its own run (get, sticky); NULL: the two php-via load models */
    /* Checks the scenario's input (a flow file) before the target is
     * reached: 0, or a negative code and why (a usage error). NULL: none. */
    int (*prepare)(const hm_options *o, char *why, size_t whylen);
    const hammer_scenario *plugin; /* loaded with --plugin (browser model) */
    hm_scenario_caps caps;
} hm_scenario_def;

/* The sticky scenario: every variant in turn (src/scenarios/sticky.c). */
int hm_sticky_run(const hm_options *o, hm_results *r);

/* Runs one pass of scenario sc: its own run function, or the load model
 * o->browser picks (which it records in r->mode). */
int hm_scenario_run(const hm_scenario_def *sc, const hm_options *o, hm_results *r);

/* Built-in scenarios, NULL-terminated. */
extern const hm_scenario_def *const hm_builtin_scenarios[];
const hm_scenario_def *hm_scenario_find(const char *name);
/* Writes the names of the scenarios (built-in, then plugins) whose
 * capability `pick` is true, joined by sep, into buf: "counter|cpu|io". */
void hm_scenario_names(bool (*pick)(const hm_scenario_caps *c), const char *sep, char *buf,
                       size_t len);
/* The scenario whose name `name` is a slip of ("countr": "counter"), or
 * NULL. */
const char *hm_scenario_nearest(const char *name);

/* What `hammer scenario NAME --help` prints: the scenario's page, action,
 * signal, check, load models and the options that apply to it. */
void hm_scenario_help(FILE *f, const hm_scenario_def *sc);

/* Loads a plugin's scenarios (see include/hammer/scenario.h); they are
 * found by hm_scenario_find and listed by hm_scenario_list. */
int hm_plugin_load(const char *path, char *why, size_t whylen);
/* Prints "name  help" for built-in and loaded scenarios. */
void hm_scenario_list(FILE *f);

#endif

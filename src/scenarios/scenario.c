/* The built-in scenario table, its help, and the plugin loader (scenario.h). */
#include "scenarios/scenario.h"

#include "flow/flow.h"
#include "load/via_browser.h"
#include "load/via_hammer.h"

#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

extern const hm_scenario_def hm_scenario_get;

static const hm_workload net_increment = {.check = HM_CHECK_NET_INCREMENT};
static const hm_workload mandelbrot = {.check = HM_CHECK_CONSTANT, .expected = 65451};
static const hm_workload spreadsheet = {.check = HM_CHECK_SPREADSHEET};
static const hm_workload spreadsheet_live = {
    .check = HM_CHECK_TABLE, .set_signal = "direction", .set_value = "ArrowDown"};

/* A php-via page in either load model, paced by -R in the hammer model. */
#define VIA_CAPS .browser = true, .rate = true, .streams = true

static const hm_scenario_def counter = {
    .name = "counter",
    .help = "trivial increment; net increment of count must equal HTTP OK",
    .route = "/bench/counter",
    .action = "increment",
    .signal = "count",
    .workload = &net_increment,
    .check_name = "net increment equals HTTP OK",
    .caps = {VIA_CAPS, .is_workload = true}};
static const hm_scenario_def cpu = {
    .name = "cpu",
    .help = "Mandelbrot 50x50, 100 iterations; every patched count must be 65451",
    .route = "/bench/cpu",
    .action = "increment",
    .signal = "count",
    .workload = &mandelbrot,
    .check_name = "every patched count equals 65451",
    .caps = {VIA_CAPS, .is_workload = true}};
static const hm_scenario_def io = {
    .name = "io",
    .help = "2 ms non-blocking sleep per action; net increment must equal HTTP OK",
    .route = "/bench/io",
    .action = "increment",
    .signal = "count",
    .workload = &net_increment,
    .check_name = "net increment equals HTTP OK",
    .caps = {VIA_CAPS, .is_workload = true}};
static const hm_scenario_def sheet = {
    .name = "spreadsheet",
    .help = "SQLite 20x10 viewport query + HTML build; count increments, viewRow advances",
    .route = "/bench/spreadsheet",
    .action = "increment",
    .signal = "count",
    .workload = &spreadsheet,
    .check_name = "net increment equals HTTP OK; viewRow = focusRow = count mod 100",
    .caps = {VIA_CAPS, .is_workload = true}};
static const hm_scenario_def sheet_live = {
    .name = "spreadsheet-live",
    .help = "the live spreadsheet: navigate ArrowDown; element patches hold a 20x10 table",
    .route = "/examples/spreadsheet",
    .action = "navigate",
    .signal = "count",
    .workload = &spreadsheet_live,
    .check_name = "element patches hold a well-formed 20x10 table",
    .caps = {VIA_CAPS}};
static const hm_scenario_def custom = {
    .name = "custom",
    .help = "any php-via app: --route --action --signal [--signals JSON]; net increment check",
    .route = "/bench/counter",
    .action = "increment",
    .signal = "count",
    .workload = &net_increment,
    .check_name = "net increment equals HTTP OK",
    .caps = {VIA_CAPS}};

static const hm_scenario_def sticky = {
    .name = "sticky",
    .help = "multi-worker session affinity: legacy vs cookie vs keepalive (--workload NAME)",
    .route = "/bench/counter",
    .action = "increment",
    .signal = "count",
    .workload = &net_increment,
    .check_name = "cookie variant reaches 100% HTTP OK",
    .run = hm_sticky_run,
    /* --mode browser is accepted (and changes only the summary's connection
     * count): each variant fixes its own connections. */
    .caps = {.browser = true,
             .no_duration = "compares variants by -n",
             .takes_workload = true,
             .app_workers = 4}};

/* hammer flow FILE.yaml: steps from a YAML file (docs/flows.md). */
static const hm_scenario_def flow = {
    .name = "flow",
    .help = "user flows from a YAML file: hammer flow FILE.yaml (docs/flows.md)",
    .route = "/",
    .signal = "",
    .workload = &(const hm_workload){.check = HM_CHECK_NONE},
    .check_name = "flow",
    .run = hm_flow_run,
    .prepare = hm_flow_prepare,
    .caps = {VIA_CAPS, .flow_file = true}};

const hm_scenario_def *const hm_builtin_scenarios[] = {
    &counter, &cpu, &io, &sheet, &sheet_live, &custom, &sticky, &hm_scenario_get, &flow, NULL,
};

#define MAX_PLUGIN_SCENARIOS 64
static hm_scenario_def plugin_defs[MAX_PLUGIN_SCENARIOS];
static hammer_scenario plugin_structs[MAX_PLUGIN_SCENARIOS]; /* as this hammer sees them */
static size_t n_plugin_defs;

const hm_scenario_def *hm_scenario_find(const char *name)
{
    for (size_t i = 0; hm_builtin_scenarios[i]; i++)
        if (!strcmp(hm_builtin_scenarios[i]->name, name)) return hm_builtin_scenarios[i];
    for (size_t i = 0; i < n_plugin_defs; i++)
        if (!strcmp(plugin_defs[i].name, name)) return &plugin_defs[i];
    return NULL;
}

/* Keeps in *best the nearer of it and `known` to `name`. */
static void keep_nearer(const char *name, const char *known, const char **best, size_t *best_d)
{
    size_t d = hm_edit_distance(name, known);
    if (d < *best_d) *best_d = d, *best = known;
}

const char *hm_scenario_nearest(const char *name)
{
    const char *best = NULL;
    size_t best_d = SIZE_MAX;
    for (size_t i = 0; hm_builtin_scenarios[i]; i++)
        keep_nearer(name, hm_builtin_scenarios[i]->name, &best, &best_d);
    for (size_t i = 0; i < n_plugin_defs; i++)
        keep_nearer(name, plugin_defs[i].name, &best, &best_d);
    return best && hm_near_miss(name, best) ? best : NULL;
}

void hm_scenario_help(FILE *f, const hm_scenario_def *sc)
{
    const hm_scenario_caps *c = &sc->caps;
    fprintf(f, "scenario %s: %s\n", sc->name, sc->help);
    if (c->flow_file) {
        fprintf(f, "  usage     hammer [options] flow FILE.yaml (docs/flows.md)\n");
    } else {
        fprintf(f, "  usage     hammer [options]%s scenario %s\n", c->needs_url ? " --url URL" : "",
                sc->name);
    }
    if (sc->route && !c->flow_file && !c->needs_url) {
        fprintf(f, "  page      %s (--route)\n", sc->route);
        fprintf(f, "  action    %s (--action); signal %s (--signal)\n", sc->action, sc->signal);
    }
    if (sc->check_name && !c->flow_file) fprintf(f, "  check     %s\n", sc->check_name);
    if (c->browser_only)
        fprintf(f, "  models    browser only: -c virtual users, one tab each\n");
    else if (c->browser)
        fprintf(f, "  models    hammer (default: one context, -c actions in flight) or "
                   "--mode browser (-c virtual users, one tab each; --think)\n");
    if (c->rate) fprintf(f, "  open loop -R N%s\n", c->browser ? " (hammer model)" : "");
    if (c->streams)
        fprintf(f, "  HTTP/2    --http2 --streams N%s\n", c->browser ? " (hammer model)" : "");
    if (c->custom_request) fprintf(f, "  request   -m METHOD, -H 'Name: value', --body FILE\n");
    if (c->takes_workload)
        fprintf(f, "  workload  --workload NAME picks the page, action and check\n");
    if (c->no_duration) fprintf(f, "  duration  -n only: %s\n", c->no_duration);
    if (c->app_workers > 1)
        fprintf(f, "  server    the embedded bench_app runs %d workers\n", c->app_workers);
    fprintf(f, "The options every scenario takes: hammer --help; the scenarios: hammer list; "
               "docs/scenarios.md.\n");
}

int hm_scenario_run(const hm_scenario_def *sc, const hm_options *o, hm_results *r)
{
    if (sc->run) return sc->run(o, r);
    r->mode = o->browser ? "browser" : "hammer";
    return o->browser ? hm_via_browser_run(o, r) : hm_via_hammer_run(o, r);
}

void hm_scenario_names(bool (*pick)(const hm_scenario_caps *c), const char *sep, char *buf,
                       size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    size_t n_builtin = 0;
    while (hm_builtin_scenarios[n_builtin])
        n_builtin++;
    for (size_t i = 0; i < n_builtin + n_plugin_defs; i++) {
        const hm_scenario_def *sc =
            i < n_builtin ? hm_builtin_scenarios[i] : &plugin_defs[i - n_builtin];
        if (!pick(&sc->caps) || n >= len) continue;
        n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? sep : "", sc->name);
    }
}

/* ---- plugins -------------------------------------------------------------- */

static const hm_workload no_check = {.check = HM_CHECK_NONE};

/* How many bytes of a plugin's hammer_scenario hammer may read: version 1
 * ends before struct_size; later versions say. 0 (and why) when the plugin
 * is newer than this hammer or its size is impossible. */
static size_t plugin_struct_size(const hammer_scenario *sc, const char *path, size_t i, char *why,
                                 size_t whylen)
{
    const size_t v1_size = offsetof(hammer_scenario, struct_size);
    const size_t v2_size = offsetof(hammer_scenario, struct_size) + sizeof(size_t);
    if (sc->api_version < 1 || sc->api_version > HAMMER_SCENARIO_API_VERSION) {
        /* name sits at the same place in every version */
        snprintf(why, whylen,
                 "plugin %s: scenario %zu ('%s') was built for plugin API version %d; this "
                 "hammer supports versions 1 to %d",
                 path, i, sc->name ? sc->name : "?", sc->api_version, HAMMER_SCENARIO_API_VERSION);
        return 0;
    }
    if (sc->api_version == 1) return v1_size;
    if (sc->struct_size < v2_size || sc->struct_size > sizeof(hammer_scenario)) {
        snprintf(why, whylen,
                 "plugin %s: scenario %zu says its struct has %zu bytes; API version %d needs "
                 "%zu to %zu",
                 path, i, sc->struct_size, sc->api_version, v2_size, sizeof(hammer_scenario));
        return 0;
    }
    return sc->struct_size;
}

int hm_plugin_load(const char *path, char *why, size_t whylen)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, whylen, "cannot load plugin %s: %s", path, dlerror());
        return -ENOENT;
    }
    const hammer_scenario *const *list = dlsym(h, "hammer_plugin_scenarios");
    if (!list) {
        snprintf(why, whylen, "plugin %s exports no hammer_plugin_scenarios", path);
        return -ENOENT;
    }
    for (size_t i = 0; list[i]; i++) {
        if (n_plugin_defs == MAX_PLUGIN_SCENARIOS) {
            snprintf(why, whylen, "too many plugin scenarios");
            return -ENOSPC;
        }
        size_t size = plugin_struct_size(list[i], path, i, why, whylen);
        if (!size) return -EINVAL;
        /* Fields the plugin's version lacks stay NULL in hammer's copy. */
        hammer_scenario *sc = &plugin_structs[n_plugin_defs];
        memset(sc, 0, sizeof(*sc));
        memcpy(sc, list[i], size);
        if (!sc->name || !sc->vu_body) {
            snprintf(why, whylen, "plugin %s: scenario %zu lacks a name or vu_body", path, i);
            return -EINVAL;
        }
        if (hm_scenario_find(sc->name)) {
            snprintf(why, whylen, "plugin %s: scenario '%s' exists already", path, sc->name);
            return -EEXIST;
        }
        plugin_defs[n_plugin_defs++] = (hm_scenario_def){
            .name = sc->name,
            .help = sc->help ? sc->help : "(plugin)",
            .route = sc->route ? sc->route : "/",
            .action = sc->action ? sc->action : "increment",
            .signal = sc->signal ? sc->signal : "count",
            .workload = &no_check,
            .check_name = "plugin check",
            .plugin = sc,
            .caps = {.browser = true, .browser_only = true},
        };
    }
    return 0; /* the handle stays open for the life of the process */
}

void hm_scenario_list(FILE *f)
{
    for (size_t i = 0; hm_builtin_scenarios[i]; i++)
        fprintf(f, "  %-17s %s\n", hm_builtin_scenarios[i]->name, hm_builtin_scenarios[i]->help);
    for (size_t i = 0; i < n_plugin_defs; i++)
        fprintf(f, "  %-17s %s (plugin)\n", plugin_defs[i].name, plugin_defs[i].help);
}

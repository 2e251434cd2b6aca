/* fuzz_matrix_profiles.c — the profiles file of `hammer matrix`
 * (src/cli/matrix_profiles.c: inih with hammer's line and continuation
 * rules, then the check of every value), as the user wrote it.
 *
 * The payload is the profiles file, written to profiles.ini in the scratch
 * directory and loaded on a coroutine-sized stack. It is either loaded or
 * refused with a reason; a loaded configuration is walked: every profile
 * has a name and a command, ports and counts lie within their bounds,
 * every env entry is NAME=VALUE, the baseline names a profile, and every
 * text is UTF-8 and becomes the same JSON string (hm_json_text) in the
 * matrix document. Then the command line's overrides are applied, and the
 * configuration freed (also after a refusal, as matrix.c does).
 *
 * Flags (byte 0):
 *   bit 0  override with --runs 2 -n 5 -c 3 after the load
 *   bit 1  override with values that are out of range (must be refused) */
#include "fuzz_common.h"

#include "base/hm_base.h"
#include "cli/matrix_profiles.h"
#include "stats/json_text.h"

#include <errno.h>
#include <string.h>

enum { F_OVERRIDE = 1, F_BAD_OVERRIDE = 2 };

static hm_matrix_config cfg; /* large: static, zeroed per input */

static void text_ok(const char *s)
{
    if (!s) return;
    json_t *j = hm_json_text(s);
    HM_FUZZ_CHECK(j && json_is_string(j));
    HM_FUZZ_CHECK(hm_utf8_valid(s)); /* the loader refuses any other text */
    HM_FUZZ_CHECK(!strcmp(json_string_value(j), s));
    json_decref(j);
}

static bool is_profile(const hm_matrix_config *c, const char *name)
{
    for (int i = 0; i < c->n_profiles; i++)
        if (!strcmp(c->profiles[i].name, name)) return true;
    return false;
}

static void body(void *arg)
{
    const hm_fuzz_input *in = arg;
    if (hm_fuzz_names_device(in)) return;
    const char *path = hm_fuzz_file("profiles.ini", in->data, in->len);
    memset(&cfg, 0, sizeof(cfg));
    int rc = hm_matrix_config_load(&cfg, path);
    HM_FUZZ_CHECK(memchr(cfg.error, 0, sizeof(cfg.error)));
    if (rc < 0) {
        HM_FUZZ_CHECK(rc == -EINVAL || rc == -ENOMEM);
        if (rc == -EINVAL) HM_FUZZ_CHECK(cfg.error[0]);
        hm_matrix_config_free(&cfg);
        return;
    }
    HM_FUZZ_CHECK(rc == 0);
    HM_FUZZ_CHECK(cfg.n_profiles >= 1 && cfg.n_profiles <= HM_MATRIX_MAX_PROFILES);
    HM_FUZZ_CHECK(cfg.n_workloads >= 0 && cfg.n_workloads <= HM_MATRIX_MAX_WORKLOADS);
    HM_FUZZ_CHECK(cfg.runs >= 1);
    HM_FUZZ_CHECK(cfg.baseline && is_profile(&cfg, cfg.baseline));
    for (int i = 0; i < cfg.n_profiles; i++) {
        const hm_matrix_profile *p = &cfg.profiles[i];
        HM_FUZZ_CHECK(p->name && p->name[0] && p->command && p->command[0]);
        HM_FUZZ_CHECK(p->port >= 0 && p->port <= 65535);
        HM_FUZZ_CHECK(p->n_env >= 0 && p->n_env <= HM_MATRIX_MAX_ENV);
        for (int k = 0; k < p->n_env; k++)
            HM_FUZZ_CHECK(p->env[k] && strchr(p->env[k], '='));
        for (int k = 0; k < i; k++)
            HM_FUZZ_CHECK(strcmp(cfg.profiles[k].name, p->name));
        text_ok(p->name);
        text_ok(p->command);
        text_ok(p->health);
        text_ok(p->url);
        text_ok(p->cwd);
    }
    for (int i = 0; i < cfg.n_workloads; i++) {
        const hm_matrix_workload *w = &cfg.workloads[i];
        HM_FUZZ_CHECK(w->name && w->name[0] && w->scenario && w->scenario[0]);
        text_ok(w->name);
        text_ok(w->args);
    }
    text_ok(cfg.args);
    if (in->flags & F_OVERRIDE) {
        rc = hm_matrix_config_override(&cfg, "2", "5", "3");
        HM_FUZZ_CHECK(rc == 0 || rc == -ENOMEM || (rc == -EINVAL && cfg.error[0]));
        if (rc == 0) HM_FUZZ_CHECK(cfg.runs == 2);
    }
    if (in->flags & F_BAD_OVERRIDE) {
        rc = hm_matrix_config_override(&cfg, "0", NULL, NULL);
        HM_FUZZ_CHECK(rc == -EINVAL && cfg.error[0]);
        rc = hm_matrix_config_override(&cfg, NULL, "-1", "x");
        HM_FUZZ_CHECK(rc == -EINVAL && cfg.error[0]);
    }
    hm_matrix_config_free(&cfg);
}

HM_FUZZ_ENTRY(body)

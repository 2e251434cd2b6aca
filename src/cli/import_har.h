/* import_har.h — `hammer import-har FILE.har`: a browser's recording of a
 * php-via app (HAR 1.2, as Chrome, Firefox and tests/tools/record_har.js
 * write it) turned into a flow file (docs/flows.md) on stdout.
 *
 * Ownership: nothing outlives the call; the HAR is read whole with
 * jansson and the flow written with libyaml's emitter. */
#ifndef HM_CLI_IMPORT_HAR_H
#define HM_CLI_IMPORT_HAR_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The options of import-har (usage() in import_har.c says what each does). */
typedef struct hm_har_opts {
    const char *path; /* the recording's name, for messages and the header comment */
    const char *name; /* the flow's name, or NULL: from the first page */
    double think_scale;
    int64_t min_think_ns, max_think_ns;
    bool keep_assets;
    enum { HM_HAR_SIGNALS_AUTO, HM_HAR_SIGNALS_ALL, HM_HAR_SIGNALS_NONE } signals;
} hm_har_opts;

#define HM_HAR_OPTS_DEFAULT                                                                        \
    {                                                                                              \
        .think_scale = 1.0, .min_think_ns = 100 * 1000000LL, .max_think_ns = 5000 * 1000000LL      \
    }

/* argv[0] is "import-har". Returns the exit code: 0, or 2 with a message
 * on stderr for a bad option or an unreadable HAR. */
int hm_import_har_main(int argc, char **argv);

/* The conversion itself, of a loaded HAR document (borrowed): the flow to
 * out, the messages to err. Returns as hm_import_har_main does: 0; 2 when
 * har holds no entries, no page load or nothing to replay; 1 when the flow could not be
 * written. */
int hm_import_har_doc(json_t *har, const hm_har_opts *opt, FILE *out, FILE *err);

#endif

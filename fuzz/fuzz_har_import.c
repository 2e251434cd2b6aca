/* fuzz_har_import.c — `hammer import-har` (src/cli/import_har.c): a
 * browser's recording (HAR JSON) into a flow file.
 *
 * The payload is the HAR file. It is written to rec.har in the scratch
 * directory, read as the command reads it (hm_json_file_load), and
 * converted by hm_import_har_doc with the options the flags pick. Unlike
 * the other harnesses it runs on the process's own stack, not a
 * coroutine's: import-har is a command of the main thread, and jansson
 * nests up to 2048 levels deep there (regressions/har_import/deep_json
 * overflowed a 64 KiB coroutine stack inside json_loadf, which hammer
 * never runs it on). A document that is no recording is refused in
 * words (exit 2, a message); a flow that was written must be one hammer
 * loads: it goes back through hm_flow_load, and a refusal of what
 * import-har wrote fails the input, printing the flow and the reason.
 *
 * Flags (byte 0):
 *   bits 0-1  --signals: 0 auto, 1 all, 2 none, 3 auto
 *   bit 2     --keep-assets
 *   bit 3     --think-scale 0 --min-think 0 (every pause kept, as 0)
 *   bit 4     --think-scale 1000 --max-think 1h
 *   bit 5     --name with the payload's first bytes (up to a NUL or 32 bytes) */
#include "fuzz_common.h"

#include "base/hm_base.h"
#include "cli/import_har.h"
#include "cli/json_file.h"
#include "flow/flow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { F_SIGNALS = 3, F_ASSETS = 4, F_THINK_ZERO = 8, F_THINK_BIG = 16, F_NAME = 32 };

static void body(void *arg)
{
    const hm_fuzz_input *in = arg;
    const char *path = hm_fuzz_file("rec.har", in->data, in->len);
    hm_har_opts opt = HM_HAR_OPTS_DEFAULT;
    opt.path = path;
    int sig = in->flags & F_SIGNALS;
    opt.signals = sig == 1   ? HM_HAR_SIGNALS_ALL
                  : sig == 2 ? HM_HAR_SIGNALS_NONE
                             : HM_HAR_SIGNALS_AUTO;
    opt.keep_assets = in->flags & F_ASSETS;
    if (in->flags & F_THINK_ZERO) {
        opt.think_scale = 0;
        opt.min_think_ns = 0;
    }
    if (in->flags & F_THINK_BIG) {
        opt.think_scale = 1000;
        opt.max_think_ns = 3600 * 1000000000LL;
    }
    char name[33];
    if (in->flags & F_NAME) {
        snprintf(name, sizeof(name), "%s", (const char *)in->data);
        opt.name = name;
    }

    char why[4200] = "";
    json_t *har = hm_json_file_load(path, why, sizeof(why));
    if (!har) {
        HM_FUZZ_CHECK(why[0]);
        return;
    }
    char *out = NULL, *err = NULL;
    size_t out_len = 0, err_len = 0;
    FILE *fo = open_memstream(&out, &out_len), *fe = open_memstream(&err, &err_len);
    HM_FUZZ_CHECK(fo && fe);
    int rc = hm_import_har_doc(har, &opt, fo, fe);
    fclose(fo);
    fclose(fe);
    json_decref(har);
    HM_FUZZ_CHECK(rc == 0 || rc == 1 || rc == 2);
    if (rc != 0) {
        /* Refused or not written: said on stderr, nothing on stdout. */
        HM_FUZZ_CHECK(err_len > 0 && out_len == 0);
    } else {
        HM_FUZZ_CHECK(out_len > 0);
        const char *flow = hm_fuzz_file("imported.yaml", out, out_len);
        hm_flow_file *f = NULL;
        char fwhy[1024] = "";
        if (hm_flow_load(flow, &f, fwhy, sizeof(fwhy)) < 0)
            hm_fuzz_fail("import-har wrote a flow hammer refuses: %s\n---\n%s---", fwhy, out);
        HM_FUZZ_CHECK(f->n_flows == 1);
        hm_flow_free(f);
    }
    free(out);
    free(err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hm_fuzz_input in;
    hm_fuzz_input_init(&in, data, size);
    body(&in);
    hm_fuzz_input_free(&in);
    return 0;
}

/* A JSON document from a named file; see json_file.h. */
#include "cli/json_file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

json_t *hm_json_file_load(const char *path, char *why, size_t whylen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(why, whylen, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    json_error_t err;
    json_t *doc = json_loadf(f, 0, &err);
    if (!doc && ferror(f))
        snprintf(why, whylen, "cannot read %s: %s", path, strerror(errno));
    else if (!doc)
        snprintf(why, whylen, "%s:%d:%d: not JSON: %s", path, err.line, err.column, err.text);
    fclose(f);
    return doc;
}

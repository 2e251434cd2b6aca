/* json_file.h — a JSON document from a file the user named (a run's
 * --json, a HAR recording, a saved matrix, a shard), with one way of saying
 * why it could not be read: the file and the OS error when it cannot be
 * opened, the file, line and column when it is not JSON.
 *
 * The caller owns the document it gets (json_decref). */
#ifndef HM_CLI_JSON_FILE_H
#define HM_CLI_JSON_FILE_H

#include <jansson.h>
#include <stddef.h>

/* The document in path, or NULL with why ("cannot read run.json: No such
 * file or directory", "run.json:3:7: not JSON: ..."). */
json_t *hm_json_file_load(const char *path, char *why, size_t whylen);

#endif

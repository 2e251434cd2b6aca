/* import_har.h — `hammer import-har FILE.har`: a browser's recording of a
 * php-via app (HAR 1.2, as Chrome, Firefox and tests/tools/record_har.js
 * write it) turned into a flow file (docs/flows.md) on stdout.
 *
 * Ownership: nothing outlives the call; the HAR is read whole with
 * jansson and the flow written with libyaml's emitter. */
#ifndef HM_CLI_IMPORT_HAR_H
#define HM_CLI_IMPORT_HAR_H

/* argv[0] is "import-har". Returns the exit code: 0, or 2 with a message
 * on stderr for a bad option or an unreadable HAR. */
int hm_import_har_main(int argc, char **argv);

#endif

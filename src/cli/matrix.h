/* matrix.h — `hammer matrix FILE`: server profiles × workloads, cold and
 * warm, over interleaved rounds, reported like php-via's
 * BENCHMARK_RESULTS.md (docs/matrix.md).
 *
 * This file owns the orchestration: reading the profiles file, starting and
 * stopping servers (posix_spawn, so execve and no shell, in their own
 * process group), health checks, and one child hammer per (profile,
 * workload) with --passes cold,warm --json. Children keep every run
 * isolated (no client state carries over) and a crash costs one run, not
 * the matrix. The numbers become one JSON document; stats/matrix_report.c
 * summarizes and renders it. */
#ifndef HM_CLI_MATRIX_H
#define HM_CLI_MATRIX_H

/* argv[0] is "matrix". Returns the process exit status: 0 every run
 * completed and passed, 1 completed with failures, skips or an interrupt,
 * 2 usage or profiles-file errors. */
int hm_matrix_main(int argc, char **argv);

#endif

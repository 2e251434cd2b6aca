/* matrix.h — `hammer matrix FILE`: server profiles × workloads, cold and
 * warm, over interleaved rounds, reported like php-via's
 * BENCHMARK_RESULTS.md (docs/matrix.md).
 *
 * The orchestration: the profiles file is read and checked first
 * (matrix_profiles.h); each round starts and stops every profile's server
 * (posix_spawn, so execve and no shell, in their own process group) and
 * runs one child hammer per (profile, workload) with --passes cold,warm
 * --json (matrix_spawn.h). Children keep every run isolated (no client
 * state carries over) and a crash costs one run, not the matrix. The
 * numbers become one JSON document, which matrix_summary.h summarizes and
 * matrix_report.h renders. */
#ifndef HM_CLI_MATRIX_H
#define HM_CLI_MATRIX_H

/* argv[0] is "matrix". Returns the process exit status: 0 every run
 * completed and passed, 1 completed with failures, skips or an interrupt,
 * 2 usage or profiles-file errors. */
int hm_matrix_main(int argc, char **argv);

#endif

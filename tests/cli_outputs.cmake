# The command line around a run: output files refused up front and write
# failures at the end (exit 2 / exit 1 with the system's errno), the JSON's
# command_line as typed, signal.name alike in both models, import-har's
# header command, hammer merge's shard coverage lines.
add_executable(test_cli_outputs test_cli_outputs.c)
target_link_libraries(test_cli_outputs PRIVATE hm_flags hm_base PkgConfig::JANSSON)
target_include_directories(test_cli_outputs PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
foreach(behaviour unwritable write_fail command_line signal_name har_header merge_cover)
  add_test(NAME cli_outputs_${behaviour}
           COMMAND test_cli_outputs $<TARGET_FILE:hammer> ${PROJECT_SOURCE_DIR} ${behaviour})
  set_tests_properties(cli_outputs_${behaviour} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
endforeach()
# hammer matrix: a profile whose hammer fails is "failed" with its reasons,
# marked in the tables, hollow in the charts, and never the fastest.
hm_test(matrix_failed SOURCES test_matrix_failed.c LIBS hm_base PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> $<TARGET_FILE:bench_app> TIMEOUT 300)

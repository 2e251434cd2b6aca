# Habits from wrk, oha, k6 and vegeta: did-you-mean, `hammer URL`, bad
# values with what is allowed, compound durations, scenario help.
hm_test(cli_habits SOURCES test_cli_habits.c LIBS hm_base PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> TIMEOUT 120)
# hm_parse_duration: units, parts that add up, bare seconds.
hm_test(duration SOURCES test_duration.c LIBS hm_base)
# make check's build step: stage lines, not the build's directory noise.
add_test(NAME make_quiet_build COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/test_make_quiet_build.sh
         ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR})
set_tests_properties(make_quiet_build PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE)

# What the summary's count lines say and the JSON counts beside them: patches
# against actions, requested against established connections, SSE streams
# against observers, and --think outside browser mode (issue 24).
hm_test(counts SOURCES test_counts.c LIBS hm_base PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> ${PROJECT_SOURCE_DIR}/tests/data TIMEOUT 300)

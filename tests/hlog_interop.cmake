# --hdr-log read by a standard HdrHistogram reader (needs node; fetches
# hdr-histogram-js into the build tree once, skips with the reason if it can't).
add_test(NAME hlog_interop
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_hlog_interop.sh $<TARGET_FILE:hammer>
                 ${CMAKE_BINARY_DIR}/tools)
set_tests_properties(hlog_interop PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)

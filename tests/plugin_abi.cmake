# The scenario plugin ABI (include/hammer/scenario.h): an old (version 1)
# plugin still loads and runs, a newer or malformed one is refused with the
# reason, and hammer_vu_sleep_ms tells a VU the run is stopping. The test
# plugins are built like third-party ones: only the public header.
set(HM_ABI_PLUGINS "")
foreach(kind V1 FUTURE BADSIZE CANCEL)
  string(TOLOWER ${kind} k)
  add_library(test_plugin_${k} MODULE plugins/abi_plugin.c)
  target_compile_definitions(test_plugin_${k} PRIVATE ABI_${kind})
  target_include_directories(test_plugin_${k} PRIVATE ${CMAKE_SOURCE_DIR}/include)
  target_compile_options(test_plugin_${k} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  set_target_properties(test_plugin_${k} PROPERTIES PREFIX ""
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)
  list(APPEND HM_ABI_PLUGINS $<TARGET_FILE:test_plugin_${k}>)
endforeach()
hm_test(plugin_abi SOURCES test_plugin_abi.c LIBS hm_base PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> ${HM_ABI_PLUGINS} TIMEOUT 180)

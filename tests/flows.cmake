# Flows (hammer flow FILE.yaml, docs/flows.md) and hammer import-har.
hm_test(flow_parse SOURCES test_flow_parse.c LIBS hm_scenarios
        ARGS ${CMAKE_SOURCE_DIR}/examples/flows)
hm_test(flow_values SOURCES test_flow_values.c LIBS hm_scenarios)
# Each example flow against its built-in scenario, both load models.
hm_test(flow_examples SOURCES test_flow_examples.c LIBS hm_base PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> ${CMAKE_SOURCE_DIR}/examples/flows TIMEOUT 600)
# Each step on the wire and in the report; flows that do not fit the app.
hm_test(flow_run SOURCES test_flow_run.c LIBS hm_base PkgConfig::JANSSON
        ARGS $<TARGET_FILE:hammer> TIMEOUT 300)
# A recorded HAR into a flow, and the flow replayed against bench_app.
hm_test(import_har SOURCES test_import_har.c LIBS hm_scenarios
        ARGS $<TARGET_FILE:hammer> ${CMAKE_SOURCE_DIR}/tests/data TIMEOUT 300)

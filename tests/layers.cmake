# The layering rule (docs/architecture.md): scripts/check-layers.sh passes on
# this tree and catches planted violations.
add_test(NAME layers COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_layers.sh ${CMAKE_SOURCE_DIR})
set_tests_properties(layers PROPERTIES TIMEOUT 60)

# Scale-out (issue 14): merging runs' documents, --shard/--start-at end to
# end, the local rehearsal of N shards, and the Kubernetes files.
add_executable(test_merge test_merge.c)
target_link_libraries(test_merge PRIVATE hm_flags hm_stats)
target_include_directories(test_merge PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
foreach(behaviour exact self refuse generic passes examples)
  add_test(NAME merge_${behaviour} COMMAND test_merge ${behaviour})
  set_tests_properties(merge_${behaviour} PROPERTIES TIMEOUT 60)
endforeach()

add_executable(test_cli_shard test_cli_shard.c)
target_link_libraries(test_cli_shard PRIVATE hm_flags hm_stats PkgConfig::JANSSON m)
target_include_directories(test_cli_shard PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
foreach(behaviour usage shares start_at interrupt run_id merge)
  add_test(NAME cli_shard_${behaviour}
           COMMAND test_cli_shard $<TARGET_FILE:hammer> $<TARGET_FILE:bench_app> ${behaviour})
  set_tests_properties(cli_shard_${behaviour} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
endforeach()

# scripts/shards-local.sh: 4 shards (in network namespaces when root) merged.
add_test(NAME shards_local
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_shards_local.sh ${CMAKE_SOURCE_DIR}
                 $<TARGET_FILE:hammer> $<TARGET_FILE:bench_app>)
set_tests_properties(shards_local PROPERTIES TIMEOUT 300)

# deploy/k8s/: manifests parsed and their pod scripts run here; the image
# file against scripts/deps.sh (kubectl and container engines are not used).
add_test(NAME k8s
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_k8s.sh ${CMAKE_SOURCE_DIR}
                 $<TARGET_FILE:hammer> $<TARGET_FILE:bench_app>)
set_tests_properties(k8s PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)

# shards-local.sh --app-processes --peak-rss: shard i against server i % M,
# unmerged, each shard's peak RSS kept and summed.
add_test(NAME shards_local_servers
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_shards_servers.sh ${CMAKE_SOURCE_DIR}
                 $<TARGET_FILE:hammer> $<TARGET_FILE:bench_app>)
set_tests_properties(shards_local_servers PROPERTIES TIMEOUT 300)

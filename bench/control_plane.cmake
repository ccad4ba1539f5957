# Control-plane round latency with real coordinator and nodelet processes (docs/performance.md "Control plane").
if(TARGET themis_bidder AND TARGET themis_store AND TARGET themis_net AND TARGET themis-coordinator AND TARGET themis-nodelet)
  add_executable(control_plane_bench ${CMAKE_CURRENT_SOURCE_DIR}/control_plane_bench.cc
                 ${CMAKE_CURRENT_SOURCE_DIR}/launcher_agents.cc ${PROJECT_SOURCE_DIR}/tests/integration/process.cc)
  target_include_directories(control_plane_bench PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(control_plane_bench PRIVATE themis_bidder themis_store themis_net themis_core)
  themis_target_warnings(control_plane_bench)
  add_dependencies(control_plane_bench themis-coordinator themis-nodelet)
endif()
# Loop lag while a long auction runs: a real coordinator, virtual nodelets and app agents in the benchmark
# (docs/performance.md "Loop lag during a long auction").
if(TARGET themis_bidder AND TARGET themis_store AND TARGET themis_net AND TARGET themis-coordinator)
  add_executable(loop_lag_bench ${CMAKE_CURRENT_SOURCE_DIR}/loop_lag_bench.cc
                 ${CMAKE_CURRENT_SOURCE_DIR}/launcher_agents.cc ${PROJECT_SOURCE_DIR}/tests/integration/process.cc)
  target_include_directories(loop_lag_bench PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(loop_lag_bench PRIVATE themis_bidder themis_store themis_net themis_core)
  themis_target_warnings(loop_lag_bench)
  add_dependencies(loop_lag_bench themis-coordinator)
endif()
# Load: a burst of submissions from several CURVE clients, then many apps active (docs/reliability.md "Load").
if(TARGET themis_store AND TARGET themis_net AND TARGET themis-coordinator AND TARGET themis-nodelet AND TARGET themisctl)
  add_executable(load_bench ${CMAKE_CURRENT_SOURCE_DIR}/load_bench.cc ${PROJECT_SOURCE_DIR}/tests/integration/process.cc)
  target_include_directories(load_bench PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(load_bench PRIVATE themis_store themis_net themis_core)
  themis_target_warnings(load_bench)
  add_dependencies(load_bench themis-coordinator themis-nodelet themisctl)
endif()

# The Themis auction: whole partial allocations (PF solve + one solve per winner), own search vs CBC.
if(TARGET themis_arbiter AND TARGET themis_bidder AND TARGET themis_planner)
  themis_add_bench(auction_bench SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/auction_bench.cc LIBS themis_arbiter themis_bidder themis_planner)
endif()

# The root LP of dumped shape problems with Cgl's cut families (docs/performance.md, "Where a solve's time goes, and cuts at the root").
find_package(PkgConfig REQUIRED)
find_package(nlohmann_json 3.11 REQUIRED)
pkg_check_modules(BENCH_CGL REQUIRED IMPORTED_TARGET cgl osi-clp)
if(TARGET themis_arbiter)
  themis_add_bench(shape_cuts SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/shape_cuts.cc LIBS themis_arbiter PkgConfig::BENCH_CGL nlohmann_json::nlohmann_json)
  target_include_directories(shape_cuts PRIVATE ${PROJECT_SOURCE_DIR})
endif()

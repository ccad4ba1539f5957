# The Themis auction: whole partial allocations (PF solve + one solve per winner), own search vs CBC.
if(TARGET themis_arbiter AND TARGET themis_bidder AND TARGET themis_planner)
  themis_add_bench(auction_bench SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/auction_bench.cc LIBS themis_arbiter themis_bidder themis_planner)
endif()

# Bid generation: p50/p95 of one generate_bid call over offers of 16..1024 GPUs.
if(TARGET themis_bidder)
  themis_add_bench(bid_generation_bench SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/bid_generation_bench.cc LIBS themis_bidder)
endif()

# Worker and checkpoint measurements (docs/worker.md); run with bench/worker_measure.sh.
if(TARGET themis_checkpoint)
  themis_add_bench(checkpoint_throughput SOURCES ${CMAKE_CURRENT_LIST_DIR}/checkpoint_throughput.cc
                   LIBS themis_checkpoint)
endif()
if(TARGET themis_worker)
  find_package(Torch REQUIRED)  # its imported targets are scoped to the directory that finds it
  themis_add_bench(worker_overhead SOURCES ${CMAKE_CURRENT_LIST_DIR}/worker_overhead.cc LIBS themis_worker)
endif()

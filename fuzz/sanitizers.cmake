# THEMIS_FUZZ=ON: every target of the build gets libFuzzer coverage, AddressSanitizer and UBSan, so the
# fuzz targets exercise instrumented project code. UBSan findings abort (a finding is a crash).
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "THEMIS_FUZZ needs clang with libFuzzer: configure with CC=clang CXX=clang++")
endif()
add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
                    -fno-omit-frame-pointer)
add_link_options(-fsanitize=address,undefined)

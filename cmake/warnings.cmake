# themis_target_warnings(<target>): the project's warning set; errors when THEMIS_WERROR is on (CI).
function(themis_target_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                         -Wold-style-cast -Wcast-align -Woverloaded-virtual -Wnull-dereference
                         -Wimplicit-fallthrough)
  if(THEMIS_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# themis_add_test(<name> SOURCES ... LIBS ... [LABELS ...]): one GoogleTest binary, its cases in ctest.
function(themis_add_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest_main GTest::gmock)
  themis_target_warnings(${name})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/test-bin)
  # Only the first of LABELS reaches the discovered tests: gtest_discover_tests' POST_BUILD command line
  # splits the list, so name the label that selects them (faults, for scripts/fault-matrix) first.
  gtest_discover_tests(${name} TEST_PREFIX "${name}." DISCOVERY_TIMEOUT 60
                       PROPERTIES LABELS "${T_LABELS}")
endfunction()

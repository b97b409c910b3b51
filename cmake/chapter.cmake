# add_chapter(<folder>)
#
# A chapter folder holds reduce.cuh (kernels and launcher), main.cu (the chapter program) and
# test.cu (its doctest cases). This creates:
#   <folder>        the chapter program; common/harness.cpp does the work
#   <folder>_test   its GPU tests, registered with ctest under the label "gpu"; on a machine
#                   without a GPU they exit with code 77, which ctest reports as "Skipped"
# The benchmark (bench/) includes every chapter's reduce.cuh itself. A later chapter may build on
# an earlier one's header ("06_warp_shuffle/block_reduce.cuh"): the project root is on the path.
function(add_chapter name)
  add_executable(${name} main.cu)
  target_link_libraries(${name} PRIVATE reduction_common)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})

  add_executable(${name}_test test.cu)
  target_link_libraries(${name}_test PRIVATE reduction_test_support)
  target_include_directories(${name}_test PRIVATE ${PROJECT_SOURCE_DIR})
  add_test(NAME ${name}_test COMMAND ${name}_test)
  set_tests_properties(${name}_test PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
endfunction()

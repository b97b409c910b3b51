# add_chapter(<folder>)
#
# A chapter folder holds reduce.cuh (the lesson: kernels and launcher), chapter.cuh (its
# registration), main.cu (the chapter program) and test.cu (its doctest cases). This creates:
#   <folder>        the chapter program; common/harness.cpp does the work
#   <folder>_test   its GPU tests (doctest), registered with ctest twice: <folder>_test (label
#                   "gpu") runs every case but those of the doctest suite "large", and
#                   <folder>_test_large (labels "gpu" and "large") runs those: the cases above
#                   2^31 elements, whose host side alone generates, checks and compares 8.6 GB and
#                   more. On a machine without a GPU both exit with code 77, which ctest reports as
#                   "Skipped".
# The benchmark (bench/) includes every chapter's chapter.cuh itself. A later chapter reuses an
# earlier lesson by including its reduce.cuh ("06_warp_shuffle/reduce.cuh" for ch06::block_reduce):
# the project root is on the path.
function(add_chapter name)
  add_executable(${name} main.cu)
  target_link_libraries(${name} PRIVATE reduction_common)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})

  add_executable(${name}_test test.cu)
  target_link_libraries(${name}_test PRIVATE reduction_test_support)
  target_include_directories(${name}_test PRIVATE ${PROJECT_SOURCE_DIR})
  add_test(NAME ${name}_test COMMAND ${name}_test --test-suite-exclude=large)
  set_tests_properties(${name}_test PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
  # A large case holds up to 17 GB of host memory and keeps every core busy on its host side:
  # ctest counts it as 8 processors, so "ctest -j 16" runs at most two of them at once.
  add_test(NAME ${name}_test_large COMMAND ${name}_test --test-suite=large)
  set_tests_properties(${name}_test_large PROPERTIES LABELS "gpu;large" SKIP_RETURN_CODE 77 PROCESSORS 8)
endfunction()

// The chapter program: see common/harness.hpp for its flags, output and exit codes.
#include "chapter.cuh"
#include "harness.hpp"

int main(int argc, char** argv) { return red::chapter_main(ch10::chapter(), argc, argv); }

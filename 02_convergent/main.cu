// The chapter program: see common/harness.hpp for its flags, output and exit codes.
#include "harness.hpp"
#include "chapter.cuh"

int main(int argc, char** argv) { return red::chapter_main(ch02::chapter(), argc, argv); }

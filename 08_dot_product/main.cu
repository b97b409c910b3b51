// The chapter program: see common/harness.hpp for its flags, output and exit codes. It runs the
// chapter's main kernel, dot_two_pass (--op dot, with --input and --input2 for files).
#include "chapter.cuh"
#include "harness.hpp"

int main(int argc, char** argv) { return red::chapter_main(ch08::chapter(), argc, argv); }

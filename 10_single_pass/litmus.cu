// 10_single_pass_litmus: the message-passing litmus test between two SMs, with a relaxed flag and
// with release and acquire (litmus.cuh draws it and says why each piece is there).
//
// Chapter 10's last block reads the other blocks' partials because their tickets told it they are
// written. This program shows what the ticket's acquire and release orders buy, on the GPU at
// hand: a writer block stores data, then a flag; a reader block on another SM waits for the flag
// and reads the data again. It counts the reads that return data older than the flag the reader
// had seen. With a relaxed flag the PTX memory model allows them (the reader's SM may answer from
// its L1, which nothing invalidated); with release and acquire it forbids them. A GPU may or may
// not show the allowed outcome: zero stale reads in relaxed mode is a legitimate result, and the
// program says so. results/h200/memory_model/litmus_message_passing.txt holds the H200's output
// (scripts/memory_model_outputs.sh).
//
//   10_single_pass_litmus [--iterations N] [--order relaxed|acquire-release|both]
//
// Exit codes: 0 done, 1 a stale read with release and acquire (a broken model) or a run that did
// not finish (a block gave up waiting for the other), 2 bad arguments, 3 no GPU, 4 a CUDA error.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "10_single_pass/litmus.cuh"
#include "command_line.hpp"
#include "device_info.hpp"

namespace {

using ch10::litmus::Order;

struct Options {
  unsigned iterations = 1'000'000;
  std::string order = "both";
};

// Prints one mode's outcome; returns false when it breaks the model or did not finish.
bool report(Order order, unsigned n, const ch10::litmus::Outcome& o) {
  std::printf("\n%s: flag stored %s, loaded %s; data stored and loaded weak\n", name(order),
              order == Order::relaxed ? "relaxed" : "with release",
              order == Order::relaxed ? "relaxed" : "with acquire");
  std::printf("  writer on SM %u, reader on SM %u%s\n", o.writer_sm, o.reader_sm,
              o.writer_sm == o.reader_sm ? " (the same SM: one L1, the test shows nothing about two)" : "");
  std::printf("  iterations:  %llu of %u\n", o.iterations, n);
  std::printf("  stale reads: %llu", o.stale);
  if (o.stale > 0)
    std::printf(" (%.4f%%; the first at iteration %u: flag %u seen, data %u read)", 100.0 * o.stale / o.iterations,
                o.first_stale, o.first_stale_flag, o.first_stale_data);
  std::printf("\n");
  std::printf("  first reads already current: %llu (the writer's store came first: nothing stale to return)\n",
              o.early);
  bool fine = true;
  if (o.writer_gave_up || o.reader_gave_up) {
    std::printf("  NOT FINISHED: the %s gave up at iteration %u after waiting a second for the other block\n",
                o.reader_gave_up ? "reader" : "writer", o.reader_gave_up ? o.reader_gave_up : o.writer_gave_up);
    fine = false;
  }
  if (order == Order::relaxed) {
    if (o.stale > 0)
      std::printf(
          "  meaning: the weak outcome, observed. Having seen the flag, the reader still read older data: a\n"
          "  relaxed flag orders nothing, and the reader's second load may be answered by its SM's L1,\n"
          "  which nothing invalidated. Allowed by the PTX memory model: data published behind a relaxed flag\n"
          "  may be read stale.\n");
    else
      std::printf(
          "  meaning: the weak outcome was not observed on this GPU; it is still allowed by the PTX memory\n"
          "  model, so a program that passes data behind a relaxed flag is wrong all the same.\n");
  } else if (o.stale == 0) {
    std::printf(
        "  meaning: none, as the PTX memory model requires: the acquire load that saw the flag synchronises\n"
        "  with the release store that wrote it, so the writer's data store happens before the read.\n");
  } else {
    std::printf("  MODEL BROKEN: a read after an acquire returned data older than the release it saw.\n");
    fine = false;
  }
  return fine;
}

int run(const Options& opt) {
  const red::DeviceInfo dev = red::query_device();
  std::printf("# message passing between two SMs of %s (%d SMs), %u iterations per order\n", dev.name.c_str(),
              dev.sm_count, opt.iterations);
  std::printf("# stale read: after waiting for flag >= k and seeing flag = f, the reader read data < f\n");
  std::vector<Order> orders;
  if (opt.order != "acquire-release") orders.push_back(Order::relaxed);
  if (opt.order != "relaxed") orders.push_back(Order::acquire_release);
  bool fine = true;
  for (Order order : orders) {
    fine = report(order, opt.iterations, ch10::litmus::run(order, opt.iterations)) && fine;
    std::fflush(stdout);
  }
  return fine ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  CLI::App app{
      "The message-passing litmus test between two blocks on two SMs: how often a reader that has seen\n"
      "a flag still reads older data, with a relaxed flag and with release and acquire.",
      "10_single_pass_litmus"};
  app.add_option("--iterations", opt.iterations, "messages passed per order (default 1000000)")
      ->check(CLI::Range(1u, 100'000'000u));
  app.add_option("--order", opt.order, "relaxed, acquire-release or both (default both)")
      ->check(CLI::IsMember({"relaxed", "acquire-release", "both"}));
  app.footer(
      "Exit codes: 0 done, 1 a stale read with release and acquire or a run that did not finish, 2 bad arguments,\n"
      "3 no GPU, 4 a CUDA error.");
  if (const int stop = red::parse_command_line(app, argc, argv); stop >= 0) return stop;
  return red::run_experiment("10_single_pass_litmus", "results/h200/memory_model/litmus_message_passing.txt", [&] { return run(opt); });
}

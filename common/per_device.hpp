// A value made once per CUDA device and remembered for the life of the program (a grid size
// from an occupancy query, a library handle). Each call site, through its own `make` lambda,
// keeps its own table.
#pragma once

#include <cuda_runtime_api.h>

#include <map>
#include <mutex>

#include "cuda_check.hpp"

namespace red {

// make(device) -> T, called under a lock the first time a device asks. A thread remembers the last
// device it asked for and its value, so a launcher that asks on every call (to size its grid) pays
// one cudaGetDevice, not a lock and a lookup.
template <class T, class Make>
T per_device(Make make) {
  static std::mutex lock;
  static std::map<int, T> known;
  thread_local int last_device = -1;
  thread_local T last{};
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  if (device == last_device) return last;
  std::lock_guard<std::mutex> guard(lock);
  auto it = known.find(device);
  if (it == known.end()) it = known.emplace(device, make(device)).first;
  last_device = device;
  last = it->second;
  return last;
}

}  // namespace red

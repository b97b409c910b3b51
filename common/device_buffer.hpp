// RAII device memory: the only place in the project that calls cudaMalloc and cudaFree.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "cuda_check.hpp"

namespace red {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes_ > 0) CUDA_CHECK(cudaMalloc(&ptr_, bytes_));
  }
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }

  // Fill every byte from `from` on; used to poison outputs and scratch so stale or unwritten
  // values show up.
  void fill(int byte_value, cudaStream_t stream = nullptr, std::size_t from = 0) const {
    if (bytes_ > from) CUDA_CHECK(cudaMemsetAsync(static_cast<char*>(ptr_) + from, byte_value, bytes_ - from, stream));
  }
  // Returns once the bytes are on the device. From pageable memory cudaMemcpy may return while
  // its DMA is still under way, ordered only before later work in the default stream: a kernel
  // on a non-blocking stream could read the buffer first. Waiting for the default stream closes that.
  void upload(const void* host, std::size_t bytes, std::size_t offset = 0) const {
    if (bytes == 0) return;
    CUDA_CHECK(cudaMemcpy(static_cast<char*>(ptr_) + offset, host, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
  }
  void download(void* host, std::size_t bytes, std::size_t offset = 0) const {
    if (bytes > 0) CUDA_CHECK(cudaMemcpy(host, static_cast<const char*>(ptr_) + offset, bytes, cudaMemcpyDeviceToHost));
  }
  // The first `bytes` set to zero before any stream's work can start (a scratch's counters, which
  // every call leaves zero: chapter.hpp's zeroed_scratch_bytes).
  void zero_prefix(std::size_t bytes) const {
    if (bytes == 0) return;
    CUDA_CHECK(cudaMemset(ptr_, 0, bytes));
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  // Whether the first `bytes` are all zero, once every stream's work has ended.
  bool prefix_is_zero(std::size_t bytes) const {
    std::vector<unsigned char> host(bytes);
    CUDA_CHECK(cudaDeviceSynchronize());
    download(host.data(), bytes);
    for (unsigned char b : host)
      if (b != 0) return false;
    return true;
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// A stream that is destroyed with its owner.
class Stream {
 public:
  Stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }
  void sync() const { CUDA_CHECK(cudaStreamSynchronize(s_)); }

 private:
  cudaStream_t s_ = nullptr;
};

}  // namespace red

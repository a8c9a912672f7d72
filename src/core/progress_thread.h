// An optional thread that advances the library's operations while the application computes, so
// that a non-blocking call overlaps with work between start and wait. It sleeps on a condition
// variable while nothing is in flight (no core burned when idle) and, while operations are in
// flight, waits between steps the way a blocking call does (poll briefly, yield, then sleep on the
// UCX worker's event fd).
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

namespace mpix::sparse::detail {

class Library;

class ProgressThread {
  public:
    explicit ProgressThread(Library &library);
    ~ProgressThread();  // stops and joins
    ProgressThread(const ProgressThread &) = delete;
    ProgressThread &operator=(const ProgressThread &) = delete;

    // Work was put in flight: wake up.
    void notify();

  private:
    void run();

    Library &library_;
    std::mutex m_;
    std::condition_variable cv_;
    bool stop_ = false;
    bool work_ = false;
    std::thread thread_;
};

}  // namespace mpix::sparse::detail

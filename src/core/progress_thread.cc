#include "core/progress_thread.h"

#include <chrono>

#include "core/library.h"

namespace mpix::sparse::detail {

ProgressThread::ProgressThread(Library &library) : library_(library), thread_([this] { run(); }) {}

ProgressThread::~ProgressThread() {
    {
        std::lock_guard<std::mutex> lock(m_);
        stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
}

void ProgressThread::notify() {
    {
        std::lock_guard<std::mutex> lock(m_);
        work_ = true;
    }
    cv_.notify_one();
}

void ProgressThread::run() {
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(m_);
            cv_.wait(lock, [this] { return stop_ || work_; });
            if (stop_) return;
            work_ = false;
        }
        // Until nothing is in flight (or the library stops): the same loop a blocking call waits in.
        library_.wait_until([this] {
            std::lock_guard<std::mutex> lock(m_);
            return stop_ || !library_.has_work();
        });
    }
}

}  // namespace mpix::sparse::detail

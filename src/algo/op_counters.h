// Traffic counters one operation adds to its communicator's statistics.
#pragma once

#include <cstdint>

namespace mpix::sparse::detail {

struct OpCounters {
    std::uint64_t bytes_sent = 0;
    std::uint64_t bytes_received = 0;
    std::uint64_t messages_sent = 0;
    std::uint64_t messages_received = 0;
    std::uint64_t bytes_in_place = 0;  // of bytes_sent: payloads peers read in this rank's buffers
};

}  // namespace mpix::sparse::detail

// Messages that arrived before the operation (or communicator) they belong to was ready, kept in
// arrival order until it is.
#pragma once

#include <deque>
#include <utility>

#include "transport/transport.h"

namespace mpix::sparse::detail {

// Hands every queued message that `belongs` accepts to `deliver`, in arrival order, and removes it.
template <class Belongs, class Deliver>
void deliver_queued(std::deque<InboundMessage> &queue, Belongs &&belongs, Deliver &&deliver) {
    for (auto it = queue.begin(); it != queue.end();) {
        if (belongs(*it)) {
            deliver(std::move(*it));
            it = queue.erase(it);
        } else {
            ++it;
        }
    }
}

}  // namespace mpix::sparse::detail

// Who takes part in a sparse communicator's streams. Group ranks are ranks of the communicator the
// UCX endpoints were made over: the communicator itself, or, with dedicated aggregators, the parent
// communicator that also holds the aggregators.
#pragma once

#include <algorithm>
#include <vector>

#include "core/result_fanout.h"

namespace mpix::sparse::detail {

struct Group {
    int size = 1;
    int rank = 0;
    std::vector<int> workers;      // group ranks of the workers, in worker (= reduction) order
    std::vector<int> aggregators;  // group ranks of the aggregators, in shard order
    bool dedicated = false;        // aggregators hold no data
    ResultFanout fanout;           // this rank's part in passing results on (core/result_fanout.h)

    int my_worker() const { return index_of(workers, rank); }
    int my_aggregator() const { return index_of(aggregators, rank); }

  private:
    static int index_of(const std::vector<int> &v, int r) {
        auto it = std::find(v.begin(), v.end(), r);
        return it == v.end() ? -1 : static_cast<int>(it - v.begin());
    }
};

}  // namespace mpix::sparse::detail

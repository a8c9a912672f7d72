// Bitwise comparison of a method's result with MPI_Allreduce's. Inputs are small integers, so every
// correct sum is exact and bitwise equality is the right test for all types.
#ifndef MPIX_SPARSE_BENCH_VALIDATION_H
#define MPIX_SPARSE_BENCH_VALIDATION_H

#include "element_type.h"

#include <mpi.h>

#include <cstdint>
#include <string>

namespace bench {

// Fills a result buffer with 0xFF bytes (NaN, or -1), so elements a method fails to write show up.
void poison(void *buf, std::size_t bytes);

// Compares got with expected on every rank; ranks that differ print the first bad index to stderr.
// block_size > 0 adds the block of the bad index to the message. Collective over comm; returns
// whether all ranks matched, on all ranks.
bool validate_result(ElementType type, const void *expected, const void *got, std::int64_t count,
                     std::int64_t block_size, const std::string &what, MPI_Comm comm);

}  // namespace bench

#endif

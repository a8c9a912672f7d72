#include "core/agreement.h"

#include <algorithm>
#include <climits>

namespace mpix::sparse::detail {
namespace {

// Any rank may contribute any value: sums wrap (in unsigned arithmetic: a signed overflow is undefined)
// rather than saturate. MPI may combine in another order on each rank, and only a wrapping sum comes
// out the same whatever the order; the checks made on it bound each rank's value by the exact max.
void combine_sum_max(void *in, void *inout, int *len, MPI_Datatype *) {
    const auto *a = static_cast<const SumMax *>(in);
    auto *b = static_cast<SumMax *>(inout);
    for (int i = 0; i < *len; ++i) {
        b[i].sum =
            static_cast<std::int64_t>(static_cast<std::uint64_t>(b[i].sum) + static_cast<std::uint64_t>(a[i].sum));
        b[i].max = std::max(b[i].max, a[i].max);
    }
}

}  // namespace

AgreementOp::AgreementOp() {
    MPI_Type_contiguous(2, MPI_INT64_T, &type_);
    MPI_Type_commit(&type_);
    MPI_Op_create(&combine_sum_max, 1, &op_);
}

AgreementOp::~AgreementOp() {
    if (op_ != MPI_OP_NULL) MPI_Op_free(&op_);
    if (type_ != MPI_DATATYPE_NULL) MPI_Type_free(&type_);
}

int AgreementOp::allreduce(std::vector<SumMax> &values, MPI_Comm comm) const {
    if (values.size() > static_cast<std::size_t>(INT_MAX)) return MPI_ERR_COUNT;
    return PMPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), type_, op_, comm);
}

int AgreementOp::iallreduce(std::vector<SumMax> &values, MPI_Comm comm, MPI_Request *request) const {
    if (values.size() > static_cast<std::size_t>(INT_MAX)) return MPI_ERR_COUNT;
    return PMPI_Iallreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), type_, op_, comm, request);
}

}  // namespace mpix::sparse::detail

#include "core/agreement.h"

#include <algorithm>
#include <climits>

namespace mpix::sparse::detail {
namespace {

// Any rank may contribute any value: sums saturate instead of overflowing (which C++ leaves undefined),
// and a saturated sum fails every plausibility check made on it.
void combine_sum_max(void *in, void *inout, int *len, MPI_Datatype *) {
    const auto *a = static_cast<const SumMax *>(in);
    auto *b = static_cast<SumMax *>(inout);
    for (int i = 0; i < *len; ++i) {
        if (__builtin_add_overflow(b[i].sum, a[i].sum, &b[i].sum)) b[i].sum = a[i].sum < 0 ? INT64_MIN : INT64_MAX;
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

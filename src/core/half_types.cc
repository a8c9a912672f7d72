#include "core/half_types.h"

#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/error.h"
#include "core/half_float.h"

namespace mpix::sparse::detail {
namespace {

std::atomic<const HalfTypes *> g_half_types{nullptr};

// MPI may combine in a different order on each rank (recursive doubling applies op(peer, own) on both
// sides), so every op must be symmetric to the bit, or ranks end with different results: a NaN is
// always the one canonical quiet NaN (never either operand's payload), and MAX/MIN of +0 and -0 are
// +0 and -0 whichever side each is on. MPI leaves MAX/MIN of NaN unspecified; here NaN wins.
struct SumOp {
    static float apply(float a, float b) { return a + b; }
};
struct ProdOp {
    static float apply(float a, float b) { return a * b; }
};
struct MaxOp {
    static float apply(float a, float b) {
        if (a == b) return std::signbit(a) ? b : a;
        return b > a ? b : a;
    }
};
struct MinOp {
    static float apply(float a, float b) {
        if (a == b) return std::signbit(a) ? a : b;
        return b < a ? b : a;
    }
};

// MPI_User_function: inout[i] = op(inout[i], in[i]), computed in float and rounded once.
template <class Format, class Op>
void reduce_16(void *in, void *inout, int *len, MPI_Datatype *) {
    const auto *a = static_cast<const std::uint16_t *>(in);
    auto *b = static_cast<std::uint16_t *>(inout);
    constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
    for (int i = 0; i < *len; ++i) {
        const float x = Format::to_float(b[i]), y = Format::to_float(a[i]);
        const float r = std::isnan(x) || std::isnan(y) ? kNaN : Op::apply(x, y);
        b[i] = Format::from_float(std::isnan(r) ? kNaN : r);  // inf - inf, 0 * inf: the canonical NaN too
    }
}

template <class Format>
void create_ops(MPI_Op (&ops)[4]) {
    check_mpi(MPI_Op_create(&reduce_16<Format, SumOp>, 1, &ops[0]), "MPI_Op_create");
    check_mpi(MPI_Op_create(&reduce_16<Format, ProdOp>, 1, &ops[1]), "MPI_Op_create");
    check_mpi(MPI_Op_create(&reduce_16<Format, MaxOp>, 1, &ops[2]), "MPI_Op_create");
    check_mpi(MPI_Op_create(&reduce_16<Format, MinOp>, 1, &ops[3]), "MPI_Op_create");
}

MPI_Datatype create_type(const char *name) {
    MPI_Datatype t = MPI_DATATYPE_NULL;
    check_mpi(MPI_Type_contiguous(2, MPI_BYTE, &t), "MPI_Type_contiguous");
    check_mpi(MPI_Type_commit(&t), "MPI_Type_commit");
    MPI_Type_set_name(t, name);
    return t;
}

int op_slot(MPI_Op op) {
    if (op == MPI_SUM) return 0;
    if (op == MPI_PROD) return 1;
    if (op == MPI_MAX) return 2;
    if (op == MPI_MIN) return 3;
    return -1;
}

}  // namespace

HalfTypes::HalfTypes() {
    types_[0] = create_type("MPIX_FLOAT16");
    types_[1] = create_type("MPIX_BFLOAT16");
    create_ops<Float16Format>(ops_[0]);
    create_ops<BFloat16Format>(ops_[1]);
    g_half_types.store(this, std::memory_order_release);
}

HalfTypes::~HalfTypes() {
    g_half_types.store(nullptr, std::memory_order_release);
    for (auto &per_type : ops_)
        for (MPI_Op &op : per_type)
            if (op != MPI_OP_NULL) MPI_Op_free(&op);
    for (MPI_Datatype &t : types_)
        if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t);
}

std::optional<ElementType> half_type_of(MPI_Datatype datatype) {
    const HalfTypes *h = g_half_types.load(std::memory_order_acquire);
    if (h == nullptr || datatype == MPI_DATATYPE_NULL) return std::nullopt;
    if (datatype == h->types_[0]) return ElementType::F16;
    if (datatype == h->types_[1]) return ElementType::BF16;
    return std::nullopt;
}

bool unsupported_half_op(MPI_Datatype datatype, MPI_Op op) {
    return half_type_of(datatype).has_value() && op_slot(op) < 0;
}

MPI_Op dense_op_for(MPI_Datatype datatype, MPI_Op op) {
    const std::optional<ElementType> type = half_type_of(datatype);
    const int slot = op_slot(op);
    if (!type || slot < 0) return op;
    const HalfTypes *h = g_half_types.load(std::memory_order_acquire);
    return h->ops_[*type == ElementType::F16 ? 0 : 1][slot];
}

}  // namespace mpix::sparse::detail

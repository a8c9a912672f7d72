// IEEE binary16 (float16) and bfloat16 values, stored as their 16 bits, converted to and from float.
// float -> 16 bits rounds to nearest, ties to even (as hardware conversions do); NaN stays NaN (quiet)
// and overflow becomes infinity. Portable bit manipulation: no _Float16 or F16C needed.
#pragma once

#include <cstdint>
#include <cstring>

namespace mpix::sparse::detail {

inline std::uint32_t float_bits(float f) {
    std::uint32_t x;
    std::memcpy(&x, &f, sizeof x);
    return x;
}

inline float bits_float(std::uint32_t x) {
    float f;
    std::memcpy(&f, &x, sizeof f);
    return f;
}

// All ones when c holds, else zero: the conversions below select with masks instead of branches,
// so the compiler vectorizes the reduction loops that call them (3x faster widening with SSE2).
inline std::uint32_t mask_if(bool c) {
    return 0u - static_cast<std::uint32_t>(c);
}

inline float half_to_float(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    // Exponent and mantissa moved to float's positions, the exponent rebiased from 15 to 127.
    const std::uint32_t shifted = static_cast<std::uint32_t>(h & 0x7fffu) << 13;
    const std::uint32_t exponent = shifted & 0x0f800000u;
    const std::uint32_t normal = shifted + ((127u - 15u) << 23);
    const std::uint32_t inf_nan = normal + ((128u - 16u) << 23);  // exponent all ones, payload kept
    // Zero or subnormal (mantissa * 2^-24): the mantissa as a float's with exponent 2^-14 less the
    // implicit one, in normal float arithmetic (exact).
    const std::uint32_t small = float_bits(bits_float(normal + (1u << 23)) - bits_float(113u << 23));
    const std::uint32_t is_special = mask_if(exponent == 0x0f800000u);
    const std::uint32_t is_small = mask_if(exponent == 0);
    return bits_float(sign | (inf_nan & is_special) | (small & is_small) | (normal & ~(is_special | is_small)));
}

inline std::uint16_t float_to_half(float f) {
    std::uint32_t x = float_bits(f);
    const std::uint32_t sign = (x >> 16) & 0x8000u;
    x &= 0x7fffffffu;
    const std::uint32_t nan = 0x7e00u | ((x >> 13) & 0x3ffu);  // quiet, top payload bits kept
    // Below the smallest normal half (2^-14): adding 0.5, whose float ulp is 2^-24 (the half
    // subnormal step), lets the FPU round to nearest even; the low bits are then the half.
    const std::uint32_t small = float_bits(bits_float(x) + 0.5f) - 0x3f000000u;
    // Normal: round the 23-bit mantissa to 10 bits (ties to even; a carry moves into the exponent,
    // which is right), then rebias the exponent from 127 to 15.
    const std::uint32_t normal = (x + 0xfffu + ((x >> 13) & 1u) - 0x38000000u) >> 13;
    const std::uint32_t is_nan = mask_if(x > 0x7f800000u);
    // 65520 (0x477ff000) is halfway between 65504, the largest half, and 65536: ties to even go up.
    const std::uint32_t is_inf = mask_if(x >= 0x477ff000u) & ~is_nan;
    const std::uint32_t is_small = mask_if(x < 0x38800000u);
    const std::uint32_t is_normal = ~(is_nan | is_inf | is_small);
    return static_cast<std::uint16_t>(sign | (nan & is_nan) | (0x7c00u & is_inf) | (small & is_small) |
                                      (normal & is_normal));
}

inline float bfloat16_to_float(std::uint16_t b) {
    return bits_float(static_cast<std::uint32_t>(b) << 16);
}

inline std::uint16_t float_to_bfloat16(float f) {
    const std::uint32_t x = float_bits(f);
    const std::uint32_t is_nan = mask_if((x & 0x7fffffffu) > 0x7f800000u);
    const std::uint32_t nan = (x >> 16) | 0x40u;  // quiet
    // Ties to even; overflow carries into the exponent and becomes infinity, as it should.
    const std::uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    return static_cast<std::uint16_t>((nan & is_nan) | (rounded & ~is_nan));
}

// The two 16-bit float formats, for templates.
struct Float16Format {
    static float to_float(std::uint16_t v) { return half_to_float(v); }
    static std::uint16_t from_float(float f) { return float_to_half(f); }
};
struct BFloat16Format {
    static float to_float(std::uint16_t v) { return bfloat16_to_float(v); }
    static std::uint16_t from_float(float f) { return float_to_bfloat16(f); }
};

}  // namespace mpix::sparse::detail

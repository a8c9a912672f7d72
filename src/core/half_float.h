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

inline float half_to_float(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exponent = (h >> 10) & 0x1fu;
    const std::uint32_t mantissa = h & 0x3ffu;
    if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float
        const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
        return bits_float(sign | float_bits(magnitude));
    }
    if (exponent == 31) return bits_float(sign | 0x7f800000u | (mantissa << 13));  // inf, NaN
    return bits_float(sign | ((exponent + 112) << 23) | (mantissa << 13));         // rebias 15 -> 127
}

inline std::uint16_t float_to_half(float f) {
    std::uint32_t x = float_bits(f);
    const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
    x &= 0x7fffffffu;
    if (x > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u | ((x >> 13) & 0x3ffu));  // NaN, quiet
    // 65520 (0x477ff000) is halfway between 65504, the largest half, and 65536: ties to even go up.
    if (x >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);
    if (x < 0x38800000u) {
        // Below the smallest normal half (2^-14): adding 0.5, whose float ulp is 2^-24 (the half
        // subnormal step), lets the FPU round to nearest even; the low bits are then the half.
        const float rounded = bits_float(x) + 0.5f;
        return static_cast<std::uint16_t>(sign | (float_bits(rounded) - 0x3f000000u));
    }
    // Normal: round the 23-bit mantissa to 10 bits (ties to even; a carry moves into the exponent,
    // which is right), then rebias the exponent from 127 to 15.
    x += 0xfffu + ((x >> 13) & 1u);
    return static_cast<std::uint16_t>(sign | ((x - 0x38000000u) >> 13));
}

inline float bfloat16_to_float(std::uint16_t b) {
    return bits_float(static_cast<std::uint32_t>(b) << 16);
}

inline std::uint16_t float_to_bfloat16(float f) {
    const std::uint32_t x = float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // NaN, quiet
    // Ties to even; overflow carries into the exponent and becomes infinity, as it should.
    return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
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

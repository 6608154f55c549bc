// Sample arithmetic for the DC-only JPEG reader, as libjpeg does it at 1/8: the range limit, the 1×1 IDCT of a
// DC coefficient and the 2×2 reduced IDCT of 4:2:0 chroma. Internal to CDarkroomJPEG.
#ifndef DARKROOM_DC_IDCT_H
#define DARKROOM_DC_IDCT_H

#include <stdint.h>

// Zigzag position → natural (row-major) index.
extern const uint8_t dr_dc_natural_order[64];

// Where each zigzag position's coefficient goes for the 2×2 IDCT: its slot among the 25 coefficients in rows and
// columns 0, 1, 3, 5, 7 (row-major, slot = 5·row index + column index), or 25 (a scratch slot) when the IDCT
// ignores it.
extern const uint8_t dr_dc_idct2_slot[64];

// libjpeg's IDCT output range limit: clamps to 0…255 within ±512 of the centre, wraps beyond (corrupt data only).
static inline uint8_t range_limit(int32_t v) {
    int idx = v & 1023;
    return (uint8_t)(idx < 128 ? 128 + idx : idx < 512 ? 255 : idx < 896 ? 0 : idx - 896);
}

// The reduced 2×2 inverse DCT of one block, with the arithmetic of libjpeg's jpeg_idct_2x2 (ISLOW constants at
// 13 bits; only rows and columns 0, 1, 3, 5, 7 contribute), so the samples are the ones libjpeg outputs.
// `coef` holds those 25 coefficients by slot (see dr_dc_idct2_slot); `quant` is the table in natural order.
// libjpeg-turbo runs this IDCT in SIMD with 16-bit lanes, which wrap or saturate where the C arithmetic does not;
// that happens only for dequantized coefficients or intermediate values outside ±32767, which valid 8-bit data
// does not produce. So this returns 0 for such a block, and the caller leaves the file to libjpeg.
#define CONST_BITS 13
#define PASS1_BITS 2
#define FIX13(x) ((int64_t)((x) * (1 << CONST_BITS) + 0.5))
#define DESCALE(x, n) (((x) + ((int64_t)1 << ((n) - 1))) >> (n))

static inline int dr_dc_idct_2x2(const int16_t *coef, uint32_t nonzero, const uint16_t *quant, uint8_t *out,
                                 int stride) {
    // Natural index of each slot, and the odd-row constants of the 1-D 2-point IDCT (rows 1, 3, 5, 7).
    static const uint8_t natural[25] = { 0,  1,  3,  5,  7,  8,  9,  11, 13, 15, 24, 25, 27,
                                         29, 31, 40, 41, 43, 45, 47, 56, 57, 59, 61, 63 };
    static const int64_t odd[5] = { 0, FIX13(3.624509785), -FIX13(1.272758580), FIX13(0.850430095),
                                    -FIX13(0.720959822) };
    int64_t dq[25];
    for (uint32_t m = nonzero; m != 0; m &= m - 1) {
        int slot = __builtin_ctz(m);
        dq[slot] = (int64_t)coef[slot] * quant[natural[slot]];
        if (dq[slot] < -32768 || dq[slot] > 32767) return 0;
    }
    int64_t ws[2][5];
    for (int i = 0; i < 5; i++) {
        int64_t tmp10 = (nonzero >> i & 1) ? dq[i] * ((int64_t)1 << (CONST_BITS + 2)) : 0, tmp0 = 0;
        for (int r = 1; r < 5; r++) {
            if (nonzero >> (5 * r + i) & 1) tmp0 += dq[5 * r + i] * odd[r];
        }
        ws[0][i] = DESCALE(tmp10 + tmp0, CONST_BITS - PASS1_BITS + 2);
        ws[1][i] = DESCALE(tmp10 - tmp0, CONST_BITS - PASS1_BITS + 2);
        if (ws[0][i] < -32768 || ws[0][i] > 32767 || ws[1][i] < -32768 || ws[1][i] > 32767) return 0;
    }
    for (int r = 0; r < 2; r++) {
        const int64_t *w = ws[r];
        int64_t tmp10 = w[0] * ((int64_t)1 << (CONST_BITS + 2));
        int64_t tmp0 = w[1] * odd[1] + w[2] * odd[2] + w[3] * odd[3] + w[4] * odd[4];
        out[r * stride] = range_limit((int32_t)DESCALE(tmp10 + tmp0, CONST_BITS + PASS1_BITS + 3 + 2));
        out[r * stride + 1] = range_limit((int32_t)DESCALE(tmp10 - tmp0, CONST_BITS + PASS1_BITS + 3 + 2));
    }
    return 1;
}

// The output sample of a block at 1/8, exactly as libjpeg computes it: the DC coefficient stored as a JCOEF
// (16 bits), dequantized, descaled by 8 (jpeg_idct_1x1), then through libjpeg's IDCT range-limit table, which
// clamps to 0…255 within ±512 of the centre and wraps beyond (only corrupt data gets there).
static inline uint8_t dc_sample(int32_t pred, uint16_t quant) {
    int32_t dcval = (int32_t)(int16_t)pred * (int32_t)quant;
    return range_limit((dcval + 4) >> 3);
}

#endif

// Sample arithmetic for the DC-only JPEG reader; see dc_idct.h.
#include "dc_idct.h"

// Zigzag position → natural (row-major) index.
const uint8_t dr_dc_natural_order[64] = {
    0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,  12, 19, 26, 33, 40, 48,
    41, 34, 27, 20, 13, 6,  7,  14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23,
    30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
};

// Where each zigzag position's coefficient goes for the 2×2 IDCT: its slot among the 25 coefficients in rows and
// columns 0, 1, 3, 5, 7 (row-major, slot = 5·row index + column index), or 25 (a scratch slot) when the IDCT
// ignores it.
const uint8_t dr_dc_idct2_slot[64] = {
    0,  1,  5,  25, 6,  25, 2,  25, 25, 10, 25, 11, 25, 7,  25, 3,  25, 25, 25, 25, 15, 25,
    16, 25, 12, 25, 8,  25, 4,  25, 25, 25, 25, 25, 25, 20, 21, 25, 17, 25, 13, 25, 9,  25,
    25, 25, 25, 25, 25, 22, 25, 18, 25, 14, 25, 25, 25, 25, 23, 25, 19, 25, 25, 24,
};

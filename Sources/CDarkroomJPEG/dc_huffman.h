// Huffman decoding for the DC-only JPEG reader (dc_scan.c): the lookup tables and an inline bit reader.
// Internal to CDarkroomJPEG.
#ifndef DARKROOM_DC_HUFFMAN_H
#define DARKROOM_DC_HUFFMAN_H

#include <stdint.h>

#define LOOKUP_BITS 12
#define LOOKUP_SIZE (1 << LOOKUP_BITS)

// MARK: - Huffman tables

typedef struct {
    // Canonical decoding for codes longer than LOOKUP_BITS (as libjpeg's jpeg_huff_decode).
    int32_t maxcode[18];   // largest code of each length, -1 if none; maxcode[17] sentinel
    int32_t valoffset[17]; // symbol index of a code of each length = code + valoffset[len]
    uint8_t symbols[256];
    // One symbol: entry = length << 8 | symbol for codes of at most LOOKUP_BITS, 0 otherwise.
    uint16_t single[LOOKUP_SIZE];
    // AC only: as many whole symbols (code and extra bits) as fit in LOOKUP_BITS, in one entry:
    // bits (0–12) | advance in coefficients (0–127) << 4 | ends with EOB << 11. 0: nothing fits.
    uint16_t multi[LOOKUP_SIZE];
} huff_table;

#define MULTI_BITS(e) ((e) & 15)
#define MULTI_ADVANCE(e) (((e) >> 4) & 127)
#define MULTI_EOB(e) ((e) >> 11)

// Builds the tables from a DHT's counts and symbols; returns 0 if the code is impossible (over-subscribed).
int dr_dc_build_table(huff_table *t, const uint8_t counts[16], const uint8_t *symbols, int nsymbols, int ac);

// MARK: - Bit reader

// Bits are kept MSB-first in `acc`; `bits` of them are valid. At a marker or the end of the data the reader
// feeds zero bytes (as libjpeg does) and counts them in `zeros`, so that consuming any of them — the data ran
// short — can be detected at the end of the segment.
typedef struct {
    const uint8_t *p, *end;
    uint64_t acc;
    int bits;
    int zeros;
    int at_marker;
} bit_reader;

static inline __attribute__((always_inline)) void refill(bit_reader *br) {
    // Fast path: eight bytes with no 0xFF among them go in at once. The bytes beyond the whole ones counted end
    // up below the valid bits; later refills OR the same bytes into the same places, so they do no harm.
    if (!br->at_marker && br->end - br->p >= 8) {
        uint64_t w = (uint64_t)br->p[0] << 56 | (uint64_t)br->p[1] << 48 | (uint64_t)br->p[2] << 40 |
                     (uint64_t)br->p[3] << 32 | (uint64_t)br->p[4] << 24 | (uint64_t)br->p[5] << 16 |
                     (uint64_t)br->p[6] << 8 | (uint64_t)br->p[7];
        uint64_t inv = ~w;
        if (((inv - 0x0101010101010101ULL) & ~inv & 0x8080808080808080ULL) == 0) {
            int n = (64 - br->bits) >> 3;
            br->acc |= w >> br->bits;
            br->bits += n * 8;
            br->p += n;
            return;
        }
    }
    while (br->bits <= 56) {
        uint32_t byte = 0;
        if (!br->at_marker && br->p < br->end) {
            byte = *br->p;
            if (byte == 0xFF) {
                if (br->end - br->p >= 2 && br->p[1] == 0x00) {
                    br->p += 2; // stuffed 0xFF
                } else {
                    br->at_marker = 1; // a marker, fill bytes or the end: stay on it
                    byte = 0;
                }
            } else {
                br->p++;
            }
        } else {
            br->at_marker = 1;
        }
        if (br->at_marker) br->zeros += 8;
        br->acc |= (uint64_t)byte << (56 - br->bits);
        br->bits += 8;
    }
}

static inline __attribute__((always_inline)) void consume(bit_reader *br, int n) {
    br->acc <<= n;
    br->bits -= n;
}

// Decodes one Huffman symbol; -1 for a code that is in no table.
static inline __attribute__((always_inline)) int decode_symbol(bit_reader *br, const huff_table *t) {
    if (br->bits < 16) refill(br);
    uint16_t e = t->single[br->acc >> (64 - LOOKUP_BITS)];
    if (e != 0) {
        consume(br, e >> 8);
        return e & 0xFF;
    }
    int len = LOOKUP_BITS + 1;
    int32_t code = (int32_t)(br->acc >> (64 - len));
    while (len <= 16 && code > t->maxcode[len]) {
        len++;
        code = (int32_t)(br->acc >> (64 - len));
    }
    if (len > 16) return -1;
    consume(br, len);
    return t->symbols[(code + t->valoffset[len]) & 0xFF];
}

static inline __attribute__((always_inline)) int32_t receive_extend(bit_reader *br, int s) {
    if (s == 0) return 0;
    if (br->bits < s) refill(br);
    int32_t v = (int32_t)(br->acc >> (64 - s));
    consume(br, s);
    return v < (1 << (s - 1)) ? v - (1 << s) + 1 : v;
}

// Skips a block's AC coefficients from zigzag position k on, several symbols per table lookup where they fit.
// Returns 0 for a code in no table or a block that overruns 64 coefficients.
static inline __attribute__((always_inline)) int skip_ac(bit_reader *br, const huff_table *act, int k) {
    while (k < 64) {
        if (br->bits < LOOKUP_BITS) refill(br);
        uint16_t e = act->multi[br->acc >> (64 - LOOKUP_BITS)];
        int adv = MULTI_ADVANCE(e);
        if (e != 0 && (MULTI_EOB(e) ? k + adv < 64 : k + adv <= 64)) {
            consume(br, MULTI_BITS(e));
            k += adv;
            if (MULTI_EOB(e)) break;
            continue;
        }
        int sym = decode_symbol(br, act);
        if (sym < 0) return 0;
        int r = sym >> 4, sz = sym & 15;
        if (sz == 0) {
            if (r != 15) break; // EOB
            k += 16;
            if (k > 64) return 0;
            continue;
        }
        k += r;
        if (k > 63) return 0;
        if (br->bits < sz) refill(br);
        consume(br, sz);
        k++;
    }
    return 1;
}

#endif

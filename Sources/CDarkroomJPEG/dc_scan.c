// DC-only reader for baseline JPEGs at 1/8 scale; see dc_scan.h for what it accepts and why.
#include "dc_scan.h"

#include <stdlib.h>
#include <string.h>

#define LOOKUP_BITS 12
#define LOOKUP_SIZE (1 << LOOKUP_BITS)
#define MAX_COMPONENTS 3

// MARK: - Huffman tables

typedef struct {
    int defined;
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
static int build_table(huff_table *t, const uint8_t counts[16], const uint8_t *symbols, int nsymbols, int ac) {
    memset(t, 0, sizeof *t);
    memcpy(t->symbols, symbols, (size_t)nsymbols);
    if (!ac) {
        for (int i = 0; i < nsymbols; i++) if (symbols[i] > 15) return 0; // as libjpeg: a DC size is at most 15
    }
    int32_t code = 0;
    int k = 0;
    for (int len = 1; len <= 16; len++) {
        int n = counts[len - 1];
        if (n > 0) {
            t->valoffset[len] = k - code;
            for (int i = 0; i < n; i++, k++, code++) {
                if (code >= (1 << len)) return 0; // more codes of this length than the length allows
                if (len <= LOOKUP_BITS) {
                    int shift = LOOKUP_BITS - len;
                    for (int j = 0; j < (1 << shift); j++)
                        t->single[(code << shift) | j] = (uint16_t)(len << 8 | t->symbols[k]);
                }
            }
            t->maxcode[len] = code - 1;
        } else {
            t->maxcode[len] = -1;
        }
        code <<= 1;
    }
    t->maxcode[17] = 0x7FFFFFFF;
    if (ac) {
        for (int i = 0; i < LOOKUP_SIZE; i++) {
            int used = 0, advance = 0, eob = 0;
            for (;;) {
                uint16_t e = t->single[(i << used) & (LOOKUP_SIZE - 1)];
                int len = e >> 8;
                if (len == 0 || used + len > LOOKUP_BITS) break; // the code does not fit in what is left
                int sym = e & 0xFF, r = sym >> 4, s = sym & 15;
                if (s == 0 && r != 15) { used += len; eob = 1; break; }
                if (used + len + s > LOOKUP_BITS) break;
                used += len + s;
                advance += s == 0 ? 16 : r + 1;
                if (advance > 64) break; // impossible in a valid block; the slow path will say so
            }
            if (advance > 64) { t->multi[i] = 0; continue; }
            t->multi[i] = (uint16_t)(used | advance << 4 | eob << 11);
        }
    }
    t->defined = 1;
    return 1;
}

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

// MARK: - Image

typedef struct {
    int id, h, v, tq;
    int dc_table, ac_table;   // from SOS
    int bw, bh;               // blocks across and down in the scan (whole MCUs)
    int idct2;                // 4:2:0 chroma: 2×2 samples per block from a 2×2 IDCT (as libjpeg at 1/8)
    int stride;               // plane width: bw, or 2·bw with idct2
    uint8_t *plane;           // the component at output scale: one sample per block (2×2 with idct2)
} component;

struct dr_dc_image {
    int width, height;        // of the output (1/8)
    int ncomp;
    component comp[MAX_COMPONENTS];
    int hmax, vmax;
};

int dr_dc_width(const dr_dc_image *img) { return img->width; }
int dr_dc_height(const dr_dc_image *img) { return img->height; }
int dr_dc_components(const dr_dc_image *img) { return img->ncomp; }

void dr_dc_free(dr_dc_image *img) {
    if (img == NULL) return;
    for (int c = 0; c < MAX_COMPONENTS; c++) free(img->comp[c].plane);
    free(img);
}

typedef struct {
    uint16_t quant[4][64];    // natural order
    int quant_defined[4];
    huff_table *dc[4], *ac[4];
    int restart_interval;
    int sof_seen;
    int image_width, image_height;
} parse_state;

static void free_tables(parse_state *ps) {
    for (int i = 0; i < 4; i++) { free(ps->dc[i]); free(ps->ac[i]); }
}

static inline int read16(const uint8_t *p) { return p[0] << 8 | p[1]; }

// Zigzag position → natural (row-major) index.
static const uint8_t natural_order[64] = {
    0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,  12, 19, 26, 33, 40, 48,
    41, 34, 27, 20, 13, 6,  7,  14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23,
    30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
};

// Reads one marker segment's payload into the state. Returns 0 to give up on the file.
static int parse_segment(parse_state *ps, dr_dc_image *img, int marker, const uint8_t *p, int len) {
    switch (marker) {
    case 0xDB: // DQT
        while (len > 0) {
            int pq = p[0] >> 4, tq = p[0] & 15;
            int n = pq ? 129 : 65;
            if (tq > 3 || pq > 1 || len < n) return 0;
            for (int k = 0; k < 64; k++)
                ps->quant[tq][natural_order[k]] = (uint16_t)(pq ? read16(p + 1 + 2 * k) : p[1 + k]);
            ps->quant_defined[tq] = 1;
            p += n; len -= n;
        }
        return 1;
    case 0xC4: // DHT
        while (len > 0) {
            if (len < 17) return 0;
            int tc = p[0] >> 4, th = p[0] & 15;
            if (tc > 1 || th > 3) return 0;
            int total = 0;
            for (int i = 0; i < 16; i++) total += p[1 + i];
            if (total > 256 || len < 17 + total) return 0;
            huff_table **slot = tc ? &ps->ac[th] : &ps->dc[th];
            if (*slot == NULL && (*slot = (huff_table *)malloc(sizeof(huff_table))) == NULL) return 0;
            if (!build_table(*slot, p + 1, p + 17, total, tc)) return 0;
            p += 17 + total; len -= 17 + total;
        }
        return 1;
    case 0xDD: // DRI
        if (len != 2) return 0;
        ps->restart_interval = read16(p);
        return 1;
    case 0xC0: case 0xC1: { // SOF0 baseline, SOF1 extended sequential Huffman
        if (ps->sof_seen || len < 6) return 0;
        ps->sof_seen = 1;
        if (p[0] != 8) return 0;
        ps->image_height = read16(p + 1);
        ps->image_width = read16(p + 3);
        int n = p[5];
        if (ps->image_height == 0 || ps->image_width == 0) return 0; // DNL: not here
        if ((n != 1 && n != 3) || len != 6 + 3 * n) return 0;
        img->ncomp = n;
        for (int c = 0; c < n; c++) {
            const uint8_t *q = p + 6 + 3 * c;
            img->comp[c].id = q[0];
            img->comp[c].h = q[1] >> 4;
            img->comp[c].v = q[1] & 15;
            img->comp[c].tq = q[2];
            if (img->comp[c].tq > 3) return 0;
            if (img->comp[c].h < 1 || img->comp[c].h > 4 || img->comp[c].v < 1 || img->comp[c].v > 4) return 0; // as libjpeg
            for (int o = 0; o < c; o++) if (img->comp[o].id == img->comp[c].id) return 0;
        }
        if (n == 1) {
            img->comp[0].h = img->comp[0].v = 1; // a single-component scan is not interleaved: one block per MCU
        } else {
            int yh = img->comp[0].h, yv = img->comp[0].v;
            if (yh < 1 || yh > 2 || yv < 1 || yv > 2) return 0;
            for (int c = 1; c < 3; c++) if (img->comp[c].h != 1 || img->comp[c].v != 1) return 0;
        }
        return 1;
    }
    default:
        // Besides the segments above, only APPn and COM (libjpeg fails on other markers; this reader gives up).
        if (!((marker >= 0xE0 && marker <= 0xEF) || marker == 0xFE)) return 0;
        if (marker == 0xEE && len >= 12 && memcmp(p, "Adobe", 5) == 0 && p[11] != 1 && img->ncomp != 1) {
            // Adobe transform 0 on 3 components: RGB, not YCbCr (the caller also checks libjpeg's verdict)
            return 0;
        }
        return 1; // APPn, COM and the like
    }
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

// libjpeg's IDCT output range limit: clamps to 0…255 within ±512 of the centre, wraps beyond (corrupt data only).
static inline uint8_t range_limit(int32_t v) {
    int idx = v & 1023;
    return (uint8_t)(idx < 128 ? 128 + idx : idx < 512 ? 255 : idx < 896 ? 0 : idx - 896);
}

#define CONST_BITS 13
#define PASS1_BITS 2
#define FIX13(x) ((int64_t)((x) * (1 << CONST_BITS) + 0.5))
#define DESCALE(x, n) (((x) + ((int64_t)1 << ((n) - 1))) >> (n))

// Where each zigzag position's coefficient goes for the 2×2 IDCT: its slot among the 25 coefficients in rows and
// columns 0, 1, 3, 5, 7 (row-major, slot = 5·row index + column index), or 25 (a scratch slot) when the IDCT
// ignores it.
static const uint8_t idct2_slot[64] = {
    0,  1,  5,  25, 6,  25, 2,  25, 25, 10, 25, 11, 25, 7,  25, 3,  25, 25, 25, 25, 15, 25,
    16, 25, 12, 25, 8,  25, 4,  25, 25, 25, 25, 25, 25, 20, 21, 25, 17, 25, 13, 25, 9,  25,
    25, 25, 25, 25, 25, 22, 25, 18, 25, 14, 25, 25, 25, 25, 23, 25, 19, 25, 25, 24,
};

// The reduced 2×2 inverse DCT of one block, with the arithmetic of libjpeg's jpeg_idct_2x2 (ISLOW constants at
// 13 bits; only rows and columns 0, 1, 3, 5, 7 contribute), so the samples are the ones libjpeg outputs.
// `coef` holds those 25 coefficients by slot (see idct2_slot); `quant` is the table in natural order.
// libjpeg-turbo runs this IDCT in SIMD with 16-bit lanes, which wrap or saturate where the C arithmetic does not;
// that happens only for dequantized coefficients or intermediate values outside ±32767, which valid 8-bit data
// does not produce. So this returns 0 for such a block, and the caller leaves the file to libjpeg.
static int idct_2x2(const int16_t *coef, const uint16_t *quant, uint8_t *out, int stride) {
    static const int index[5] = { 0, 1, 3, 5, 7 };
    int64_t ws[2][5];
    int64_t dq[25];
    for (int i = 0; i < 25; i++) {
        dq[i] = (int64_t)coef[i] * quant[8 * index[i / 5] + index[i % 5]];
        if (dq[i] < -32768 || dq[i] > 32767) return 0;
    }
    for (int i = 0; i < 5; i++) {
        int64_t tmp10 = dq[i] * ((int64_t)1 << (CONST_BITS + 2));
        int64_t tmp0 = dq[20 + i] * -FIX13(0.720959822) + dq[15 + i] * FIX13(0.850430095) +
                       dq[10 + i] * -FIX13(1.272758580) + dq[5 + i] * FIX13(3.624509785);
        ws[0][i] = DESCALE(tmp10 + tmp0, CONST_BITS - PASS1_BITS + 2);
        ws[1][i] = DESCALE(tmp10 - tmp0, CONST_BITS - PASS1_BITS + 2);
        if (ws[0][i] < -32768 || ws[0][i] > 32767 || ws[1][i] < -32768 || ws[1][i] > 32767) return 0;
    }
    for (int r = 0; r < 2; r++) {
        const int64_t *w = ws[r];
        int64_t tmp10 = w[0] * ((int64_t)1 << (CONST_BITS + 2));
        int64_t tmp0 = w[4] * -FIX13(0.720959822) + w[3] * FIX13(0.850430095) + w[2] * -FIX13(1.272758580) +
                       w[1] * FIX13(3.624509785);
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

// Decodes the scan that starts at `p`. Returns 1 when every MCU was read cleanly and EOI follows.
static int decode_scan(dr_dc_image *img, const parse_state *ps, const int *order, int ns, const uint8_t *p,
                       const uint8_t *end) {
    int mcux, mcuy;
    if (ns == 1) {
        mcux = img->comp[order[0]].bw;
        mcuy = img->comp[order[0]].bh;
    } else {
        mcux = (ps->image_width + 8 * img->hmax - 1) / (8 * img->hmax);
        mcuy = (ps->image_height + 8 * img->vmax - 1) / (8 * img->vmax);
    }
    bit_reader br = { p, end, 0, 0, 0, 0 };
    int32_t pred[MAX_COMPONENTS] = { 0 };
    long mcus = (long)mcux * mcuy;
    int interval = ps->restart_interval;
    int left = interval, rst = 0;
    const component *comps[MAX_COMPONENTS];
    for (int i = 0; i < ns; i++) comps[i] = &img->comp[order[i]];
    for (long m = 0; m < mcus; m++) {
        if (interval > 0 && left == 0) {
            // A restart: the segment must have ended inside its last byte, then RSTn, in sequence.
            if (br.bits - br.zeros >= 8 || br.bits < br.zeros) return 0;
            const uint8_t *q = br.p;
            while (q < end && *q == 0xFF && q + 1 < end && q[1] == 0xFF) q++;
            if (end - q < 2 || q[0] != 0xFF || q[1] != (0xD0 | rst)) return 0;
            br.p = q + 2;
            br.acc = 0; br.bits = 0; br.zeros = 0; br.at_marker = 0;
            for (int i = 0; i < ns; i++) pred[i] = 0;
            rst = (rst + 1) & 7;
            left = interval;
        }
        left--;
        long mx = m % mcux, my = m / mcux;
        for (int i = 0; i < ns; i++) {
            const component *c = comps[i];
            const huff_table *dct = ps->dc[c->dc_table], *act = ps->ac[c->ac_table];
            int bh = ns == 1 ? 1 : c->h, bv = ns == 1 ? 1 : c->v;
            for (int by = 0; by < bv; by++) {
                for (int bx = 0; bx < bh; bx++) {
                    int s = decode_symbol(&br, dct);
                    if (s < 0 || s > 11) return 0;
                    pred[i] += receive_extend(&br, s);
                    long row = my * bv + by, col = mx * bh + bx;
                    if (c->idct2) {
                        // Chroma of a 4:2:0 file: the 2×2 IDCT needs the 25 coefficients in rows and columns
                        // 0, 1, 3, 5, 7, so their values are decoded; the rest are skipped.
                        int16_t needed[26];
                        memset(needed, 0, sizeof needed);
                        int any = 0;
                        for (int k = 1; k < 64;) {
                            if (br.bits < 32) refill(&br);
                            uint16_t e = act->single[br.acc >> (64 - LOOKUP_BITS)];
                            int sym;
                            if (e != 0) {
                                consume(&br, e >> 8);
                                sym = e & 0xFF;
                            } else if ((sym = decode_symbol(&br, act)) < 0) {
                                return 0;
                            }
                            int r = sym >> 4, sz = sym & 15;
                            if (sz == 0) {
                                if (r != 15) break; // EOB
                                k += 16;
                                continue;
                            }
                            k += r;
                            if (k > 63) return 0;
                            // Branch-free: an ignored coefficient lands in the scratch slot.
                            int slot = idct2_slot[k];
                            int32_t v = (int32_t)(br.acc >> (64 - sz));
                            v = v < (1 << (sz - 1)) ? v - (1 << sz) + 1 : v;
                            needed[slot] = (int16_t)v;
                            any |= slot < 25 ? v : 0;
                            consume(&br, sz);
                            k++;
                        }
                        if (br.bits < br.zeros) return 0;
                        uint8_t *out = c->plane + 2 * row * (long)c->stride + 2 * col;
                        if (any == 0) {
                            out[0] = out[1] = out[c->stride] = out[c->stride + 1] =
                                dc_sample(pred[i], ps->quant[c->tq][0]);
                        } else {
                            needed[0] = (int16_t)pred[i];
                            if (!idct_2x2(needed, ps->quant[c->tq], out, c->stride)) return 0;
                        }
                        continue;
                    }
                    c->plane[row * (long)c->stride + col] = dc_sample(pred[i], ps->quant[c->tq][0]);
                    // The AC coefficients: skipped, several symbols per lookup where they fit.
                    if (!skip_ac(&br, act, 1)) return 0;
                    if (br.bits < br.zeros) return 0; // read past the data
                }
            }
        }
    }
    // The end: padding inside the last byte, then (after any fill bytes) EOI.
    if (br.bits < br.zeros || br.bits - br.zeros >= 8) return 0;
    const uint8_t *q = br.p;
    while (q + 1 < end && q[0] == 0xFF && q[1] == 0xFF) q++;
    return end - q >= 2 && q[0] == 0xFF && q[1] == 0xD9;
}

dr_dc_image *dr_dc_decode(const uint8_t *data, size_t size, int half_chroma) {
    if (data == NULL || size < 4 || data[0] != 0xFF || data[1] != 0xD8) return NULL;
    dr_dc_image *img = (dr_dc_image *)calloc(1, sizeof *img);
    parse_state ps;
    memset(&ps, 0, sizeof ps);
    if (img == NULL) return NULL;
    const uint8_t *p = data + 2, *end = data + size;
    int ok = 0;
    for (;;) {
        // Next marker (fill bytes allowed; anything else between segments is extraneous data: give up).
        if (end - p < 2 || p[0] != 0xFF) break;
        while (end - p >= 2 && p[1] == 0xFF) p++;
        if (end - p < 2) break;
        int marker = p[1];
        p += 2;
        if (marker == 0xD8 || marker == 0xD9 || (marker >= 0xD0 && marker <= 0xD7) || marker == 0x00 || marker == 0x01)
            break; // no SOS before these: not an image this reader takes
        if (end - p < 2) break;
        int len = read16(p);
        if (len < 2 || end - p < len) break;
        if (marker != 0xDA) {
            if (!parse_segment(&ps, img, marker, p + 2, len - 2)) break;
            p += len;
            continue;
        }
        // SOS: the one scan must hold every component, full spectrum, no successive approximation.
        if (!ps.sof_seen || len < 6) break;
        int ns = p[2];
        if (ns != img->ncomp || len != 6 + 2 * ns) break;
        const uint8_t *s = p + 3;
        if (s[2 * ns] != 0 || s[2 * ns + 1] != 63 || s[2 * ns + 2] != 0) break;
        int order[MAX_COMPONENTS];
        int bad = 0;
        for (int i = 0; i < ns && !bad; i++) {
            int id = s[2 * i], td = s[2 * i + 1] >> 4, ta = s[2 * i + 1] & 15;
            order[i] = -1;
            for (int c = 0; c < img->ncomp; c++) if (img->comp[c].id == id) order[i] = c;
            if (order[i] < 0 || td > 3 || ta > 3 || ps.dc[td] == NULL || ps.ac[ta] == NULL) { bad = 1; break; }
            for (int o = 0; o < i; o++) if (order[o] == order[i]) bad = 1;
            img->comp[order[i]].dc_table = td;
            img->comp[order[i]].ac_table = ta;
        }
        if (bad) break;
        for (int c = 0; c < img->ncomp; c++) if (!ps.quant_defined[img->comp[c].tq]) bad = 1;
        if (bad) break;
        img->hmax = img->vmax = 1;
        for (int c = 0; c < img->ncomp; c++) {
            if (img->comp[c].h > img->hmax) img->hmax = img->comp[c].h;
            if (img->comp[c].v > img->vmax) img->vmax = img->comp[c].v;
        }
        long mcux = (ps.image_width + 8 * img->hmax - 1) / (8 * img->hmax);
        long mcuy = (ps.image_height + 8 * img->vmax - 1) / (8 * img->vmax);
        for (int c = 0; c < img->ncomp && !bad; c++) {
            component *cp = &img->comp[c];
            if (img->ncomp == 1) {
                cp->bw = (ps.image_width + 7) / 8;
                cp->bh = (ps.image_height + 7) / 8;
            } else {
                cp->bw = (int)(mcux * cp->h);
                cp->bh = (int)(mcuy * cp->v);
            }
            // libjpeg at 1/8 scales 4:2:0 chroma up by IDCT (2×2 samples a block) rather than by upsampling.
            cp->idct2 = !half_chroma && c > 0 && img->hmax == 2 && img->vmax == 2;
            cp->stride = cp->idct2 ? 2 * cp->bw : cp->bw;
            cp->plane = (uint8_t *)malloc((size_t)cp->stride * (size_t)cp->bh * (cp->idct2 ? 2 : 1));
            if (cp->plane == NULL) bad = 1;
        }
        if (bad) break;
        img->width = (ps.image_width + 7) / 8;
        img->height = (ps.image_height + 7) / 8;
        ok = decode_scan(img, &ps, order, ns, p + len, end);
        break;
    }
    free_tables(&ps);
    if (!ok) {
        dr_dc_free(img);
        return NULL;
    }
    return img;
}

// MARK: - Output rows

#define SCALEBITS 16
#define ONE_HALF ((int32_t)1 << (SCALEBITS - 1))
#define FIX16(x) ((int32_t)((x) * (1L << SCALEBITS) + 0.5))

static inline uint8_t clamp255(int v) { return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v); }

void dr_dc_row(dr_dc_image *img, int y, int gray, uint8_t *dst) {
    if (y < 0 || y >= img->height) return;
    const uint8_t *luma = img->comp[0].plane + (long)y * img->comp[0].stride;
    if (gray) {
        memcpy(dst, luma, (size_t)img->width);
        return;
    }
    if (img->ncomp == 1) {
        for (int x = 0; x < img->width; x++) {
            dst[4 * x] = dst[4 * x + 1] = dst[4 * x + 2] = luma[x];
            dst[4 * x + 3] = 0xFF;
        }
        return;
    }
    // Chroma at output scale: 4:4:4 and 4:2:0 (2×2 IDCT) are already there; 4:2:2 and 4:4:0 are replicated,
    // as libjpeg does at 1/8 (its fancy upsampling needs a DCT scale above 1).
    const component *cb = &img->comp[1], *cr = &img->comp[2];
    int sh = cb->idct2 ? 0 : img->hmax - 1, sv = cb->idct2 ? 0 : img->vmax - 1;
    const uint8_t *cbr = cb->plane + (long)(y >> sv) * cb->stride, *crr = cr->plane + (long)(y >> sv) * cr->stride;
    for (int x = 0; x < img->width; x++) {
        // libjpeg's YCbCr → RGB in 16-bit fixed point (jdcolor.c's tables, computed inline)
        int Y = luma[x], Cb = cbr[x >> sh] - 128, Cr = crr[x >> sh] - 128;
        int r = Y + (int)((FIX16(1.40200) * Cr + ONE_HALF) >> SCALEBITS);
        int g = Y + (int)((-FIX16(0.34414) * Cb - FIX16(0.71414) * Cr + ONE_HALF) >> SCALEBITS);
        int b = Y + (int)((FIX16(1.77200) * Cb + ONE_HALF) >> SCALEBITS);
        dst[4 * x] = clamp255(b);
        dst[4 * x + 1] = clamp255(g);
        dst[4 * x + 2] = clamp255(r);
        dst[4 * x + 3] = 0xFF;
    }
}

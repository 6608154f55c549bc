// DC-only reader for baseline JPEGs at 1/8 scale; see darkroom_jpeg_dc.h for what it accepts and why.
#include "darkroom_jpeg_dc.h"
#include "dc_huffman.h"
#include "dc_idct.h"

#include <stdlib.h>
#include <string.h>

#define MAX_COMPONENTS 3

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

// Reads one marker segment's payload into the state. Returns 0 to give up on the file.
static int parse_segment(parse_state *ps, dr_dc_image *img, int marker, const uint8_t *p, int len) {
    switch (marker) {
    case 0xDB: // DQT
        while (len > 0) {
            int pq = p[0] >> 4, tq = p[0] & 15;
            int n = pq ? 129 : 65;
            if (tq > 3 || pq > 1 || len < n) return 0;
            for (int k = 0; k < 64; k++)
                ps->quant[tq][dr_dc_natural_order[k]] = (uint16_t)(pq ? read16(p + 1 + 2 * k) : p[1 + k]);
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
            if (!dr_dc_build_table(*slot, p + 1, p + 17, total, tc)) return 0;
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
                        int16_t needed[26]; // slot 25: scratch for ignored coefficients
                        uint32_t nonzero = 1;
                        for (int k = 1; k < 64;) {
                            if (br.bits < 32) refill(&br); // the code and its extra bits without another refill
                            int sym = decode_symbol(&br, act);
                            if (sym < 0) return 0;
                            int r = sym >> 4, sz = sym & 15;
                            if (sz == 0) {
                                if (r != 15) break; // EOB
                                k += 16;
                                continue;
                            }
                            k += r;
                            if (k > 63) return 0;
                            // Branch-free: an ignored coefficient lands in the scratch slot.
                            int slot = dr_dc_idct2_slot[k];
                            int32_t v = (int32_t)(br.acc >> (64 - sz));
                            v = v < (1 << (sz - 1)) ? v - (1 << sz) + 1 : v;
                            needed[slot] = (int16_t)v;
                            nonzero |= (uint32_t)1 << slot;
                            consume(&br, sz);
                            k++;
                        }
                        if (br.bits < br.zeros) return 0;
                        needed[0] = (int16_t)pred[i];
                        uint8_t *out = c->plane + 2 * row * (long)c->stride + 2 * col;
                        if (!dr_dc_idct_2x2(needed, nonzero & 0x1FFFFFF, ps->quant[c->tq], out, c->stride)) return 0;
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

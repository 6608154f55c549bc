// Huffman table construction for the DC-only JPEG reader; see dc_huffman.h.
#include "dc_huffman.h"

#include <string.h>

int dr_dc_build_table(huff_table *t, const uint8_t counts[16], const uint8_t *symbols, int nsymbols, int ac) {
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
    return 1;
}

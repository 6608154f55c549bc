// GIF LZW decoding a string at a time (see dr_gif_rows.h), reading the frame's sub-blocks where they lie in the
// file. A code's string is written straight into the row, its last block first and then each full block before
// it, as whole 8-byte copies (no loop over bytes, whose varying trip count the branch predictor misses); a string
// that runs past the row's end stays in the buffer and starts the next row. The table is GIF's: codes grow from
// min_code_size + 1 to 12 bits with no early change, and a full table keeps its codes until the next clear code
// (the "deferred clear" some encoders use).
#include "dr_gif_rows.h"

#include <stdlib.h>
#include <string.h>

#include "darkroom_gif.h"

int dr_gif_rows_begin(dr_gif_rows *r, const dr_gif_cursor *cursor, int width, char *msg, size_t msg_len) {
    r->pos = cursor->pos;
    r->block_left = 0;
    r->bits = 0;
    r->nbits = 0;
    r->carry = 0;
    r->width = width > 0 ? width : 0;
    const size_t row_needed = (size_t)r->width + DR_GIF_LZW_CODES + 8;
    if (row_needed > r->row_capacity) {
        uint8_t *bigger = realloc(r->row, row_needed);
        if (bigger == NULL) {
            dr_gif__set_msg(msg, msg_len, "out of memory");
            return DR_GIF_ERR_NO_MEMORY;
        }
        r->row = bigger;
        r->row_capacity = row_needed;
    }
    // giflib read the code size byte last (and refuses sizes above 8); 0 would make the clear code 1.
    const int code_size = cursor->pos > 0 && cursor->pos <= cursor->size ? cursor->data[cursor->pos - 1] : 0;
    if (code_size < 1 || code_size > 8) {
        dr_gif__set_msg(msg, msg_len, "GIF frame's LZW code size is not 1...8");
        return DR_GIF_ERR_CORRUPT;
    }
    r->min_code_size = code_size;
    r->clear = 1 << code_size;
    r->end = r->clear + 1;
    for (int i = 0; i < r->clear; i++) {
        memset(r->block[i], 0, 8);
        r->block[i][0] = (uint8_t)i;
        r->prefix[i] = DR_GIF_LZW_NONE;
        r->lm1[i] = 0;
        r->first[i] = (uint8_t)i;
    }
    r->code_size = code_size + 1;
    r->next = r->clear + 2;
    r->prev = -1;
    return DR_GIF_OK;
}

// The data ran out before the row was complete: the file ended (truncated, as giflib's reads report it), or the
// frame's sub-blocks did with too few codes in them.
static const uint8_t *data_ended(int block_left, dr_gif_cursor *cursor, int *status, char *msg, size_t msg_len) {
    if (block_left >= 0) {
        cursor->short_read = 1;
        *status = dr_gif__map_error(D_GIF_ERR_READ_FAILED, cursor, msg, msg_len);
    } else {
        dr_gif__set_msg(msg, msg_len, "GIF frame's LZW data ends before its last pixel");
        *status = DR_GIF_ERR_TRUNCATED;
    }
    return NULL;
}

const uint8_t *dr_gif_rows_next(dr_gif_rows *r, dr_gif_cursor *cursor, int *status, char *msg, size_t msg_len) {
    *status = DR_GIF_OK;
    uint8_t *const row = r->row;
    const size_t width = (size_t)r->width;
    if (r->carry > 0) memmove(row, row + width, (size_t)r->carry);
    size_t produced = (size_t)r->carry;
    const uint8_t *const data = cursor->data;
    const size_t size = cursor->size;
    size_t pos = r->pos;
    int block_left = r->block_left;
    uint64_t bits = r->bits;
    int nbits = r->nbits;
    const int clear = r->clear, end = r->end;
    int code_size = r->code_size, next = r->next, prev = r->prev;
    const uint8_t *result = row;
    while (produced < width) {
        if (nbits < code_size) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            if (block_left >= 8 && size - pos >= 8) {
                // Eight bytes in one load; the bytes that fit whole are taken, and the bits of the next one that
                // also land in `bits` are the same bits its own load will OR in again.
                uint64_t word;
                memcpy(&word, data + pos, 8);
                bits |= word << nbits;
                const int taken = (63 - nbits) >> 3;
                pos += (size_t)taken;
                block_left -= taken;
                nbits += taken << 3;
            }
#endif
            // Byte by byte across sub-block boundaries, up to the terminator block.
            while (nbits <= 56) {
                if (block_left == 0) {
                    if (pos >= size) break;
                    block_left = data[pos++];
                    if (block_left == 0) {
                        block_left = -1;
                        break;
                    }
                }
                if (block_left < 0 || pos >= size) break;
                bits |= (uint64_t)data[pos++] << nbits;
                nbits += 8;
                block_left--;
            }
            if (nbits < code_size) {
                result = data_ended(block_left, cursor, status, msg, msg_len);
                break;
            }
        }
        const int code = (int)(bits & ((1u << code_size) - 1));
        bits >>= code_size;
        nbits -= code_size;
        if (code == clear) {
            code_size = r->min_code_size + 1;
            next = clear + 2;
            prev = -1;
            continue;
        }
        if (code == end) {
            dr_gif__set_msg(msg, msg_len, "GIF frame's LZW data ends before its last pixel");
            *status = DR_GIF_ERR_TRUNCATED;
            result = NULL;
            break;
        }
        if (prev < 0) {
            if (code > clear) {
                dr_gif__set_msg(msg, msg_len, "GIF frame's first LZW code after a clear code is not a colour");
                *status = DR_GIF_ERR_CORRUPT;
                result = NULL;
                break;
            }
            row[produced++] = (uint8_t)code;
            prev = code;
            continue;
        }
        if (code > next) { // codes are at most 12 bits: never past the table
            dr_gif__set_msg(msg, msg_len, "GIF frame has an LZW code its table does not hold");
            *status = DR_GIF_ERR_CORRUPT;
            result = NULL;
            break;
        }
        if (next < DR_GIF_LZW_CODES) {
            // The new entry is the previous string and the first byte of this one (of itself, when the code is
            // the entry being made: the previous string's first byte). It extends the previous string's last
            // block while that has room, else starts a block of its own after it.
            const uint8_t byte = code == next ? r->first[prev] : r->first[code];
            const int used = (r->lm1[prev] & 7) + 1;
            if (used < 8) {
                // Built in a register and stored whole: a byte stored into a block just copied would stall the
                // 8-byte load of it that usually follows soon.
                uint64_t word;
                memcpy(&word, r->block[prev], 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
                const int shift = used * 8;
#else
                const int shift = (7 - used) * 8;
#endif
                word = (word & ~((uint64_t)0xFF << shift)) | ((uint64_t)byte << shift);
                memcpy(r->block[next], &word, 8);
                r->prefix[next] = r->prefix[prev];
            } else {
                r->block[next][0] = byte;
                r->prefix[next] = (uint16_t)prev;
            }
            r->lm1[next] = (uint16_t)(r->lm1[prev] + 1);
            r->first[next] = r->first[prev];
            next++;
            if (next == (1 << code_size) && code_size < 12) code_size++;
        }
        // The last block (its copy may run up to 7 bytes past the string, into what is written next), then each
        // full block before it, back to front.
        const size_t length = (size_t)r->lm1[code] + 1;
        uint8_t *out = row + produced + length - ((r->lm1[code] & 7) + 1);
        memcpy(out, r->block[code], 8);
        for (unsigned walk = r->prefix[code]; walk != DR_GIF_LZW_NONE; walk = r->prefix[walk]) {
            out -= 8;
            memcpy(out, r->block[walk], 8);
        }
        produced += length;
        prev = code;
    }
    r->pos = pos;
    r->block_left = block_left;
    r->bits = bits;
    r->nbits = nbits;
    r->code_size = code_size;
    r->next = next;
    r->prev = prev;
    r->carry = result != NULL ? (int)(produced - width) : 0;
    return result;
}

void dr_gif_rows_finish(dr_gif_rows *r, dr_gif_cursor *cursor) {
    size_t pos = r->pos;
    if (r->block_left >= 0) {
        pos += (size_t)r->block_left; // the rest of the current sub-block
        for (;;) {
            if (pos >= cursor->size) break;
            const size_t n = cursor->data[pos++];
            if (n == 0) break;
            pos += n;
        }
    }
    // A file that ends first is found by giflib's next read, which reports it short.
    cursor->pos = pos < cursor->size ? pos : cursor->size;
}

void dr_gif_rows_free(dr_gif_rows *r) {
    free(r->row);
    r->row = NULL;
    r->row_capacity = 0;
}

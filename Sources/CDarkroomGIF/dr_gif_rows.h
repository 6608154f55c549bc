// A GIF frame's pixels, row by row: giflib finds the frame (DGifGetImageDesc reads its descriptor and the LZW
// code size byte) and the LZW data is decoded here, in place in the file's bytes, a string at a time, instead of
// by giflib's DGifGetLine, which decodes a pixel at a time through a stack and costs about three times as much.
#ifndef DR_GIF_ROWS_H
#define DR_GIF_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "dr_gif_internal.h"

enum { DR_GIF_LZW_CODES = 4096, DR_GIF_LZW_NONE = 0xFFFF };

typedef struct {
    size_t pos;            // the next byte of the file to read
    int block_left;        // bytes left in the current sub-block; -1 once the terminator block is read
    uint64_t bits;         // unread bits, least significant first
    int nbits;
    int min_code_size, code_size, clear, end, next, prev; // prev < 0: no string since the last clear code
    // A code's string is a chain of 8-byte blocks: its own block holds the string's last 1...8 bytes, and
    // `prefix` names the code whose string is everything before them (DR_GIF_LZW_NONE when nothing is), always a
    // whole number of full blocks. Most strings fit one block, written with one 8-byte copy.
    uint8_t block[DR_GIF_LZW_CODES][8];
    uint16_t prefix[DR_GIF_LZW_CODES];
    uint16_t lm1[DR_GIF_LZW_CODES];   // the string's length minus one
    uint8_t first[DR_GIF_LZW_CODES];  // the string's first byte
    uint8_t *row;          // width + DR_GIF_LZW_CODES + 8 bytes: a row, the longest string that overruns it, and
                           // the slack an 8-byte copy of a string's last block writes past its end
    size_t row_capacity;
    int width;
    int carry;             // bytes past the last row's end that belong to the next row
} dr_gif_rows;

// Starts decoding the frame whose descriptor giflib has just read through `cursor`: the code size byte is the
// last byte giflib read and the first sub-block follows it. `width` pixels a row. Returns DR_GIF_OK,
// DR_GIF_ERR_NO_MEMORY or DR_GIF_ERR_CORRUPT (a code size outside 1...8).
int dr_gif_rows_begin(dr_gif_rows *r, const dr_gif_cursor *cursor, int width, char *msg, size_t msg_len);

// The next row (width bytes of palette indices), or NULL with *status set and msg filled: DR_GIF_ERR_TRUNCATED
// when the file, the sub-blocks or the LZW stream end before the row is complete (a file that ends marks the
// cursor's short read), DR_GIF_ERR_CORRUPT for a code the table does not hold yet.
const uint8_t *dr_gif_rows_next(dr_gif_rows *r, dr_gif_cursor *cursor, int *status, char *msg, size_t msg_len);

// After the frame's last row: moves the cursor past the frame's remaining sub-blocks and terminator, where giflib
// reads the next record (a file that ends first marks the cursor's short read).
void dr_gif_rows_finish(dr_gif_rows *r, dr_gif_cursor *cursor);

// Frees the row buffer; the struct may be begun again afterwards.
void dr_gif_rows_free(dr_gif_rows *r);

#endif

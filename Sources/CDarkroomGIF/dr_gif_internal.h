// What the giflib shim's files share (dr_gif_internal.c): the in-memory read cursor, error mapping and palettes.
#ifndef DR_GIF_INTERNAL_H
#define DR_GIF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <gif_lib.h>

typedef struct {
    const uint8_t *data;
    size_t size;
    size_t pos;
    int short_read; // a read asked for more bytes than were left: the data is truncated
} dr_gif_cursor;

int dr_gif__read(GifFileType *gif, GifByteType *buf, int len);
void dr_gif__set_msg(char *msg, size_t msg_len, const char *text);
int dr_gif__map_error(int code, const dr_gif_cursor *cursor, char *msg, size_t msg_len);

// Pixel i of the 256-entry lookup: B, G, R, A, each entry written with one 4-byte copy.
typedef struct {
    uint8_t bgra[256][4];
} dr_gif_palette;

// Fills `p` from a colour map: indices past the map's size are opaque black, and the `transparent` index (when it
// is 0...255) is 0,0,0,0.
void dr_gif__build_palette(dr_gif_palette *p, const ColorMapObject *map, int transparent);

#endif

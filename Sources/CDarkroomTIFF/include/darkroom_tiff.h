#ifndef DARKROOM_TIFF_H
#define DARKROOM_TIFF_H

#include <stddef.h>
#include <stdint.h>

/* libtiff behind status codes: a TIFF read from memory (no copy; the bytes must outlive the handle), its
 * directories enumerated and selected, and the selected image read a band of rows at a time, either converted to
 * premultiplied RGBA by libtiff's TIFFRGBAImage (every photometric, bit depth and compression libtiff knows) or as
 * raw 8-bit contiguous samples (CMYK kept for a colour-managed conversion). libtiff's error and warning messages
 * are caught per handle, never printed; the last error is kept in the handle. */

typedef enum {
    DR_TIFF_OK = 0,
    DR_TIFF_ERR_OPEN = 1,      /* not a TIFF libtiff can open */
    DR_TIFF_ERR_DIRECTORY = 2, /* a directory could not be read or selected */
    DR_TIFF_ERR_UNSUPPORTED = 3,
    DR_TIFF_ERR_READ = 4,      /* decoding pixel data failed (corrupt or truncated) */
    DR_TIFF_ERR_NO_MEMORY = 5,
    DR_TIFF_ERR_ARGUMENT = 6,
} dr_tiff_status;

typedef struct dr_tiff dr_tiff;

/* One directory's image, as its tags give it. */
typedef struct {
    uint32_t width, height;
    uint32_t subfile_type;            /* NewSubfileType: bit 0 a reduced-resolution image, bit 1 a page */
    uint16_t bits_per_sample, samples_per_pixel, sample_format, photometric, planar_config, compression;
    uint16_t orientation;             /* 1–8, as EXIF's */
    uint16_t alpha;                   /* 0 none, 1 associated (premultiplied), 2 unassociated */
    uint16_t ink_set;                 /* 1 CMYK */
    int32_t tiled;
    uint32_t tile_width, tile_height, rows_per_strip;
    uint32_t sub_ifd_count;           /* SubIFDs (a pyramid's reduced levels, usually) */
    const uint8_t *icc;               /* the ICC profile inside libtiff's directory, valid until the next select */
    uint32_t icc_length;
    int32_t rgba_ok;                  /* whether TIFFRGBAImage can convert it */
} dr_tiff_image;

/* Opens `data`; libtiff will not allocate more than `max_single_alloc` bytes at once (0: libtiff's default). */
int dr_tiff_open(const void *data, size_t length, uint64_t max_single_alloc, dr_tiff **out);
/* Opens the TIFF in the open file `fd` (of `length` bytes), read with pread as libtiff asks: only the directories
   and the strips or tiles being decoded are in memory, never the whole file. The caller keeps `fd` open until
   dr_tiff_close and closes it after. */
int dr_tiff_open_fd(int fd, uint64_t length, uint64_t max_single_alloc, dr_tiff **out);
void dr_tiff_close(dr_tiff *tiff);
/* The last error libtiff reported for this handle ("" when none). */
const char *dr_tiff_message(const dr_tiff *tiff);

/* Counts top-level directories, stopping at `max` (then returns max + 1). */
int dr_tiff_directory_count(dr_tiff *tiff, int max);
/* Selects top-level directory `index`, or (sub >= 0) its SubIFD `sub`, and describes it. */
int dr_tiff_select(dr_tiff *tiff, int index, int sub, dr_tiff_image *image);

/* Reads rows [row, row + count) of the selected image, converted to premultiplied RGBA (8 bits a sample, top row
 * first, in the stored orientation), `stride` bytes apart in `out`. Bands must be asked for in increasing order. */
int dr_tiff_read_rgba(dr_tiff *tiff, uint32_t row, uint32_t count, uint8_t *out, size_t stride);
/* Reads rows [row, row + count) of an 8-bit contiguous image as stored (samples_per_pixel bytes a pixel), `stride`
 * bytes apart in `out`. Bands must be asked for in increasing order. */
int dr_tiff_read_raw(dr_tiff *tiff, uint32_t row, uint32_t count, uint8_t *out, size_t stride);

/* The selected image's colour map (PALETTE images): three arrays of 1 << bits_per_sample 16-bit entries inside
 * libtiff's directory, valid until the next select. Returns the entry count, 0 when there is none. */
uint32_t dr_tiff_colormap(dr_tiff *tiff, const uint16_t **red, const uint16_t **green, const uint16_t **blue);

#endif

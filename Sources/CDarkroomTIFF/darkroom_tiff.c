#include "darkroom_tiff.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <tiffio.h>
#include <unistd.h>

struct dr_tiff {
    TIFF *tif;
    const uint8_t *data; /* the bytes, or NULL when reading from fd */
    int fd;
    uint64_t length;
    uint64_t position;
    char message[512];
    /* TIFFRGBAImage state for the selected directory */
    TIFFRGBAImage rgba;
    int rgba_active;
    /* raw reading: one row of tiles, decoded, and which band it holds */
    uint8_t *tile_band;
    size_t tile_band_size;
    int64_t tile_band_row; /* first row of the band held, -1 none */
    int64_t next_scanline; /* stripped images: the next row TIFFReadScanline can give */
};

static tsize_t proc_read(thandle_t h, tdata_t buf, tsize_t size) {
    dr_tiff *t = (dr_tiff *)h;
    if (size < 0 || t->position >= t->length) return 0;
    uint64_t n = (uint64_t)size;
    if (n > t->length - t->position) n = t->length - t->position;
    if (t->data) {
        memcpy(buf, t->data + t->position, (size_t)n);
    } else {
        uint64_t done = 0;
        while (done < n) {
            ssize_t got = pread(t->fd, (uint8_t *)buf + done, (size_t)(n - done), (off_t)(t->position + done));
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) break; /* an error or a file cut short: libtiff sees a short read */
            done += (uint64_t)got;
        }
        n = done;
    }
    t->position += n;
    return (tsize_t)n;
}

static tsize_t proc_write(thandle_t h, tdata_t buf, tsize_t size) {
    (void)h; (void)buf; (void)size;
    return -1;
}

static toff_t proc_seek(thandle_t h, toff_t offset, int whence) {
    dr_tiff *t = (dr_tiff *)h;
    uint64_t base = whence == SEEK_CUR ? t->position : whence == SEEK_END ? t->length : 0;
    if (offset > UINT64_MAX - base) return (toff_t)-1;
    t->position = base + offset; /* past the end reads nothing */
    return t->position;
}

static int proc_close(thandle_t h) { (void)h; return 0; }
static toff_t proc_size(thandle_t h) { return ((dr_tiff *)h)->length; }

static int proc_map(thandle_t h, tdata_t *base, toff_t *size) {
    dr_tiff *t = (dr_tiff *)h;
    if (!t->data) return 0; /* a file: libtiff reads each strip or tile into its own buffer */
    *base = (tdata_t)t->data; /* libtiff only reads mapped data */
    *size = t->length;
    return 1;
}

static void proc_unmap(thandle_t h, tdata_t base, toff_t size) { (void)h; (void)base; (void)size; }

static int on_error(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap) {
    (void)tif;
    dr_tiff *t = (dr_tiff *)user;
    int n = module ? snprintf(t->message, sizeof t->message, "%s: ", module) : 0;
    if (n < 0 || (size_t)n >= sizeof t->message) n = 0;
    vsnprintf(t->message + n, sizeof t->message - (size_t)n, fmt, ap);
    return 1; /* handled: nothing reaches libtiff's global handlers (stderr) */
}

static int on_warning(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap) {
    (void)tif; (void)user; (void)module; (void)fmt; (void)ap;
    return 1;
}

static int open_client(dr_tiff *t, uint64_t max_single_alloc, dr_tiff **out);

int dr_tiff_open(const void *data, size_t length, uint64_t max_single_alloc, dr_tiff **out) {
    if (!data || !out) return DR_TIFF_ERR_ARGUMENT;
    *out = NULL;
    dr_tiff *t = calloc(1, sizeof *t);
    if (!t) return DR_TIFF_ERR_NO_MEMORY;
    t->data = data;
    t->fd = -1;
    t->length = length;
    return open_client(t, max_single_alloc, out);
}

int dr_tiff_open_fd(int fd, uint64_t length, uint64_t max_single_alloc, dr_tiff **out) {
    if (fd < 0 || !out) return DR_TIFF_ERR_ARGUMENT;
    *out = NULL;
    dr_tiff *t = calloc(1, sizeof *t);
    if (!t) return DR_TIFF_ERR_NO_MEMORY;
    t->fd = fd;
    t->length = length;
    return open_client(t, max_single_alloc, out);
}

/* Opens libtiff over `t` (bytes or a descriptor); frees `t` on failure. */
static int open_client(dr_tiff *t, uint64_t max_single_alloc, dr_tiff **out) {
    t->tile_band_row = -1;
    TIFFOpenOptions *options = TIFFOpenOptionsAlloc();
    if (!options) {
        free(t);
        return DR_TIFF_ERR_NO_MEMORY;
    }
    TIFFOpenOptionsSetErrorHandlerExtR(options, on_error, t);
    TIFFOpenOptionsSetWarningHandlerExtR(options, on_warning, t);
    if (max_single_alloc > 0) TIFFOpenOptionsSetMaxSingleMemAlloc(options, (tmsize_t)max_single_alloc);
    t->tif = TIFFClientOpenExt(t->data ? "memory" : "file", "rm", (thandle_t)t, proc_read, proc_write, proc_seek, proc_close,
                               proc_size, proc_map, proc_unmap, options);
    TIFFOpenOptionsFree(options);
    if (!t->tif) {
        free(t);
        return DR_TIFF_ERR_OPEN;
    }
    *out = t;
    return DR_TIFF_OK;
}

static void end_reading(dr_tiff *t) {
    if (t->rgba_active) TIFFRGBAImageEnd(&t->rgba);
    t->rgba_active = 0;
    free(t->tile_band);
    t->tile_band = NULL;
    t->tile_band_size = 0;
    t->tile_band_row = -1;
    t->next_scanline = 0;
}

void dr_tiff_close(dr_tiff *t) {
    if (!t) return;
    end_reading(t);
    TIFFClose(t->tif);
    free(t);
}

const char *dr_tiff_message(const dr_tiff *t) { return t ? t->message : ""; }

int dr_tiff_directory_count(dr_tiff *t, int max) {
    end_reading(t);
    if (!TIFFSetDirectory(t->tif, 0)) return 0;
    int n = 1;
    while (n <= max && TIFFReadDirectory(t->tif)) n++;
    return n;
}

int dr_tiff_select(dr_tiff *t, int index, int sub, dr_tiff_image *image) {
    if (!t || !image || index < 0) return DR_TIFF_ERR_ARGUMENT;
    end_reading(t);
    memset(image, 0, sizeof *image);
    if (!TIFFSetDirectory(t->tif, (tdir_t)index)) return DR_TIFF_ERR_DIRECTORY;
    uint16_t count = 0;
    uint64_t *offsets = NULL;
    if (sub >= 0) {
        if (!TIFFGetField(t->tif, TIFFTAG_SUBIFD, &count, &offsets) || sub >= count) return DR_TIFF_ERR_DIRECTORY;
        uint64_t offset = offsets[sub];
        if (!TIFFSetSubDirectory(t->tif, offset)) return DR_TIFF_ERR_DIRECTORY;
        count = 0;
    } else if (!TIFFGetField(t->tif, TIFFTAG_SUBIFD, &count, &offsets)) {
        count = 0;
    }
    TIFF *tif = t->tif;
    image->sub_ifd_count = count;
    TIFFGetFieldDefaulted(tif, TIFFTAG_IMAGEWIDTH, &image->width);
    TIFFGetFieldDefaulted(tif, TIFFTAG_IMAGELENGTH, &image->height);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SUBFILETYPE, &image->subfile_type);
    TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &image->bits_per_sample);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &image->samples_per_pixel);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &image->sample_format);
    TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &image->planar_config);
    TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &image->compression);
    TIFFGetFieldDefaulted(tif, TIFFTAG_ORIENTATION, &image->orientation);
    TIFFGetFieldDefaulted(tif, TIFFTAG_INKSET, &image->ink_set);
    if (!TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &image->photometric)) {
        image->photometric = image->samples_per_pixel >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK;
    }
    uint16_t extra = 0;
    uint16_t *types = NULL;
    if (TIFFGetField(tif, TIFFTAG_EXTRASAMPLES, &extra, &types) && extra > 0 && types) {
        image->alpha = types[0] == EXTRASAMPLE_ASSOCALPHA ? 1 : types[0] == EXTRASAMPLE_UNASSALPHA ? 2 : 0;
    }
    image->tiled = TIFFIsTiled(tif);
    if (image->tiled) {
        TIFFGetField(tif, TIFFTAG_TILEWIDTH, &image->tile_width);
        TIFFGetField(tif, TIFFTAG_TILELENGTH, &image->tile_height);
    } else {
        TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &image->rows_per_strip);
    }
    uint32_t icc_length = 0;
    void *icc = NULL;
    if (TIFFGetField(tif, TIFFTAG_ICCPROFILE, &icc_length, &icc) && icc && icc_length > 0) {
        image->icc = icc;
        image->icc_length = icc_length;
    }
    if (image->photometric == PHOTOMETRIC_YCBCR && image->compression == COMPRESSION_JPEG) {
        /* libjpeg converts to RGB: the raw path then reads RGB rows */
        TIFFSetField(tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
        image->photometric = PHOTOMETRIC_RGB;
    }
    char emsg[1024];
    image->rgba_ok = TIFFRGBAImageOK(tif, emsg);
    return DR_TIFF_OK;
}

int dr_tiff_read_rgba(dr_tiff *t, uint32_t row, uint32_t count, uint8_t *out, size_t stride) {
    if (!t || !out || count == 0) return DR_TIFF_ERR_ARGUMENT;
    if (!t->rgba_active) {
        char emsg[1024];
        if (!TIFFRGBAImageBegin(&t->rgba, t->tif, 1, emsg)) {
            snprintf(t->message, sizeof t->message, "%s", emsg);
            return DR_TIFF_ERR_UNSUPPORTED;
        }
        t->rgba.req_orientation = t->rgba.orientation; /* rows as stored: Darkroom applies the orientation */
        t->rgba_active = 1;
    }
    uint32_t width = t->rgba.width;
    if (row >= t->rgba.height || count > t->rgba.height - row || stride != (size_t)width * 4) {
        return DR_TIFF_ERR_ARGUMENT;
    }
    t->rgba.row_offset = (int)row;
    t->rgba.col_offset = 0;
    if (!TIFFRGBAImageGet(&t->rgba, (uint32_t *)(void *)out, width, count)) return DR_TIFF_ERR_READ;
    return DR_TIFF_OK;
}

static int read_tiled_row(dr_tiff *t, uint32_t row, uint8_t *out, size_t row_bytes) {
    TIFF *tif = t->tif;
    uint32_t width = 0, height = 0, tw = 0, th = 0;
    TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &width);
    TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &height);
    TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tw);
    TIFFGetField(tif, TIFFTAG_TILELENGTH, &th);
    tmsize_t tile_size = TIFFTileSize(tif);
    tmsize_t tile_row_bytes = TIFFTileRowSize(tif);
    if (tw == 0 || th == 0 || tile_size <= 0 || tile_row_bytes <= 0) return DR_TIFF_ERR_UNSUPPORTED;
    uint32_t across = (width + tw - 1) / tw;
    uint32_t band_row = row / th * th;
    if (t->tile_band_row != (int64_t)band_row) {
        size_t needed = (size_t)across * (size_t)tile_size;
        if (t->tile_band_size < needed) {
            free(t->tile_band);
            t->tile_band = malloc(needed);
            t->tile_band_size = t->tile_band ? needed : 0;
            if (!t->tile_band) return DR_TIFF_ERR_NO_MEMORY;
        }
        for (uint32_t i = 0; i < across; i++) {
            if (TIFFReadTile(tif, t->tile_band + (size_t)i * (size_t)tile_size, i * tw, band_row, 0, 0) < 0) {
                t->tile_band_row = -1;
                return DR_TIFF_ERR_READ;
            }
        }
        t->tile_band_row = band_row;
    }
    /* Stitch this row from each tile; the pixel size is the tile row's bytes over the tile width */
    size_t pixel_bits = (size_t)tile_row_bytes * 8 / tw;
    size_t done = 0;
    for (uint32_t i = 0; i < across && done < row_bytes; i++) {
        const uint8_t *src = t->tile_band + (size_t)i * (size_t)tile_size + (size_t)(row - band_row) * (size_t)tile_row_bytes;
        size_t want = (size_t)((uint64_t)(i + 1 < across ? tw : width - i * tw) * pixel_bits + 7) / 8;
        if (want > row_bytes - done) want = row_bytes - done;
        memcpy(out + done, src, want);
        done += want;
    }
    return DR_TIFF_OK;
}

int dr_tiff_read_raw(dr_tiff *t, uint32_t row, uint32_t count, uint8_t *out, size_t stride) {
    if (!t || !out) return DR_TIFF_ERR_ARGUMENT;
    TIFF *tif = t->tif;
    uint16_t planar = PLANARCONFIG_CONTIG;
    TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &planar);
    if (planar != PLANARCONFIG_CONTIG) return DR_TIFF_ERR_UNSUPPORTED;
    tmsize_t scanline = TIFFScanlineSize(tif);
    if (scanline <= 0 || (size_t)scanline > stride) return DR_TIFF_ERR_ARGUMENT;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t y = row + i;
        uint8_t *dst = out + (size_t)i * stride;
        if (TIFFIsTiled(tif)) {
            int status = read_tiled_row(t, y, dst, (size_t)scanline);
            if (status != DR_TIFF_OK) return status;
            continue;
        }
        if ((int64_t)y < t->next_scanline) return DR_TIFF_ERR_ARGUMENT; /* scanlines only go forward */
        /* libtiff moves to the row's strip and decodes from there */
        if (TIFFReadScanline(tif, dst, y, 0) < 0) return DR_TIFF_ERR_READ;
        t->next_scanline = (int64_t)y + 1;
    }
    return DR_TIFF_OK;
}

uint32_t dr_tiff_colormap(dr_tiff *t, const uint16_t **red, const uint16_t **green, const uint16_t **blue) {
    uint16_t *r = NULL, *g = NULL, *b = NULL;
    uint16_t bits = 1;
    if (!t || !TIFFGetField(t->tif, TIFFTAG_COLORMAP, &r, &g, &b) || !r || !g || !b) return 0;
    TIFFGetFieldDefaulted(t->tif, TIFFTAG_BITSPERSAMPLE, &bits);
    if (bits > 16) return 0;
    *red = r;
    *green = g;
    *blue = b;
    return 1u << bits;
}

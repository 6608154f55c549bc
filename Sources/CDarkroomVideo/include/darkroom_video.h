// A small C shim around FFmpeg's libraries (libavformat, libavcodec, libswscale, libavutil): opens one video held in
// memory or in an open file, reads its header, seeks, decodes frames of its first video stream and scales the current
// frame to an output size. Swift sees an opaque handle and status codes; FFmpeg's structures and macros stay here.
//
// What FFmpeg may touch is fixed here, not by the file: the bytes come through a custom AVIOContext over the caller's
// memory or file descriptor (pread), no protocol is ever opened (AVFormatContext.io_open refuses every URL, so a
// playlist, an external data reference or a concatenation list reads nothing), only the demuxers named in
// DR_VIDEO_DEMUXERS and the decoders of DR_VIDEO_CODECS are used, and an interrupt callback stops any blocking call
// once the caller's deadline passes. No globals: handles may be used on different threads, one thread at a time each.
#ifndef DARKROOM_VIDEO_H
#define DARKROOM_VIDEO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    DR_VIDEO_OK = 0,
    DR_VIDEO_ERR_UNSUPPORTED = 1,  // not a container or codec on the lists, or no video stream
    DR_VIDEO_ERR_CORRUPT = 2,      // FFmpeg found the data invalid
    DR_VIDEO_ERR_TRUNCATED = 3,    // the data ended inside the header
    DR_VIDEO_ERR_NO_MEMORY = 4,
    DR_VIDEO_ERR_LIMIT = 5,        // the deadline passed, or the packet or frame budget ran out
    DR_VIDEO_ERR_END = 6,          // no more frames
    DR_VIDEO_ERR_ARGUMENT = 7,
    DR_VIDEO_ERR_IO = 8,           // the file could not be read
} dr_video_status;

// What the header says about the first video stream and its container.
typedef struct {
    char container[16];     // "mp4" (ISO BMFF: MP4, MOV, 3GP, M4V), "matroska" (MKV, WebM) or "avi"
    char brand[8];          // ISO BMFF's major brand ("isom", "qt  ", "3gp5"…), "webm" for WebM; "" otherwise
    char codec[16];         // FFmpeg's codec name: "h264", "hevc", "vp8", "vp9", "av1", "mpeg4"…
    int coded_width;        // the frame size as coded
    int coded_height;
    int sar_num;            // sample (pixel) aspect ratio, 1:1 when unknown
    int sar_den;
    double duration;        // seconds; < 0 when unknown
    int fps_num;            // the average frame rate (the nominal one when the container has no average); 0/0
    int fps_den;            // when unknown
    int64_t frame_count;    // frames the container says the stream has; 0 when it does not say
    int rotation;           // degrees clockwise the coded frame turns to be shown upright: 0, 90, 180 or 270
    int mirrored;           // whether the display matrix also mirrors it (left-right, before the rotation)
    int bit_depth;          // bits per luma sample (8, 10, 12); 0 when not known from the header
    int color_primaries;    // the stream's colour tags as CICP (H.273) code points: 2 when unspecified
    int color_transfer;
    int color_matrix;
    int full_range;         // 1 for full-range (JPEG) samples, 0 for limited (video) range or unspecified
    int max_cll;            // content light level, nits; 0 when the stream has none
    int max_fall;
    int has_audio;          // whether the container has an audio stream
    int stream_count;
    char content_identifier[64];  // Apple's Live Photo key com.apple.quicktime.content.identifier; "" when absent
} dr_video_info;

// Budgets the caller sets before opening; every one has a safe value in the Swift layer.
typedef struct {
    int64_t deadline_ns;    // CLOCK_MONOTONIC nanoseconds after which every call stops with DR_VIDEO_ERR_LIMIT; 0: none
    int64_t max_packets;    // packets one call to dr_video_decode_frame may read (demuxed, any stream)
    int64_t max_pixels;     // coded width × height a stream may have
    int threads;            // decoder threads (1: one core per decode; callers run decodes side by side)
} dr_video_limits;

typedef struct dr_video dr_video;

// Opens a video held in memory (`data` must outlive the handle) or the `size` bytes of the open file `fd` that start
// at `offset` (the whole file, or a clip stored inside a photo; read with pread; the descriptor stays the caller's),
// which FFmpeg sees as a file of its own. Reads the header, picks the first video stream and fills `info`.
// On failure *out is NULL and msg (when not NULL) holds FFmpeg's reason.
int dr_video_open_memory(const uint8_t *data, size_t size, const dr_video_limits *limits, dr_video **out,
                         dr_video_info *info, char *msg, size_t msg_len);
int dr_video_open_file(int fd, int64_t offset, int64_t size, const dr_video_limits *limits, dr_video **out,
                       dr_video_info *info, char *msg, size_t msg_len);

// A source read through the caller's function: up to `count` bytes at `offset` into `buffer`; returns the bytes
// read (0 at the end), or a negative value on failure. Called on the thread that calls into the handle, which may
// block in it (a remote file's ranges); `context` stays the caller's and must outlive the handle.
typedef int64_t (*dr_video_read_fn)(void *context, int64_t offset, uint8_t *buffer, int count);

// Opens a video of `size` bytes read through `read` (ranges of a remote file), as dr_video_open_file does.
int dr_video_open_reader(dr_video_read_fn read, void *context, int64_t size, const dr_video_limits *limits,
                         dr_video **out, dr_video_info *info, char *msg, size_t msg_len);

// Replaces the deadline (a handle kept open for playback gets a new one per call).
void dr_video_set_deadline(dr_video *video, int64_t deadline_ns);

// Opens the decoder. `lowres` (0…3) asks a decoder that can (MJPEG, some MPEG-4 variants) to decode at 1/2^lowres of
// the coded size; decoders that cannot ignore it, and `dr_video_frame` says the size decoded.
int dr_video_open_decoder(dr_video *video, int lowres, char *msg, size_t msg_len);

// Seeks to the keyframe at or before `seconds` (from the stream's start) and empties the decoder. A file that cannot
// seek is read from its start instead.
int dr_video_seek(dr_video *video, double seconds, char *msg, size_t msg_len);

// Decodes the next frame in presentation order. `keyframes_only`: the decoder skips every frame that is not a
// keyframe (a thumbnail after a seek needs one, and decoding nothing else is the cheap part of choosing it).
// `skip_before` (seconds; 0 for none): a frame presented before it that no other frame refers to is not decoded
// (FFmpeg's AVDISCARD_NONREF for its packet), for a caller that shows no frame before that time.
// On success *seconds is the frame's presentation time (< 0 when it has none) and the frame becomes the current one.
// At the stream's end DR_VIDEO_ERR_END; a frame the decoder marked corrupt is skipped. On any failure the previous
// frame (if any) stays current: the last good frame can still be scaled.
int dr_video_decode_frame(dr_video *video, int keyframes_only, double skip_before, double *seconds, char *msg,
                          size_t msg_len);

// The current frame's decoded size (the coded size, or smaller with lowres) and whether it is a keyframe.
int dr_video_frame(const dr_video *video, int *width, int *height, int *is_keyframe);

// Output pixel layouts of dr_video_scale.
typedef enum {
    DR_VIDEO_BGRA8 = 0,     // B G R A, 8 bits, A = 255
    DR_VIDEO_GRAY8 = 1,     // luma only
    DR_VIDEO_RGBA16 = 2,    // R G B A, 16 bits native-endian, full range, the signal left as coded (for HDR)
} dr_video_pixels;

// libswscale's filters, for dr_video_scale.
typedef enum {
    DR_VIDEO_LANCZOS = 0,
    DR_VIDEO_BICUBIC = 1,
    DR_VIDEO_BILINEAR = 2,
    DR_VIDEO_AREA = 3,      // a box average when shrinking
} dr_video_filter;

// Scales the region (x, y, width, height) of the current frame, in its decoded pixels, to dst_width × dst_height
// pixels at dst (row y at dst + y × stride) with `filter` (a dr_video_filter), converting with the frame's colour
// matrix and range. The region is widened to the chroma grid when it does not start on it.
int dr_video_scale(dr_video *video, int x, int y, int width, int height, uint8_t *dst, size_t stride,
                   int dst_width, int dst_height, int pixels, int filter, char *msg, size_t msg_len);

// Frees the handle (NULL is allowed).
void dr_video_close(dr_video *video);

#ifdef __cplusplus
}
#endif
#endif

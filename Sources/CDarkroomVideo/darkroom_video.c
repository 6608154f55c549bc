// FFmpeg behind status codes: see include/darkroom_video.h for the contract.
#include "darkroom_video.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/display.h>
#include <libavutil/imgutils.h>
#include <libavutil/mastering_display_metadata.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

// The demuxers a video may be read with (AVFormatContext.format_whitelist): ISO BMFF (MP4, MOV, 3GP, M4V),
// Matroska (MKV, WebM) and AVI. Nothing that reads other files (HLS, DASH, concat) or guesses raw streams.
#define DR_VIDEO_DEMUXERS "mov,matroska,avi"
#define DR_VIDEO_IO_BUFFER (64 * 1024)

struct dr_video {
    // The source: memory, `size` bytes of a file from `base` on (a clip inside a photo) read with pread, or the
    // caller's reader (ranges of a remote file).
    const uint8_t *data;
    dr_video_read_fn reader;
    void *reader_context;
    int fd;
    int64_t base;
    int64_t size;
    int64_t position;

    AVFormatContext *format;
    AVCodecContext *codec;
    AVPacket *packet;
    AVFrame *frame;        // the current frame: the last one decoded, kept when a later decode fails
    AVFrame *next;         // where the decoder writes; moved to frame once it holds a good one
    int has_frame;
    int stream;            // the video stream's index
    int draining;          // the demuxer is at its end and the decoder is being flushed
    int key_drained;       // the decoder was drained after one keyframe's packet: flushed before the next packet
    struct SwsContext *scaler;
    dr_video_limits limits;
};

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int past_deadline(const dr_video *v) { return v->limits.deadline_ns > 0 && now_ns() > v->limits.deadline_ns; }

static int interrupt(void *opaque) { return past_deadline((const dr_video *)opaque); }

static void set_message(char *msg, size_t len, const char *text, int averror) {
    if (!msg || len == 0) return;
    if (averror != 0) {
        char reason[AV_ERROR_MAX_STRING_SIZE] = {0};
        av_strerror(averror, reason, sizeof reason);
        snprintf(msg, len, "%s: %s", text, reason);
    } else {
        snprintf(msg, len, "%s", text);
    }
}

// An FFmpeg error as a status code.
static int status_of(const dr_video *v, int averror) {
    if (averror == AVERROR_EXIT || past_deadline(v)) return DR_VIDEO_ERR_LIMIT;
    if (averror == AVERROR(ENOMEM)) return DR_VIDEO_ERR_NO_MEMORY;
    if (averror == AVERROR_EOF) return DR_VIDEO_ERR_TRUNCATED;
    if (averror == AVERROR(EIO)) return DR_VIDEO_ERR_IO;
    if (averror == AVERROR_DECODER_NOT_FOUND || averror == AVERROR_DEMUXER_NOT_FOUND ||
        averror == AVERROR_STREAM_NOT_FOUND || averror == AVERROR_PATCHWELCOME || averror == AVERROR(ENOSYS))
        return DR_VIDEO_ERR_UNSUPPORTED;
    return DR_VIDEO_ERR_CORRUPT;
}

// MARK: The custom I/O: the only bytes FFmpeg sees

static int read_source(void *opaque, uint8_t *buffer, int count) {
    dr_video *v = opaque;
    if (past_deadline(v)) return AVERROR_EXIT;
    int64_t left = v->size - v->position;
    if (left <= 0) return AVERROR_EOF;
    int n = (int)(left < count ? left : count);
    if (v->data) {
        memcpy(buffer, v->data + v->position, (size_t)n);
    } else if (v->reader) {
        int64_t got = v->reader(v->reader_context, v->position, buffer, n);
        if (got < 0) return AVERROR(EIO);
        if (got == 0) return AVERROR_EOF;
        n = (int)(got < n ? got : n);
    } else {
        ssize_t got;
        do { got = pread(v->fd, buffer, (size_t)n, (off_t)(v->base + v->position)); } while (got < 0 && errno == EINTR);
        if (got < 0) return AVERROR(EIO);
        if (got == 0) return AVERROR_EOF;
        n = (int)got;
    }
    v->position += n;
    return n;
}

static int64_t seek_source(void *opaque, int64_t offset, int whence) {
    dr_video *v = opaque;
    int64_t target;
    switch (whence & ~AVSEEK_FORCE) {
    case AVSEEK_SIZE: return v->size;
    case SEEK_SET: target = offset; break;
    case SEEK_CUR: target = v->position + offset; break;
    case SEEK_END: target = v->size + offset; break;
    default: return AVERROR(EINVAL);
    }
    if (target < 0 || target > v->size) return AVERROR(EINVAL);
    v->position = target;
    return target;
}

// Every URL FFmpeg might want besides the given bytes (a data reference, a playlist's segment) is refused.
static int refuse_open(struct AVFormatContext *s, AVIOContext **pb, const char *url, int flags, AVDictionary **o) {
    (void)s; (void)pb; (void)url; (void)flags; (void)o;
    return AVERROR(EPERM);
}

// MARK: Reading the header

static int is_allowed_codec(enum AVCodecID id) {
    switch (id) {
    case AV_CODEC_ID_H264: case AV_CODEC_ID_HEVC: case AV_CODEC_ID_VP8: case AV_CODEC_ID_VP9: case AV_CODEC_ID_AV1:
    case AV_CODEC_ID_MPEG4: case AV_CODEC_ID_H263: case AV_CODEC_ID_MJPEG: case AV_CODEC_ID_MPEG1VIDEO:
    case AV_CODEC_ID_MPEG2VIDEO: case AV_CODEC_ID_PRORES: case AV_CODEC_ID_MSMPEG4V3:
        return 1;
    default:
        return 0;
    }
}

// Bits per luma sample from the pixel format, else from the decoder configuration record the container carries
// (HEVC's hvcC, AV1's av1C, H.264's avcC profile), else from the profile (the header of an MP4 or MKV names the
// codec's configuration, the pixel format only once a frame is decoded); 0 when none says.
static int bit_depth_of(const AVCodecParameters *par) {
    if (par->format != AV_PIX_FMT_NONE) {
        const AVPixFmtDescriptor *d = av_pix_fmt_desc_get((enum AVPixelFormat)par->format);
        if (d) return d->comp[0].depth;
    }
    const uint8_t *x = par->extradata;
    int n = par->extradata_size;
    if (par->codec_id == AV_CODEC_ID_HEVC && x && n >= 23 && x[0] == 1) return 8 + (x[17] & 7);
    if (par->codec_id == AV_CODEC_ID_AV1 && x && n >= 4 && (x[0] & 0x80))
        return (x[2] & 0x40) ? ((x[2] & 0x20) ? 12 : 10) : 8;
    if (par->codec_id == AV_CODEC_ID_H264 && x && n >= 4 && x[0] == 1) {
        if (x[1] == 110) return 10;
        if (x[1] == 66 || x[1] == 77 || x[1] == 88 || x[1] == 100) return 8;
    }
    switch (par->codec_id) {
    case AV_CODEC_ID_HEVC:
        if (par->profile == FF_PROFILE_HEVC_MAIN || par->profile == FF_PROFILE_HEVC_MAIN_STILL_PICTURE) return 8;
        if (par->profile == FF_PROFILE_HEVC_MAIN_10) return 10;
        return 0;
    case AV_CODEC_ID_H264:
        if (par->profile == FF_PROFILE_H264_HIGH_10 || par->profile == FF_PROFILE_H264_HIGH_10_INTRA) return 10;
        if (par->profile == FF_PROFILE_H264_HIGH_422 || par->profile == FF_PROFILE_H264_HIGH_444_PREDICTIVE) return 0;
        return par->profile == FF_PROFILE_UNKNOWN ? 0 : 8;
    case AV_CODEC_ID_VP9:
        if (par->profile == FF_PROFILE_VP9_0 || par->profile == FF_PROFILE_VP9_1) return 8;
        return 0;
    case AV_CODEC_ID_VP8: case AV_CODEC_ID_MPEG4: case AV_CODEC_ID_H263: case AV_CODEC_ID_MPEG1VIDEO:
    case AV_CODEC_ID_MPEG2VIDEO: case AV_CODEC_ID_MSMPEG4V3: case AV_CODEC_ID_MJPEG:
        return 8;
    default:
        return 0;
    }
}

// Whether a Matroska file's EBML header names the "webm" DocType (element 0x4282, within the header's first bytes):
// FFmpeg reads WebM and MKV with one demuxer and does not say which it read.
static int is_webm(const dr_video *v) {
    uint8_t head[64] = {0};
    int64_t n = v->size < 64 ? v->size : 64;
    if (v->data) {
        memcpy(head, v->data, (size_t)n);
    } else if (v->reader) {
        int64_t got = v->reader(v->reader_context, 0, head, (int)n);
        if (got <= 0) return 0;
        n = got;
    } else {
        ssize_t got = pread(v->fd, head, (size_t)n, (off_t)v->base);
        if (got <= 0) return 0;
        n = got;
    }
    if (n < 8 || head[0] != 0x1A || head[1] != 0x45 || head[2] != 0xDF || head[3] != 0xA3) return 0;
    for (int64_t i = 4; i + 7 <= n; i++)
        if (head[i] == 0x42 && head[i + 1] == 0x82 && head[i + 2] == 0x84 && memcmp(head + i + 3, "webm", 4) == 0)
            return 1;
    return 0;
}

static void fill_info(dr_video *v, dr_video_info *info) {
    memset(info, 0, sizeof *info);
    const AVFormatContext *f = v->format;
    const AVStream *st = f->streams[v->stream];
    const AVCodecParameters *par = st->codecpar;
    const char *name = f->iformat->name;
    snprintf(info->container, sizeof info->container, "%s",
             strncmp(name, "mov", 3) == 0 ? "mp4" : strncmp(name, "matroska", 8) == 0 ? "matroska" : "avi");
    const AVDictionaryEntry *brand = av_dict_get(f->metadata, "major_brand", NULL, 0);
    if (brand) snprintf(info->brand, sizeof info->brand, "%s", brand->value);
    if (is_webm(v)) snprintf(info->brand, sizeof info->brand, "webm");
    snprintf(info->codec, sizeof info->codec, "%s", avcodec_get_name(par->codec_id));
    info->coded_width = par->width;
    info->coded_height = par->height;
    AVRational sar = av_guess_sample_aspect_ratio(v->format, (AVStream *)st, NULL);
    if (sar.num <= 0 || sar.den <= 0) sar = (AVRational){1, 1};
    info->sar_num = sar.num;
    info->sar_den = sar.den;
    info->duration = -1;
    if (st->duration != AV_NOPTS_VALUE && st->duration > 0)
        info->duration = (double)st->duration * av_q2d(st->time_base);
    else if (f->duration != AV_NOPTS_VALUE && f->duration > 0)
        info->duration = (double)f->duration / AV_TIME_BASE;
    AVRational rate = st->avg_frame_rate.num > 0 && st->avg_frame_rate.den > 0 ? st->avg_frame_rate : st->r_frame_rate;
    if (rate.num > 0 && rate.den > 0) {
        info->fps_num = rate.num;
        info->fps_den = rate.den;
    }
    info->frame_count = st->nb_frames > 0 ? st->nb_frames : 0;
    const int32_t *matrix = (const int32_t *)av_stream_get_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, NULL);
    if (matrix) {
        // av_display_rotation_get gives the counter-clockwise angle the matrix turns by; a negative determinant of
        // its 2×2 part is a mirror, whose angle is read from the matrix with its first column negated.
        int mirrored = (int64_t)matrix[0] * matrix[4] - (int64_t)matrix[1] * matrix[3] < 0;
        int32_t m[9];
        memcpy(m, matrix, sizeof m);
        if (mirrored) av_display_matrix_flip(m, 1, 0);
        double angle = -av_display_rotation_get(m);
        if (angle == angle) {  // not NaN
            int quarter = (int)((angle < 0 ? angle - 45 : angle + 45) / 90);
            info->rotation = ((quarter % 4) + 4) % 4 * 90;
        }
        info->mirrored = mirrored;
    }
    info->bit_depth = bit_depth_of(par);
    info->color_primaries = par->color_primaries;
    info->color_transfer = par->color_trc;
    info->color_matrix = par->color_space;
    info->full_range = par->color_range == AVCOL_RANGE_JPEG;
    const AVContentLightMetadata *light =
        (const AVContentLightMetadata *)av_stream_get_side_data(st, AV_PKT_DATA_CONTENT_LIGHT_LEVEL, NULL);
    if (light) {
        info->max_cll = (int)light->MaxCLL;
        info->max_fall = (int)light->MaxFALL;
    }
    for (unsigned i = 0; i < f->nb_streams; i++)
        if (f->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_AUDIO) info->has_audio = 1;
    info->stream_count = (int)f->nb_streams;
    // A QuickTime "mdta" key, which FFmpeg's reader lists under its full name
    const AVDictionaryEntry *identifier = av_dict_get(f->metadata, "com.apple.quicktime.content.identifier", NULL, 0);
    if (identifier) snprintf(info->content_identifier, sizeof info->content_identifier, "%s", identifier->value);
}

// FFmpeg's log is process-wide and goes to standard error: Darkroom reports through its status codes and messages,
// so the libraries are told to keep quiet (a decoder announcing its version, a damaged file's every packet).
static pthread_once_t quiet_once = PTHREAD_ONCE_INIT;
static void quiet_logs(void) { av_log_set_level(AV_LOG_QUIET); }

static int open_common(dr_video *v, const dr_video_limits *limits, dr_video **out, dr_video_info *info, char *msg,
                       size_t msg_len) {
    pthread_once(&quiet_once, quiet_logs);
    *out = NULL;
    v->limits = *limits;
    v->stream = -1;
    int status = DR_VIDEO_ERR_NO_MEMORY;
    uint8_t *buffer = av_malloc(DR_VIDEO_IO_BUFFER);
    AVIOContext *io = buffer ? avio_alloc_context(buffer, DR_VIDEO_IO_BUFFER, 0, v, read_source, NULL, seek_source)
                             : NULL;
    AVFormatContext *f = io ? avformat_alloc_context() : NULL;
    if (!f) {
        if (io) av_freep(&io->buffer); else av_free(buffer);
        avio_context_free(&io);
        av_free(v);
        set_message(msg, msg_len, "out of memory opening the video", 0);
        return status;
    }
    f->pb = io;
    f->flags |= AVFMT_FLAG_CUSTOM_IO;
    f->io_open = refuse_open;
    f->interrupt_callback = (AVIOInterruptCB){interrupt, v};
    f->format_whitelist = av_strdup(DR_VIDEO_DEMUXERS);
    f->protocol_whitelist = av_strdup("none");
    f->max_streams = 64;
    v->format = f;
    int err = avformat_open_input(&v->format, NULL, NULL, NULL);
    if (err < 0) {
        // avformat_open_input frees the context on failure, but never a custom AVIOContext
        v->format = NULL;
        av_freep(&io->buffer);
        avio_context_free(&io);
        // The magic bytes named a container Darkroom reads: a demuxer that cannot read it found it damaged or cut
        status = err == AVERROR_INVALIDDATA ? DR_VIDEO_ERR_CORRUPT : status_of(v, err);
        set_message(msg, msg_len, "the container's header could not be read", err);
        av_free(v);
        return status;
    }
    for (unsigned i = 0; i < v->format->nb_streams; i++) {
        AVStream *st = v->format->streams[i];
        if (v->stream < 0 && st->codecpar->codec_type == AVMEDIA_TYPE_VIDEO &&
            !(st->disposition & AV_DISPOSITION_ATTACHED_PIC)) {
            v->stream = (int)i;
        } else {
            st->discard = AVDISCARD_ALL;  // the demuxer then skips their packets
        }
    }
    if (v->stream < 0) {
        set_message(msg, msg_len, "the container has no video stream", 0);
        dr_video_close(v);
        return DR_VIDEO_ERR_UNSUPPORTED;
    }
    AVCodecParameters *par = v->format->streams[v->stream]->codecpar;
    // The header of an MP4 or MKV names the size and codec; AVI and damaged files may need packets read to know it
    if (par->width <= 0 || par->height <= 0) {
        err = avformat_find_stream_info(v->format, NULL);
        if (err < 0 || par->width <= 0 || par->height <= 0) {
            set_message(msg, msg_len, "the video stream's size could not be found", err);
            int s = err < 0 ? status_of(v, err) : DR_VIDEO_ERR_CORRUPT;
            dr_video_close(v);
            return s;
        }
    }
    if (!is_allowed_codec(par->codec_id)) {
        char text[96];
        snprintf(text, sizeof text, "the video codec %s is not one Darkroom decodes", avcodec_get_name(par->codec_id));
        set_message(msg, msg_len, text, 0);
        dr_video_close(v);
        return DR_VIDEO_ERR_UNSUPPORTED;
    }
    if ((int64_t)par->width * par->height > limits->max_pixels) {
        set_message(msg, msg_len, "the video's frame is larger than the pixel limit", 0);
        dr_video_close(v);
        return DR_VIDEO_ERR_LIMIT;
    }
    fill_info(v, info);
    *out = v;
    return DR_VIDEO_OK;
}

int dr_video_open_memory(const uint8_t *data, size_t size, const dr_video_limits *limits, dr_video **out,
                         dr_video_info *info, char *msg, size_t msg_len) {
    if (!data || size == 0 || !limits || !out || !info) return DR_VIDEO_ERR_ARGUMENT;
    dr_video *v = av_mallocz(sizeof *v);
    if (!v) return DR_VIDEO_ERR_NO_MEMORY;
    v->data = data;
    v->fd = -1;
    v->size = (int64_t)size;
    return open_common(v, limits, out, info, msg, msg_len);
}

int dr_video_open_file(int fd, int64_t offset, int64_t size, const dr_video_limits *limits, dr_video **out,
                       dr_video_info *info, char *msg, size_t msg_len) {
    if (fd < 0 || offset < 0 || size <= 0 || !limits || !out || !info) return DR_VIDEO_ERR_ARGUMENT;
    dr_video *v = av_mallocz(sizeof *v);
    if (!v) return DR_VIDEO_ERR_NO_MEMORY;
    v->fd = fd;
    v->base = offset;
    v->size = size;
    return open_common(v, limits, out, info, msg, msg_len);
}

int dr_video_open_reader(dr_video_read_fn read, void *context, int64_t size, const dr_video_limits *limits,
                         dr_video **out, dr_video_info *info, char *msg, size_t msg_len) {
    if (!read || size <= 0 || !limits || !out || !info) return DR_VIDEO_ERR_ARGUMENT;
    dr_video *v = av_mallocz(sizeof *v);
    if (!v) return DR_VIDEO_ERR_NO_MEMORY;
    v->reader = read;
    v->reader_context = context;
    v->fd = -1;
    v->size = size;
    return open_common(v, limits, out, info, msg, msg_len);
}

void dr_video_set_deadline(dr_video *video, int64_t deadline_ns) {
    if (video) video->limits.deadline_ns = deadline_ns;
}

// MARK: Decoding

int dr_video_open_decoder(dr_video *v, int lowres, char *msg, size_t msg_len) {
    if (!v || v->codec) return DR_VIDEO_ERR_ARGUMENT;
    const AVCodecParameters *par = v->format->streams[v->stream]->codecpar;
    // dav1d, where the system has it, is FFmpeg's fast AV1 decoder; the native one needs hardware
    const AVCodec *decoder = par->codec_id == AV_CODEC_ID_AV1 ? avcodec_find_decoder_by_name("libdav1d") : NULL;
    if (!decoder) decoder = avcodec_find_decoder(par->codec_id);
    if (!decoder) {
        set_message(msg, msg_len, "FFmpeg has no decoder for this codec", 0);
        return DR_VIDEO_ERR_UNSUPPORTED;
    }
    v->codec = avcodec_alloc_context3(decoder);
    v->packet = av_packet_alloc();
    v->frame = av_frame_alloc();
    v->next = av_frame_alloc();
    if (!v->codec || !v->packet || !v->frame || !v->next) return DR_VIDEO_ERR_NO_MEMORY;
    int err = avcodec_parameters_to_context(v->codec, par);
    if (err < 0) {
        set_message(msg, msg_len, "the stream's parameters were refused", err);
        return status_of(v, err);
    }
    v->codec->thread_count = v->limits.threads > 0 ? v->limits.threads : 1;
    v->codec->pkt_timebase = v->format->streams[v->stream]->time_base;
    if (lowres > 0 && decoder->max_lowres > 0) v->codec->lowres = lowres < decoder->max_lowres ? lowres : decoder->max_lowres;
    err = avcodec_open2(v->codec, decoder, NULL);
    if (err < 0) {
        set_message(msg, msg_len, "FFmpeg could not open the decoder", err);
        return status_of(v, err);
    }
    return DR_VIDEO_OK;
}

int dr_video_seek(dr_video *v, double seconds, char *msg, size_t msg_len) {
    if (!v || !v->codec) return DR_VIDEO_ERR_ARGUMENT;
    AVStream *st = v->format->streams[v->stream];
    int64_t target = (int64_t)(seconds / av_q2d(st->time_base));
    if (st->start_time != AV_NOPTS_VALUE) target += st->start_time;
    int err = av_seek_frame(v->format, v->stream, target, AVSEEK_FLAG_BACKWARD);
    if (err < 0) {
        // No index (a damaged or streamed file): start again from the first byte
        err = avformat_seek_file(v->format, -1, INT64_MIN, 0, 0, AVSEEK_FLAG_BYTE);
        if (err < 0) {
            set_message(msg, msg_len, "the video could not be seek'd", err);
            return status_of(v, err);
        }
    }
    avcodec_flush_buffers(v->codec);
    v->draining = 0;
    v->key_drained = 0;
    return DR_VIDEO_OK;
}

// The presentation time of the packet in seconds from the stream's start; < 0 when it has none.
static double packet_seconds(const dr_video *v, const AVPacket *packet) {
    const AVStream *st = v->format->streams[v->stream];
    if (packet->pts == AV_NOPTS_VALUE) return -1;
    int64_t pts = packet->pts;
    if (st->start_time != AV_NOPTS_VALUE) pts -= st->start_time;
    return (double)pts * av_q2d(st->time_base);
}

int dr_video_decode_frame(dr_video *v, int keyframes_only, double skip_before, double *seconds, char *msg,
                          size_t msg_len) {
    if (!v || !v->codec || !seconds) return DR_VIDEO_ERR_ARGUMENT;
    v->codec->skip_frame = keyframes_only ? AVDISCARD_NONKEY : AVDISCARD_DEFAULT;
    int64_t packets = 0;
    for (;;) {
        if (past_deadline(v)) {
            set_message(msg, msg_len, "the video decode ran past its time limit", 0);
            return DR_VIDEO_ERR_LIMIT;
        }
        av_frame_unref(v->next);
        int err = avcodec_receive_frame(v->codec, v->next);
        if (err == 0) {
            if (v->next->flags & AV_FRAME_FLAG_CORRUPT) continue;
            av_frame_unref(v->frame);
            av_frame_move_ref(v->frame, v->next);
            AVStream *st = v->format->streams[v->stream];
            int64_t pts = v->frame->best_effort_timestamp;
            if (pts == AV_NOPTS_VALUE) {
                *seconds = -1;
            } else {
                if (st->start_time != AV_NOPTS_VALUE) pts -= st->start_time;
                *seconds = (double)pts * av_q2d(st->time_base);
            }
            v->has_frame = 1;
            return DR_VIDEO_OK;
        }
        if (err == AVERROR_EOF && v->key_drained && !v->draining) {
            // The keyframe gave no frame of its own (a hidden one): read on to the next keyframe
            avcodec_flush_buffers(v->codec);
            v->key_drained = 0;
            err = AVERROR(EAGAIN);
        }
        if (err == AVERROR_EOF) {
            set_message(msg, msg_len, "the video has no more frames", 0);
            return DR_VIDEO_ERR_END;
        }
        if (err != AVERROR(EAGAIN)) {
            set_message(msg, msg_len, "the decoder failed", err);
            return status_of(v, err);
        }
        if (v->draining) {
            set_message(msg, msg_len, "the video has no more frames", 0);
            return DR_VIDEO_ERR_END;
        }
        // The decoder wants input: the next packet of the video stream
        for (;;) {
            if (++packets > v->limits.max_packets) {
                set_message(msg, msg_len, "the video needed more packets than its limit for one frame", 0);
                return DR_VIDEO_ERR_LIMIT;
            }
            err = av_read_frame(v->format, v->packet);
            if (err < 0) {
                if (err == AVERROR_EXIT || past_deadline(v)) {
                    set_message(msg, msg_len, "the video decode ran past its time limit", 0);
                    return DR_VIDEO_ERR_LIMIT;
                }
                // The end, or damage the demuxer cannot read past: flush what the decoder holds
                v->draining = 1;
                avcodec_send_packet(v->codec, NULL);
                break;
            }
            // Only keyframes wanted: the others are not even parsed
            if (v->packet->stream_index != v->stream ||
                (keyframes_only && !(v->packet->flags & AV_PKT_FLAG_KEY))) {
                av_packet_unref(v->packet);
                continue;
            }
            if (v->key_drained) {
                avcodec_flush_buffers(v->codec);
                v->key_drained = 0;
            }
            if (!keyframes_only) {
                // The setting of the moment applies to this packet: it is decoded as it is sent (the decoder's
                // output buffer is empty, since receive_frame asked for input), or copied with it to a frame thread
                double at = packet_seconds(v, v->packet);
                v->codec->skip_frame = at >= 0 && at < skip_before ? AVDISCARD_NONREF : AVDISCARD_DEFAULT;
            }
            err = avcodec_send_packet(v->codec, v->packet);
            av_packet_unref(v->packet);
            if (keyframes_only && err >= 0) {
                // A keyframe decodes alone: draining makes the decoder give it now instead of after its reordering
                // delay (which, every other frame skipped, would be the next keyframe, seconds of packets later)
                avcodec_send_packet(v->codec, NULL);
                v->key_drained = 1;
            }
            // A packet the decoder refuses as invalid is skipped, as players do; the next may decode
            if (err < 0 && err != AVERROR(EAGAIN) && err != AVERROR_INVALIDDATA) {
                set_message(msg, msg_len, "the decoder refused a packet", err);
                return status_of(v, err);
            }
            break;
        }
    }
}

int dr_video_frame(const dr_video *v, int *width, int *height, int *is_keyframe) {
    if (!v || !v->has_frame) return DR_VIDEO_ERR_ARGUMENT;
    if (width) *width = v->frame->width;
    if (height) *height = v->frame->height;
    if (is_keyframe) *is_keyframe = v->frame->key_frame;
    return DR_VIDEO_OK;
}

// MARK: Scaling

int dr_video_scale(dr_video *v, int x, int y, int width, int height, uint8_t *dst, size_t stride, int dst_width,
                   int dst_height, int pixels, int filter, char *msg, size_t msg_len) {
    if (!v || !v->has_frame || !dst || dst_width <= 0 || dst_height <= 0) return DR_VIDEO_ERR_ARGUMENT;
    const AVFrame *f = v->frame;
    const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get((enum AVPixelFormat)f->format);
    if (!desc || (desc->flags & AV_PIX_FMT_FLAG_HWACCEL)) {
        set_message(msg, msg_len, "the decoder gave frames in a pixel format Darkroom cannot scale", 0);
        return DR_VIDEO_ERR_UNSUPPORTED;
    }
    // The region, widened to the chroma grid so every plane starts on a whole sample
    int gx = 1 << desc->log2_chroma_w, gy = 1 << desc->log2_chroma_h;
    int x0 = x / gx * gx, y0 = y / gy * gy;
    width += x - x0;
    height += y - y0;
    if (x0 < 0 || y0 < 0 || width <= 0 || height <= 0 || x0 + width > f->width || y0 + height > f->height)
        return DR_VIDEO_ERR_ARGUMENT;
    const uint8_t *planes[4] = {0};
    int strides[4] = {0};
    for (int p = 0; p < 4 && f->data[p]; p++) {
        int step = 1;
        for (int c = 0; c < desc->nb_components; c++)
            if (desc->comp[c].plane == p) step = desc->comp[c].step;
        int chroma = (p == 1 || p == 2) && !(desc->flags & AV_PIX_FMT_FLAG_RGB);
        int px = chroma ? x0 >> desc->log2_chroma_w : x0;
        int py = chroma ? y0 >> desc->log2_chroma_h : y0;
        planes[p] = f->data[p] + (ptrdiff_t)py * f->linesize[p] + (ptrdiff_t)px * step;
        strides[p] = f->linesize[p];
    }
    enum AVPixelFormat out = pixels == DR_VIDEO_GRAY8 ? AV_PIX_FMT_GRAY8
                             : pixels == DR_VIDEO_RGBA16 ? AV_PIX_FMT_RGBA64
                                                         : AV_PIX_FMT_BGRA;
    int kernel = filter == DR_VIDEO_LANCZOS ? SWS_LANCZOS
                 : filter == DR_VIDEO_AREA   ? SWS_AREA
                 : filter == DR_VIDEO_BILINEAR ? SWS_BILINEAR
                                               : SWS_BICUBIC;
    int flags = kernel | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT;
    v->scaler = sws_getCachedContext(v->scaler, width, height, (enum AVPixelFormat)f->format, dst_width, dst_height,
                                     out, flags, NULL, NULL, NULL);
    if (!v->scaler) {
        set_message(msg, msg_len, "libswscale could not scale this frame", 0);
        return DR_VIDEO_ERR_UNSUPPORTED;
    }
    // The frame's own matrix and range (the stream's tags, else the decoder's reading of the bitstream)
    int full = f->color_range == AVCOL_RANGE_JPEG || f->format == AV_PIX_FMT_YUVJ420P ||
               f->format == AV_PIX_FMT_YUVJ422P || f->format == AV_PIX_FMT_YUVJ444P;
    int space = f->colorspace == AVCOL_SPC_UNSPECIFIED ? SWS_CS_DEFAULT : (int)f->colorspace;
    if (!(desc->flags & AV_PIX_FMT_FLAG_RGB))
        sws_setColorspaceDetails(v->scaler, sws_getCoefficients(space), full, sws_getCoefficients(SWS_CS_DEFAULT), 1,
                                 0, 1 << 16, 1 << 16);
    uint8_t *dsts[4] = {dst, NULL, NULL, NULL};
    int dst_strides[4] = {(int)stride, 0, 0, 0};
    int rows = sws_scale(v->scaler, planes, strides, 0, height, dsts, dst_strides);
    if (rows != dst_height) {
        set_message(msg, msg_len, "libswscale scaled fewer rows than asked", 0);
        return DR_VIDEO_ERR_CORRUPT;
    }
    return DR_VIDEO_OK;
}

void dr_video_close(dr_video *v) {
    if (!v) return;
    sws_freeContext(v->scaler);
    av_frame_free(&v->frame);
    av_frame_free(&v->next);
    av_packet_free(&v->packet);
    avcodec_free_context(&v->codec);
    if (v->format) {
        AVIOContext *io = v->format->pb;
        avformat_close_input(&v->format);  // leaves a custom AVIOContext to its owner
        if (io) {
            av_freep(&io->buffer);
            avio_context_free(&io);
        }
    }
    av_free(v);
}

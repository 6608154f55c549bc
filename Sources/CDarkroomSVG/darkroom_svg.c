#include "darkroom_svg.h"

#include <cairo.h>
#include <errno.h>
#include <librsvg/rsvg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct dr_svg {
    RsvgHandle *handle;
};

/* One render, shared by the caller and the render thread; whoever finishes last frees it. */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t done_cond;
    int done;
    int abandoned;
    int status;
    char message[256];
    RsvgHandle *handle; /* a reference of the render's own */
    uint8_t *pixels;
    int width, height, stride;
    RsvgRectangle viewport;
} render_job;

static void copy_message(char *out, size_t length, const char *text) {
    if (out && length > 0) snprintf(out, length, "%s", text ? text : "");
}

int dr_svg_open(const void *data, size_t length, dr_svg **out, char *message, size_t message_length) {
    if (!data || !out) return DR_SVG_ERR_ARGUMENT;
    *out = NULL;
    GError *error = NULL;
    /* No base URL: librsvg resolves no external reference (files, http, relative paths); libxml2's own safety
     * limits stay on (no RSVG_HANDLE_FLAG_UNLIMITED). */
    RsvgHandle *handle = rsvg_handle_new_from_data((const guint8 *)data, (gsize)length, &error);
    if (!handle) {
        copy_message(message, message_length, error ? error->message : "librsvg could not parse the document");
        if (error) g_error_free(error);
        return DR_SVG_ERR_PARSE;
    }
    rsvg_handle_set_dpi(handle, 96);
    dr_svg *svg = calloc(1, sizeof *svg);
    if (!svg) {
        g_object_unref(handle);
        return DR_SVG_ERR_NO_MEMORY;
    }
    svg->handle = handle;
    *out = svg;
    return DR_SVG_OK;
}

void dr_svg_close(dr_svg *svg) {
    if (!svg) return;
    g_object_unref(svg->handle);
    free(svg);
}

void dr_svg_size(dr_svg *svg, double *width, double *height, int *has_size) {
    double w = 0, h = 0;
    *has_size = 0;
    if (rsvg_handle_get_intrinsic_size_in_pixels(svg->handle, &w, &h) && w > 0 && h > 0) {
        *has_size = 1;
    } else {
        gboolean has_width = FALSE, has_height = FALSE, has_viewbox = FALSE;
        RsvgLength lw, lh;
        RsvgRectangle viewbox;
        rsvg_handle_get_intrinsic_dimensions(svg->handle, &has_width, &lw, &has_height, &lh, &has_viewbox, &viewbox);
        if (has_viewbox && viewbox.width > 0 && viewbox.height > 0) {
            w = viewbox.width;
            h = viewbox.height;
            *has_size = 1;
        } else {
            w = 300;
            h = 150;
        }
    }
    *width = w;
    *height = h;
}

/* Render threads still drawing, overrunning ones included (bounded by dr_svg_render's max_running). */
static int running_renders = 0;

int dr_svg_running(void) { return __atomic_load_n(&running_renders, __ATOMIC_SEQ_CST); }

static void finish_job(render_job *job, int free_it) {
    if (!free_it) return;
    g_object_unref(job->handle);
    free(job->pixels);
    pthread_mutex_destroy(&job->lock);
    pthread_cond_destroy(&job->done_cond);
    free(job);
}

static void *render_thread(void *arg) {
    render_job *job = arg;
    int status = DR_SVG_OK;
    char message[256] = "";
    cairo_surface_t *surface = cairo_image_surface_create_for_data(job->pixels, CAIRO_FORMAT_ARGB32, job->width,
                                                                   job->height, job->stride);
    cairo_t *cr = cairo_create(surface);
    GError *error = NULL;
    if (cairo_status(cr) != CAIRO_STATUS_SUCCESS) {
        status = DR_SVG_ERR_NO_MEMORY;
    } else if (!rsvg_handle_render_document(job->handle, cr, &job->viewport, &error)) {
        status = DR_SVG_ERR_RENDER;
        snprintf(message, sizeof message, "%s", error ? error->message : "librsvg could not render the document");
        if (error) g_error_free(error);
    } else if (cairo_status(cr) != CAIRO_STATUS_SUCCESS) {
        status = DR_SVG_ERR_RENDER;
        snprintf(message, sizeof message, "%s", cairo_status_to_string(cairo_status(cr)));
    }
    cairo_destroy(cr);
    cairo_surface_flush(surface);
    cairo_surface_destroy(surface);
    pthread_mutex_lock(&job->lock);
    job->done = 1;
    job->status = status;
    memcpy(job->message, message, sizeof message);
    int abandoned = job->abandoned;
    pthread_cond_signal(&job->done_cond);
    pthread_mutex_unlock(&job->lock);
    finish_job(job, abandoned);
    __atomic_sub_fetch(&running_renders, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

int dr_svg_render(dr_svg *svg, uint8_t *out, int width, int height, size_t stride, double x, double y, double w,
                  double h, double seconds, int max_running, char *message, size_t message_length) {
    if (!svg || !out || width <= 0 || height <= 0) return DR_SVG_ERR_ARGUMENT;
    int own_stride = cairo_format_stride_for_width(CAIRO_FORMAT_ARGB32, width);
    if (own_stride <= 0 || stride < (size_t)width * 4) return DR_SVG_ERR_ARGUMENT;
    /* Take a place among the running renders, or refuse: the thread gives it back when it ends */
    if (__atomic_add_fetch(&running_renders, 1, __ATOMIC_SEQ_CST) > (max_running > 0 ? max_running : 1)) {
        __atomic_sub_fetch(&running_renders, 1, __ATOMIC_SEQ_CST);
        copy_message(message, message_length, "too many SVG renders are still running");
        return DR_SVG_ERR_BUSY;
    }
    render_job *job = calloc(1, sizeof *job);
    if (!job) {
        __atomic_sub_fetch(&running_renders, 1, __ATOMIC_SEQ_CST);
        return DR_SVG_ERR_NO_MEMORY;
    }
    job->pixels = calloc((size_t)own_stride, (size_t)height);
    if (!job->pixels) {
        free(job);
        __atomic_sub_fetch(&running_renders, 1, __ATOMIC_SEQ_CST);
        return DR_SVG_ERR_NO_MEMORY;
    }
    pthread_mutex_init(&job->lock, NULL);
    pthread_cond_init(&job->done_cond, NULL);
    job->handle = g_object_ref(svg->handle);
    job->width = width;
    job->height = height;
    job->stride = own_stride;
    job->viewport = (RsvgRectangle){x, y, w, h};

    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    int started = pthread_create(&thread, &attributes, render_thread, job);
    pthread_attr_destroy(&attributes);
    if (started != 0) {
        finish_job(job, 1);
        __atomic_sub_fetch(&running_renders, 1, __ATOMIC_SEQ_CST);
        return DR_SVG_ERR_NO_MEMORY;
    }
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    double whole = (double)(long)seconds;
    deadline.tv_sec += (time_t)whole;
    deadline.tv_nsec += (long)((seconds - whole) * 1e9);
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec += 1;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&job->lock);
    int waited = 0;
    while (!job->done && waited != ETIMEDOUT) waited = pthread_cond_timedwait(&job->done_cond, &job->lock, &deadline);
    if (!job->done) {
        job->abandoned = 1; /* the render thread frees the job when it ends */
        pthread_mutex_unlock(&job->lock);
        copy_message(message, message_length, "the SVG render did not finish in time");
        return DR_SVG_ERR_TIMEOUT;
    }
    pthread_mutex_unlock(&job->lock);
    int status = job->status;
    copy_message(message, message_length, job->message);
    if (status == DR_SVG_OK) {
        for (int row = 0; row < height; row++) {
            memcpy(out + (size_t)row * stride, job->pixels + (size_t)row * (size_t)own_stride, (size_t)width * 4);
        }
    }
    finish_job(job, 1);
    return status;
}

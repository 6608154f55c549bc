import DarkroomImage
import Foundation

/// The HTML of `GET /` (one folder of the library: breadcrumbs, its subfolders with their image counts, a page of
/// its images) and `GET /view` (one image, large).
///
/// Folders and images are in UTF-8 byte order, so pages are stable; `?dir=PATH&page=N` names a folder and a page
/// (``ServerConfiguration/galleryPageSize`` images each). Thumbnails are square `cover` crops, `loading="lazy"` with
/// a `srcset` for 1× and 2× screens, so the browser fetches only what scrolls into view at the density it needs.
/// A click opens a `<dialog>` viewer (script at `/assets/gallery.js`); without script the link opens `/view`.
/// With a signing key every image and `/view` URL is signed. Cost: a lookup in the kept listing (``GalleryIndex``) and one
/// page of HTML — no disk access.
struct GalleryPage: Sendable {
    let signer: RequestSigner?
    let pageSize: Int
    /// ThumbHash placeholders known so far; each cell with one carries it in `data-thumbhash` for the script to
    /// paint while the thumbnail loads.
    let placeholders: GalleryPlaceholders?
    /// Thumbnail edge in CSS pixels.
    static let thumbSize = 256
    /// Viewer box edge in CSS pixels.
    static let viewerSize = 1280

    /// A signed-if-needed `/v1/thumb` URL (with `motion`, a video's motion, animated).
    func thumbURL(_ src: String, size: Int, fit: String, motion: Bool = false) -> String {
        var query: [(name: String, value: String)] = [
            ("src", src), ("w", String(size)), ("h", String(size)), ("fit", fit),
        ]
        if motion { query.append(("motion", "1")) }
        let path = "/v1/thumb"
        if let signer { return path + "?" + signer.signedQuery(path: path, query: query) }
        return path + "?" + QueryString.build(query)
    }

    /// A signed-if-needed `/v1/info` URL: the source's facts as JSON (a video cell's script reads its duration).
    func infoURL(_ src: String) -> String {
        let query: [(name: String, value: String)] = [("src", src)]
        if let signer { return "/v1/info?" + signer.signedQuery(path: "/v1/info", query: query) }
        return "/v1/info?" + QueryString.build(query)
    }

    /// A signed-if-needed `/view` URL (the page a thumbnail links to without script).
    func viewURL(_ src: String) -> String {
        let query: [(name: String, value: String)] = [("src", src)]
        if let signer { return "/view?" + signer.signedQuery(path: "/view", query: query) }
        return "/view?" + QueryString.build(query)
    }

    private func srcset(_ src: String, size: Int, fit: String) -> (src: String, srcset: String) {
        let one = thumbURL(src, size: size, fit: fit)
        let two = thumbURL(src, size: size * 2, fit: fit)
        return (one, "\(escape(one)) 1x, \(escape(two)) 2x")
    }

    /// A link to `dir` (and a page of it).
    private func folderLink(_ dir: String, page: Int = 1) -> String {
        var query: [(name: String, value: String)] = []
        if !dir.isEmpty { query.append(("dir", dir)) }
        if page > 1 { query.append(("page", String(page))) }
        return query.isEmpty ? "/" : "/?" + escape(QueryString.build(query))
    }

    /// One folder's page. Throws `notFound` for a folder the listing does not have or a page past its last.
    func index(_ snapshot: GalleryIndex.Snapshot?, dir: String, page: Int) throws(ServerError) -> String {
        let folder = snapshot.flatMap { $0.folders[dir] } ?? (dir.isEmpty ? RootDirectory.Folder() : nil)
        guard let folder else { throw ServerError(.notFound, "no folder \(dir.prefix(200)) in the library") }
        let pages = max(1, (folder.images.count + pageSize - 1) / pageSize)
        guard page >= 1, page <= pages else { throw ServerError(.notFound, "no page \(page) in \(dir.prefix(200))") }
        let prefix = dir.isEmpty ? "" : dir + "/"
        var crumbs = dir.isEmpty ? "Library" : "<a href=\"/\">Library</a>"
        var walked = ""
        let parts = dir.split(separator: "/").map(String.init)
        for (i, part) in parts.enumerated() {
            walked += (walked.isEmpty ? "" : "/") + part
            crumbs +=
                " / " + (i == parts.count - 1 ? escape(part) : "<a href=\"\(folderLink(walked))\">\(escape(part))</a>")
        }
        var folders = ""
        for name in folder.folders {
            let count = snapshot?.folders[prefix + name]?.totalImages ?? 0
            folders += """
                <a class="folder" href="\(folderLink(prefix + name))">\(escape(name))<span>\(count)</span></a>

                """
        }
        var cells = ""
        for name in folder.images.dropFirst((page - 1) * pageSize).prefix(pageSize) {
            let src = prefix + name
            let (one, set) = srcset(src, size: Self.thumbSize, fit: "cover")
            let (large, largeSet) = srcset(src, size: Self.viewerSize, fit: "contain")
            let hash =
                placeholders?.hash(for: src).map { " data-thumbhash=\"\(Data($0).base64EncodedString())\"" } ?? ""
            // A video's cell is its poster frame, marked, and plays its motion while the pointer is over it; its
            // duration is read from /v1/info once the cell scrolls into view (the page itself reads no file)
            let video =
                FileExtensions.isVideo(name)
                ? " video\" data-motion=\"\(escape(thumbURL(src, size: Self.thumbSize, fit: "cover", motion: true)))\" "
                    + "data-info=\"\(escape(infoURL(src)))"
                : ""
            cells += """
                <a class="thumb\(video)" href="\(escape(viewURL(src)))" data-large="\(escape(large))" \
                data-large-srcset="\(largeSet)" title="\(escape(src))"><img loading="lazy"\(hash) decoding="async" \
                width="\(Self.thumbSize)" height="\(Self.thumbSize)" src="\(escape(one))" srcset="\(set)" alt="\(escape(src))"></a>

                """
        }
        var pager = ""
        if pages > 1 {
            if page > 1 { pager += "<a rel=\"prev\" href=\"\(folderLink(dir, page: page - 1))\">← Previous</a> " }
            let window = Set([1, pages] + Array(max(1, page - 3)...min(pages, page + 3)))
            var last = 0
            for n in window.sorted() {
                if n > last + 1 { pager += "… " }
                pager += n == page ? "<b>\(n)</b> " : "<a href=\"\(folderLink(dir, page: n))\">\(n)</a> "
                last = n
            }
            if page < pages { pager += "<a rel=\"next\" href=\"\(folderLink(dir, page: page + 1))\">Next →</a>" }
            pager = "<nav class=\"pager\">\(pager)</nav>"
        }
        let here = folder.images.count
        let summary =
            "\(here) image\(here == 1 ? "" : "s") here"
            + (folder.totalImages != here ? ", \(folder.totalImages) with subfolders" : "")
            + (pages > 1 ? " · page \(page) of \(pages)" : "")
        let empty = folder.totalImages == 0 ? "<p class=\"empty\">No images under the root.</p>" : ""
        return self.page(
            title: "Darkroom — \(dir.isEmpty ? "Library" : dir) — \(folder.totalImages) images",
            body: """
                <header><h1>Darkroom</h1><nav class="crumbs">\(crumbs)</nav><p>\(summary)</p></header>
                \(empty)\(folders.isEmpty ? "" : "<section class=\"folders\">\n\(folders)</section>")
                <main class="grid">
                \(cells)</main>
                \(pager)
                <dialog id="viewer"><form method="dialog"><button aria-label="Close">×</button></form>
                <img id="viewer-image" alt=""><p id="viewer-caption"></p></dialog>
                <script src="/assets/gallery.js" defer></script>
                """)
    }

    func viewer(_ src: String) -> String {
        let (large, set) = srcset(src, size: Self.viewerSize, fit: "contain")
        return self.page(
            title: "Darkroom — \(src)",
            body: """
                <header><h1><a href="/">Darkroom</a></h1><p>\(escape(src))</p></header>
                <main class="single"><img id="viewer-image" src="\(escape(large))" srcset="\(set)" alt="\(escape(src))"></main>
                """)
    }

    private func page(title: String, body: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(escape(title))</title>
        <style>
        body { margin: 0; font: 15px/1.4 system-ui, sans-serif; background: #111; color: #ddd; }
        header { padding: 16px 24px; } h1 { margin: 0; font-size: 20px; } h1 a { color: inherit; }
        header p { margin: 4px 0 0; color: #999; }
        .grid { display: grid; grid-template-columns: repeat(auto-fill, 256px); justify-content: center; gap: 8px; padding: 0 24px 24px; }
        .thumb { display: block; width: 256px; height: 256px; background: #222; overflow: hidden; border-radius: 4px; }
        .thumb img { width: 100%; height: 100%; object-fit: cover; display: block; }
        .thumb.video { position: relative; }
        .thumb.video .duration { position: absolute; right: 8px; bottom: 8px; padding: 2px 5px; border-radius: 3px; background: rgba(0,0,0,.65); color: #fff; font: 12px/1.2 system-ui, sans-serif; pointer-events: none; }
        .thumb.video::after { content: "\\25B6"; position: absolute; left: 10px; bottom: 8px; color: #fff; font-size: 22px; text-shadow: 0 0 4px #000; pointer-events: none; }
        .single { padding: 0 24px 24px; } .single img { max-width: 100%; max-height: 85vh; }
        dialog { background: #000; border: 0; padding: 8px; max-width: 95vw; max-height: 95vh; color: #ddd; }
        dialog::backdrop { background: rgba(0,0,0,.85); }
        dialog img { max-width: 90vw; max-height: 85vh; display: block; margin: auto; }
        dialog form { text-align: right; } dialog button { font-size: 24px; background: none; color: #ddd; border: 0; cursor: pointer; }
        .empty { padding: 0 24px; }
        .crumbs { margin-top: 4px; } .crumbs a, .pager a { color: #8cf; }
        .folders { display: flex; flex-wrap: wrap; gap: 8px; padding: 0 24px 16px; }
        .folder { background: #222; color: #ddd; padding: 8px 12px; border-radius: 4px; text-decoration: none; }
        .folder span { color: #888; margin-left: 8px; }
        .pager { padding: 8px 24px 32px; text-align: center; } .pager b { color: #fff; }
        </style></head><body>
        \(body)
        </body></html>
        """
    }

    /// The viewer: opens the `<dialog>` on a thumbnail click (plain clicks only), closes on Escape or ×,
    /// arrow keys step through the grid.
    static let script = """
        // ThumbHash placeholders: github.com/evanw/thumbhash's thumbHashToRGBA, painted as the image's background
        // until it loads.
        const thumbHashToRGBA = (hash) => {
          const { PI, min, max, cos, round } = Math;
          const h24 = hash[0] | (hash[1] << 8) | (hash[2] << 16), h16 = hash[3] | (hash[4] << 8);
          const lDC = (h24 & 63) / 63, pDC = ((h24 >> 6) & 63) / 31.5 - 1, qDC = ((h24 >> 12) & 63) / 31.5 - 1;
          const lScale = ((h24 >> 18) & 31) / 31, hasAlpha = h24 >> 23;
          const pScale = ((h16 >> 3) & 63) / 63, qScale = ((h16 >> 9) & 63) / 63, landscape = h16 >> 15;
          const lx = max(3, landscape ? (hasAlpha ? 5 : 7) : h16 & 7);
          const ly = max(3, landscape ? h16 & 7 : (hasAlpha ? 5 : 7));
          const aDC = hasAlpha ? (hash[5] & 15) / 15 : 1, aScale = (hash[5] >> 4) / 15;
          const start = hasAlpha ? 6 : 5;
          let index = 0;
          const channel = (nx, ny, scale) => {
            const ac = [];
            for (let cy = 0; cy < ny; cy++)
              for (let cx = cy ? 0 : 1; cx * ny < nx * (ny - cy); cx++)
                ac.push((((hash[start + (index >> 1)] >> ((index++ & 1) << 2)) & 15) / 7.5 - 1) * scale);
            return ac;
          };
          const lAC = channel(lx, ly, lScale), pAC = channel(3, 3, pScale * 1.25), qAC = channel(3, 3, qScale * 1.25);
          const aAC = hasAlpha && channel(5, 5, aScale);
          const rlx = landscape ? (hasAlpha ? 5 : 7) : hash[3] & 7, rly = landscape ? hash[3] & 7 : (hasAlpha ? 5 : 7);
          const ratio = rlx / rly;
          const w = round(ratio > 1 ? 32 : 32 * ratio), h = round(ratio > 1 ? 32 / ratio : 32);
          const rgba = new Uint8ClampedArray(w * h * 4), fx = [], fy = [];
          for (let y = 0, i = 0; y < h; y++) {
            for (let x = 0; x < w; x++, i += 4) {
              let l = lDC, p = pDC, q = qDC, a = aDC;
              for (let cx = 0, n = max(lx, hasAlpha ? 5 : 3); cx < n; cx++) fx[cx] = cos(PI / w * (x + 0.5) * cx);
              for (let cy = 0, n = max(ly, hasAlpha ? 5 : 3); cy < n; cy++) fy[cy] = cos(PI / h * (y + 0.5) * cy);
              for (let cy = 0, j = 0; cy < ly; cy++)
                for (let cx = cy ? 0 : 1, f = fy[cy] * 2; cx * ly < lx * (ly - cy); cx++, j++) l += lAC[j] * fx[cx] * f;
              for (let cy = 0, j = 0; cy < 3; cy++)
                for (let cx = cy ? 0 : 1, f = fy[cy] * 2; cx < 3 - cy; cx++, j++) {
                  p += pAC[j] * fx[cx] * f; q += qAC[j] * fx[cx] * f;
                }
              if (hasAlpha)
                for (let cy = 0, j = 0; cy < 5; cy++)
                  for (let cx = cy ? 0 : 1, f = fy[cy] * 2; cx < 5 - cy; cx++, j++) a += aAC[j] * fx[cx] * f;
              const b = l - 2 / 3 * p, r = (3 * l - b + q) / 2, g = r - q;
              rgba[i] = max(0, 255 * min(1, r)); rgba[i + 1] = max(0, 255 * min(1, g));
              rgba[i + 2] = max(0, 255 * min(1, b)); rgba[i + 3] = max(0, 255 * min(1, a));
            }
          }
          return { w, h, rgba };
        };
        document.querySelectorAll('img[data-thumbhash]').forEach((img) => {
          if (img.complete && img.naturalWidth > 0) return;
          try {
            const bytes = Uint8Array.from(atob(img.dataset.thumbhash), (c) => c.charCodeAt(0));
            const { w, h, rgba } = thumbHashToRGBA(bytes);
            const canvas = document.createElement('canvas');
            canvas.width = w; canvas.height = h;
            canvas.getContext('2d').putImageData(new ImageData(rgba, w, h), 0, 0);
            img.style.background = `url(${canvas.toDataURL()}) center / cover no-repeat`;
            img.addEventListener('load', () => { img.style.background = ''; }, { once: true });
          } catch (e) { /* a bad hash only means no placeholder */ }
        });
        window.thumbHashToRGBA = thumbHashToRGBA;
        // A video's cell plays its motion (an animated WebP) while the pointer is over it, then shows its poster again
        document.querySelectorAll('a.thumb.video').forEach((a) => {
          const img = a.querySelector('img');
          const still = { src: img.getAttribute('src'), srcset: img.getAttribute('srcset') };
          a.addEventListener('mouseenter', () => { img.removeAttribute('srcset'); img.src = a.dataset.motion; });
          a.addEventListener('mouseleave', () => { img.srcset = still.srcset; img.src = still.src; });
        });
        // A video's duration (m:ss, or h:mm:ss), read from /v1/info when its cell first comes into view
        const clock = (seconds) => {
          const s = Math.round(seconds), h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, r = String(s % 60).padStart(2, '0');
          return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${r}` : `${m}:${r}`;
        };
        const showDuration = (a) => fetch(a.dataset.info).then((r) => r.ok ? r.json() : null).then((info) => {
          const seconds = info && info.video && info.video.duration;
          if (typeof seconds !== 'number' || !isFinite(seconds)) return;
          const badge = document.createElement('span');
          badge.className = 'duration';
          badge.textContent = clock(seconds);
          a.appendChild(badge);
        }).catch(() => { /* no duration shown: the cell is still the video's */ });
        const videoCells = document.querySelectorAll('a.thumb.video[data-info]');
        if ('IntersectionObserver' in window) {
          const watch = new IntersectionObserver((entries) => entries.forEach((e) => {
            if (e.isIntersecting) { watch.unobserve(e.target); showDuration(e.target); }
          }), { rootMargin: '200px' });
          videoCells.forEach((a) => watch.observe(a));
        } else {
          videoCells.forEach(showDuration);
        }
        (() => {
          const viewer = document.getElementById('viewer');
          const image = document.getElementById('viewer-image');
          const caption = document.getElementById('viewer-caption');
          if (!viewer || typeof viewer.showModal !== 'function') return;
          const thumbs = Array.from(document.querySelectorAll('a.thumb'));
          let current = -1;
          const show = (i) => {
            const a = thumbs[i]; if (!a) return;
            current = i;
            image.removeAttribute('src');
            image.srcset = a.dataset.largeSrcset;
            image.src = a.dataset.large;
            image.alt = a.title;
            caption.textContent = a.title;
            if (!viewer.open) viewer.showModal();
          };
          thumbs.forEach((a, i) => a.addEventListener('click', (e) => {
            if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
            e.preventDefault(); show(i);
          }));
          document.addEventListener('keydown', (e) => {
            if (!viewer.open) return;
            if (e.key === 'ArrowRight') show(Math.min(thumbs.length - 1, current + 1));
            if (e.key === 'ArrowLeft') show(Math.max(0, current - 1));
          });
          viewer.addEventListener('click', (e) => { if (e.target === viewer) viewer.close(); });
        })();
        """

    /// HTML-escapes text and attribute values.
    func escape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }
}

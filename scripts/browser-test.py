#!/usr/bin/env python3
"""Real-browser test of `darkroom serve`'s gallery page, in headless Chromium.

    python3 scripts/browser-test.py [--darkroom .build/release/darkroom] [--photos ../shared/photos]
                                    [--screenshot docs/gallery.png] [--url URL]

Builds a temporary library (a folder of 450 generated PNGs and one of the sample photos), starts
`darkroom serve` on it on a free port with a temporary cache dir (or, with --url, tests a server that is
already running), loads the gallery at 1280x900 and checks: the root lists the folders with their counts;
opening the largest shows its true count; its Next links lead to page 3; there, >= 8 `a.thumb img`;
every thumbnail lazy with a 1x and a 2x srcset candidate; the thumbnails in view load (and, when the page
is tall enough, some far below the fold do not: lazy loading works); clicking the first thumbnail opens
dialog#viewer whose #viewer-image loads larger than 256 px; the no-JS link /view?src=... does too; the videos
folder's cells carry a play badge and their poster frame, and play their motion while hovered (pixels change),
their poster again after.
Saves a screenshot of the gallery and one of the open viewer (`-viewer` suffix). Exit code 0 when every
check passes, 1 when one fails, 2 when the test could not run (server or browser did not start).

Drives Chromium over the DevTools protocol (a websocket, no chromedriver, no npm). Installs what is
missing: Debian's `chromium` (apt-get, sudo only when not root) and PyPI's `websocket-client` in a
venv under .build-bench/ (the script re-executes itself in that venv).
"""
import argparse, base64, json, os, re, shutil, signal, socket, subprocess, sys, tempfile, threading, time
import urllib.error, urllib.parse, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, ".build-bench", "browser-venv")
WIDTH, HEIGHT = 1280, 900
LOAD_TIMEOUT = 20.0          # seconds for the thumbnails in view, and for the viewer image, to load
# Chromium loads a lazy image once it is nearer the viewport than a threshold that depends on the
# effective connection type (1250 px on 4G, which we force; up to 3000 px when unknown, more on slow
# networks). Images more than this far below the fold must not have loaded before any scroll.
LAZY_MARGIN = 3000


def log(msg):
    print(f"browser-test: {msg}", flush=True)


# ---------------------------------------------------------------------------------------------- setup

def ensure_websocket_client():
    """Import websocket-client, or re-execute this script in .build-bench/browser-venv where it is installed."""
    try:
        import websocket  # noqa: F401
        return
    except ImportError:
        pass
    if os.environ.get("DARKROOM_BROWSER_TEST_VENV"):
        sys.exit("browser-test: websocket-client is not importable even in the venv " + VENV)
    py = os.path.join(VENV, "bin", "python")
    usable = os.path.exists(py) and subprocess.run([py, "-c", "import websocket, thumbhash"],
                                                   capture_output=True).returncode == 0
    if not usable:
        log(f"creating venv {os.path.relpath(VENV)} with websocket-client")
        shutil.rmtree(VENV, ignore_errors=True)
        os.makedirs(os.path.dirname(VENV), exist_ok=True)
        if subprocess.run([sys.executable, "-m", "venv", VENV]).returncode != 0:
            # Debian's own python3 needs python3-venv for ensurepip.
            apt_install(["python3-venv"])
            shutil.rmtree(VENV, ignore_errors=True)
            subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", "websocket-client",
                        "thumbhash"], check=True)
    env = dict(os.environ, DARKROOM_BROWSER_TEST_VENV="1")
    os.execve(py, [py, os.path.abspath(__file__)] + sys.argv[1:], env)


def apt_install(packages):
    if not shutil.which("apt-get"):
        sys.exit(f"browser-test: need {' '.join(packages)} and there is no apt-get here; install it by hand")
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    log(f"installing {' '.join(packages)} (apt-get)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(sudo + ["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "--no-install-recommends"] + packages,
                   check=True, env=env, stdout=subprocess.DEVNULL)


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    apt_install(["chromium"])
    path = shutil.which("chromium")
    if not path:
        sys.exit("browser-test: apt-get installed chromium but `chromium` is not on PATH")
    return path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, timeout=10):
    """(status, body) of a GET; status 0 with the error text when the server cannot be reached."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except (urllib.error.URLError, OSError) as e:
        return 0, str(e).encode()


class Server:
    """`darkroom serve` on a free port with a temporary cache dir; its output is echoed with a prefix."""

    def __init__(self, darkroom, photos):
        self.port = free_port()
        self.cache = tempfile.mkdtemp(prefix="darkroom-browser-test-cache-")
        self.url = f"http://127.0.0.1:{self.port}/"
        self.url_re = re.compile(re.escape(self.url[:-1]) + r"(/|\b)")  # the contract says ".../"; accept it without
        self.ready = threading.Event()
        self.lines = []
        cmd = [darkroom, "serve", "--host", "127.0.0.1", "--port", str(self.port), "--root", photos,
               "--cache-dir", self.cache]
        log("starting " + " ".join(cmd))
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     errors="replace", bufsize=1)
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        for line in self.proc.stdout:
            line = line.rstrip("\n")
            self.lines.append(line)
            print(f"  [darkroom] {line}", flush=True)
            if self.url_re.search(line):
                self.ready.set()

    def wait_ready(self, timeout=60):
        """Until the ready line is printed or, failing that, GET /health answers 200 (then returns a note)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.ready.wait(0.2):
                return None
            if self.proc.poll() is not None:
                raise SetupError(f"darkroom serve exited with code {self.proc.returncode} before printing {self.url}")
            if http_get(self.url + "health", timeout=2)[0] == 200 and not self.ready.wait(1.0):
                note = (f"darkroom serve answers /health but has not printed its ready line ({self.url}): "
                        "its stdout is probably block-buffered when not a terminal (flush it after printing)")
                log("WARNING: " + note)
                return note
        raise SetupError(f"darkroom serve did not print {self.url} (nor answer /health) within {timeout} s")

    def stop(self):
        if self.proc.poll() is None:
            log(f"stopping darkroom serve (SIGTERM to pid {self.proc.pid})")
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                log("darkroom serve did not stop within 15 s of SIGTERM; killing it")
                self.proc.kill()
                self.proc.wait()
            log(f"darkroom serve exited with code {self.proc.returncode}")
        shutil.rmtree(self.cache, ignore_errors=True)


class SetupError(Exception):
    pass


# ------------------------------------------------------------------------------------------- browser

class Browser:
    """Headless Chromium with one page, driven over the DevTools protocol."""

    def __init__(self, chromium):
        import websocket
        self.profile = tempfile.mkdtemp(prefix="darkroom-browser-test-chromium-")
        args = [chromium, "--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--no-default-browser-check", "--disable-extensions", "--hide-scrollbars", "--mute-audio",
                "--disable-background-networking", "--disable-sync", "--password-store=basic",
                "--force-effective-connection-type=4G", f"--window-size={WIDTH},{HEIGHT}",
                "--remote-debugging-port=0", "--remote-allow-origins=*", f"--user-data-dir={self.profile}",
                "about:blank"]
        if os.geteuid() == 0:
            args.insert(1, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
        self.stderr = tempfile.NamedTemporaryFile("w+", prefix="darkroom-browser-test-chromium-", suffix=".log")
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=self.stderr)
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.monotonic() + 60
        while not (os.path.exists(port_file) and open(port_file).read().count("\n") >= 1):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stderr.seek(0)
                raise SetupError("Chromium did not start its DevTools endpoint:\n" + self.stderr.read()[-3000:])
            time.sleep(0.1)
        port = int(open(port_file).read().split()[0])
        deadline = time.monotonic() + 30
        while True:
            status, body = http_get(f"http://127.0.0.1:{port}/json/list")
            pages = [t for t in json.loads(body) if t.get("type") == "page"] if status == 200 else []
            if pages:
                break
            if time.monotonic() > deadline:
                raise SetupError("Chromium has no page target")
            time.sleep(0.2)
        self.version = json.loads(http_get(f"http://127.0.0.1:{port}/json/version")[1]).get("Browser", "?")
        self.ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=60, suppress_origin=True)
        self.next_id = 0
        self.events = []
        self.problems = []  # uncaught JavaScript exceptions and failed requests, reported at the end
        self.requests = {}
        self.call("Page.enable")
        self.call("Network.enable")
        self.call("Runtime.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=WIDTH, height=HEIGHT, deviceScaleFactor=1,
                  mobile=False)

    def _recv(self, timeout):
        self.ws.settimeout(max(timeout, 0.01))
        msg = json.loads(self.ws.recv())
        if "method" in msg:
            self.events.append(msg)
            self._note(msg["method"], msg.get("params", {}))
        return msg

    def _note(self, method, p):
        if method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            self.problems.append(f"JavaScript exception: {d.get('exception', {}).get('description') or d.get('text')}")
        elif method == "Network.requestWillBeSent":
            self.requests[p["requestId"]] = p["request"]["url"]
        elif method == "Network.responseReceived" and p["response"]["status"] >= 400:
            if not p["response"]["url"].endswith("/favicon.ico"):
                self.problems.append(f"HTTP {p['response']['status']} for {p['response']['url']}")
        elif method == "Network.loadingFailed" and not p.get("canceled"):
            self.problems.append(f"request failed ({p.get('errorText')}): {self.requests.get(p['requestId'], '?')}")

    def call(self, method, **params):
        self.next_id += 1
        mid = self.next_id
        self.ws.send(json.dumps({"id": mid, "method": method, "params": params}))
        while True:
            msg = self._recv(60)
            if msg.get("id") == mid:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def wait_event(self, method, pred=lambda p: True, timeout=30):
        """The params of the first event `method` (already received or arriving within timeout) that satisfies pred."""
        deadline = time.monotonic() + timeout
        import websocket
        while True:
            for i, e in enumerate(self.events):
                if e["method"] == method and pred(e.get("params", {})):
                    del self.events[: i + 1]
                    return e["params"]
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                self._recv(left)
            except websocket.WebSocketTimeoutException:
                return None

    def navigate(self, url, timeout=30):
        """Load url and wait for its load event; returns the HTTP status of the document (0 if unknown)."""
        self.events.clear()
        res = self.call("Page.navigate", url=url)
        if res.get("errorText"):
            raise AssertionError(f"navigation to {url} failed: {res['errorText']}")
        loader = res.get("loaderId")
        resp = self.wait_event("Network.responseReceived",
                               lambda p: p.get("type") == "Document" and p.get("loaderId") == loader, timeout)
        if self.wait_event("Page.loadEventFired", timeout=timeout) is None:
            raise AssertionError(f"{url}: no load event within {timeout} s")
        return resp["response"]["status"] if resp else 0

    def eval(self, expr):
        res = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in res:
            d = res["exceptionDetails"]
            raise RuntimeError(f"JavaScript error: {d.get('exception', {}).get('description') or d.get('text')}")
        return res["result"].get("value")

    def click(self, x, y):
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left",
                      clickCount=0 if kind == "mouseMoved" else 1)

    def hover(self, x, y):
        self.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y, button="none")

    def screenshot(self, path):
        data = base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        log(f"screenshot {path} ({len(data) // 1024} KiB)")

    def close(self):
        try:
            self.call("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.stderr.close()
        shutil.rmtree(self.profile, ignore_errors=True)


# ---------------------------------------------------------------------------------------------- test

THUMBS_JS = """(() => {
  const vw = innerWidth, vh = innerHeight;
  return [...document.querySelectorAll('a.thumb img')].map((im, i) => {
    const r = im.getBoundingClientRect();
    return {i, alt: im.alt, loading: im.getAttribute('loading'), srcset: im.getAttribute('srcset') || '',
            top: r.top + scrollY, inView: r.width > 0 && r.height > 0 && r.bottom > 0 && r.right > 0 && r.top < vh && r.left < vw,
            complete: im.complete, nw: im.naturalWidth, nh: im.naturalHeight, current: im.currentSrc};
  });
})()"""

VIEWER_JS = """(() => {
  const d = document.querySelector('dialog#viewer'), im = document.getElementById('viewer-image');
  const r = im ? im.getBoundingClientRect() : null;
  return {path: location.pathname, dialog: !!d, open: !!(d && d.open), img: !!im,
          complete: !!(im && im.complete), nw: im ? im.naturalWidth : 0, nh: im ? im.naturalHeight : 0,
          src: im ? im.currentSrc : '', w: r ? Math.round(r.width) : 0, h: r ? Math.round(r.height) : 0};
})()"""


class Checks:
    def __init__(self):
        self.failures = []

    def check(self, ok, what, detail=""):
        print(f"  {'PASS' if ok else 'FAIL'}  {what}" + (f" — {detail}" if detail else ""), flush=True)
        if not ok:
            self.failures.append(what + (f" ({detail})" if detail else ""))
        return ok


def srcset_descriptors(srcset):
    """{descriptor: url} of a srcset attribute (URLs are runs of non-space, so they may contain commas)."""
    return {d: u for u, d in re.findall(r"(\S+?)\s+([0-9.]+[xw])\s*(?:,|$)", srcset)}


def loaded(t):
    return t["complete"] and t["nw"] > 0


def unloaded(thumbs):
    broken = sum(1 for t in thumbs if t["complete"] and t["nw"] == 0)
    pending = sum(1 for t in thumbs if not t["complete"])
    return f"{broken} broken, {pending} still loading"


def viewer_path(path):
    stem, ext = os.path.splitext(path)
    return f"{stem}-viewer{ext or '.png'}"


def poll(fn, ok, timeout):
    """Call fn until ok(result) or timeout; returns (result, seconds waited)."""
    start = time.monotonic()
    while True:
        try:
            res = fn()
        except RuntimeError:  # e.g. the context was destroyed by a navigation
            res = None
        if res is not None and ok(res):
            return res, time.monotonic() - start
        if time.monotonic() - start > timeout:
            return res, time.monotonic() - start
        time.sleep(0.25)


def run_checks(b, url, screenshot, c):
    status, body = http_get(urllib.parse.urljoin(url, "/health"))
    c.check(status == 200, "GET /health is 200", f"got {status} {body[:200]!r}" if status != 200 else "")

    # The library: its root lists folders with counts; open the largest and page through to page 3.
    status = b.navigate(url)
    c.check(status == 200, f"GET {url} loads with status 200", f"status {status}")
    folders = b.eval("""[...document.querySelectorAll('a.folder')].map(a => ({href: a.href,
        name: a.firstChild.textContent, count: +a.querySelector('span').textContent}))""")
    if not c.check(len(folders) >= 2, "the library's root lists at least 2 folders with their image counts",
                   f"{[(f['name'], f['count']) for f in folders]}"):
        return
    big = max(folders, key=lambda f: f["count"])
    status = b.navigate(big["href"])
    c.check(status == 200 and b.eval("document.title").endswith(f"{big['count']} images"),
            f"opening folder {big['name']} shows its true count", b.eval("document.title"))
    for page in (2, 3):
        nxt = b.eval("(() => { const a = document.querySelector('a[rel=next]'); return a ? a.href : null; })()")
        if not c.check(nxt is not None, f"a Next link leads to page {page}", "" if nxt else "no a[rel=next]"):
            return
        status = b.navigate(nxt)
    url = b.eval("location.href")
    c.check(status == 200 and "page=3" in url and "page 3 of" in b.eval("document.body.innerText"),
            "page 3 of the folder loads", url)

    t0 = time.monotonic()
    thumbs = b.eval(THUMBS_JS)
    if not c.check(len(thumbs) >= 8, "at least 8 `img` inside `a.thumb`", f"found {len(thumbs)}"):
        return

    not_lazy = [t["alt"] for t in thumbs if t["loading"] != "lazy"]
    c.check(not not_lazy, 'every thumbnail has loading="lazy"',
            f"{len(not_lazy)} without it, e.g. {not_lazy[:3]}" if not_lazy else f"all {len(thumbs)}")
    bad_srcset = [(t["alt"], t["srcset"]) for t in thumbs if not {"1x", "2x"} <= set(srcset_descriptors(t["srcset"]))]
    c.check(not bad_srcset, "every thumbnail has a srcset with a 1x and a 2x candidate",
            f"{len(bad_srcset)} without, e.g. {bad_srcset[:2]}" if bad_srcset else f"e.g. {thumbs[0]['srcset']!r}")
    odd = [t["alt"] for t in thumbs if not bad_srcset and "w=512" not in srcset_descriptors(t["srcset"]).get("2x", "")]
    if odd:
        log(f"note: {len(odd)} thumbnails' 2x candidate does not ask for w=512, e.g. {odd[0]}")

    # complete: loaded or broken (an image whose request failed is complete with naturalWidth 0)
    thumbs, waited = poll(lambda: b.eval(THUMBS_JS), lambda ts: all(t["complete"] for t in ts if t["inView"]),
                          LOAD_TIMEOUT)
    in_view = [t for t in thumbs if t["inView"]]
    missing = [t["alt"] for t in in_view if not loaded(t)]
    c.check(in_view and not missing, f"every thumbnail in the {WIDTH}x{HEIGHT} viewport loads within {LOAD_TIMEOUT:.0f} s",
            f"{len(in_view)} in view, loaded in {waited:.1f} s (page load to now {time.monotonic() - t0:.1f} s), "
            f"natural size {in_view[0]['nw']}x{in_view[0]['nh']}" if in_view and not missing else
            f"{len(in_view)} in view, {len(missing)} not loaded after {waited:.1f} s ({unloaded(in_view)}): {missing[:5]}")

    below = [t for t in thumbs if not t["inView"]]
    below_unloaded = [t for t in below if not loaded(t)]
    far = [t for t in below if t["top"] > HEIGHT + LAZY_MARGIN]
    far_loaded = [t["alt"] for t in far if loaded(t)]
    page_h = b.eval("document.documentElement.scrollHeight")
    unrequested = [t for t in below_unloaded if not t["current"]]  # a lazy image not yet fetched has no currentSrc
    log(f"lazy loading: page {page_h} px tall, {len(in_view)} thumbnails in view, {len(below)} below the fold, "
        f"{len(below_unloaded)} of those not loaded yet, {len(unrequested)} not even requested "
        f"(Chromium fetches lazy images ~1250-3000 px ahead of the viewport)")
    if far:
        c.check(not far_loaded, f"thumbnails more than {LAZY_MARGIN} px below the fold are not loaded (lazy loading)",
                f"{len(far)} that far, {len(far_loaded)} loaded anyway: {far_loaded[:3]}" if far_loaded else
                f"{len(far)} that far, none loaded")
    else:
        log(f"(page not tall enough to assert lazy loading: no thumbnail more than {LAZY_MARGIN} px below the fold)")

    if screenshot:
        b.screenshot(screenshot)

    # Placeholders: once thumbnails were rendered, their cells carry ThumbHashes; the page's decoder (which paints
    # them while thumbnails load) must agree with the reference decoder (PyPI thumbhash).
    b.navigate(url)
    hashes = b.eval("[...document.querySelectorAll('img[data-thumbhash]')].map(im => im.dataset.thumbhash)")
    if c.check(len(hashes) >= len(in_view), "thumbnails rendered once carry a ThumbHash placeholder",
               f"{len(hashes)} of {len(thumbs)} cells, {len(in_view)} were in view"):
        # PyPI thumbhash's full decoder keeps the first pixel's cosines for every pixel (its fx/fy lists are never
        # reset), so only its first pixel and its average colour are a reference: compare those.
        import thumbhash
        worst_first = worst_mean = 0
        for h in hashes[:5]:
            page = b.eval(f"""(() => {{ const r = thumbHashToRGBA(Uint8Array.from(atob('{h}'), c => c.charCodeAt(0)));
                return {{w: r.w, h: r.h, rgba: Array.from(r.rgba)}}; }})()""")
            raw = base64.b64decode(h)
            _, _, reference = thumbhash.thumb_hash_to_rgba(raw)
            worst_first = max(worst_first, max(abs(page["rgba"][k] - reference[k]) for k in range(4)))
            average = thumbhash.thumb_hash_to_average_rgba(raw)
            n = page["w"] * page["h"]
            for k in range(3):
                mean = sum(page["rgba"][k::4]) / n
                worst_mean = max(worst_mean, abs(mean - 255 * average[k]))
        c.check(worst_first <= 1 and worst_mean <= 8,
                "the page's ThumbHash decoder agrees with PyPI thumbhash (first pixel, average colour)",
                f"first pixel within {worst_first}, mean colour within {worst_mean:.1f} over {min(5, len(hashes))} hashes")

    # The larger view: a real mouse click on the first thumbnail; JavaScript should open dialog#viewer.
    first = b.eval("""(() => { const a = document.querySelector('a.thumb'); a.scrollIntoView({block: 'nearest'});
        const r = a.querySelector('img').getBoundingClientRect();
        return {x: r.left + r.width / 2, y: r.top + r.height / 2, href: a.href, alt: a.querySelector('img').alt}; })()""")
    b.click(first["x"], first["y"])
    v, waited = poll(lambda: b.eval(VIEWER_JS), lambda v: v["img"] and v["complete"] and v["nw"] > 256 and
                     (v["open"] or v["path"] != "/"), LOAD_TIMEOUT)
    v = v or {}
    if v.get("path", "/") != "/" and not v.get("open"):
        c.check(False, "clicking the first thumbnail opens dialog#viewer",
                f"the click navigated to {v['path']} instead: JavaScript did not intercept it")
    else:
        c.check(v.get("open", False), "clicking the first thumbnail opens dialog#viewer",
                "dialog#viewer missing" if not v.get("dialog") else "" if v.get("open") else "dialog#viewer not open")
    c.check(v.get("complete") and v.get("nw", 0) > 256, "#viewer-image loads, naturalWidth > 256",
            f"{v.get('nw')}x{v.get('nh')} natural, shown {v.get('w')}x{v.get('h')}, {waited:.1f} s, {v.get('src')}"
            if v.get("nw", 0) > 256 else f"after {waited:.1f} s: {v}")
    if screenshot:
        b.eval("(async () => { const im = document.getElementById('viewer-image'); if (im) await im.decode().catch(() => 0); })()")
        time.sleep(0.3)  # let a dialog transition, if any, finish
        b.screenshot(viewer_path(screenshot))

    # The same view without JavaScript: the link's own page.
    status = b.navigate(first["href"])
    v, waited = poll(lambda: b.eval(VIEWER_JS), lambda v: v["img"] and v["complete"] and v["nw"] > 256, LOAD_TIMEOUT)
    v = v or {}
    c.check(status == 200 and v.get("nw", 0) > 256, "the no-JS link /view?src=... loads #viewer-image, naturalWidth > 256",
            f"status {status}, {v.get('nw')}x{v.get('nh')} natural")

    # Lazy images must still load when scrolled to: scroll through the gallery a viewport at a time.
    b.navigate(url)
    b.eval("""(async () => { for (let y = 0; y < document.documentElement.scrollHeight; y += innerHeight) {
        scrollTo(0, y); await new Promise(r => setTimeout(r, 150)); } scrollTo(0, document.documentElement.scrollHeight); })()""")
    thumbs, waited = poll(lambda: b.eval(THUMBS_JS), lambda ts: all(t["complete"] for t in ts), LOAD_TIMEOUT)
    missing = [t["alt"] for t in thumbs if not loaded(t)]
    c.check(not missing, "every thumbnail loads once scrolled to",
            f"all {len(thumbs)} within {waited:.1f} s of reaching the bottom" if not missing else
            f"{len(missing)} of {len(thumbs)} not loaded {waited:.1f} s after reaching the bottom ({unloaded(thumbs)}): "
            f"{missing[:5]}")


VIDEO_CELL_JS = """(() => {
  const cells = document.querySelectorAll('a.thumb.video'), a = cells[cells.length - 1]; if (!a) return null;
  a.scrollIntoView({block: 'nearest'});
  const im = a.querySelector('img'), r = im.getBoundingClientRect();
  return {x: r.left + r.width / 2, y: r.top + r.height / 2, left: r.left, top: r.top, width: r.width,
          height: r.height, current: im.currentSrc, complete: im.complete, nw: im.naturalWidth,
          badge: getComputedStyle(a, '::after').content, cells: cells.length,
          duration: (a.querySelector('.duration') || {}).textContent || null};
})()"""


def check_video_cells(b, url, screenshot, c):
    """The videos folder: its cells are marked (a play badge), show their poster frame, and play their motion (an
    animated WebP) while the pointer is over them, their poster again when it leaves (checked on the moving test
    pattern's cell)."""
    b.navigate(urllib.parse.urljoin(url, "/?dir=videos"))
    cell, _ = poll(lambda: b.eval(VIDEO_CELL_JS), lambda v: v and v["complete"] and v["nw"] > 0, LOAD_TIMEOUT)
    if not c.check(bool(cell) and cell["cells"] == 2, "the videos folder lists both clips as video cells",
                   f"{cell}" if not cell else f"{cell['cells']} video cells"):
        return
    c.check(cell["nw"] > 0 and "motion=1" not in cell["current"], "a video cell shows its poster frame",
            f"{cell['nw']} px wide, {cell['current']}")
    c.check("\u25b6" in (cell["badge"] or ""), "a video cell carries a play badge", f"::after content {cell['badge']!r}")
    timed, _ = poll(lambda: b.eval(VIDEO_CELL_JS), lambda v: v and v["duration"], LOAD_TIMEOUT)
    c.check(bool(timed) and timed["duration"] == "0:04", "a video cell shows its clip's duration (4 s: 0:04)",
            f"{timed and timed['duration']!r}")
    poster_src = cell["current"]
    b.hover(cell["x"], cell["y"])
    moving, waited = poll(lambda: b.eval(VIDEO_CELL_JS), lambda v: v and "motion=1" in v["current"] and v["complete"]
                          and v["nw"] > 0, LOAD_TIMEOUT)
    c.check(bool(moving) and "motion=1" in moving["current"] and moving["nw"] > 0,
            "hovering a video cell loads its motion", f"{waited:.1f} s, {moving and moving['current']}")
    if screenshot:
        stem, ext = os.path.splitext(screenshot)
        b.screenshot(f"{stem}-video{ext or '.png'}")
    if moving:
        # The cell as the screen shows it, twice 0.6 s apart: a playing animation has moved on
        clip = {"x": moving["left"], "y": moving["top"], "width": moving["width"], "height": moving["height"], "scale": 1}
        first = b.call("Page.captureScreenshot", format="png", clip=clip)["data"]
        time.sleep(0.6)
        second = b.call("Page.captureScreenshot", format="png", clip=clip)["data"]
        c.check(first != second, "the motion plays: the cell shows other pixels 0.6 s later while the pointer stays",
                "the two captures differ" if first != second else "the two captures are identical")
    b.hover(2, 2)
    back, _ = poll(lambda: b.eval(VIDEO_CELL_JS), lambda v: v and v["current"] == poster_src, 10)
    c.check(bool(back) and back["current"] == poster_src, "leaving the cell shows its poster frame again",
            f"{back and back['current']}")


def png(width, height, colour):
    """A `width`×`height` PNG of one colour with a white frame (zlib and struct only: the script runs in a venv)."""
    import struct
    import zlib
    white, fill = b"\xff\xff\xff", bytes(colour)
    rows = []
    for y in range(height):
        edge = y < 12 or y >= height - 12
        row = b"".join(white if edge or x < 12 or x >= width - 12 else fill for x in range(width))
        rows.append(b"\x00" + row)
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"".join(rows), 6)) + chunk(b"IEND", b""))


def make_library(photos):
    """A temporary library: `big/` with 450 generated 320×240 PNGs (three pages and more), `photos/` with
    copies of the sample JPEGs and PNGs, and `videos/` with two 4 s clips the ffmpeg command makes (a pan across a
    sample photo, and FFmpeg's moving test pattern)."""
    library = tempfile.mkdtemp(prefix="darkroom-library-")
    os.makedirs(os.path.join(library, "big"))
    os.makedirs(os.path.join(library, "photos"))
    os.makedirs(os.path.join(library, "videos"))
    if not shutil.which("ffmpeg"):
        raise SetupError("no ffmpeg for the gallery's video clips (apt-get install ffmpeg)")
    base = ["ffmpeg", "-v", "error", "-nostdin", "-y"]
    kite = os.path.join(photos, "jpeg", "kite-2560x1600.jpg")
    subprocess.run(base + ["-loop", "1", "-framerate", "25", "-t", "4", "-i", kite, "-vf",
                           "scale=960:-2,crop=640:360:x='t*60':y=(ih-360)/2,format=yuv420p", "-c:v", "libx264",
                           "-g", "25", os.path.join(library, "videos", "kite-pan.mp4")], check=True)
    subprocess.run(base + ["-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25:duration=4", "-pix_fmt", "yuv420p",
                           "-c:v", "libx264", "-g", "25", os.path.join(library, "videos", "pattern.mp4")], check=True)
    for i in range(450):
        colour = ((i * 37) % 256, (i * 91) % 256, (i * 53) % 256)
        with open(os.path.join(library, "big", f"generated-{i:04d}.png"), "wb") as f:
            f.write(png(320, 240, colour))
    for folder in ("jpeg", "png"):
        for name in sorted(os.listdir(os.path.join(photos, folder))):
            shutil.copy(os.path.join(photos, folder, name), os.path.join(library, "photos", name))
    return library


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--darkroom", default=os.path.join(ROOT, ".build", "release", "darkroom"),
                    help="darkroom binary (default: .build/release/darkroom)")
    ap.add_argument("--photos", default=os.path.join(os.path.dirname(ROOT), "shared", "photos"),
                    help="sample photos copied into the test library (default: ../shared/photos)")
    ap.add_argument("--screenshot", default=os.path.join(ROOT, "docs", "gallery.png"),
                    help="gallery screenshot PNG; the open viewer goes beside it with a -viewer suffix "
                         "(default: docs/gallery.png; '' for none)")
    ap.add_argument("--url", help="test this already running server instead of starting one")
    args = ap.parse_args()

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # still stop the server and Chromium (finally:)
    ensure_websocket_client()
    chromium = find_chromium()

    server = browser = ready_note = None
    c = Checks()
    try:
        if args.url:
            url = args.url if args.url.endswith("/") else args.url + "/"
        else:
            if not os.access(args.darkroom, os.X_OK):
                raise SetupError(f"no darkroom binary at {args.darkroom} (make release)")
            if not os.path.isdir(args.photos):
                raise SetupError(f"no photos folder at {args.photos}")
            library = make_library(args.photos)
            server = Server(args.darkroom, library)
            ready_note = server.wait_ready()
            url = server.url
        browser = Browser(chromium)
        log(f"{browser.version}, viewport {WIDTH}x{HEIGHT}, testing {url}")
        run_checks(browser, url, args.screenshot, c)
        if not args.url:
            check_video_cells(browser, url, args.screenshot, c)
    except SetupError as e:
        log(f"ERROR: {e}")
        return 2
    except Exception as e:  # an unexpected error is a failed test, with its cause
        c.check(False, "test ran to the end", f"{type(e).__name__}: {e}")
    finally:
        if browser:
            for problem in dict.fromkeys(browser.problems):
                log(f"note: {problem}")
            browser.close()
        if server:
            server.stop()
    if ready_note:
        log("note: " + ready_note)
    if c.failures:
        log(f"FAILED: {len(c.failures)} check(s):")
        for f in c.failures:
            print(f"  - {f}")
        return 1
    log("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""URLs from the peers' published client libraries, and the same operations done by Pillow.

  python3 dialect_reference.py urls THUMBOR_KEY IMGPROXY_KEY_HEX IMGPROXY_SALT_HEX SOURCE
      prints a JSON list of cases: {"name", "url", "op", "format"}; every URL is built by libthumbor or imgproxy
      (PyPI), signed with the keys, plus unsigned variants.
  python3 dialect_reference.py compare ORIGINAL CASES_JSON DIR
      for each case, reads DIR/NAME and compares it with Pillow's own rendering of "op" on ORIGINAL; prints JSON
      {"NAME": {"psnr", "width", "height", "expected_width", "expected_height"}}.
"""
import io
import json
import math
import sys

from PIL import Image, ImageChops, ImageFilter, ImageOps


def urls(thumbor_key, imgproxy_key, imgproxy_salt, source):
    from imgproxy import ImgProxy
    from libthumbor import CryptoURL

    thumbor = CryptoURL(key=thumbor_key)
    cases = []

    def t(name, op, fmt="jpeg", unsafe=False, **options):
        url = thumbor.generate(image_url=source, unsafe=unsafe, **options)
        cases.append({"name": name, "url": "/thumbor" + ("/" if not url.startswith("/") else "") + url, "op": op,
                      "format": fmt})

    t("thumbor-fill", "fill:300:200", width=300, height=200)
    t("thumbor-unsafe-fill", "fill:300:200", unsafe=True, width=300, height=200)
    t("thumbor-fit-in", "fit:200:200", width=200, height=200, fit_in=True)
    t("thumbor-crop", "crop:100:50:400:250|fill:150:100", width=150, height=100, crop=((100, 50), (400, 250)))
    t("thumbor-flip", "fill:300:200|mirror", width=300, height=200, flip=True)
    t("thumbor-topleft", "fill0:200:300", width=200, height=300, halign="left", valign="top")
    t("thumbor-filters", "fill:300:200|rotate:90|gray", "png", width=300, height=200,
      filters=["rotate(90)", "grayscale()", "format(png)", "quality(90)", "strip_icc()"])
    t("thumbor-blur", "fill:300:200|blur:3", width=300, height=200, filters=["blur(3)"])
    t("thumbor-fill-filter", "fit:200:200|pad:200:200:0000ff", "png", width=200, height=200, fit_in=True,
      filters=["fill(0000ff)", "format(png)"])

    signed = ImgProxy(source, key=imgproxy_key, salt=imgproxy_salt)
    unsigned = ImgProxy(source)

    def i(name, op, builder, fmt="jpeg", *advanced, **params):
        cases.append({"name": name, "url": "/imgproxy" + builder(*advanced, **params), "op": op, "format": fmt})

    i("imgproxy-fill", "fill:300:200", signed, "jpeg", resizing_type="fill", width=300, height=200)
    i("imgproxy-insecure-fill", "fill:300:200", unsigned, "jpeg", resizing_type="fill", width=300, height=200)
    i("imgproxy-fit", "fit:200:200", signed, "jpeg", resizing_type="fit", width=200, height=200)
    i("imgproxy-auto", "fill:300:200", signed, "jpeg", width=300, height=200)
    i("imgproxy-gravity", "fill0:200:300", signed, "jpeg", resizing_type="fill", width=200, height=300,
      gravity="nowe")
    i("imgproxy-crop", "crop:0:0:200:200|fit:100:100", signed, "jpeg", "c:200:200:nowe", resizing_type="fit",
      width=100, height=100)
    i("imgproxy-ops", "fill:300:200|mirror|blur:2", signed, "jpeg", "fl:1:0", "bl:2", resizing_type="fill",
      width=300, height=200)
    i("imgproxy-rotate", "rotcw|fill:300:200", signed, "jpeg", "rot:90", resizing_type="fill", width=300,
      height=200)
    i("imgproxy-pad", "fit:200:200|border:10:ff0000", signed, "png", "pd:10", "bg:ff0000", "f:png",
      resizing_type="fit", width=200, height=200)
    i("imgproxy-extend", "fit:300:300|pad:300:300:00ff00", signed, "png", "ex:1", "bg:0:255:0", "f:png",
      resizing_type="fit", width=300, height=300)
    as_webp = ImgProxy(source, key=imgproxy_key, salt=imgproxy_salt, extension="webp")
    i("imgproxy-ext", "fit:200:200", as_webp, "webp", resizing_type="fit", width=200, height=200)
    print(json.dumps(cases))


def render(original, op):
    image = Image.open(original)
    image = ImageOps.exif_transpose(image).convert("RGB")
    for step in op.split("|"):
        name, *args = step.split(":")
        if name == "fill":
            image = ImageOps.fit(image, (int(args[0]), int(args[1])), Image.LANCZOS)
        elif name == "fill0":
            image = ImageOps.fit(image, (int(args[0]), int(args[1])), Image.LANCZOS, centering=(0, 0))
        elif name == "fit":
            image.thumbnail((int(args[0]), int(args[1])), Image.LANCZOS)
        elif name == "crop":
            l, t, r, b = map(int, args)
            image = image.crop((l, t, r, b))
        elif name == "mirror":
            image = ImageOps.mirror(image)
        elif name == "rotate":
            image = image.rotate(int(args[0]), expand=True)
        elif name == "rotcw":
            image = image.rotate(-90, expand=True)
        elif name == "gray":
            image = ImageOps.grayscale(image).convert("RGB")
        elif name == "blur":
            image = image.filter(ImageFilter.GaussianBlur(float(args[0])))
        elif name == "border":
            image = ImageOps.expand(image, border=int(args[0]), fill="#" + args[1])
        elif name == "pad":
            w, h = int(args[0]), int(args[1])
            canvas = Image.new("RGB", (w, h), "#" + args[2])
            canvas.paste(image, ((w - image.width) // 2, (h - image.height) // 2))
            image = canvas
        else:
            raise SystemExit("unknown op " + name)
    return image


def psnr(a, b):
    diff = ImageChops.difference(a, b)
    squares = sum(count * ((value % 256) ** 2) for value, count in enumerate(diff.histogram()) if count)
    mse = squares / (a.width * a.height * 3)
    return 99.0 if mse == 0 else 10 * math.log10(255 * 255 / mse)


def compare(original, cases_path, directory):
    results = {}
    for case in json.load(open(cases_path)):
        expected = render(original, case["op"])
        got = Image.open(f"{directory}/{case['name']}").convert("RGB")
        entry = {"width": got.width, "height": got.height, "expected_width": expected.width,
                 "expected_height": expected.height, "psnr": 0.0}
        if got.size == expected.size:
            entry["psnr"] = psnr(got, expected)
        results[case["name"]] = entry
    print(json.dumps(results))


if __name__ == "__main__":
    if sys.argv[1] == "urls":
        urls(*sys.argv[2:6])
    else:
        compare(*sys.argv[2:5])

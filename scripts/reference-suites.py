#!/usr/bin/env python3
"""Fetches the public image test suites the format tests compare against, once, into a scratch folder.

The files are other projects' own test images, fetched at test time from PyPI (never copied into this repository):
- Pillow's sdist: Tests/images (its TIFF, BMP, ICO and CUR files, with the bmpsuite in bmp/b, bmp/g, bmp/q).
- pillow-jxl-plugin's sdist: test/images (JPEG XL files made by its authors: float, gray, ICC, EXIF).

    scripts/reference-suites.py [--dir .build-reference]

Each archive is pinned by version and SHA-256; a folder already extracted is kept. Prints the folder. Exits 1 when a
download fails or does not match, so a test that needs the suites fails instead of passing without them.
"""
import argparse
import hashlib
import io
import json
import os
import sys
import tarfile
import urllib.parse
import urllib.request

SUITES = {
    "pillow": ("Pillow", "13.0.0", "cdcd1ba258178f7356d74170c9a81ba4eab6a5d55748bc402a5a2a6fe6be3510",
               "Tests/images/"),
    "pillow-jxl-plugin": ("pillow-jxl-plugin", "1.3.8", None, "test/images/"),
}


def sdist_url(project, version):
    """The sdist's address and digest from PyPI's JSON API (the release's files, else the newest)."""
    base = f"https://pypi.org/pypi/{project}/json"
    with urllib.request.urlopen(base, timeout=60) as response:
        info = json.load(response)
    files = info.get("releases", {}).get(version) or info.get("urls", [])
    for entry in files:
        if entry["packagetype"] == "sdist" and f"-{version}.tar.gz" in entry["filename"]:
            return urllib.parse.urljoin(base, entry["url"]), entry["digests"]["sha256"]
    raise RuntimeError(f"{project} {version}: no sdist on PyPI")


def fetch(name, directory):
    project, version, pinned, prefix = SUITES[name]
    target = os.path.join(directory, name)
    if os.path.isfile(os.path.join(target, ".complete")):
        return target
    url, digest = sdist_url(project, version)
    if pinned and digest != pinned:
        raise RuntimeError(f"{project} {version}: PyPI lists sha256 {digest}, expected {pinned}")
    with urllib.request.urlopen(url, timeout=300) as response:
        data = response.read()
    actual = hashlib.sha256(data).hexdigest()
    if actual != digest:
        raise RuntimeError(f"{project} {version}: downloaded sha256 {actual}, PyPI lists {digest}")
    os.makedirs(target, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        for member in archive.getmembers():
            parts = member.name.split("/", 1)
            if len(parts) < 2 or not parts[1].startswith(prefix) or not member.isfile():
                continue
            relative = parts[1][len(prefix):]
            if ".." in relative.split("/"):
                continue
            path = os.path.join(target, relative)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with archive.extractfile(member) as source, open(path, "wb") as out:
                out.write(source.read())
    with open(os.path.join(target, ".complete"), "w") as marker:
        marker.write(f"{project} {version} {digest}\n")
    return target


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default=".build-reference")
    args = parser.parse_args()
    try:
        for name in SUITES:
            print(fetch(name, args.dir))
    except Exception as error:  # a network or digest failure: say so and fail
        print(f"reference-suites: {error}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()

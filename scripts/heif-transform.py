#!/usr/bin/env python3
"""Adds transformative properties (`clap`, `irot`, `imir`) to the items of a HEIF or AVIF file, for the tests of
clean apertures and rotations: heif-enc writes neither, and files from cameras are not ours to copy.

    scripts/heif-transform.py IN OUT --item ID --crop X,Y,W,H [--irot N] [--imir AXIS] [--item ID ...]
    scripts/heif-transform.py IN OUT [--thumbnail-of FROM:TO ...] [--aux-of FROM:TO ...] [--pitm ID]
    scripts/heif-transform.py IN OUT --item ID --aux URN --aux-of ID:PRIMARY

Each `--item` starts a group of options for that item ID (`primary` for the primary item, `thumbnails` for every
thumbnail item). The boxes are appended to `ipco` and associated (as essential) in `ipma` in the order the HEIF
specification requires: clap, then irot, then imir. `--crop` is a rectangle of the coded image; it is written as a
clap box (ISO/IEC 14496-12 §12.1.4: width, height and the centre's offset from the coded image's centre).
`--thumbnail-of FROM:TO` adds an `iref` `thmb` reference that makes item FROM a thumbnail of item TO (the `iref`
box is created when the file has none), and `--pitm ID` names the primary item: together they make the files other
writers produce, such as a primary item that is itself marked as a thumbnail of another image. `--aux URN` gives an
item an `auxC` property of that type and `--aux-of FROM:TO` an `auxl` reference, which make it an auxiliary image of
TO (an iPhone's HDR gain map is `--aux urn:com:apple:photo:2020:aux:hdrgainmap`).
The `iloc` offsets of data after the `meta` box are moved by the bytes added. Prints nothing; exits 1 on a layout
it does not know (a `meta` after `mdat` is fine; `iloc` versions 0-2 are handled).
"""
import argparse
import struct
import sys
from fractions import Fraction


def boxes(data, start, end):
    """(type, start, header size, end) of each box in data[start:end]."""
    at = start
    while at + 8 <= end:
        size, kind = struct.unpack(">I4s", data[at:at + 8])
        header = 8
        if size == 1:
            size = struct.unpack(">Q", data[at + 8:at + 16])[0]
            header = 16
        elif size == 0:
            size = end - at
        yield kind.decode("latin-1"), at, header, at + size
        at += size


def box(kind, payload, full=None):
    if full is not None:
        payload = struct.pack(">I", full) + payload
    return struct.pack(">I4s", 8 + len(payload), kind.encode()) + payload


def child(data, parent_start, parent_end, kind):
    for name, start, header, end in boxes(data, parent_start, parent_end):
        if name == kind:
            return start, header, end
    raise SystemExit(f"no {kind} box")


def clap_box(x, y, w, h, coded_w, coded_h):
    horizontal = Fraction(2 * x + w - coded_w, 2)
    vertical = Fraction(2 * y + h - coded_h, 2)
    values = [w, 1, h, 1, horizontal.numerator, horizontal.denominator, vertical.numerator, vertical.denominator]
    return box("clap", struct.pack(">IIIIiIiI", *values))


def ispe(data, ipco_start, ipco_end, indices):
    """The coded size from the item's ispe property."""
    props = list(boxes(data, ipco_start, ipco_end))
    for index in indices:
        name, start, header, _ = props[index - 1]
        if name == "ispe":
            return struct.unpack(">II", data[start + header + 4:start + header + 12])
    raise SystemExit("item has no ispe")


def main():
    parser = argparse.ArgumentParser(allow_abbrev=False)
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--thumbnail-of", action="append", default=[], metavar="FROM:TO")
    parser.add_argument("--aux-of", action="append", default=[], metavar="FROM:TO")
    parser.add_argument("--pitm", type=int)
    args, rest = parser.parse_known_args()
    groups = []
    for token in rest:
        if token == "--item":
            groups.append({"item": None})
        elif groups and groups[-1].get("item") is None:
            groups[-1]["item"] = token
        elif groups and token.startswith("--"):
            groups[-1]["pending"] = token[2:]
        elif groups and "pending" in groups[-1]:
            groups[-1][groups[-1].pop("pending")] = token
        else:
            raise SystemExit(f"unexpected argument {token}")
    data = bytearray(open(args.input, "rb").read())
    meta_start, meta_header, meta_end = child(data, 0, len(data), "meta")
    body = meta_start + meta_header + 4
    pitm_start, pitm_header, _ = child(data, body, meta_end, "pitm")
    primary = struct.unpack(">H", data[pitm_start + pitm_header + 4:pitm_start + pitm_header + 6])[0]
    thumbnails = []
    for name, start, header, end in boxes(data, body, meta_end):
        if name == "iref":
            version = data[start + header]
            id_size = 2 if version == 0 else 4
            for ref_name, ref_start, ref_header, ref_end in boxes(data, start + header + 4, end):
                if ref_name == "thmb":
                    fmt = ">H" if id_size == 2 else ">I"
                    thumbnails.append(struct.unpack(fmt, data[ref_start + ref_header:ref_start + ref_header + id_size])[0])
    iprp_start, iprp_header, iprp_end = child(data, body, meta_end, "iprp")
    ipco_start, ipco_header, ipco_end = child(data, iprp_start + iprp_header, iprp_end, "ipco")
    ipma_start, ipma_header, ipma_end = child(data, iprp_start + iprp_header, iprp_end, "ipma")
    # ipma: parse every entry
    version, flags = data[ipma_start + ipma_header], int.from_bytes(data[ipma_start + ipma_header + 1:ipma_start + ipma_header + 4], "big")
    at = ipma_start + ipma_header + 4
    count = struct.unpack(">I", data[at:at + 4])[0]
    at += 4
    entries = []
    for _ in range(count):
        if version < 1:
            item = struct.unpack(">H", data[at:at + 2])[0]
            at += 2
        else:
            item = struct.unpack(">I", data[at:at + 4])[0]
            at += 4
        n = data[at]
        at += 1
        assocs = []
        for _ in range(n):
            if flags & 1:
                value = struct.unpack(">H", data[at:at + 2])[0]
                at += 2
                assocs.append((value >> 15, value & 0x7FFF))
            else:
                value = data[at]
                at += 1
                assocs.append((value >> 7, value & 0x7F))
        entries.append([item, assocs])
    property_count = len(list(boxes(data, ipco_start + ipco_header, ipco_end)))
    added = b""
    for group in groups:
        targets = {"primary": [primary], "thumbnails": thumbnails}.get(group["item"]) or [int(group["item"])]
        for target in targets:
            entry = next(e for e in entries if e[0] == target)
            coded_w, coded_h = ispe(data, ipco_start + ipco_header, ipco_end, [i for _, i in entry[1]])
            new = []
            if "crop" in group:
                x, y, w, h = (int(v) for v in group["crop"].split(","))
                if group["item"] == "thumbnails":  # a crop of the primary, scaled to this thumbnail
                    pw, ph = ispe(data, ipco_start + ipco_header, ipco_end,
                                  [i for _, i in next(e for e in entries if e[0] == primary)[1]])
                    x, w = round(x * coded_w / pw), round(w * coded_w / pw)
                    y, h = round(y * coded_h / ph), round(h * coded_h / ph)
                new.append(clap_box(x, y, w, h, coded_w, coded_h))
            if "irot" in group:
                new.append(box("irot", bytes([int(group["irot"]) & 3])))
            if "imir" in group:
                new.append(box("imir", bytes([int(group["imir"]) & 1])))
            if "aux" in group:
                new.append(box("auxC", group["aux"].encode() + b"\0", full=0))
            for property_box in new:
                property_count += 1
                added += property_box
                entry[1].append((1, property_count))
    if property_count > (0x7FFF if flags & 1 else 0x7F):
        raise SystemExit("too many properties")
    ipma_payload = struct.pack(">I", len(entries))
    for item, assocs in entries:
        ipma_payload += struct.pack(">H" if version < 1 else ">I", item) + bytes([len(assocs)])
        for essential, index in assocs:
            ipma_payload += struct.pack(">H", essential << 15 | index) if flags & 1 else bytes([essential << 7 | index])
    new_ipco = data[ipco_start:ipco_end] + added
    new_ipco[0:4] = struct.pack(">I", len(new_ipco))
    new_ipma = box("ipma", ipma_payload, full=version << 24 | flags)
    # Rebuild iprp with the new ipco and ipma in place of the old ones.
    iprp_children = b""
    for name, start, header, end in boxes(data, iprp_start + iprp_header, iprp_end):
        iprp_children += bytes(new_ipco) if name == "ipco" else new_ipma if name == "ipma" else bytes(data[start:end])
    new_iprp = box("iprp", iprp_children)
    # iref: the thmb and auxl references asked for, added to the existing box (or a new one) with the item ID size
    # it uses.
    iref = next(((start, header, end) for name, start, header, end in boxes(data, body, meta_end) if name == "iref"), None)
    new_iref = None
    if args.thumbnail_of or args.aux_of:
        iref_version = data[iref[0] + iref[1]] if iref else 0
        id_format = ">H" if iref_version == 0 else ">I"
        references = bytes(data[iref[0] + iref[1] + 4:iref[2]]) if iref else b""
        for kind, pairs in (("thmb", args.thumbnail_of), ("auxl", args.aux_of)):
            for pair in pairs:
                source, target = (int(v) for v in pair.split(":"))
                references += box(kind, struct.pack(id_format, source) + struct.pack(">H", 1) + struct.pack(id_format, target))
        new_iref = box("iref", references, full=iref_version << 24)
    # The new meta box: iprp and iref replaced (iref appended when there was none), pitm renamed in place.
    children = []
    for name, start, header, end in boxes(data, body, meta_end):
        children.append((name, start, end))
    sizes = sum(len(new_iprp) if name == "iprp" else len(new_iref) if name == "iref" and new_iref else end - start
                for name, start, end in children)
    if new_iref and not iref:
        sizes += len(new_iref)
    delta = (body - meta_start) + sizes - (meta_end - meta_start)
    # iloc: move absolute offsets that point past the meta box.
    iloc_start, iloc_header, iloc_end = child(data, body, meta_end, "iloc")
    at = iloc_start + iloc_header
    iloc_version = data[at]
    at += 4
    offset_size, length_size = data[at] >> 4, data[at] & 15
    base_size, index_size = data[at + 1] >> 4, (data[at + 1] & 15 if iloc_version >= 1 else 0)
    at += 2
    item_count = struct.unpack(">H" if iloc_version < 2 else ">I", data[at:at + (2 if iloc_version < 2 else 4)])[0]
    at += 2 if iloc_version < 2 else 4

    def read(size):
        nonlocal at
        value = int.from_bytes(data[at:at + size], "big") if size else 0
        at += size
        return value

    def shift(size):
        nonlocal at
        if size:
            value = int.from_bytes(data[at:at + size], "big")
            if value >= meta_end:
                data[at:at + size] = (value + delta).to_bytes(size, "big")
        at += size

    for _ in range(item_count):
        read(2 if iloc_version < 2 else 4)
        method = read(2) & 15 if iloc_version >= 1 else 0
        read(2)  # data reference index
        if method == 0:
            base_at = at
            base = read(base_size)
            extents = read(2)
            if base and base >= meta_end:
                data[base_at:base_at + base_size] = (base + delta).to_bytes(base_size, "big")
            for _ in range(extents):
                read(index_size)
                if base:
                    read(offset_size)
                else:
                    shift(offset_size)
                read(length_size)
        else:
            read(base_size)
            extents = read(2)
            for _ in range(extents):
                read(index_size)
                read(offset_size)
                read(length_size)
    if args.pitm is not None:
        pitm_version = data[pitm_start + pitm_header]
        at = pitm_start + pitm_header + 4
        data[at:at + (2 if pitm_version == 0 else 4)] = struct.pack(">H" if pitm_version == 0 else ">I", args.pitm)
    meta = bytearray(data[meta_start:body])
    for name, start, end in children:
        meta += new_iprp if name == "iprp" else new_iref if name == "iref" and new_iref else data[start:end]
    if new_iref and not iref:
        meta += new_iref
    meta[0:4] = struct.pack(">I", len(meta))
    assert len(meta) - (meta_end - meta_start) == delta
    data[meta_start:meta_end] = meta
    open(args.output, "wb").write(data)

if __name__ == "__main__":
    main()

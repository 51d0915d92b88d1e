#!/usr/bin/python3
"""Regenerates pillow_golden.json: Pillow's Image.resize(BICUBIC) of a
fixed RGB image to several sizes, and Image.alpha_composite of RGBA pixels
over white (transformers' convert_to_rgb). Run with a Python that has
Pillow (Debian: python3-pil): /usr/bin/python3 pillow_golden.py"""
import json

import numpy as np
import PIL
from PIL import Image


def source(w, h):
    # The same formula as goldenSource in resample_golden_test.go.
    data = bytearray()
    for y in range(h):
        for x in range(w):
            for c in range(3):
                data.append((x * 37 + y * 11 + c * 89 + (x * y) % 7 * 23) % 256)
    return Image.frombytes("RGB", (w, h), bytes(data))


src = source(37, 23)
sizes = [(16, 10), (64, 50), (37, 5), (3, 23), (100, 7), (19, 46), (1, 1)]
resized = [{"w": w, "h": h, "pix": src.resize((w, h), Image.BICUBIC).tobytes().hex()} for w, h in sizes]

composite = []
white = Image.new("RGBA", (1, 1), (255, 255, 255))
for a in (0, 1, 64, 127, 128, 200, 254, 255):
    for c in (0, 1, 100, 200, 255):
        px = Image.new("RGBA", (1, 1), (c, c, c, a))
        out = Image.alpha_composite(white, px).convert("RGB").getpixel((0, 0))[0]
        composite.append({"c": c, "a": a, "out": out})

# Qwen2VLImageProcessor's slow path (Pillow resize, numpy rescale and
# normalize, then the patch reshape/transpose) for patch_size 2,
# merge_size 2, temporal_patch_size 2 and OpenAI CLIP's mean and std:
# smart_resize(23, 37, factor 4) = 24×36.
mean = np.array([0.48145466, 0.4578275, 0.40821073], dtype=np.float32)
std = np.array([0.26862954, 0.26130258, 0.27577711], dtype=np.float32)
img = np.array(src.resize((36, 24), Image.BICUBIC))
img = (img.astype(np.float64) * (1 / 255)).astype(np.float32)
img = ((img - mean) / std).transpose(2, 0, 1)  # (C, H, W)
patches = np.array([img, img])  # a still image repeated to temporal_patch_size
ps, ms, tp = 2, 2, 2
gh, gw = 24 // ps, 36 // ps
patches = patches.reshape(1, tp, 3, gh // ms, ms, ps, gw // ms, ms, ps)
patches = patches.transpose(0, 3, 6, 4, 7, 2, 1, 5, 8).reshape(gh * gw, 3 * tp * ps * ps)
processed = {"h": 24, "w": 36, "values": patches.astype("<f4").tobytes().hex()}

# Decodes: lossy WebP (opaque and with alpha, composited over white) and
# JPEG at 4:2:0 and 4:2:2, written here from a smooth but colourful image.
def colourful(w, h):
    data = bytearray()
    for y in range(h):
        for x in range(w):
            data += bytes(((x * 5 + y * 3) % 256, (x * y) % 256, (200 - x + y) % 256))
    return Image.frombytes("RGB", (w, h), bytes(data))


img = colourful(45, 31)
img.save("colourful-420.jpg", quality=90, subsampling=2)
img.save("colourful-422.jpg", quality=90, subsampling=1)
rgba = img.convert("RGBA")
rgba.putalpha(Image.frombytes("L", (45, 31), bytes((x * 6) % 256 for y in range(31) for x in range(45))))
rgba.save("colourful-alpha.webp", quality=80)


def decoded(name):
    im = Image.open(name)
    if im.mode == "RGBA":
        im = Image.alpha_composite(Image.new("RGBA", im.size, (255, 255, 255)), im)
    return {"file": name, "pix": im.convert("RGB").tobytes().hex()}


# EXIF orientations 2…8 on a 24×16 JPEG, as load_image's
# ImageOps.exif_transpose shows them.
from PIL import ImageOps

oriented = []
for o in range(2, 9):
    exif = Image.Exif()
    exif[0x0112] = o
    name = "orientation-%d.jpg" % o
    colourful(24, 16).save(name, quality=95, subsampling=0, exif=exif)
    im = ImageOps.exif_transpose(Image.open(name)).convert("RGB")
    oriented.append({"file": name, "w": im.width, "h": im.height, "pix": im.tobytes().hex()})

decodes = [decoded(n) for n in ("blue-purple-pink.lossy.webp", "colourful-alpha.webp",
                                 "colourful-420.jpg", "colourful-422.jpg")] + oriented

with open("pillow_golden.json", "w") as f:
    json.dump({"pillow": PIL.__version__, "source": [37, 23], "resize": resized, "over_white": composite,
               "patches": processed, "decode": decodes}, f, indent=0)
    f.write("\n")

"""Writes a real photograph at a given size as a binary PPM, for the image apps' --photo option.

The photographs are scikit-image's bundled ones (skimage.data; installed into the project's
virtual environment by scripts/python_env.sh). A photograph larger than the size is cropped
around its centre; a smaller one is tiled with mirrored copies of itself (no resampling, so the
texture and noise of the original stay as they are).

    build/python-venv/bin/python scripts/photo_input.py <photo> <width> <height> <out.ppm>

<photo>: astronaut, coffee, chelsea, rocket, immunohistochemistry, or any other RGB image
function of skimage.data.
"""
import sys

import numpy as np
from skimage import data


def photograph(name, width, height):
    image = getattr(data, name)()
    if image.ndim != 3 or image.shape[2] < 3:
        raise SystemExit(f"photo_input: skimage.data.{name} is not an RGB photograph")
    image = image[:, :, :3]
    h, w = image.shape[:2]
    # Mirror-tile up to at least the size, then crop the centre.
    reps_y, reps_x = -(-height // h) + 1, -(-width // w) + 1
    rows = [image if i % 2 == 0 else image[::-1] for i in range(reps_y)]
    column = np.concatenate(rows, axis=0)
    tiles = [column if j % 2 == 0 else column[:, ::-1] for j in range(reps_x)]
    big = np.concatenate(tiles, axis=1)
    y0 = (big.shape[0] - height) // 2 if h >= height else 0
    x0 = (big.shape[1] - width) // 2 if w >= width else 0
    return np.ascontiguousarray(big[y0:y0 + height, x0:x0 + width])


def main():
    if len(sys.argv) != 5:
        raise SystemExit(__doc__)
    name, width, height, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    if width <= 0 or height <= 0:
        raise SystemExit("photo_input: the width and height must be positive")
    image = photograph(name, width, height)
    with open(out, "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % (width, height))
        f.write(image.astype(np.uint8).tobytes())


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The HTML report in a real browser: renders tessera-report's page for an app in headless Chromium,
checks that the page logs no console error, that the Func graph and the fusion groups are in the
rendered DOM, and that they are visible in a screenshot (pixels of the group outline's and the Func
nodes' colours), and keeps the screenshot. A page with a console error is checked first, so that
the console check is known to catch one.

    check_report_in_browser.py <tessera-report> <app> <output directory>
"""
import os
import shutil
import struct
import subprocess
import sys
import zlib

GROUP_OUTLINE = (0xE6, 0x7E, 0x22)  # .group rect stroke in runtime/src/html_report.cpp
FUNC_NODE = (0xD6, 0xEA, 0xF8)      # .node rect fill


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    sys.exit("check_report_in_browser: no chromium on PATH; ./scripts/setup.sh installs Debian's chromium")


def run_browser(args, page):
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--enable-logging=stderr",
           "--v=0", "--window-size=1400,1000"] + args + ["file://" + os.path.abspath(page)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        sys.exit(f"chromium failed ({r.returncode}):\n{r.stderr[-3000:]}")
    return r


def console_errors(stderr):
    # Chromium logs a page's console messages as `... CONSOLE(line)] "message", source: ...`
    # (level "ERROR" or "INFO:CONSOLE" depending on the version): every console line counts.
    return [line for line in stderr.splitlines() if "CONSOLE" in line]


def png_pixels(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB or RGBA non-interlaced PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and color in (2, 6) and interlace == 0, (depth, color, interlace)
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, channels, rows


def count_colour(png, colour):
    width, height, channels, rows = png
    target = bytes(colour)
    return sum(1 for row in rows for x in range(width) if row[x * channels:x * channels + 3] == target)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    report_exe, app, out = sys.argv[1:]
    os.makedirs(out, exist_ok=True)

    # The console check catches an error.
    bad = os.path.join(out, "console_error.html")
    with open(bad, "w") as f:
        f.write("<!DOCTYPE html><html><body><script>console.error('deliberate')</script></body></html>")
    assert console_errors(run_browser(["--dump-dom"], bad).stderr), "the console check missed a deliberate console.error"

    page = os.path.join(out, app + ".html")
    subprocess.run([report_exe, app, "--out", page], check=True, capture_output=True)
    dom = run_browser(["--dump-dom"], page)
    errors = console_errors(dom.stderr)
    assert not errors, "console messages:\n" + "\n".join(errors)
    for needle in ('<svg id="func-graph"', '<g class="group">', 'class="node output"', 'id="loop-nest"', 'id="phases"'):
        assert needle in dom.stdout, f"{needle} is not in the rendered DOM"

    shot = os.path.join(out, app + ".png")
    r = run_browser([f"--screenshot={shot}"], page)
    assert not console_errors(r.stderr)
    png = png_pixels(shot)
    outline, nodes = count_colour(png, GROUP_OUTLINE), count_colour(png, FUNC_NODE)
    assert outline > 200, f"the fusion group's outline is not visible ({outline} pixels)"
    assert nodes > 2000, f"the Func nodes are not visible ({nodes} pixels)"
    print(f"report of {app}: no console errors; graph and groups rendered ({outline} outline and {nodes} node pixels); "
          f"screenshot kept at {shot}")


if __name__ == "__main__":
    main()

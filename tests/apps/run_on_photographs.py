"""The image-pipeline apps on real photographs (scikit-image's bundled ones, written as PPM by
scripts/photo_input.py), each checked by the app itself against its plain C++ loops.

    python tests/apps/run_on_photographs.py <build dir>

Exits non-zero when an app's check fails or it does not run.
"""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (app, photograph, width, height): odd sizes that are not multiples of the tiles; camera_pipe's
# photograph becomes its raw mosaic, which loses a 32 x 24 border.
RUNS = [
    ("camera_pipe", "astronaut", 163, 101),
    ("pyramid_blend", "coffee", 131, 67),
    ("interpolate", "chelsea", 131, 67),
    ("local_laplacian", "rocket", 131, 67),
]


def main():
    build = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for app, photo, width, height in RUNS:
            ppm = os.path.join(tmp, f"{photo}_{width}x{height}.ppm")
            subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "photo_input.py"), photo, str(width),
                            str(height), ppm], check=True)
            r = subprocess.run([os.path.join(build, "apps", app), "--photo", ppm, "--runs", "1"],
                               capture_output=True, text=True)
            checks = [line for line in r.stdout.splitlines() if line.startswith("check against plain C++ loops")]
            ok = r.returncode == 0 and checks and all(": OK" in line for line in checks)
            print(f"{app} on {photo} ({width} x {height}): {'OK' if ok else 'FAILED'}")
            for line in checks:
                print("   ", line)
            if not ok:
                print(r.stdout[-2000:], r.stderr[-2000:])
                failures.append(app)
    if failures:
        raise SystemExit(f"failed on photographs: {', '.join(failures)}")


if __name__ == "__main__":
    main()

"""Whether the installed tessera package is older than the sources it is built from.

`cmake --build` rebuilds the C++ libraries but not the package in the virtual environment
(scripts/build.sh reinstalls it): tests of an old package would fail on what it lacks, or pass on
what it still has, with no word of why. conftest.py stops the test session with this instead.
"""
import importlib.metadata
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[3]
# The C++ and Python sources of the package (pip install . in scripts/python_env.sh).
SOURCES = ("dsl", "poly", "codegen", "runtime", "frontends/ops", "frontends/python/src", "frontends/python/tessera")
SUFFIXES = {".cpp", ".h", ".py", ".txt"}


def first_newer(root, tops, since):
    """The first source file under root/top (for each top) modified after `since`, or None."""
    for top in tops:
        for path in sorted((pathlib.Path(root) / top).rglob("*")):
            if path.suffix in SUFFIXES and path.is_file() and path.stat().st_mtime > since:
                return path.relative_to(root)
    return None


def install_time(name="tessera"):
    """When pip installed the package (its INSTALLER file's time), or None when not installed."""
    try:
        dist = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return None
    installer = next((pathlib.Path(dist.locate_file(f)) for f in dist.files or [] if f.name == "INSTALLER"), None)
    return installer.stat().st_mtime if installer is not None and installer.exists() else None


def stale_reason():
    """Why the installed package is stale, or None."""
    installed = install_time()
    if installed is None:
        return None
    newer = first_newer(ROOT, SOURCES, installed)
    if newer is None:
        return None
    return (f"the tessera package in this virtual environment is older than {newer}: "
            f"run ./scripts/build.sh (it reinstalls the package) before these tests")

import os

from stale_package import first_newer, install_time


def test_a_source_edited_after_the_install_is_found_and_an_older_one_is_not(tmp_path):
    (tmp_path / "poly" / "src").mkdir(parents=True)
    (tmp_path / "docs").mkdir()
    old, new, notes = tmp_path / "poly" / "src" / "a.cpp", tmp_path / "poly" / "src" / "b.h", tmp_path / "docs" / "x.cpp"
    for p in (old, new, notes):
        p.write_text("//")
    os.utime(old, (1000, 1000))
    os.utime(new, (3000, 3000))
    os.utime(notes, (3000, 3000))
    assert first_newer(tmp_path, ("poly",), 2000) == new.relative_to(tmp_path)
    assert first_newer(tmp_path, ("poly",), 4000) is None
    # Only the listed source trees count.
    os.utime(new, (1000, 1000))
    assert first_newer(tmp_path, ("poly",), 2000) is None


def test_the_installed_package_has_an_install_time():
    # The tests run against the package pip installed into the virtual environment.
    assert install_time() is not None
    assert install_time("no-such-package-tessera-test") is None

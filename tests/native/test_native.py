"""The native kernels' loader and build (terrace_foundation.native): the environment's
choice, one-line errors naming the library, atomic builds, stale libraries refused."""

from __future__ import annotations

import os
import sys

import pytest

from terrace_foundation import native
from terrace_foundation.errors import TerraceError, TerraceWarning
from terrace_foundation.native import build as nbuild
from terrace_testkit import needs_native


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    native.reset()
    yield
    native.reset()


def test_library_loads_with_matching_abi():
    handle = needs_native()
    assert handle.tf_abi() == native.ABI


def test_env_off_gives_numpy(monkeypatch):
    monkeypatch.setenv(native.ENV, "0")
    assert native.lib() is None
    assert "numpy" in native.status()


def test_env_require_names_the_missing_file(monkeypatch, tmp_path):
    monkeypatch.setenv(native.ENV, "1")
    missing = str(tmp_path / nbuild.library_name())
    monkeypatch.setattr(native, "LIBRARY", missing)
    with pytest.raises(TerraceError) as err:
        native.lib()
    msg = str(err.value)
    assert missing in msg and "\n" not in msg and "-m terrace_foundation.native" in msg


def test_auto_without_library_is_silent_numpy(monkeypatch, tmp_path, recwarn):
    monkeypatch.delenv(native.ENV, raising=False)
    monkeypatch.setattr(native, "LIBRARY", str(tmp_path / "absent.so"))
    assert native.lib() is None
    assert not [w for w in recwarn if issubclass(w.category, TerraceWarning)]


def test_bad_env_value_is_one_line(monkeypatch):
    monkeypatch.setenv(native.ENV, "maybe")
    with pytest.raises(TerraceError, match=native.ENV):
        native.lib()


def test_library_names():
    assert nbuild.library_name("linux") == "libtfnative.so"
    assert nbuild.library_name("darwin") == "libtfnative.dylib"
    assert nbuild.library_name("win32") == "tfnative.dll"
    # no fused multiply-adds, no fast math: the flags that keep numpy's bits
    assert "-ffp-contract=off" in nbuild.compile_flags("unix")
    assert not any("fast-math" in f and "no" not in f for f in nbuild.compile_flags("unix"))
    assert "/fp:precise" in nbuild.compile_flags("msvc")


def _compiler_or_skip():
    needs_native()        # a library exists, so this machine compiles C


def test_build_writes_a_loadable_library(tmp_path):
    _compiler_or_skip()
    out = tmp_path / nbuild.library_name()
    assert nbuild.build(str(out), quiet=True) == str(out)
    handle, why = native._load(str(out))
    assert handle is not None, why
    assert handle.tf_abi() == native.ABI
    assert [p.name for p in tmp_path.iterdir()] == [out.name]   # no temporary left


def test_failed_build_writes_nothing(tmp_path, monkeypatch):
    _compiler_or_skip()
    bad = tmp_path / "bad.c"
    bad.write_text("this is not C;\n")
    monkeypatch.setattr(nbuild, "SOURCE", str(bad))
    out = tmp_path / "lib" / nbuild.library_name()
    out.parent.mkdir()
    with pytest.raises(RuntimeError) as err:
        nbuild.build(str(out), quiet=True)
    assert str(bad) in str(err.value) and "\n" not in str(err.value)
    assert list(out.parent.iterdir()) == []


def test_stale_library_is_refused_with_a_warning(tmp_path, monkeypatch, recwarn):
    _compiler_or_skip()
    src = tmp_path / "old.c"
    src.write_text('#include <stdint.h>\n__attribute__((visibility("default"))) '
                   'int64_t tf_abi(void) { return 999; }\n')
    monkeypatch.setattr(nbuild, "SOURCE", str(src))
    out = tmp_path / nbuild.library_name()
    nbuild.build(str(out), quiet=True)
    monkeypatch.setattr(native, "LIBRARY", str(out))
    monkeypatch.delenv(native.ENV, raising=False)
    assert native.lib() is None
    assert "ABI 999" in native.status() and "rebuild" in native.status()
    assert [w for w in recwarn if issubclass(w.category, TerraceWarning)]
    monkeypatch.setenv(native.ENV, "1")
    native.reset()
    with pytest.raises(TerraceError, match="rebuild"):
        native.lib()


def test_kernel_missing_from_an_older_build(tmp_path, monkeypatch, recwarn):
    _compiler_or_skip()
    out = tmp_path / nbuild.library_name()
    nbuild.build(str(out), quiet=True)
    monkeypatch.setattr(native, "LIBRARY", str(out))
    monkeypatch.delenv(native.ENV, raising=False)
    assert native.kernel("tf_abi", native.I64)() == native.ABI
    assert native.kernel("tf_not_yet_written", None, native.PTR) is None
    assert [w for w in recwarn if "tf_not_yet_written" in str(w.message)]
    monkeypatch.setenv(native.ENV, "1")
    native.reset()
    with pytest.raises(TerraceError, match="rebuild"):
        native.kernel("tf_not_yet_written", None)


def test_kernel_is_none_with_numpy(monkeypatch):
    monkeypatch.setenv(native.ENV, "0")
    assert native.kernel("tf_abi", native.I64) is None


def test_command_line_reports_failure(tmp_path, monkeypatch, capsys):
    _compiler_or_skip()
    bad = tmp_path / "bad.c"
    bad.write_text("nope\n")
    monkeypatch.setattr(nbuild, "SOURCE", str(bad))
    assert nbuild.main(["--out", str(tmp_path / "x.so")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1


@pytest.mark.skipif(sys.platform.startswith("win"), reason="POSIX permissions")
def test_built_library_is_readable_by_others(tmp_path):
    _compiler_or_skip()
    out = tmp_path / nbuild.library_name()
    nbuild.build(str(out), quiet=True)
    assert os.stat(out).st_mode & 0o044 == 0o044


def test_wheel_carries_the_library_and_is_platform_tagged(tmp_path):
    """``pip wheel .``: setup.py builds the library into the wheel, tagged py3-none-<platform>
    (compiled code, but no Python extension)."""
    import shutil
    import subprocess
    import zipfile

    from terrace_testkit import REPO

    _compiler_or_skip()
    # a copy of the sources without a library of their own, so only the build can put it there
    src = tmp_path / "src"
    shutil.copytree(REPO / "python3.10libs", src / "python3.10libs",
                    ignore=shutil.ignore_patterns("*.so", "*.dylib", "*.dll", "__pycache__",
                                                  "*.egg-info"))
    for rel in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy(REPO / rel, src / rel)
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                          str(tmp_path / "dist"), str(src)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    assert wheel.name.split("-")[2:4] == ["py3", "none"]
    assert not wheel.name.endswith("-any.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert f"terrace_foundation/native/{nbuild.library_name()}" in names

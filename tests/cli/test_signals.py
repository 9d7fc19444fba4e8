"""SIGTERM during a run, and working folders left by killed runs (issue 15, defect 5)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

from terrace_testkit import LIB

SLOW_RUN = textwrap.dedent("""
    import sys, time
    from terrace_foundation.io.writers.output_folder import register_writer
    from terrace_foundation.cli import main

    @register_writer("slow", order=25)
    def slow(result, folder, context):
        (folder / "slow.txt").write_text("half")
        print("writing", flush=True)
        time.sleep(60)
        return [folder / "slow.txt"]

    sys.exit(main(sys.argv[1:]))
""")


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(LIB) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_sigterm_while_writing_leaves_nothing(tmp_path, small_npy, small_regions):
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-c", SLOW_RUN, "generate", str(small_npy),
                             str(small_regions), "--out", str(out), "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_env())
    try:
        assert proc.stdout.readline().strip() == "writing"
        assert [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "terminated" in err and "Traceback" not in err
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_stale_partial_folders_are_removed_at_start(cli, tmp_path, small_npy, small_regions):
    from terrace_foundation.io.writers.output_folder import _host_tag

    out = tmp_path / "out"
    host = _host_tag()
    stale = tmp_path / f".out.{host}-{_dead_pid()}-0123abcd.partial"
    stale.mkdir()
    (stale / "terrace_heightfield.tif").write_bytes(b"half")
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live = tmp_path / f".out.{host}-{sleeper.pid}-4567cdef.partial"
        live.mkdir()
        other_output = tmp_path / f".other.{host}-{_dead_pid()}-89abcdef.partial"
        other_output.mkdir()
        res = cli("generate", small_npy, small_regions, "--out", out)
        assert res.code == 0, res.err
        assert not stale.exists()
        assert live.exists() and other_output.exists()      # a live run's, another output's
        assert any("interrupted run" in line and str(stale) in line for line in res.err_lines)
    finally:
        sleeper.kill()
        sleeper.wait()


def test_stale_old_folder_is_put_back_when_the_output_is_missing(tmp_path):
    """A run killed between setting the old output aside and renaming the new one in."""
    from terrace_foundation.io.writers.output_folder import _host_tag, remove_stale_work_folders

    out = tmp_path / "out"
    old = tmp_path / f".out.{_host_tag()}-{_dead_pid()}-0123abcd.old"
    old.mkdir()
    (old / "report.json").write_text("{}")
    done = remove_stale_work_folders(out)
    assert len(done) == 1 and "restored" in done[0]
    assert (out / "report.json").read_text() == "{}" and not old.exists()


def test_sigterm_handler_is_restored(cli, tmp_path, small_npy, small_regions):
    before = signal.getsignal(signal.SIGTERM)
    assert cli("generate", small_npy, small_regions, "--out", tmp_path / "o", "-q").code == 0
    assert signal.getsignal(signal.SIGTERM) is before

"""The parameter registry is the one definition: TerraceParams, the CLI, both assets and the
docs tables follow it, and a CLI run checks the parameters once."""

from __future__ import annotations

import dataclasses
import importlib.util
import sys

import pytest

import terrace_foundation as tf
from terrace_foundation.cli import build_parser
from terrace_foundation.houdini.network import NATIVE, NUMPY
from terrace_foundation.params import PARAMETERS, Parameter, TerraceParams
from terrace_testkit import REPO


def _sync_docs():
    spec = importlib.util.spec_from_file_location("sync_docs", REPO / "scripts" / "sync_docs.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_terrace_params_fields_are_the_registry():
    fields = dataclasses.fields(TerraceParams)
    assert [f.name for f in fields] == list(PARAMETERS)
    assert [f.default for f in fields] == [p.default for p in PARAMETERS.values()]
    for p in PARAMETERS.values():
        assert type(p.default) is p.kind and p.validate(p.default) == p.default
        assert p.name in TerraceParams.__doc__


def test_cli_flags_are_the_registry():
    sub = build_parser()._subparsers._group_actions[0].choices["generate"]
    actions = {a.dest: a for a in sub._actions}
    for p in PARAMETERS.values():
        a = actions[p.name]
        assert a.option_strings == [p.flag] and a.default == p.default and a.type is p.kind
        assert a.help.startswith(p.help) and (list(a.choices) if a.choices else []) == \
            list(p.choices)


def test_both_assets_take_their_parameters_from_the_registry():
    for asset in (NATIVE, NUMPY):
        for parm in asset.parms:
            p = PARAMETERS.get(parm.name)
            if p is None:
                assert parm.name == "blur_iterations"      # the native network's own
                continue
            assert (parm.label, parm.help, parm.folder) == (p.label, p.help, "fd_" + p.folder)
            assert parm.menu == p.options
            if not p.options:
                assert (parm.minimum, parm.maximum) == (p.ui_min, p.ui_max)
                assert (parm.min_locked, parm.max_locked) == (p.min_locked, p.max_locked)
    assert {parm.name for parm in NATIVE.parms} - {"blur_iterations"} == \
        {n for n, p in PARAMETERS.items() if p.native}


def test_docs_tables_are_current():
    sync = _sync_docs()
    for rel, front_end in sync.TABLES.items():
        text = (REPO / rel).read_text(encoding="utf-8")
        assert sync.synced(text, front_end) == text, \
            f"{rel}: parameter table out of date; run python3 scripts/sync_docs.py"


def test_a_cli_run_checks_the_parameters_once(cli, tmp_path, monkeypatch):
    calls: dict[str, int] = {}
    validate = Parameter.validate

    def counting(self, value):
        calls[self.name] = calls.get(self.name, 0) + 1
        return validate(self, value)

    monkeypatch.setattr(Parameter, "validate", counting)
    res = cli("demo", "--out", tmp_path / "out", "-q", "--seed", "3", "--no-viewer")
    assert res.code == 0, res.err
    assert calls == {name: 1 for name in PARAMETERS}


def test_bad_values_name_the_parameter_and_its_range():
    with pytest.raises(tf.TerraceInputError, match=r"max_slope: 90.0 is out of range \(0, 90\)"):
        TerraceParams(max_slope=90)
    with pytest.raises(tf.TerraceInputError, match=r"seed: must be an integer, got 1.5"):
        TerraceParams(seed=1.5)
    with pytest.raises(tf.TerraceInputError, match=r"pad_rule: 'avg' is not one of mean"):
        TerraceParams().replace(pad_rule="avg")
    assert TerraceParams(scatter_count=7.0).scatter_count == 7      # normalised to int


def test_no_parameter_default_is_written_twice():
    # the registry's defaults are the only literals: e.g. the embankment limit 33.7
    hits = []
    for path in (REPO / "python3.10libs" / "terrace_foundation").rglob("*.py"):
        if path.name != "params.py" and "33.7" in path.read_text(encoding="utf-8"):
            hits.append(str(path.relative_to(REPO)))
    assert hits == []

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
from terrace_foundation.params import (
    COMMANDS,
    METHOD_PARAMETERS,
    PARAMETERS,
    RUN_OPTIONS,
    TABLES,
    Parameter,
    TerraceParams,
    run_options,
)
from terrace_testkit import REPO


def _sync_docs():
    spec = importlib.util.spec_from_file_location("sync_docs", REPO / "scripts" / "sync_docs.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_terrace_params_fields_are_the_registry():
    fields = dataclasses.fields(TerraceParams)
    assert [f.name for f in fields] == list(METHOD_PARAMETERS)
    assert [f.default for f in fields] == [p.default for p in METHOD_PARAMETERS.values()]
    for p in METHOD_PARAMETERS.values():
        assert type(p.default) is p.kind and p.validate(p.default) == p.default
        assert p.name in TerraceParams.__doc__
    # the run options are in the registry but are no parameters of the method
    assert RUN_OPTIONS and not set(RUN_OPTIONS) & {f.name for f in fields}
    assert PARAMETERS == {**METHOD_PARAMETERS, **RUN_OPTIONS}
    assert {p.scope for p in METHOD_PARAMETERS.values()} == {"method"}
    assert {p.scope for p in RUN_OPTIONS.values()} == {"run"}


def _commands():
    return build_parser()._subparsers._group_actions[0].choices


def _flags_of(parser) -> dict:
    return {s: a for a in parser._actions for s in a.option_strings if s.startswith("--")}


def test_cli_flags_are_the_registry():
    """Every flag of every CLI command is a registry entry, generated from it: the method
    parameters on generate and demo, each run option on the commands it names, nothing else."""
    commands = _commands()
    assert set(commands) == set(COMMANDS) - {"cook"}
    for name, sub in commands.items():
        flags = _flags_of(sub)
        expected = [*(METHOD_PARAMETERS.values() if name in ("generate", "demo") else ()),
                    *run_options(name)]
        assert sorted(flags) == sorted([p.flag for p in expected] + ["--help"]), name
        for p in expected:
            a = flags[p.flag]
            assert a.dest == p.name and a.option_strings == list(p.flags)
            assert a.default == p.default and a.required == p.required
            assert a.help.startswith(p.help)
            assert (list(a.choices) if a.choices else []) == list(p.choices)
            if p.is_switch:
                assert a.nargs == 0 and a.const is True            # store_true
            else:
                assert a.type is (str if p.options else p.kind) and a.metavar == p.metavar


def test_cook_flags_are_the_registry():
    """hython scripts/cook.py: its run options and a flag per method parameter (default None:
    an unset flag leaves the asset alone), all from the registry."""
    from terrace_foundation.cli import cook_parser

    flags = _flags_of(cook_parser())
    expected = [*METHOD_PARAMETERS.values(), *run_options("cook")]
    assert sorted(flags) == sorted([p.flag for p in expected] + ["--help"])
    for p in expected:
        a = flags[p.flag]
        assert a.dest == p.name and a.help.startswith(p.help)
        assert a.default == (p.default if p.scope == "run" else None)
        assert (list(a.choices) if a.choices else []) == list(p.choices)
    assert flags["--preset"].help.endswith("(numpy asset only)")
    args = cook_parser().parse_args(["r.bgeo.sc", "h.bgeo.sc", "--out", "o", "--seed", "3"])
    assert (args.cook_out, args.asset, args.seed, args.blend) == ("o", "native", 3, None)


def test_a_declared_run_option_reaches_the_namespace():
    """The parsing function a run option declares is what argparse calls (an int for
    --tile-size, a pair for --height-range, a name list for --export)."""
    args = build_parser().parse_args(
        ["generate", "h.npy", "r.geojson", "-o", "x", "--tile-size", "128", "--local-metres",
         "--height-range", "1,2", "--export", "ue,glb", "--scheduler", "threads"])
    assert (args.out, args.tile_size, args.local_metres) == ("x", 128, True)
    assert (args.height_range, args.export, args.scheduler) == ((1.0, 2.0), ["ue", "glb"],
                                                                 "threads")
    assert build_parser().parse_args(["report", "d", "--all"]).all_lots is True


def test_malformed_registry_entries_fail_when_declared():
    with pytest.raises(ValueError, match="value_name"):
        Parameter("tile", int, None, "Tile", "A tile.", scope="run", commands=("generate",))
    with pytest.raises(ValueError, match="commands"):
        Parameter("x", bool, False, "X", "X.", scope="run", commands=("render",))


def test_both_assets_take_their_parameters_from_the_registry():
    for asset in (NATIVE, NUMPY):
        for parm in asset.parms:
            p = METHOD_PARAMETERS.get(parm.name)
            if p is None and parm.folder == "fd_farm":   # the numpy asset's farm run options
                o = RUN_OPTIONS[parm.name]
                assert asset is NUMPY and o.numpy_asset and "cook" in o.commands
                assert (parm.label, parm.help, parm.menu) == (o.label, o.help, o.options)
                continue
            if p is None:
                assert parm.name == "blur_iterations"      # the native network's own
                continue
            assert (parm.label, parm.help, parm.folder) == (p.label, p.help, "fd_" + p.folder)
            assert parm.menu == p.options
            if not p.options:
                assert (parm.minimum, parm.maximum) == (p.ui_min, p.ui_max)
                assert (parm.min_locked, parm.max_locked) == (p.min_locked, p.max_locked)
    assert {parm.name for parm in NATIVE.parms} - {"blur_iterations"} == \
        {n for n, p in METHOD_PARAMETERS.items() if p.native}


def test_docs_tables_are_current():
    sync = _sync_docs()
    for rel, tables in sync.TABLES.items():
        text = (REPO / rel).read_text(encoding="utf-8")
        assert sync.synced(text, tables) == text, \
            f"{rel}: parameter table out of date; run python3 scripts/sync_docs.py"
    # every table is in some docs file, and every run option of a CLI command is in one
    assert sorted(t for tables in sync.TABLES.values() for t in tables) == sorted(TABLES)
    cli_md = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    for p in RUN_OPTIONS.values():
        if set(p.commands) - {"cook"}:
            assert f"`{p.flag}" in cli_md, p.flag


def test_a_cli_run_checks_the_parameters_once(cli, tmp_path, monkeypatch):
    calls: dict[str, int] = {}
    validate = Parameter.validate

    def counting(self, value):
        calls[self.name] = calls.get(self.name, 0) + 1
        return validate(self, value)

    monkeypatch.setattr(Parameter, "validate", counting)
    res = cli("demo", "--out", tmp_path / "out", "-q", "--seed", "3", "--no-viewer")
    assert res.code == 0, res.err
    assert calls == {name: 1 for name in METHOD_PARAMETERS}


def test_bad_values_name_the_parameter_and_its_range():
    with pytest.raises(tf.TerraceInputError, match=r"max_slope: 90.0 is out of range \(0, 90\)"):
        TerraceParams(max_slope=90)
    with pytest.raises(tf.TerraceInputError, match=r"seed: must be an integer, got 1.5"):
        TerraceParams(seed=1.5)
    with pytest.raises(tf.TerraceInputError, match=r"pad_rule: 'avg' is not one of mean"):
        TerraceParams().replace(pad_rule="avg")
    assert TerraceParams(scatter_count=7.0).scatter_count == 7      # normalised to int


def test_no_parameter_default_is_written_twice():
    # the registry's defaults are the only literals: e.g. the embankment limit 33.7, the lot
    # size 7000, the default tile side 2048 in --tile-size's help
    hits = []
    for path in (REPO / "python3.10libs" / "terrace_foundation").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for literal in ("33.7", "7000", "7_000", "DEFAULT_TILE_SIZE = "):
            if path.name != "params.py" and literal in text:
                hits.append(f"{path.relative_to(REPO)}: {literal}")
    assert hits == []


def test_run_option_values_are_checked_by_the_one_check_of_their_rule(cli, tmp_path):
    """--tile-size and --height-range are refused (usage error, exit 2) by the same check as
    the engine's and the readers', with the same problem text."""
    from terrace_foundation.io.readers.heightmaps import check_height_range
    from terrace_foundation.terrain.tiles import plan_tiles

    res = cli("demo", "--out", tmp_path / "a", "--tile-size", "100")
    with pytest.raises(tf.TerraceInputError) as engine:
        plan_tiles((10, 10), 100)
    assert res.code == 2 and f"argument --tile-size: {engine.value.problem}" in res.err
    res = cli("generate", "h.png", "r.geojson", "--out", tmp_path / "b",
              "--height-range", "5,1")
    with pytest.raises(tf.TerraceInputError) as reader:
        check_height_range((5.0, 1.0), "h.json")
    assert res.code == 2 and f"argument --height-range: {reader.value.problem}" in res.err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()

"""The search over a base held in memory, an earlier commit's against this checkout's, interleaved in one process:
the classes that roll nodes up here (``veil.frequencies.FrequencySet`` and ``Floors``,
``veil.nodecounting.NodeCounter``) and ``veil.run.search_counts`` are swapped for the earlier commit's before each
of its runs.  On a shared 2-core machine whose speed drifts by a third within minutes, processes run one after the
other (``bench_search.py --arx``) differ more from run to run than these changes; alternating the code within one
process, with the data and the interpreter warm, does not.  Prints each side's ms a node (the search's own
seconds over the nodes evaluated: medians and every round), the optimum and the nodes.

    .venv/bin/python bench/bench_held_ab.py --before 472e40b --rounds 6 bench/.work/adult_duckdb_8159891.toml
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import logging
import statistics
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from bench_ab import earlier_code

from veil import cli, frequencies, nodecounting, run

SWAPPED = [(frequencies, "FrequencySet"), (frequencies, "Floors"), (nodecounting, "NodeCounter")]


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _members(cls: type) -> dict[str, Any]:
    return {k: v for k, v in vars(cls).items() if callable(v) or isinstance(v, property)}


def sides(tree: Path) -> dict[str, list[tuple[Any, str, Any]]]:
    """Per side, what to set: (object, attribute, value)."""
    earlier = {m.__name__: _load(f"earlier_{m.__name__.split('.')[-1]}", tree / "engine" / (m.__name__.split(".")[-1] + ".py"))
               for m in (frequencies, nodecounting, run)}  # fmt: skip
    now: list[tuple[Any, str, Any]] = [(run, "search_counts", run.search_counts)]
    before: list[tuple[Any, str, Any]] = [(run, "search_counts", earlier["veil.run"].search_counts)]
    for module, name in SWAPPED:
        cls = getattr(module, name)
        now += [(cls, k, v) for k, v in _members(cls).items()]
        before += [(cls, k, v) for k, v in _members(getattr(earlier[module.__name__], name)).items()]
    return {"before": before, "after": now}


def search(config: str, strategy: str) -> dict[str, Any]:
    sys.argv = ["veil", "search", "--config", config, "--json", "--strategy", strategy]
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()), contextlib.suppress(SystemExit):
        cli.main()
    text = out.getvalue()
    return json.loads(text[text.index('{"status"') :])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("configs", nargs="+")
    ap.add_argument("--before", required=True)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--strategy", default="optimal")
    args = ap.parse_args()
    logging.disable(logging.CRITICAL)
    cli._end_process = lambda code: (_ for _ in ()).throw(SystemExit(code))  # type: ignore[assignment]
    with earlier_code(args.before) as env:
        todo = sides(Path(env["PYTHONPATH"]).joinpath("veil").resolve().parent)
        for config in args.configs:
            seen: dict[str, list[float]] = {"before": [], "after": []}
            answers: dict[str, Any] = {}
            for _ in range(args.rounds):
                for side, sets in todo.items():
                    for obj, name, value in sets:
                        setattr(obj, name, value)
                    doc = search(config, args.strategy)
                    seen[side].append(round(doc["seconds"] / doc["nodes_evaluated"] * 1e3, 3))
                    answers[side] = ((doc.get("optimal") or {}).get("node"), doc["nodes_evaluated"])
            print(json.dumps({"config": Path(config).name, "strategy": args.strategy, "before": args.before,
                              **{f"{s}_ms_a_node": statistics.median(v) for s, v in seen.items()},
                              "rounds": seen, "answers": answers}), flush=True)  # fmt: skip


if __name__ == "__main__":
    main()

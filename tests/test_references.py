"""Every module, function and file a docstring, comment or document names exists (issue 41: stale references).

The documents stay explanations: ``docs/*.md`` says how things work now, and dated session logs live under
``docs/measurements/`` (issue 41, part 5); every relative link in the documents and the logs leads to a file.

A dotted name such as ``specsim.core.engine.decode_loop`` or ``app.live.params.PARAMS`` must resolve to a module of
this repository and, after it, to names that module (or a class in it) defines. A path such as
``specsim/core/engine.py`` or ``docs/timing.md`` must be a file. Read statically (ast), so nothing is imported.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOTTED = re.compile(r"(?<![\w./-])((?:specsim|app)(?:\.[A-Za-z_]\w*)+)")
PATH = re.compile(r"(?<![\w./-])((?:specsim|app|pages|tests|docs|scripts)/[\w./-]*\.(?:py|md|cpp|js|css|json))")
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LOGS = sorted((ROOT / "docs" / "measurements").glob("*.md"))
DATED_HEADING = re.compile(r"^(?:#{1,6}[ \t].*|\*\*[^*\n]*)\b20\d\d-\d\d(?:-\d\d)?\b")
"""A heading line (or a paragraph that opens in bold, the logs' other kind of heading) with a date in it."""
LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)\)")
FENCED = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def _sources() -> list[Path]:
    return [p for folder in ("specsim", "app", "pages", "tests") for p in sorted((ROOT / folder).rglob("*.py"))]


@cache
def _defined(path: Path) -> dict[str, set[str]]:
    """Top-level names a module defines or imports, and each class's attribute names (under 'Class.')."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top: set[str] = set()
    members: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            top.add(node.name)
        elif isinstance(node, ast.ClassDef):
            top.add(node.name)
            names = set()
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    names.add(item.name)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    names.add(item.target.id)
                elif isinstance(item, ast.Assign):
                    names |= {t.id for t in item.targets if isinstance(t, ast.Name)}
            members[node.name] = names
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                for n in ast.walk(target):
                    if isinstance(n, ast.Name):
                        top.add(n.id)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            top.add(node.target.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            top |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.Try | ast.If):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Import | ast.ImportFrom):
                    top |= {(a.asname or a.name).split(".")[0] for a in inner.names}
                elif isinstance(inner, ast.FunctionDef | ast.ClassDef):
                    top.add(inner.name)
    return {"": top, **members}


def _module_file(parts: list[str]) -> Path | None:
    base = ROOT.joinpath(*parts)
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


def resolve(dotted: str) -> str | None:
    """None when ``dotted`` names something that exists, else what is missing."""
    parts = dotted.rstrip(".").split(".")
    for cut in range(len(parts), 0, -1):
        module = _module_file(parts[:cut])
        if module is None:
            continue
        rest = parts[cut:]
        if not rest:
            return None
        defined = _defined(module)
        if rest[0] not in defined[""]:
            if module.name == "__init__.py" and _module_file(parts[:cut + 1]):
                continue
            return f"{'.'.join(parts[:cut])} defines no {rest[0]!r}"
        if len(rest) > 1 and rest[0] in defined and rest[1] not in defined[rest[0]]:
            # a class: its own members, or a dataclass field, property or method
            return f"{'.'.join(parts[:cut + 1])} has no {rest[1]!r}"
        return None
    return f"no module {parts[0]}.{parts[1] if len(parts) > 1 else ''}"


def _references() -> list[tuple[str, str, str]]:
    """(where, kind, text) for every dotted name and path in documents, docstrings and comments."""
    found = []
    for path in DOCUMENTS:
        text = path.read_text(encoding="utf-8")
        found += [(path.name, "name", m) for m in DOTTED.findall(text)]
        found += [(path.name, "path", m) for m in PATH.findall(text)]
    for path in _sources():
        source = path.read_text(encoding="utf-8")
        texts = [line.split("#", 1)[1] for line in source.splitlines() if "#" in line]
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                doc = ast.get_docstring(node, clean=False)
                if doc:
                    texts.append(doc)
        where = str(path.relative_to(ROOT))
        for text in texts:
            found += [(where, "name", m) for m in DOTTED.findall(text)]
            found += [(where, "path", m) for m in PATH.findall(text)]
    return found


def test_every_named_module_function_and_file_exists():
    problems = set()
    for where, kind, text in _references():
        text = text.rstrip(".")
        if kind == "name":
            missing = resolve(text)
            if missing:
                problems.add(f"{where}: {text} ({missing})")
        elif not (ROOT / text).exists():
            problems.add(f"{where}: {text} (no such file)")
    assert sorted(problems) == []


def test_the_check_finds_a_stale_name_and_a_stale_path():
    """The check has teeth: the names this issue found stale are reported."""
    assert resolve("specsim.measurement") is not None
    assert resolve("specsim.loop.decode_loop") is not None
    assert resolve("specsim.core.invariant.make_position_invariant_linears") is not None
    assert resolve("specsim.core.engine.decode_loop") is None
    assert resolve("app.live.params.PARAMS") is None
    assert resolve("specsim.core.trace.Trace.n_generated") is None
    assert resolve("specsim.core.trace.Trace.no_such_property") is not None
    assert PATH.findall("see `specsim/loop.py` and docs/timing.md.") == ["specsim/loop.py", "docs/timing.md"]
    assert not (ROOT / "specsim/loop.py").exists()


def test_the_package_map_lists_every_module_and_only_modules_that_exist():
    """specsim/__init__.py is the reader's map of the layers, and each layer's __init__ maps its modules: once it
    listed a ``measure`` module that did not exist."""
    import importlib

    for package in ("specsim", "specsim.core", "specsim.measure", "specsim.lesson", "specsim.classroom"):
        doc = importlib.import_module(package).__doc__
        listed = {name.rstrip("/") for name in re.findall(r"``(\w+/?)``", doc)}
        listed -= {"SpeculativeStep", "decode_loop", "Step", "kernels"}
        folder = ROOT / package.replace(".", "/")
        modules = {p.stem for p in folder.glob("*.py") if p.stem not in ("__init__", "__main__")}
        modules |= {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}
        assert listed - modules == set(), (package, "listed but missing")
        assert modules - listed == set(), (package, "a module the map does not list")


def test_the_readmes_table_lists_every_setting_of_the_environment_class_as_it_describes_it():
    """The environment's settings were read in several files and listed nowhere (issue 63); now one class reads
    them and the README's table gives each with the class's own description."""
    from specsim.core.environment import Environment, env_name

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("## Settings from the environment", 1)[1].split("\n## ", 1)[0]
    listed = dict(re.findall(r"^\| `(SPECSIM_[A-Z0-9_]+)` \| (.+?) \|$", table, re.MULTILINE))
    described = {env_name(name): field.description for name, field in Environment.model_fields.items()}
    assert listed == described


def environment_reads(source: str) -> list[str]:
    """The ``SPECSIM_*`` names a file reads from the environment itself: ``os.environ.get("SPECSIM_X")``,
    ``os.getenv("SPECSIM_X")`` or ``os.environ["SPECSIM_X"]`` (a read, not a write for a child process)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        named = None
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = ast.unparse(node.func)
            if func in ("os.environ.get", "os.getenv", "environ.get", "getenv"):
                named = node.args[0].value
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and \
                ast.unparse(node.value) in ("os.environ", "environ") and isinstance(node.slice, ast.Constant):
            named = node.slice.value
        if isinstance(named, str) and named.startswith("SPECSIM_"):
            found.append(named)
    return found


def test_only_the_environment_class_reads_specsims_variables():
    offenders = [f"{path.relative_to(ROOT)}: {name}" for folder in ("specsim", "app", "pages")
                 for path in (ROOT / folder).rglob("*.py") for name in environment_reads(path.read_text())]
    assert offenders == []
    # the check sees the reads this replaced
    assert environment_reads('x = os.environ.get("SPECSIM_QUEUE_URL", "").strip()\n') == ["SPECSIM_QUEUE_URL"]
    assert environment_reads('ENABLED = os.environ["SPECSIM_NO_FUSED"] != "1"\n') == ["SPECSIM_NO_FUSED"]
    assert environment_reads('os.environ["SPECSIM_NO_FUSED"] = "1"\n') == []


def test_the_non_paper_sources_the_pages_cite_are_listed_with_the_papers_years():
    """A lecturer's reading: Variants cites NVIDIA's Medusa figures and SGLang's EAGLE-2/3 throughputs, which the list
    lacked; SuffixDecoding's venue and SpecInfer's year differed between the pages and the list."""
    from app.practice import references
    from specsim.core import published

    text = references.markdown()
    assert published.NVIDIA_MEDUSA_SPEEDUP.source.split(",")[0] in text and "docs.sglang.io" in text
    suffix = next(r for r in references.REFERENCES if r.title.startswith("SuffixDecoding"))
    assert suffix.where in published.SUFFIX_SPEEDUP.source
    specinfer = next(r for r in references.REFERENCES if r.title.startswith("SpecInfer"))
    year = specinfer.authors[specinfer.authors.index("(") + 1:-1]
    from specsim.variants import tree_rules

    assert f"**SpecInfer** (Miao et al., {year})" in tree_rules.__doc__

"""The library layer must stay free of the UI: specsim never imports streamlit."""

import ast
import subprocess
import sys
from pathlib import Path

SPECSIM = Path(__file__).resolve().parent.parent / "specsim"


def test_no_streamlit_import_in_source():
    offenders = []
    for path in SPECSIM.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] in {"streamlit", "app"}]
    assert offenders == []


def test_importing_every_module_leaves_streamlit_unloaded():
    modules = [
        "specsim." + p.relative_to(SPECSIM).with_suffix("").as_posix().replace("/", ".")
        for p in SPECSIM.rglob("*.py")
        if p.name != "__init__.py" and p.name != "__main__.py"
    ]
    code = "import sys, importlib\n" + "".join(f"importlib.import_module({m!r})\n" for m in modules)
    code += "assert 'streamlit' not in sys.modules, 'a specsim module pulled in streamlit'\n"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=SPECSIM.parent)


ROOT = SPECSIM.parent
APP = ROOT / "app"


def _imported_modules(path: Path) -> set[str]:
    """Top-level names of every module a file imports."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def test_app_modules_that_do_not_import_streamlit_import_without_it():
    pure = sorted(
        "app." + p.relative_to(APP).with_suffix("").as_posix().replace("/", ".")
        for p in APP.rglob("*.py")
        if p.name != "__init__.py" and not any(m.startswith("streamlit") for m in _imported_modules(p))
    )
    assert {"app.keys", "app.urlcodec", "app.calculator.params", "app.live.params", "app.calculator.text",
            "app.palette"} <= set(pure)
    # With streamlit blocked, importing it raises ImportError: a pure module that pulls it in
    # (directly or through another app module) fails here.
    code = "import sys, importlib\nsys.modules['streamlit'] = None\n"
    code += "".join(f"importlib.import_module({m!r})\n" for m in pure)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


def test_no_module_imports_another_modules_private_names():
    offenders = []
    for folder in ("specsim", "app", "pages", "tests"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                    offenders += [f"{path.relative_to(ROOT)}: {node.module}.{a.name}" for a in node.names
                                  if a.name.startswith("_") and not a.name.startswith("__")]
    assert offenders == []


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports anywhere in its file (in functions and TYPE_CHECKING blocks too)."""
    modules = {}
    for folder in ("specsim", "app"):
        for path in (ROOT / folder).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            modules[name] = path
    graph = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                found |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def test_no_import_cycle_even_inside_functions():
    graph, state, cycles = import_graph(), {}, []

    def visit(module, path):
        state[module] = "open"
        for other in sorted(graph[module]):
            if state.get(other) == "open":
                cycles.append(" -> ".join(path[path.index(other):] + [other]))
            elif other not in state:
                visit(other, path + [other])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_no_app_module_reads_the_disk_when_it_is_imported():
    """Issue 41: app.settings read ~/.cache at import (the machine profile), so importing app.state pulled in torch
    and transformers; a page's module reads assets and caches when a page asks, never at import."""
    modules = sorted(
        "app." + p.relative_to(APP).with_suffix("").as_posix().replace("/", ".").removesuffix(".__init__")
        for p in APP.rglob("*.py"))
    code = f"""
import builtins, io, os, sys
sys.path.insert(0, {str(ROOT)!r})
ROOT, CACHE = {str(ROOT)!r}, os.path.expanduser("~/.cache/specsim")
seen = []
real_open = io.open
def watching_open(file, *args, **kwargs):
    path = os.path.abspath(os.fspath(file)) if isinstance(file, (str, bytes, os.PathLike)) else ""
    ours = (path.startswith(ROOT) and "/.venv/" not in path and "/.streamlit/" not in path
            and not path.endswith((".py", ".pyc")))
    if ours or path.startswith(CACHE):
        seen.append(path)
    return real_open(file, *args, **kwargs)
builtins.open = io.open = watching_open
import importlib
for name in {modules!r}:
    importlib.import_module(name)
print("\\n".join(seen))
"""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "", done.stdout


def test_no_app_module_hides_a_standard_library_module():
    """Streamlit puts app/ first on sys.path: a module of app/ named ``profile`` made ``import profile`` (used by
    transformers through cProfile) find the app's module, and loading a model failed under AppTest."""
    import sys

    from tests.conftest import ROOT

    clashes = sorted(p.stem for p in (ROOT / "app").glob("*.py") if p.stem in sys.stdlib_module_names)
    assert not clashes, clashes


def test_the_acceptance_rules_users_are_the_ones_its_docstring_names():
    """Issue 53: specsim/core/acceptance.py names its users; a new one must be named there too."""
    import re

    from tests.conftest import ROOT

    doc = (ROOT / "specsim" / "core" / "acceptance.py").read_text(encoding="utf-8").split('"""')[1]
    named = set(re.findall(r":mod:`(specsim[\w.]*)`", doc))
    users = set()
    for path in (ROOT / "specsim").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        pattern = r"from specsim\.core\.acceptance import|from specsim\.core import [^\n]*\bacceptance\b"
        if module != "specsim.core.acceptance" and re.search(pattern, text):
            users.add(module)
    assert users == named, (users, named)


# Issue 53: specsim's folders are its layers. A module imports only its own layer and the layers below it; the
# lesson and the drafts' training sit side by side and do not import each other.
LAYERS = {
    "specsim.core": 0,
    "specsim.variants": 1,
    "specsim.methods": 2,
    "specsim.request": 2,
    "specsim.measure": 3,
    "specsim.bench": 3,
    "specsim.liverun": 3,
    "specsim.lesson": 4,
    "specsim.distill": 4,
    "specsim.classroom": 5,
}
SIDE_BY_SIDE = {frozenset({"specsim.lesson", "specsim.distill"})}


def layer_of(module: str) -> str | None:
    return next((layer for layer in LAYERS if module == layer or module.startswith(layer + ".")), None)


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    found = []
    for module, imported in graph.items():
        own = layer_of(module)
        if own is None:
            continue
        for other in imported:
            theirs = layer_of(other)
            if theirs is None or theirs == own:
                continue
            if LAYERS[theirs] > LAYERS[own] or frozenset({own, theirs}) in SIDE_BY_SIDE:
                found.append(f"{module} ({own}) imports {other} ({theirs})")
    return sorted(found)


def test_every_specsim_module_sits_in_a_layer_folder():
    """No flat module creeps back: each is in a layer's folder, or is one of the named top-level modules."""
    graph = import_graph()
    loose = [m for m in graph if m.startswith("specsim.") and layer_of(m) is None]
    assert loose == []


def test_no_module_of_a_lower_layer_imports_a_higher_one():
    assert layer_violations(import_graph()) == []


def test_the_layer_check_catches_an_upward_and_a_sideways_import():
    graph = {
        "specsim.core.engine": {"specsim.classroom.jobs"},
        "specsim.lesson.hood": {"specsim.distill.train", "specsim.core.trace"},
        "specsim.measure.bench": {"specsim.request", "specsim.core.engine"},
    }
    assert layer_violations(graph) == [
        "specsim.core.engine (specsim.core) imports specsim.classroom.jobs (specsim.classroom)",
        "specsim.lesson.hood (specsim.lesson) imports specsim.distill.train (specsim.distill)",
    ]


# Issue 63, item 4: a page went by three or four names (*Is verification free here?* had the script verify_free, the
# URL /verify and the package passcost). Now a page's script, its URL and its package share one name; the three quiz
# pages share one package, the quiz's.
SHARED_PACKAGES = {"sequence": "quiz", "interview": "quiz"}


def test_a_page_has_one_name_for_its_script_its_url_and_its_package():
    from app.layout import all_pages

    for page in all_pages():
        assert Path(page.script).stem == page.url_path, (page.script, page.url_path)
        package = APP / SHARED_PACKAGES.get(page.url_path, page.url_path)
        assert (package / "__init__.py").is_file(), (page.title, package)
    assert {p.name for p in APP.iterdir() if (p / "__init__.py").is_file()} <= {
        p.url_path for p in all_pages()} | set(SHARED_PACKAGES.values())  # no package named for no page


def rq_internals(source: str) -> list[str]:
    """What a file uses of RQ's storage layout rather than its API: an import of ``rq.worker_registration`` (the
    registry's key names), or a string that spells one of RQ's Redis keys (``rq:…``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module == "rq.worker_registration":
            found.append(f"from rq.worker_registration import {', '.join(a.name for a in node.names)}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("rq:"):
            found.append(repr(node.value))
    return found


def test_the_class_uses_rqs_api_and_none_of_its_redis_keys():
    offenders = [f"{path.relative_to(ROOT)}: {use}" for folder in ("specsim", "app", "scripts")
                 for path in (ROOT / folder).rglob("*.py") for use in rq_internals(path.read_text())]
    assert offenders == []
    # the check sees the worker's old registration test and the memory script's old wait
    assert rq_internals("from rq.worker_registration import REDIS_WORKER_KEYS\n") != []
    assert rq_internals("while not conn.smembers('rq:workers'): pass\n") != []


def test_a_single_learners_app_runs_without_the_class_packages():
    """``make run`` installs no RQ and no redis client (issue 63: they are requirements-class.txt's); only class mode
    imports them. With both blocked, every app module but class mode's own imports, and every page opens without an
    exception."""
    from tests.conftest import app_in_a_new_process

    printed = app_in_a_new_process(
        "import sys, importlib, pathlib\n"
        "sys.modules['rq'] = None\n"
        "sys.modules['redis'] = None\n"
        f"for path in sorted(pathlib.Path({str(APP)!r}).rglob('*.py')):\n"
        f"    name = '.'.join(path.relative_to({str(ROOT)!r}).with_suffix('').parts).removesuffix('.__init__')\n"
        "    if name != 'app.live.classmode':\n"
        "        importlib.import_module(name)\n"
        "# ---- the app\n"
        "from app.keys import SHOW_ANSWERS\n"
        "from app.layout import all_pages\n"
        "at.session_state[SHOW_ANSWERS] = True\n"
        "at.run()\n"
        "for page in all_pages():\n"
        "    at.switch_page('../pages/' + page.script).run()\n"
        "    assert not at.exception, (page.script, at.exception)\n"
        "print('pages:', len(all_pages()))\n")
    assert "pages:" in printed


MAX_MODULE_LINES = 400  # issue 63: a module a reader takes in at one sitting


def long_modules(paths, limit: int = MAX_MODULE_LINES) -> list[str]:
    """The files of ``paths`` with ``limit`` lines or more, with their length."""
    found = []
    for path in paths:
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines >= limit:
            found.append(f"{path.relative_to(ROOT)}: {lines} lines")
    return found


def test_every_module_of_the_library_and_the_app_is_under_400_lines():
    assert long_modules(sorted((ROOT / "specsim").rglob("*.py")) + sorted(APP.rglob("*.py"))) == []
    assert long_modules([ROOT / "tests" / "test_layers.py"], limit=10) != []  # the check sees a long file

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

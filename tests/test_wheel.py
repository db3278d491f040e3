"""The course as a learner installs it: a wheel, a fresh virtual environment, no repository (issue 17).

The wheel is built from a copy of ``pyproject.toml`` and ``src/`` (so the build writes nothing into
the working tree), with the build-system pins of ``pyproject.toml`` (pip's build isolation). It is
installed with its dependencies and the ``notebook`` extra into a new virtual environment, next to
PyTables (whose import name ``tables`` one of our modules used to take), by pip as a learner would
run it: no constraints file, pip's cache reused. Everything then runs with that environment's
Python, from a folder outside the repository, with no ``PYTHONPATH``, no user site-packages and
Jupyter's paths in the temporary folder: every learner-facing module (the list read from the wheel)
imports, ``tables`` is PyTables, each explorer is created with its static HTML twin, and one exercise
notebook and one chapter notebook, copied there as if downloaded, execute with nbclient.

Slow (about a minute: most of it is pip unpacking torch), so in the full tier only.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
PYTABLES = "tables==3.11.1"  # PyTables, preinstalled on Colab; this release has a wheel for Python 3.11 here
EXERCISE = "exercises/01_order_problem.ipynb"
CHAPTER = "chapters/02_sinusoidal_formula.ipynb"
TOP_LEVEL = {"posenc", "grading", "posenc_course"}  # what the wheel may put into site-packages


def run(args, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, check=False, **kwargs)
    assert done.returncode == 0, f"{' '.join(map(str, args))} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def learner(tmp_path_factory):
    """Build the wheel, install it in a fresh venv; the venv's Python, a clean environment, the timings."""
    tmp = tmp_path_factory.mktemp("wheel")
    assert not tmp.resolve().is_relative_to(REPO), f"the temporary folder {tmp} is inside the repository"
    timings = {}
    start = time.perf_counter()
    source = tmp / "source"
    source.mkdir()
    shutil.copy2(REPO / "pyproject.toml", source)
    shutil.copytree(SRC, source / "src", ignore=shutil.ignore_patterns("*.egg-info", "__pycache__", "*.pyc"))
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", tmp / "dist", source])
    (wheel,) = (tmp / "dist").glob("posenc_course-*.whl")
    timings["build the wheel"] = time.perf_counter() - start

    start = time.perf_counter()
    venv = tmp / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", venv])  # this .venv's pip installs into it (--python)
    python = venv / "bin" / "python"
    run([sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-compile",
         f"{wheel}[notebook]", PYTABLES])
    timings["fresh venv + pip install"] = time.perf_counter() - start

    home = tmp / "learner"  # the learner's folder: outside the repository, where the notebooks land
    home.mkdir()
    # A learner's shell sets none of these; PYTHONDONTWRITEBYTECODE (set on some CI machines) would
    # make every process of the venv compile torch from source again, since pip ran with --no-compile.
    env = {k: v for k, v in os.environ.items()
           if k not in {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "PYTHONSAFEPATH",
                        "PYTHONDONTWRITEBYTECODE"}
           and not k.startswith(("JUPYTER", "IPYTHON", "MPL"))}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", PYTHONNOUSERSITE="1",
               JUPYTER_PATH=str(tmp / "jupyter"), JUPYTER_DATA_DIR=str(tmp / "jupyter"),
               JUPYTER_CONFIG_DIR=str(tmp / "jupyter-config"), IPYTHONDIR=str(tmp / "ipython"),
               MPLCONFIGDIR=str(tmp / "mpl"))
    yield {"wheel": wheel, "venv": venv, "python": python, "home": home, "env": env, "timings": timings}
    print("\nwheel test timings: " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()))


def in_venv(learner, script: str, *args) -> dict:
    """Run a script with the venv's Python in the learner's folder; it prints one JSON object."""
    path = learner["home"] / "probe.py"
    path.write_text(script)
    done = run([learner["python"], path, *args], cwd=learner["home"], env=learner["env"], timeout=900)
    return json.loads(done.stdout.strip().splitlines()[-1])


def wheel_names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as z:
        return [n for n in z.namelist() if ".dist-info/" not in n]


def wheel_modules(wheel: Path) -> list[str]:
    """Every module of the wheel, by import name (packages by their __init__)."""
    names = []
    for n in wheel_names(wheel):
        if n.endswith(".py"):
            parts = n[:-3].split("/")
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return sorted(names)


def under(path: str, folder: Path) -> bool:
    assert Path(path).is_absolute(), path  # a path from the venv's processes, whose folder is not ours
    return Path(path).resolve().is_relative_to(folder.resolve())


def test_the_wheel_holds_the_learner_room_and_nothing_else(learner):
    names = wheel_names(learner["wheel"])
    assert "posenc_course/explorers.js" in names
    with zipfile.ZipFile(learner["wheel"]) as z:
        assert z.read("posenc_course/explorers.js") == (SRC / "posenc_course" / "explorers.js").read_bytes()
    assert {n.split("/")[0].removesuffix(".py") for n in names} == TOP_LEVEL
    in_src = sorted(str(p.relative_to(SRC)) for p in SRC.rglob("*")
                    if p.is_file() and p.suffix in {".py", ".js"} and ".egg-info" not in str(p)
                    and "__pycache__" not in p.parts)
    assert sorted(names) == in_src, "the wheel and src/ differ (a package or a data file left out?)"
    with zipfile.ZipFile(learner["wheel"]) as z:
        (metadata,) = (n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        requires = re.findall(r"^Requires-Dist: (.+)$", z.read(metadata).decode(), re.MULTILINE)
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    assert set(declared) <= {r.replace(" ", "") for r in requires}


IMPORT_PROBE = r"""
import importlib, inspect, json, sys
from pathlib import Path

modules = json.loads(sys.argv[1])
files = {name: importlib.import_module(name).__file__ for name in modules}

import tables  # PyTables, installed next to the course
pytables = {"file": tables.__file__, "version": tables.__version__, "open_file": callable(tables.open_file)}
from posenc_course.tables import Table
table = Table([[1, 0.5], [2, 0.25]], headers=["p", "value"], caption="a check")

from posenc_course import explorers
made = {}
for name, cls in vars(explorers).items():
    if inspect.isclass(cls) and issubclass(cls, explorers.Explorer) and cls is not explorers.Explorer:
        widget = cls()
        static = widget.static_html()
        made[name] = {"kind": widget.kind, "values": widget.values(), "static_len": len(static),
                      "has_module": explorers.BROWSER_MODULE.read_text() in static,
                      "has_spec": 'data-spec="' in static, "bundle": sorted(widget._repr_mimebundle_())}
# every module's file (torch.ops and torch.classes have a bare name as __file__, not a path: left out)
loaded = sorted({f for f in (getattr(m, "__file__", None) for m in list(sys.modules.values()))
                 if f and Path(f).is_absolute()})
print(json.dumps({"files": files, "pytables": pytables, "table_html": table._repr_html_(), "table_text": repr(table),
                  "explorers": made, "js": str(explorers.BROWSER_MODULE), "loaded": loaded, "sys_path": sys.path,
                  "cwd": str(Path.cwd()), "executable": sys.executable, "prefix": sys.prefix}))
"""


def test_every_learner_module_imports_from_the_venv_outside_the_repository(learner):
    modules = wheel_modules(learner["wheel"])
    assert {"posenc", "grading", "grading.bank", "posenc_course.explorers", "posenc_course.tables"} <= set(modules)
    got = in_venv(learner, IMPORT_PROBE, json.dumps(modules))
    site = Path(got["prefix"])
    assert Path(got["prefix"]).resolve() == learner["venv"].resolve()
    assert set(got["files"]) == set(modules)
    for name, file in got["files"].items():
        assert under(file, site), f"{name} imported from {file}, not from the venv"
    inside = [f for f in got["loaded"] if under(f, REPO)]
    assert not inside, f"modules loaded from the repository: {inside[:5]}"
    assert not [p for p in got["sys_path"] if p and under(p, REPO)]
    assert not under(got["cwd"], REPO)

    # `tables` is PyTables, and ours is reachable only by its full name
    assert got["pytables"]["version"] == PYTABLES.split("==")[1] and got["pytables"]["open_file"]
    assert Path(got["pytables"]["file"]).parent.name == "tables" and under(got["pytables"]["file"], site)
    assert "<table" in got["table_html"] and "a check" in got["table_html"] and "0.25" in got["table_text"]

    # each explorer, and its static twin carrying explorers.js (read from the installed package data)
    assert under(got["js"], site) and got["js"].endswith("posenc_course/explorers.js")
    assert len(got["explorers"]) >= 5, got["explorers"].keys()
    for name, made in got["explorers"].items():
        assert made["kind"] and made["values"], name
        assert made["has_module"] and made["has_spec"], f"{name}: the static HTML lacks explorers.js or its spec"
        assert "text/html" in made["bundle"] and "application/vnd.jupyter.widget-view+json" in made["bundle"], name


RUN_NOTEBOOKS = r"""
import json, sys
import nbclient, nbformat
from jupyter_client.kernelspec import KernelSpecManager

result = {"kernel": KernelSpecManager().get_kernel_spec("python3").argv, "notebooks": {}}
for path in sys.argv[1:]:
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": "."}}).execute()
    nbformat.write(nb, path)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    result["notebooks"][path] = {
        "errors": [o.get("ename") for o in outputs if o.output_type == "error"],
        "stream": "".join(o.get("text", "") for o in outputs if o.output_type == "stream"),
        "mime": sorted({k for o in outputs for k in o.get("data", {})}),
        "html": "".join(o["data"].get("text/html", "") for o in outputs if "data" in o),
    }
print(json.dumps(result))
"""

WHERE_FROM = ("import json, sys, posenc, grading, posenc_course.explorers as e\n"
              "print(json.dumps({'executable': sys.executable, "
              "'files': [posenc.__file__, grading.__file__, e.__file__]}))")


def code_cells(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def download(learner, relative: str) -> tuple[Path, dict]:
    """The notebook as a learner downloads it, into the learner's folder (a last cell reports where code came from)."""
    nb = json.loads((REPO / relative).read_text())
    nb["cells"].append({"cell_type": "code", "execution_count": None, "id": "where-from", "metadata": {},
                        "outputs": [], "source": WHERE_FROM})
    return learner["home"] / Path(relative).name, nb


def source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def test_a_downloaded_exercise_and_chapter_execute_with_the_installed_course(learner):
    exercise, nb = download(learner, EXERCISE)
    questions = [q for c in code_cells(nb) for q in re.findall(r'check\("([^"]+)"', source(c))]
    assert len(questions) >= 3, questions
    # the learner answers the first question as the solution does, and leaves the rest
    solution = json.loads((REPO / EXERCISE.replace("exercises/", "solutions/")).read_text())
    (answer,) = (source(c) for c in code_cells(solution) if f'check("{questions[0]}"' in source(c))
    answer = "\n".join(line for line in answer.splitlines() if "SOLUTION" not in line)
    (blank,) = (c for c in code_cells(nb) if f'check("{questions[0]}"' in source(c))
    blank["source"] = answer
    exercise.write_text(json.dumps(nb))
    chapter, nb = download(learner, CHAPTER)
    chapter.write_text(json.dumps(nb))

    got = in_venv(learner, RUN_NOTEBOOKS, exercise.name, chapter.name)
    for path, ran in got["notebooks"].items():
        assert ran["errors"] == [], f"{path}: {ran['errors']}"
        where = json.loads(ran["stream"].strip().splitlines()[-1])
        assert Path(where["executable"]).parent == learner["venv"] / "bin", where  # the venv's kernel
        assert all(under(f, learner["venv"]) for f in where["files"]), where

    feedback = got["notebooks"][exercise.name]["stream"]
    assert f"{questions[0]} ✓ correct" in feedback
    for q in questions[1:]:
        assert re.search(rf"^{re.escape(q)} · not answered yet", feedback, re.MULTILINE), (q, feedback)
    chapter_number = questions[0].split(".")[0]
    assert f"Chapter {chapter_number}: 1 of {len(questions)} correct." in feedback

    ran = got["notebooks"][chapter.name]
    # figures are SVG (posenc_course.plotting), explorers widgets
    assert "image/svg+xml" in ran["mime"] and "application/vnd.jupyter.widget-view+json" in ran["mime"]
    assert 'class="posenc-explorer"' in ran["html"]  # the explorer's static twin, with explorers.js inline

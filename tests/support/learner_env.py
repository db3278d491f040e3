"""Fresh virtual environments outside the repository, as learners have them (test_wheel, test_learner_stacks).

Each environment is a new venv whose packages pip installs as a learner's pip would: no constraints
file, no PYTHONPATH, pip's cache reused. PyTorch is the exception: the CPU build CI pins (760 MB
unpacked) is unpacked once per machine into a cache folder and hard-linked into each environment's
site-packages, where pip sees it as installed (its dist-info is there), as torch is on Colab; the
other environments then cost seconds, not a second unpacking. The environment a process runs in
is cleaned of what a learner's shell does not set (``clean_env``).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

TORCH = "torch==2.13.0"  # CI's torch: the CPU build this machine's pip finds (pip.conf's find-links)
# Colab's kernel and what runs notebooks headless (the old IPython needs an ipykernel of its time)
KERNEL = {"ipykernel": "6.17.1", "nbclient": "0.10.2", "nbformat": "5.10.4"}
# What a Colab runtime has preinstalled, of what the course imports or runs on (the versions reported for a Colab
# runtime; tests/test_packaging.py checks that the declared ranges admit them). torch is linked in (``create``).
COLAB = {
    "ipython": "7.34.0",
    "ipywidgets": "7.7.1",
    "widgetsnbextension": "3.6.10",
    "numpy": "2.0.2",
    "matplotlib": "3.10.0",
    "matplotlib-inline": "0.1.7",
    "cycler": "0.12.1",
    "traitlets": "5.7.1",
    "cloudpickle": "3.1.1",
    "psutil": "5.9.5",
    "mpmath": "1.3.0",
    **KERNEL,
}
CACHE = Path(os.environ.get("POSENC_TEST_CACHE") or Path.home() / ".cache" / "posenc-course-tests")
REPO = Path(__file__).resolve().parents[2]


def run(args, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, check=False, **kwargs)
    assert done.returncode == 0, f"{' '.join(map(str, args))} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def torch_tree() -> Path:
    """A folder holding torch as site-packages holds it, unpacked once per machine (a file lock for xdist)."""
    tree = CACHE / TORCH.replace("==", "-")
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (tree / ".complete").exists():
            shutil.rmtree(tree, ignore_errors=True)
            partial = Path(tempfile.mkdtemp(prefix="torch-", dir=CACHE))
            run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", partial, TORCH])
            shutil.rmtree(partial / "bin", ignore_errors=True)  # console scripts, written for another Python
            partial.rename(tree)
            (tree / ".complete").touch()
    return tree


def create(venv: Path, *, torch: bool = True) -> Path:
    """A new venv at ``venv`` (outside the repository), with torch in it unless told otherwise; its Python."""
    assert not venv.resolve().is_relative_to(REPO), f"{venv} is inside the repository"
    run([sys.executable, "-m", "venv", "--without-pip", venv])  # this .venv's pip installs into it (--python)
    python = venv / "bin" / "python"
    if torch:
        site = Path(run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
        shutil.copytree(
            torch_tree(), site, copy_function=os.link, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".complete")
        )
    return python


def pip(python: Path, *args, **kwargs) -> subprocess.CompletedProcess:
    """This Python's pip, acting on the venv of ``python`` (no constraints file: as a learner's pip)."""
    return run([sys.executable, "-m", "pip", "--python", python, *args], timeout=900, **kwargs)


def freeze(python: Path) -> dict[str, str]:
    """{distribution: version} of what is installed in the venv of ``python``."""
    out = pip(python, "list", "--format", "json").stdout
    return {re.sub(r"[-_.]+", "-", p["name"]).lower(): p["version"] for p in json.loads(out)}


def clean_env(venv: Path, tmp: Path) -> dict[str, str]:
    """The environment of a learner's shell with ``venv`` active; Jupyter's and IPython's paths, and the progress
    file (a new learner's: nothing solved yet, not the test session's, which the book build's checks fill), in
    ``tmp``."""
    # A learner's shell sets none of these; PYTHONDONTWRITEBYTECODE (set on some CI machines) would
    # make every process of the venv compile torch from source again.
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "PYTHONSAFEPATH", "PYTHONDONTWRITEBYTECODE"}
        and not k.startswith(("JUPYTER", "IPYTHON", "MPL"))
    }
    env.update(
        PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        PYTHONNOUSERSITE="1",
        JUPYTER_PATH=str(tmp / "jupyter"),
        JUPYTER_DATA_DIR=str(tmp / "jupyter"),
        **user_folders(tmp),
    )
    return env


def user_folders(tmp: Path) -> dict[str, str]:
    """The per-user folders Jupyter, IPython and matplotlib write to, and the course's progress file, all under
    ``tmp``: a test's kernels and servers leave the maintainer's own untouched."""
    return {
        "JUPYTER_CONFIG_DIR": str(tmp / "jupyter-config"),
        "IPYTHONDIR": str(tmp / "ipython"),
        "MPLCONFIGDIR": str(tmp / "mpl"),
        "POSENC_PROGRESS": str(tmp / "progress.json"),
    }


RUN_NOTEBOOKS = r"""
import json, sys
from pathlib import Path
import nbclient, nbformat
from jupyter_client.kernelspec import KernelSpecManager

result = {"kernel": KernelSpecManager().get_kernel_spec("python3").argv, "notebooks": {}}
for path in sys.argv[1:]:
    nb = nbformat.read(path, as_version=4)
    # the kernel starts in the notebook's folder, as Jupyter starts it
    folder = str(Path(path).parent)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": folder}}).execute()
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


def script(python: Path, source: str, *args, cwd: Path, env: dict) -> dict:
    """Run ``source`` with ``python`` in ``cwd``; it prints one JSON object (its last line), returned."""
    path = cwd / "probe.py"
    path.write_text(source)
    done = run([python, path, *args], cwd=cwd, env=env, timeout=900)
    return json.loads(done.stdout.strip().splitlines()[-1])


def code_source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def answered_exercise(exercise: Path, solution: Path, target: Path) -> list[str]:
    """Write ``exercise`` to ``target`` with its first question answered as ``solution`` answers it and a
    last cell that prints where the course was imported from; returns the exercise's question ids."""
    nb = json.loads(exercise.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    questions = [q for c in code for q in re.findall(r'check\("([^"]+)"', code_source(c))]
    (answer,) = (
        code_source(c)
        for c in json.loads(solution.read_text())["cells"]
        if c["cell_type"] == "code" and f'check("{questions[0]}"' in code_source(c)
    )
    (blank,) = (c for c in code if f'check("{questions[0]}"' in code_source(c))
    blank["source"] = "\n".join(line for line in answer.splitlines() if "SOLUTION" not in line)
    nb["cells"].append(where_from_cell())
    target.write_text(json.dumps(nb))
    return questions


def where_from_cell() -> dict:
    source = (
        "import json, sys, posenc, grading, posenc_course.explorers as e\n"
        "print(json.dumps({'executable': sys.executable, "
        "'files': [posenc.__file__, grading.__file__, e.__file__]}))"
    )
    return {
        "cell_type": "code",
        "execution_count": None,
        "id": "where-from",
        "metadata": {},
        "outputs": [],
        "source": source,
    }


def where_from(stream: str) -> dict:
    """What ``where_from_cell`` printed: the kernel's Python and the course's files."""
    return json.loads(stream.strip().splitlines()[-1])


# What a learner copies: the fenced blocks of a page, each under the bold name of the platform it is for.
FENCED = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)
PLATFORM_LABEL = re.compile(r"\*\*(Linux|macOS|Windows)\*\*[^\n]*:$")


def copy_blocks(markdown: str) -> dict[str, list[str]]:
    """Every fenced block of ``markdown`` that installs something, by the platform named in the paragraph just
    above it (``**Linux** (Terminal):``); its lines as typed."""
    blocks = {}
    for match in FENCED.finditer(markdown):
        lines = [line.strip() for line in match[2].splitlines() if line.strip()]
        if not any("pip install" in line for line in lines):
            continue
        above = markdown[: match.start()].rstrip().rsplit("\n\n", 1)[-1]
        label = PLATFORM_LABEL.search(" ".join(above.split()))
        assert label, f"a block that installs, under no platform's name: {above!r}"
        assert label[1] not in blocks, f"two blocks for {label[1]}"
        blocks[label[1]] = lines
    return blocks

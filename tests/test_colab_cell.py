"""Two settings in _config.yml say where the course is published: ``html.baseurl`` and ``repository.url``.

Both empty (the default): the book has no launch buttons and no repository button
(``book_assets.repository_links``), and every notebook's first code cell, on Colab,
installs an uploaded wheel or says how to get one, never a URL. ``repository.url`` set: the
buttons are in the theme options and the cell installs the course from exactly that URL.
``html.baseurl`` set: the cell downloads the wheel the book hands out at that address (served
here from a local server). ``tools/colab_cell.py`` writes the cell from the settings; every case is
checked here.

What the cell does on Colab is checked in a real kernel, run as "Run all" runs a notebook: an
uploaded (or downloaded) wheel is installed with one line of output, and the next cell imports from it
without a restart; a missing wheel, a failed download (the HTTP status or the network error said) and
a failed pip stop the run at the cell with one line, no traceback. (tests/test_learner_stacks.py runs
the cell beside a Colab-like stack, IPython 7.)
"""

import base64
import functools
import hashlib
import http.server
import importlib.metadata
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import tomllib
import types
import zipfile
from pathlib import Path

import nbclient
import nbformat
import pytest
import yaml
from jupyter_book.config import get_final_config

from book_build import book_assets, book_kit
from tools import colab_cell, nbhygiene

ROOT = Path(__file__).resolve().parent.parent
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["name"]
NOTEBOOKS = nbhygiene.notebooks([ROOT / "chapters", ROOT / "appendix", ROOT / "exercises", ROOT / "solutions"])
URL = re.compile(r"""https?://[^\s"'<>)]+""")
PUBLISHED = "https://github.com/someone/positional-encoding-course"
NO_RESTART = "Installed. No restart needed: the install replaced nothing this session had loaded.\n"
LINK_OPTIONS = (
    "repository_url",
    "launch_buttons",
    "use_repository_button",
    "use_issues_button",
    "use_edit_page_button",
)


def code_cells(path):
    return [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


def run_cell(source, on_colab, monkeypatch):
    """Execute the cell in this process with pip replaced by a recorder; return the pip commands it ran."""
    calls = []

    def pip(args, **kwargs):
        calls.append(args[1:])
        return subprocess.CompletedProcess(args, 0, "", "")

    monkeypatch.setattr(subprocess, "run", pip)
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    if on_colab:
        monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    try:
        exec(compile(source, "<colab cell>", "exec"), {})
    finally:
        monkeypatch.undo()
    return calls


def pip_install(what):
    return ["-m", "pip", "install", "-q", "--no-color", what]


def config_copy(tmp_path, baseurl="", **repository):
    """_config.yml with its repository section changed (a value None deletes the key) and html.baseurl set."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    for key, value in repository.items():
        if value is None:
            config["repository"].pop(key, None)
        else:
            config["repository"][key] = value
    config["html"]["baseurl"] = baseurl
    path = tmp_path / "_config.yml"
    path.write_text(yaml.safe_dump(config))
    return path


def theme_options(config_path):
    """The theme options a build of ``config_path`` gives Sphinx, after book_assets' hook."""
    sphinx_config, _ = get_final_config(
        user_yaml=Path(config_path),
        cli_config={"latex_individualpages": False},
        sourcedir=ROOT,
        validate=True,
        raise_on_invalid=True,
    )
    config = types.SimpleNamespace(html_theme_options=sphinx_config["html_theme_options"])
    book_assets.repository_links(None, config)
    return {key: config.html_theme_options.get(key) for key in LINK_OPTIONS}


# --------------------------------------------------------------------------
# The setting, and the links of the book
# --------------------------------------------------------------------------


def test_no_repository_and_no_book_address_are_configured_by_default():
    assert colab_cell.repository() == ("", "main")
    assert colab_cell.book_address() == ""
    assert colab_cell.PACKAGE == PROJECT
    assert "use_repository_button" not in CONFIG["html"], "the repository button follows repository.url"


NO_LINKS = {
    "repository_url": "",
    "launch_buttons": {},
    "use_repository_button": False,
    "use_issues_button": False,
    "use_edit_page_button": False,
}


def test_the_default_book_has_no_launch_or_repository_buttons():
    assert theme_options(ROOT / "_config.yml") == NO_LINKS


def test_an_absent_url_does_not_fall_back_to_jupyter_books_own_repository(tmp_path):
    path = config_copy(tmp_path, url=None)
    raw, _ = get_final_config(user_yaml=path, cli_config={"latex_individualpages": False}, sourcedir=ROOT)
    assert raw["html_theme_options"]["repository_url"] == book_assets.JUPYTER_BOOK_DEFAULT_REPOSITORY
    assert theme_options(path) == NO_LINKS
    assert colab_cell.repository(path) == ("", "main")


def test_a_configured_repository_gets_its_buttons(tmp_path):
    options = theme_options(config_copy(tmp_path, url=PUBLISHED, branch="course"))
    assert options["repository_url"] == PUBLISHED and options["use_repository_button"] is True
    assert options["launch_buttons"]["binderhub_url"] == CONFIG["launch_buttons"]["binderhub_url"]
    assert options["launch_buttons"]["colab_url"] == CONFIG["launch_buttons"]["colab_url"]


@pytest.mark.parametrize(
    "url", ["http://github.com/a/b", "https://github.com/a/b.git", "https://github.com/a/b/", "https://github.com/a"]
)
def test_a_malformed_url_is_refused(tmp_path, url):
    with pytest.raises(ValueError, match="repository.url"):
        colab_cell.repository(config_copy(tmp_path, url=url))


# --------------------------------------------------------------------------
# The Colab cell
# --------------------------------------------------------------------------


def test_there_are_notebooks_in_all_four_folders():
    assert {p.parent.name for p in NOTEBOOKS} == {"chapters", "appendix", "exercises", "solutions"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_first_code_cell_is_the_one_for_the_setting(path):
    cells = code_cells(path)
    assert cells[0].source == colab_cell.cell_source(*colab_cell.settings()), (
        f"{path}: run `make colab-cell` to write the cell from _config.yml"
    )
    assert cells[0].metadata == colab_cell.METADATA, f"{path}: the cell is stored collapsed and the book omits it"
    assert cells[0].source.startswith("#@title "), f"{path}: Colab shows the collapsed cell by its title"
    for cell in cells[1:]:
        assert not re.search(r"pip\s+install", cell.source), f"{path}: only the Colab cell may install packages"


def test_with_a_repository_the_cell_installs_exactly_it_on_colab_only(monkeypatch, capsys):
    source = colab_cell.cell_source(PUBLISHED, "course")
    assert [url.removesuffix("@course") for url in URL.findall(source)] == [PUBLISHED]
    assert run_cell(source, on_colab=False, monkeypatch=monkeypatch) == []
    assert capsys.readouterr().out == ""
    assert run_cell(source, on_colab=True, monkeypatch=monkeypatch) == [
        pip_install(f"{PROJECT} @ git+{PUBLISHED}@course")
    ]
    assert capsys.readouterr().out == NO_RESTART


def test_the_maintainer_command_rewrites_every_notebook_from_the_setting(tmp_path, capsys):
    for folder in colab_cell.SOURCES:
        shutil.copytree(ROOT / folder, tmp_path / folder)
    config_copy(tmp_path, url=PUBLISHED)  # writes tmp_path / "_config.yml"
    assert colab_cell.main(["--check"], root=tmp_path) == 1
    assert colab_cell.main([], root=tmp_path) == 0
    assert colab_cell.main(["--check"], root=tmp_path) == 0
    written = nbhygiene.notebooks([tmp_path / folder for folder in [*colab_cell.SOURCES, "exercises"]])
    assert len(written) == len(NOTEBOOKS)
    for path in written:
        assert code_cells(path)[0].source == colab_cell.cell_source(PUBLISHED, "main"), path
        assert nbhygiene.problems(nbformat.read(path, as_version=4)) == [], path


# --------------------------------------------------------------------------
# html.baseurl: the wheel the hosted book hands out
# --------------------------------------------------------------------------

HOSTED = "https://someone.github.io/positional-encoding-course/"


@pytest.fixture
def served(tmp_path):
    """A local server of ``tmp_path / "site"`` (as the hosted book serves _build/html); its base URL."""
    site = tmp_path / "site"
    (site / book_kit.DOWNLOADS).mkdir(parents=True)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield site, f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def hosted_cell(base: str) -> str:
    """The cell for HOSTED, pointed at ``base`` instead (the same code, another address)."""
    source = colab_cell.cell_source(address=HOSTED)
    assert colab_cell.wheel_url(HOSTED) in source
    return source.replace(HOSTED, base)


def test_a_book_address_is_read_normalised_and_checked(tmp_path):
    assert colab_cell.book_address(config_copy(tmp_path, baseurl=HOSTED.rstrip("/"))) == HOSTED
    assert colab_cell.settings(config_copy(tmp_path, baseurl=HOSTED, url=PUBLISHED)) == (PUBLISHED, "main", HOSTED)
    for bad in ["http://someone.github.io/x/", "someone.github.io/x", "https://x.org/?a=1"]:
        with pytest.raises(ValueError, match="html.baseurl"):
            colab_cell.book_address(config_copy(tmp_path, baseurl=bad))


def test_with_a_book_address_the_cell_names_only_the_wheel_the_book_hands_out():
    source = colab_cell.cell_source(PUBLISHED, "main", HOSTED)  # the book's address comes before the repository
    assert URL.findall(source) == [f"{HOSTED}_downloads/{book_kit.wheel_name()}"]


def test_without_a_repository_or_book_address_the_cell_names_no_url():
    assert URL.findall(colab_cell.cell_source()) == []


# --------------------------------------------------------------------------
# What the cell does on Colab, run as "Run all" runs it: in a kernel of its own, with google.colab imported
# (the test's first cell fakes it) and the cell followed by the notebook's next cell. pip installs into a folder
# of the test's own (PIP_TARGET, on the kernel's path); the wheel is a small stand-in with the course wheel's name.
# --------------------------------------------------------------------------

ON_COLAB = 'import sys, types\nsys.modules["google.colab"] = types.ModuleType("google.colab")'
NEXT = 'print("the run went on")'
PROBE = "import colab_cell_probe\nprint(colab_cell_probe.FROM)"
PIPS_NOTE = "restart the kernel"  # %pip's note, which the cell's own verdict would contradict


def stand_in_wheel(folder: Path) -> Path:
    """A wheel named as the course's (``posenc_course-VERSION-py3-none-any.whl``) holding one module."""
    name, version = book_kit.distribution()
    info = f"{name.replace('-', '_')}-{version}.dist-info"
    files = {
        "colab_cell_probe.py": 'FROM = "the uploaded wheel"\n',
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = [f"{path},sha256={wheel_hash(text)},{len(text.encode())}" for path, text in files.items()]
    files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    path = folder / book_kit.wheel_name()
    with zipfile.ZipFile(path, "w") as archive:
        for member, text in files.items():
            archive.writestr(member, text)
    return path


def wheel_hash(text: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()


@pytest.fixture
def home(tmp_path):
    """The notebook's folder (Colab's /content), and where pip installs (on the kernel's path)."""
    (tmp_path / "home").mkdir()
    (tmp_path / "installed").mkdir()
    return tmp_path / "home"


def run_all(cells: list[str], home: Path) -> nbformat.NotebookNode:
    """A notebook of these code cells, run in ``home`` as "Run all" runs it, in a new kernel: it stops at the first
    cell that fails. Returned with its outputs."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
    installed = home.parent / "installed"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")} | {
        "PYTHONPATH": str(installed),
        "PIP_TARGET": str(installed),
        "PIP_NO_INDEX": "1",  # the stand-in needs nothing else
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    client = nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(home)}}
    )
    try:
        client.execute(env=env)
    except nbclient.exceptions.CellExecutionError:
        pass
    return nb


def shown(cell) -> str:
    """What a cell shows below it: its printed text and its error's lines."""
    return "".join(
        o.get("text", "") if o.output_type == "stream" else "\n".join(o.get("traceback", [])) for o in cell.outputs
    )


def stopped(nb) -> str:
    """The one line the Colab cell (the one before last) showed when it stopped the run; checks it stopped."""
    cell, after = nb.cells[-2], nb.cells[-1]
    assert [o.output_type for o in cell.outputs] == ["error"], shown(cell)
    (error,) = cell.outputs
    assert error.ename == "Stopped" and len(error.traceback) == 1, error.traceback  # one line, no traceback
    assert "\n" not in error.traceback[0] and PIPS_NOTE not in error.traceback[0]
    assert after.execution_count is None and after.outputs == [], "the run went on after the Colab cell"
    return error.traceback[0]


def test_outside_colab_the_cell_does_nothing(home):
    stand_in_wheel(home)
    nb = run_all([colab_cell.cell_source(), NEXT], home)
    assert [shown(cell) for cell in nb.cells] == ["", "the run went on\n"]
    assert list((home.parent / "installed").iterdir()) == []


def test_an_uploaded_wheel_is_installed_and_imported_without_a_restart(home):
    stand_in_wheel(home)
    nb = run_all([ON_COLAB, colab_cell.cell_source(), PROBE], home)
    assert shown(nb.cells[1]) == NO_RESTART  # one statement, and pip's note is not there to contradict it
    assert shown(nb.cells[2]) == "the uploaded wheel\n"


def test_without_a_wheel_the_run_stops_at_the_cell_with_one_line(home):
    told = stopped(run_all([ON_COLAB, colab_cell.cell_source(), NEXT], home))
    assert told == (
        "Stopped here. The course library is not installed. Download the practice kit from the book (How to take "
        "this course), upload its .whl with Colab's Files panel, and run this cell again."
    )


def test_a_wheel_pip_cannot_install_stops_the_run_with_pips_reason(home):
    (home / book_kit.wheel_name()).write_bytes(b"not a zip file")
    told = stopped(run_all([ON_COLAB, colab_cell.cell_source(), NEXT], home))
    assert told.startswith("Stopped here. pip could not install the course library: ERROR: "), told
    assert book_kit.wheel_name() in told


def test_a_package_replaced_under_a_running_session_stops_the_run_and_asks_for_a_restart(home):
    stand_in_wheel(home)
    loaded = 'import sys, types\nsys.modules["ipywidgets"] = types.SimpleNamespace(__version__="0.0.1")'
    told = stopped(run_all([ON_COLAB, loaded, colab_cell.cell_source(), NEXT], home))
    assert told == (
        "Stopped here. Installed; now restart the session (Runtime > Restart session) and run the notebook from the "
        f"top: the install replaced ipywidgets 0.0.1 by {importlib.metadata.version('ipywidgets')}, already loaded "
        "here."
    )


def test_with_a_book_address_the_cell_downloads_and_installs_the_wheel_the_book_hands_out(served, home):
    site, base = served
    wheel = stand_in_wheel(site / book_kit.DOWNLOADS)
    nb = run_all([ON_COLAB, hosted_cell(base), PROBE], home)
    assert shown(nb.cells[1]) == NO_RESTART and shown(nb.cells[2]) == "the uploaded wheel\n"
    assert sorted(p.name for p in home.iterdir()) == [wheel.name]  # downloaded whole under its own name
    assert (home / wheel.name).read_bytes() == wheel.read_bytes()


class Unavailable(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_error(503)

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("failure", ["missing", "unavailable", "no server"])
def test_a_failed_download_stops_the_run_saying_why_in_one_line(served, home, failure, request):
    site, base = served
    if failure == "unavailable":  # a server that answers every request with 503
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Unavailable)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        request.addfinalizer(server.server_close)
        request.addfinalizer(server.shutdown)
        base = f"http://127.0.0.1:{server.server_address[1]}/"
    if failure == "no server":  # a port nothing listens on
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            base = f"http://127.0.0.1:{s.getsockname()[1]}/"
    told = stopped(run_all([ON_COLAB, hosted_cell(base), NEXT], home))
    why = {
        "missing": "the server answered HTTP 404 File not found",
        "unavailable": "the server answered HTTP 503 Service Unavailable",
        "no server": "[Errno 111] Connection refused",
    }[failure]
    assert told == (
        f"Stopped here. Could not download the course library from {base}_downloads/{book_kit.wheel_name()}: {why}. "
        "Check the connection and run this cell again, or upload the .whl of the book's practice kit (Files panel) "
        "and run it again."
    )
    assert list(home.iterdir()) == []  # nothing half-downloaded left to be taken for a wheel
    if failure == "no server":  # the way out it names: a wheel uploaded next to the notebook, installed as it is
        stand_in_wheel(home)
        nb = run_all([ON_COLAB, hosted_cell(base), PROBE], home)
        assert shown(nb.cells[1]) == NO_RESTART and shown(nb.cells[2]) == "the uploaded wheel\n"

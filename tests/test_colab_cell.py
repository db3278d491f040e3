"""Two settings in _config.yml say where the course is published: ``html.baseurl`` and ``repository.url``.

Both empty (the default): the book has no launch buttons and no repository button
(``book_assets.repository_links``), and every notebook's first code cell, on Colab,
installs an uploaded wheel or says how to get one, never a URL. ``repository.url`` set: the
buttons are in the theme options and the cell installs the course from exactly that URL.
``html.baseurl`` set: the cell downloads the wheel the book hands out at that address (served
here from a local server), and a failed download is explained without a traceback.
``tools/colab_cell.py`` writes the cell from the settings; every case is checked here.
"""

import functools
import importlib.metadata
import http.server
import re
import shutil
import sys
import threading
import tomllib
import types
from pathlib import Path

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


def run_cell(source, on_colab):
    """Execute the cell with a recording get_ipython; return the magics it ran."""
    calls = []
    shell = types.SimpleNamespace(run_line_magic=lambda *args: calls.append(args))
    saved = sys.modules.pop("google.colab", None)
    if on_colab:
        sys.modules["google.colab"] = types.ModuleType("google.colab")
    try:
        exec(compile(source, "<colab cell>", "exec"), {"get_ipython": lambda: shell})
    finally:
        sys.modules.pop("google.colab", None)
        if saved is not None:
            sys.modules["google.colab"] = saved
    return calls


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


def test_without_a_repository_the_cell_names_no_url_and_installs_an_uploaded_wheel(tmp_path, monkeypatch, capsys):
    source = colab_cell.cell_source("")
    assert URL.findall(source) == []
    monkeypatch.chdir(tmp_path)
    assert run_cell(source, on_colab=False) == [] and capsys.readouterr().out == ""
    assert run_cell(source, on_colab=True) == []
    told = capsys.readouterr().out
    assert "practice kit" in told and "upload" in told
    wheel = tmp_path / book_kit.wheel_name()
    wheel.write_bytes(b"")
    assert run_cell(source, on_colab=True) == [("pip", f'install -q "{wheel}"')]
    assert capsys.readouterr().out == NO_RESTART  # nothing already loaded was replaced


def test_with_a_repository_the_cell_installs_exactly_it_on_colab_only():
    source = colab_cell.cell_source(PUBLISHED, "course")
    assert [url.removesuffix("@course") for url in URL.findall(source)] == [PUBLISHED]
    assert run_cell(source, on_colab=False) == []
    assert run_cell(source, on_colab=True) == [("pip", f'install -q "{PROJECT} @ git+{PUBLISHED}@course"')]


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


def test_with_a_book_address_the_cell_installs_the_wheel_the_book_hands_out(served, tmp_path, monkeypatch, capsys):
    site, base = served
    source = colab_cell.cell_source(PUBLISHED, "main", HOSTED)  # the book's address comes before the repository
    assert URL.findall(source) == [f"{HOSTED}_downloads/{book_kit.wheel_name()}"]
    wheel = site / book_kit.DOWNLOADS / book_kit.wheel_name()
    wheel.write_bytes(b"the wheel")
    monkeypatch.chdir(tmp_path)
    assert run_cell(hosted_cell(base), on_colab=False) == [] and capsys.readouterr().out == ""
    assert run_cell(hosted_cell(base), on_colab=True) == [("pip", f'install -q "{wheel.name}"')]
    assert (tmp_path / wheel.name).read_bytes() == b"the wheel" and capsys.readouterr().out == NO_RESTART


@pytest.mark.parametrize("failure", ["missing", "no server"])
def test_a_failed_download_is_explained_without_a_traceback(served, tmp_path, monkeypatch, capsys, failure):
    site, base = served
    if failure == "no server":  # a port nothing listens on
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            base = f"http://127.0.0.1:{s.getsockname()[1]}/"
    monkeypatch.chdir(tmp_path)
    assert run_cell(hosted_cell(base), on_colab=True) == []  # nothing installed, nothing raised
    told = capsys.readouterr().out
    assert told.startswith("Could not download the course library from http://127.0.0.1:")
    assert ("404" in told) if failure == "missing" else ("refused" in told.lower())
    assert "practice kit" in told and "run this cell again" in told
    # the way out it names: a wheel uploaded next to the notebook is installed without a download
    (tmp_path / book_kit.wheel_name()).write_bytes(b"")
    assert run_cell(hosted_cell(base), on_colab=True) == [("pip", f'install -q "{tmp_path / book_kit.wheel_name()}"')]


def test_a_package_replaced_under_a_running_session_asks_for_a_restart(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ipywidgets", types.SimpleNamespace(__version__="0.0.1"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / book_kit.wheel_name()).write_bytes(b"")
    assert len(run_cell(colab_cell.cell_source(), on_colab=True)) == 1
    told = capsys.readouterr().out
    installed = importlib.metadata.version("ipywidgets")
    assert told == (
        "Installed. Restart the session (Runtime > Restart session), then run the notebook from the top: "
        f"the install replaced ipywidgets 0.0.1 by {installed}, already loaded here.\n"
    )

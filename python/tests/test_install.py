"""The package as a user installs it: the tests run against the wheel built from the sdist
(run-tests.sh), not the source tree; its version is package.json's, in one place; `python -m
zeromesh --version` says it; the metadata PyPI shows is there."""
import json
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import zeromesh
from conftest import ROOT


def pep440(npm: str) -> str:
    m = re.fullmatch(r"(\d+\.\d+\.\d+)(?:-(alpha|beta|rc)\.(\d+))?", npm)
    assert m is not None, npm
    return m.group(1) + ("" if m.group(2) is None else {"alpha": "a", "beta": "b", "rc": "rc"}[m.group(2)] + m.group(3))


def test_the_tests_import_the_installed_package_not_the_source_tree():
    where = Path(zeromesh.__file__).resolve().parent
    assert where != (ROOT / "python" / "zeromesh").resolve(), f"zeromesh imported from the source tree {where}: run the tests as run-tests.sh does"
    assert "site-packages" in where.parts
    for name in ("worker.py", "worker_pool.py", "py.typed", "_version.py"):
        assert (where / name).exists(), name


def test_one_version_for_both_packages():
    npm = json.loads((ROOT / "package.json").read_text())["version"]
    assert zeromesh.__version__ == pep440(npm)
    assert metadata.version("zeromesh") == zeromesh.__version__
    r = subprocess.run([sys.executable, "-m", "zeromesh", "--version"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and r.stdout.strip() == zeromesh.__version__


def test_the_metadata_pypi_would_show():
    md = metadata.metadata("zeromesh")
    assert md["Summary"] and md["License"] == "MIT"
    assert md["Description-Content-Type"] == "text/markdown"
    urls = md.get_all("Project-URL")
    assert any(u.startswith("Source, ") for u in urls)
    assert "pyzmq>=25" in md.get_all("Requires-Dist")


def test_a_peer_gossips_its_version_as_a_node_peer_does(procs):
    """`version` in the meta every claim about the peer carries (zeromesh members shows it, and the live view)."""
    _, py = procs.python_peer()
    [me] = json.loads(procs.zeromesh("members", "--seeds", py, "--json"))
    assert me["meta"]["version"] == zeromesh.__version__

"""docs/guides/python.md's contract example as written: its Python module served by a Python
peer, its Node snippet (client.proxy(contract), then a call the Python peer refuses) run
against it with the Node code of this commit."""
import re
import subprocess
import sys

from conftest import NODE, ROOT

GUIDE = (ROOT / "docs" / "guides" / "python.md").read_text()


def block(lang: str, begins: str) -> str:
    found = [b for b in re.findall(rf"^```{lang}\n(.*?)^```", GUIDE, re.S | re.M) if b.lstrip().startswith(begins)]
    assert len(found) == 1, f"one {lang} block beginning {begins!r}"
    return found[0]


def test_the_guides_contract_example_runs(procs, tmp_path):
    (tmp_path / "scoring.py").write_text(block("python", "# scoring.py"))
    p = procs.start([sys.executable, "-m", "zeromesh", "peer", "--handlers", "scoring", "--workers", "1", "--log-level", "warning"], {"PYTHONPATH": str(tmp_path)})
    ep = procs.line(p)
    js = block("js", "import { z } from 'zod'").replace("tcp://127.0.0.1:5555", ep)
    script = ROOT / "python" / "tests" / "node" / "guide-contract.tmp.mjs"  # inside the repository: 'zeromesh' and zod resolve
    script.write_text(js + "\nprocess.exit(0)\n")
    try:
        r = subprocess.run([NODE, str(script)], capture_output=True, text=True, timeout=30, cwd=ROOT)
    finally:
        script.unlink()
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["4", 'ERR_ZEROMESH_INVALID_INPUT [{"path":["text"],"message":"expected type \\"string\\""}]']

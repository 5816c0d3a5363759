"""A Python peer's methods and subscriptions seen through the mesh as documents (issue 77):
`zeromesh describe --openapi` and `--asyncapi` of a mesh with a Python peer and a Node peer,
each document checked by the outside validators (tests/node/validate-docs.mjs). The Python
peer states no contracts, so its methods have open schemas; its subscription is an operation."""
import json
import subprocess

from conftest import NODE, ROOT, TESTS, eventually


def errors_of(doc):
    r = subprocess.run([NODE, str(TESTS / "node" / "validate-docs.mjs")], input=json.dumps(doc), capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_a_python_peers_methods_and_subscriptions_are_in_the_meshs_documents(procs):
    _, node = procs.node_peer()
    _, py = procs.python_peer("--seeds", node)

    def api():
        doc = json.loads(procs.zeromesh("describe", "--seeds", node, "--openapi"))
        assert {"/whoami", "/spin", "/boom", "/echo"} <= set(doc["paths"]), sorted(doc["paths"])  # boom: the Python peer's alone
        return doc

    doc = eventually(api, timeout=20)
    assert errors_of(doc) == []
    assert doc["paths"]["/spin"]["post"]["operationId"] == "spin"
    assert doc["components"]["schemas"]["spin.input"] == {}  # no contract: an open schema
    events = json.loads(procs.zeromesh("describe", "--seeds", py, "--asyncapi"))
    assert errors_of(events) == []
    groups = {op.get("x-zeromesh-group") for op in events["operations"].values() if op["action"] == "receive"}
    assert "python-billing" in groups, events["operations"]  # the Python peer's subscription

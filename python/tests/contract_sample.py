"""A handler module that serves a contract (a module's `handlers` dict: dotted names), as the
guide's scoring example (docs/guides/python.md)."""
from zeromesh.contract import contract, implement

scoring = contract("scoring", version="1.0.0", methods={
    "score": {
        "input": {"type": "object", "properties": {"text": {"type": "string", "minLength": 1}, "weight": {"type": "number"}},
                  "required": ["text"], "additionalProperties": False},
        "output": {"type": "number"},
    },
})


def score(args):
    return len(args["text"]) * args.get("weight", 1)


def ping(args):
    return "pong"


handlers = {**implement(scoring, {"score": score}), "ping": ping}

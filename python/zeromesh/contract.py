"""Contracts (docs/guides/contracts.md, PROTOCOL.md 4.8.1) on the Python side: a service
described once, each method with an input and an output JSON Schema (draft 2020-12, the form
in which Node contracts travel). A contract's method `score` of contract `scoring` is the
method `scoring.score` on the wire.

    scoring = contract("scoring", version="1.0.0", methods={
        "score": {"input": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
                  "output": {"type": "number"}},
    })
    handlers = implement(scoring, {"score": score})  # {"scoring.score": ...}, for Peer(handlers=...) or a module's `handlers`

The peer checks a contract method's args against its input schema before the handler runs
(in the peer, so a worker never sees a refused call) and answers REMOTE
ERR_ZEROMESH_INVALID_INPUT with the issues (PROTOCOL.md 4.2.2); its SERVICE answer carries the
schemas, so `zeromesh describe` shows them and a Node `client.proxy(contract)` calls them.
Validation uses the `jsonschema` package (the `contracts` extra): JSON Schema has far more
than a few keywords ($ref and $defs, anyOf, formats, unevaluatedProperties, all of which zod's
toJSONSchema writes), and that package is its reference implementation in Python."""
from __future__ import annotations

import json
import re
from typing import Any, Callable

from .errors import InvalidArgumentError

NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
SEMVER = re.compile(r"^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")
CONTRACTS_LABEL = "zeromesh/contracts"
INVALID_INPUT = "ERR_ZEROMESH_INVALID_INPUT"
# The limits of PROTOCOL.md 4.2.2 and 4.8.1 (protocol/constants.js).
MAX_ISSUES = 32
MAX_ISSUE_MESSAGE = 512
MAX_ISSUE_PATH = 32
MAX_ISSUE_SEGMENT = 128
MAX_SCHEMA_BYTES = 64 * 1024
MAX_CONTRACTS_BYTES = 256 * 1024


class Contract:
    """A contract made by contract(): its name, version and methods ({name: {"input", "output"}})."""

    def __init__(self, name: str, version: str | None, methods: dict[str, dict]):
        self.name, self.version, self.methods = name, version, methods

    def __repr__(self) -> str:
        return f"<zeromesh contract {self.name} {self.version or ''} {sorted(self.methods)}>"


def contract(name: str, *, version: str | None = None, methods: dict[str, dict]) -> Contract:
    """A contract: `name` (letters, digits, '_' and '-'), an optional semver `version`, and
    `methods`, each {"input": JSON Schema, "output": JSON Schema} (a dict, or True for any)."""
    if not isinstance(name, str) or not NAME.match(name):
        raise InvalidArgumentError(f"zeromesh: contract(name): name must be 1 to 64 letters, digits, '_' or '-', starting with a letter or '_' (no dots: a method travels as name.method), got {name!r}")
    if version is not None and (not isinstance(version, str) or not SEMVER.match(version)):
        raise InvalidArgumentError(f"zeromesh: contract({name!r}): version must be a semantic version such as 1.2.0, got {version!r}")
    if not isinstance(methods, dict) or not methods:
        raise InvalidArgumentError(f"zeromesh: contract({name!r}): methods must name at least one method, as {{'get': {{'input': {{...}}, 'output': {{...}}}}}}")
    out = {}
    for m, d in methods.items():
        if not isinstance(m, str) or not NAME.match(m):
            raise InvalidArgumentError(f"zeromesh: contract({name!r}): method name {m!r} must be 1 to 64 letters, digits, '_' or '-', starting with a letter or '_'")
        if not isinstance(d, dict) or set(d) - {"input", "output"} or "input" not in d or "output" not in d:
            raise InvalidArgumentError(f"zeromesh: contract({name!r}): method {m} must be {{'input': schema, 'output': schema}} (JSON Schemas: dicts, or True)")
        for side in ("input", "output"):
            schema = d[side]
            if not isinstance(schema, (dict, bool)):
                raise InvalidArgumentError(f"zeromesh: contract({name!r}): {m}.{side} must be a JSON Schema (a dict, or True), got {type(schema).__name__}")
            try:
                json.dumps(schema)
            except (TypeError, ValueError) as err:
                raise InvalidArgumentError(f"zeromesh: contract({name!r}): {m}.{side} must be plain JSON: {err}") from err
        out[m] = {"input": d["input"], "output": d["output"]}
    return Contract(name, version, out)


class ContractMethod:
    """A handler implementing a contract's method: called as the function it wraps. It holds
    only the function and the contract's plain data, so it pickles by reference, as a worker
    process needs."""

    def __init__(self, fn: Callable, contract: Contract, method: str):
        self.fn, self.contract, self.method = fn, contract, method

    @property
    def wire(self) -> str:
        return f"{self.contract.name}.{self.method}"

    def __call__(self, *args: Any) -> Any:
        return self.fn(*args)


def implement(c: Contract, handlers: dict[str, Callable]) -> dict[str, ContractMethod]:
    """Handlers for every method of `c`, by wire name ({"scoring.score": ...}): merge several
    with {**implement(a, ...), **implement(b, ...), "plain": fn}."""
    if not isinstance(c, Contract):
        raise InvalidArgumentError("zeromesh: implement(contract, handlers): contract must be made by contract(name, methods=...)")
    if not isinstance(handlers, dict):
        raise InvalidArgumentError(f"zeromesh: implement({c.name}, handlers): handlers must be a dict of method -> function")
    missing = sorted(set(c.methods) - set(handlers))
    extra = sorted(set(handlers) - set(c.methods))
    if missing or extra:
        raise InvalidArgumentError(f"zeromesh: implement({c.name}, handlers): " + "; ".join(
            ([f"missing {', '.join(missing)}"] if missing else []) + ([f"{', '.join(extra)} not in the contract (it has {', '.join(sorted(c.methods))})"] if extra else [])))
    out = {}
    for m in sorted(c.methods):
        fn = handlers[m]
        if not callable(fn):
            raise InvalidArgumentError(f"zeromesh: implement({c.name}, handlers): {m} must be a function")
        out[f"{c.name}.{m}"] = ContractMethod(fn, c, m)
    return out


class InputCheck:
    """The input schemas of the contract methods a peer serves, compiled once."""

    def __init__(self, methods: dict[str, ContractMethod]):
        self.validators: dict[str, Any] = {}
        if not methods:
            return
        try:
            from jsonschema import Draft202012Validator
        except ImportError as err:
            raise InvalidArgumentError("zeromesh: contract methods need the jsonschema package to check their input: pip install 'zeromesh[contracts]'") from err
        for wire, cm in methods.items():
            schema = cm.contract.methods[cm.method]["input"]
            try:
                Draft202012Validator.check_schema(schema)
            except Exception as err:  # jsonschema's SchemaError
                raise InvalidArgumentError(f"zeromesh: contract {cm.contract.name}: {cm.method}.input is not a valid JSON Schema: {getattr(err, 'message', err)}") from err
            self.validators[wire] = Draft202012Validator(schema)

    def refusal(self, method: str, args: Any) -> list | None:
        """None when `args` fit `method`'s input (or it has no contract), else the REMOTE value
        [message, ERR_ZEROMESH_INVALID_INPUT, issues] (PROTOCOL.md 4.2.2)."""
        v = self.validators.get(method)
        if v is None:
            return None
        errors = list(v.iter_errors(args))
        if not errors:
            return None
        issues = wire_issues(errors)
        return [f"invalid input for {method}: {issues_text(issues)}", INVALID_INPUT, issues]


def wire_issues(errors: list) -> list[list]:
    """jsonschema's errors as issues travel: [message, path], cut to the limits, never the value."""
    out = []
    for e in errors[:MAX_ISSUES]:
        path = []
        for seg in list(e.absolute_path)[:MAX_ISSUE_PATH]:
            path.append(seg if isinstance(seg, int) and not isinstance(seg, bool) and seg >= 0 else str(seg)[:MAX_ISSUE_SEGMENT])
        out.append([issue_message(e)[:MAX_ISSUE_MESSAGE], path])
    return out


def issue_message(e: Any) -> str:
    """What is wrong, without the offending value (jsonschema's messages quote it): the keyword and what it asks."""
    kw, want = e.validator, e.validator_value
    if kw == "required":
        missing = [k for k in want if isinstance(e.instance, dict) and k not in e.instance]
        return f"required: {', '.join(map(str, missing)) or 'a property'} missing"
    if kw == "additionalProperties":
        return "additional properties not allowed"
    if kw in ("type", "enum", "const", "format", "pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
              "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "multipleOf", "uniqueItems"):
        return f"expected {kw} {json.dumps(want)[:200]}"
    return f"does not match {kw}"


def issues_text(issues: list[list]) -> str:
    """One line naming the issues, as the Node peer's: `id: expected type "string"; items.0: ...`."""
    shown = [f"{'(input)' if not path else '.'.join(map(str, path))}: {msg}" for msg, path in issues[:3]]
    return "; ".join(shown) + (f"; and {len(issues) - 3} more" if len(issues) > 3 else "")


def contracts_element(methods: dict[str, ContractMethod]) -> list | None:
    """The SERVICE answer's contracts element (4.8.1): [[name, version, [[method, stream, input,
    output], ...]], ...] by name; a schema past MAX_SCHEMA_BYTES packed is left out (None), and
    every schema when the element would pass MAX_CONTRACTS_BYTES."""
    import msgpack

    if not methods:
        return None
    by: dict[str, tuple[Contract, list[str]]] = {}
    for cm in methods.values():
        by.setdefault(cm.contract.name, (cm.contract, []))[1].append(cm.method)

    def fit(schema: Any) -> Any:
        return schema if len(msgpack.packb(schema)) <= MAX_SCHEMA_BYTES else None

    element = []
    for name in sorted(by):
        c, ms = by[name]
        element.append([name, c.version, [[m, False, fit(c.methods[m]["input"]), fit(c.methods[m]["output"])] for m in sorted(ms)]])
    if len(msgpack.packb(element)) > MAX_CONTRACTS_BYTES:
        for _, _, ms in element:
            for m in ms:
                m[2] = m[3] = None
    return element


def contracts_digest(element: list) -> str:
    """The `zeromesh/contracts` label: FNV-1a (4.8) of the element's canonical JSON (keys sorted, no spaces), 8 hex digits."""
    from .service import fnv1a

    return format(fnv1a(canonical(element)), "08x")


def canonical(v: Any) -> str:
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(canonical(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ",".join(f"{json.dumps(k, ensure_ascii=False)}:{canonical(v[k])}" for k in sorted(v)) + "}"
    if isinstance(v, float) and v.is_integer():
        v = int(v)  # as JavaScript writes it
    return json.dumps(v, ensure_ascii=False)


#!/usr/bin/env bash
# The Python suite (npm run test:python) as a user gets the package: a virtual environment of
# its own (python/.venv, or $ZEROMESH_PYENV), the sdist and the wheel built with `python -m
# build` (the wheel from the sdist, so the sdist is known to build alone), both checked with
# `twine check`, the wheel installed with its test dependencies from the registry, then pytest
# against the INSTALLED package (run from tests/, never from python/, whose zeromesh/ would
# shadow it), its interoperation tests against the Node code of this checkout.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${ZEROMESH_PYENV:-$here/.venv}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
pip=("$venv/bin/pip" install --quiet --disable-pip-version-check)
node "$here/version-from-npm.mjs" --check # the Python version is package.json's
"${pip[@]}" "build>=1.2" "twine>=5"
dist="$(mktemp -d)"
trap 'rm -rf "$dist"' EXIT
"$venv/bin/python" -m build --outdir "$dist" "$here" >"$dist/build.log" 2>&1 || { cat "$dist/build.log"; exit 1; }
"$venv/bin/python" -m twine check --strict "$dist"/zeromesh-*.whl "$dist"/zeromesh-*.tar.gz
wheel="$(ls "$dist"/zeromesh-*.whl)"
"${pip[@]}" "$wheel[test]"
# The wheel again, whatever was there: the same version number may hold older code.
"${pip[@]}" --no-deps --force-reinstall "$wheel"
cd "$here/tests"
"$venv/bin/python" -m pytest -q -p no:cacheprovider "$@" .

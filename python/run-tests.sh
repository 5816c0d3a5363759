#!/usr/bin/env bash
# The Python suite (npm run test:python): a virtual environment of its own (python/.venv, or
# $ZEROMESH_PYENV), the package installed with its test dependencies from the registry, then
# pytest, whose interoperation tests run against the Node code of this checkout.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${ZEROMESH_PYENV:-$here/.venv}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "$here[test]"
# The package itself again, whatever was there: the same version number may hold older code.
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps --force-reinstall "$here"
cd "$here"
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider tests

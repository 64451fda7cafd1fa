#!/usr/bin/env bash
# Prepares a CI machine (run as root) for the integration tests. Safe to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -f /usr/share/java/zookeeper.jar ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq zookeeper >/dev/null
fi

# npm writes node_modules/.package-lock.json at the end of every install, so a
# package-lock.json newer than it means the dependency set changed since.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci
fi

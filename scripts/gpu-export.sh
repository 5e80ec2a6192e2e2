#!/usr/bin/env bash
# Exports the committed tree (HEAD) to .gpu/src so a device run builds exactly
# what is committed, whatever else is in the working tree.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
rm -rf .gpu/src && mkdir -p .gpu/src && git archive HEAD | tar -x -C .gpu/src
echo "exported $(git rev-parse --short HEAD) to .gpu/src"

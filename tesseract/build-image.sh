#!/usr/bin/env bash
# Builds the Tesseract's Docker image (needs Docker and tesseract-core, e.g. from .venv):
# stages the committed tree of this repository (git archive HEAD, so no build folders and no
# uncommitted edits) under tesseract/.source/saltation, the local dependency that
# tesseract_requirements.txt names, then runs `tesseract build`. Extra arguments go to it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
rm -rf "$here/.source"
mkdir -p "$here/.source/saltation"
git -C "$here/.." archive --format=tar HEAD | tar -x -C "$here/.source/saltation"
tesseract=${TESSERACT:-$(command -v tesseract || echo "$here/../.venv/bin/tesseract")}
"$tesseract" build "$here" "$@"

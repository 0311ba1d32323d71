#!/bin/sh
# npm run smoke:manual — the manual smoke of spec §20, in an isolated agent directory.
# Needs Pi >= 1.6.0 on PATH and the Pi Continuity Harness importable by $PI_HARNESS_PYTHON.
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
agent=$(mktemp -d)
trap 'rm -rf "$agent"' EXIT
export PI_CODING_AGENT_DIR="$agent"
pi install "$here"
pi list
echo "Now run: PI_CODING_AGENT_DIR=$agent pi   and type /continuity status, then /continuity checkpoint"

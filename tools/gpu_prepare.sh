#!/usr/bin/env bash
# Prepares what the GPU machine lacks for tools/gpu_check.sh: UCX headers (it has the UCX runtime but
# not libucx-dev). Copies this machine's headers into .gpu/ucx (git-ignored), to be carried along:
#   tools/gpu_prepare.sh   then, with the device tool:   run(command="tools/gpu_check.sh", carry=[".gpu"])
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .gpu/ucx
mkdir -p .gpu/ucx/include
for d in ucp uct ucs ucm; do
  if [ -d "/usr/include/$d" ]; then cp -r "/usr/include/$d" .gpu/ucx/include/; fi
done
test -f .gpu/ucx/include/ucp/api/ucp.h || { echo "no UCX headers here (apt-get install libucx-dev)" >&2; exit 1; }
du -sh .gpu/ucx

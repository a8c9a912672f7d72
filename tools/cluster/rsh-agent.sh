#!/usr/bin/env bash
# Open MPI launch agent (--mca plm_rsh_agent) for the emulated cluster of cluster.sh: stands in for
# ssh. Called as   rsh-agent.sh [ssh-style options] <host> <command words...>
# where <host> is a node's IP address (or a namespace name). It runs the command, joined with spaces
# and interpreted by sh as ssh would, inside the node's network namespace with
#   - its own UTS namespace, hostname = namespace name (Open MPI names its shared-memory files and
#     session directories by hostname: equal hostnames make vader segments of different nodes
#     collide and crash),
#   - its own SysV IPC namespace and a private tmpfs on /dev/shm (shared memory stays inside a node),
#   - a per-node boot id bind-mounted over /proc/sys/kernel/random/boot_id (UCX treats processes
#     with equal boot ids as one host and would otherwise use shared memory between nodes).
# The environment is inherited from mpirun (unlike ssh); the working directory is the same filesystem.
set -euo pipefail

STATE_ROOT=${MPIXC_STATE_ROOT:-/run/mpixc-cluster}

# Skip ssh-style options Open MPI may pass before the host.
while (($#)) && [[ $1 == -* ]]; do
    shift
done
(($# >= 2)) || { echo "rsh-agent.sh: usage: rsh-agent.sh <host> <command...>" >&2; exit 255; }
host=$1
shift

ns=""
if ip netns list | awk '{print $1}' | grep -xF -- "$host" >/dev/null; then
    ns=$host
else
    for cand in $(ip netns list | awk '{print $1}'); do
        if ip -n "$cand" -o -4 addr show 2>/dev/null | awk '{print $4}' | grep -x -- "${host//./\\.}/[0-9]*" >/dev/null; then
            ns=$cand
            break
        fi
    done
fi
[[ -n $ns ]] || { echo "rsh-agent.sh: no network namespace has address '$host'" >&2; exit 255; }

prefix=${ns%"${ns##*[!0-9]}"}
boot_id="$STATE_ROOT/$prefix/$ns.boot_id"

# One agent call per node and job (plm_rsh_no_tree_spawn): the orted it starts and all ranks it forks
# share these namespaces, so inside a node everything behaves as on one host, and across nodes
# nothing is shared but the filesystem.
# shellcheck disable=SC2016  # $1.. expand in the inner shell
exec ip netns exec "$ns" unshare --uts --ipc -- sh -c '
    hostname "$1" || exit 255
    mount -t tmpfs -o mode=1777 "$1-shm" /dev/shm || exit 255
    if [ -f "$2" ]; then mount --bind "$2" /proc/sys/kernel/random/boot_id || exit 255; fi
    exec sh -c "$3"
' rsh-agent "$ns" "$boot_id" "$*"

#!/usr/bin/env bash
# Self-test of the emulated cluster (cluster.sh): needs root, mpicc, mpirun; ucx_perftest optional.
#   tools/cluster/selftest.sh        prints one line per check, then PASS or FAIL (exit status 0 / 1)
# Uses its own prefix and subnet (MPIXC_SELFTEST_PREFIX, MPIXC_SELFTEST_SUBNET) so that it never
# touches a cluster with the default prefix. Takes about 10-15 s on 2 cores.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PREFIX=${MPIXC_SELFTEST_PREFIX:-mpixct}
SUBNET=${MPIXC_SELFTEST_SUBNET:-10.213.1.0/24}
NET=${SUBNET%.*}
CL=("$HERE/cluster.sh" --prefix "$PREFIX" --subnet "$SUBNET")
AGENT="$HERE/rsh-agent.sh"
RATE_BPS=1000000000 # --rate 1gbit

work=$(mktemp -d /tmp/mpixc-selftest.XXXXXX)
cleanup() {
    "${CL[@]}" down >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

fails=0
pass() { printf 'ok     %s\n' "$*"; }
fail() {
    printf 'FAILED %s\n' "$*"
    fails=$((fails + 1))
}
leftovers() {
    {
        ip netns list | awk '{print $1}' | grep -E "^${PREFIX}[0-9]+\$"
        ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E "^${PREFIX}(br|h[0-9]+)\$"
    } | tr '\n' ' ' || true
}
# Bytes received and sent on eth0 of a node, as "rx tx".
eth0_bytes() {
    ip netns exec "$1" cat /proc/net/dev | awk '$1 == "eth0:" {print $2, $10}'
}

rc=0
"${CL[@]}" down >/dev/null || rc=$?
if ((rc == 77)); then
    echo "SKIP: this machine cannot host the emulated cluster"
    exit 77
fi

echo "== build selftest.c (and ucx_probe.c if UCX headers are installed)"
mpicc -O2 -o "$work/selftest" "$HERE/selftest.c"
have_probe=0
if pkg-config --exists ucx 2>/dev/null; then
    read -r -a ucx_flags < <(pkg-config --cflags --libs ucx)
    if mpicc -O2 -o "$work/ucx_probe" "$HERE/ucx_probe.c" "${ucx_flags[@]}"; then have_probe=1; fi
fi

echo "== leftovers of a crashed run are cleaned by the next run"
"${CL[@]}" --nodes 2 up >/dev/null
ip netns exec "${PREFIX}0" sleep 300 &
stray=$!
disown "$stray"
sleep 0.2

echo "== 4 nodes x 2 ranks, 1 Gbit/s links: cluster.sh --nodes 4 --ppn 2 --rate 1gbit -- selftest"
rc=0
"${CL[@]}" --nodes 4 --ppn 2 --rate 1gbit -- "$work/selftest" 2 "$RATE_BPS" | tee "$work/run.log" || rc=$?
if ((rc == 0)) && grep -q '^selftest program: PASS' "$work/run.log"; then
    pass "MPI checks (locality, allreduce, shaped cross-node bandwidth, intra-node shared memory)"
else
    fail "MPI checks (cluster.sh exit status $rc)"
fi
if kill -0 "$stray" 2>/dev/null; then fail "stray process in a leftover namespace survived"; else
    pass "stray process of the 'crashed' run was killed"
fi
left=$(leftovers)
if [[ -z $left ]]; then pass "nothing left after the run"; else fail "left after the run: $left"; fi

echo "== program exit status passes through"
rc=0
"${CL[@]}" --nodes 2 -- sh -c 'exit 3' >/dev/null 2>&1 || rc=$?
if ((rc == 3)); then pass "exit status 3 returned"; else fail "exit status $rc, expected 3"; fi

echo "== UCX under mpirun, as the library uses it: 4 nodes x 2 ranks"
if ((have_probe)); then
    rc=0
    "${CL[@]}" --nodes 4 --ppn 2 --rate 1gbit -- "$work/ucx_probe" 2 | tee "$work/probe.log" || rc=$?
    if ((rc == 0)) && grep -q '^ucx probe: PASS' "$work/probe.log"; then
        pass "UCX: tcp over eth0 between nodes, shared memory inside a node"
    else
        fail "UCX probe (exit status $rc)"
    fi
else
    echo "skip   UCX probe: no UCX headers (apt-get install libucx-dev)"
fi

echo "== rsh-agent: node identity"
"${CL[@]}" --nodes 2 --rate 1gbit up >/dev/null
root_boot=$(cat /proc/sys/kernel/random/boot_id)
# shellcheck disable=SC2016  # expands inside the node
ident='echo $(hostname) $(cat /proc/sys/kernel/random/boot_id)'
id0=$("$AGENT" "$NET.1" "$ident")
id1=$("$AGENT" "$NET.2" "$ident")
echo "   root: $(hostname) $root_boot; node0: $id0; node1: $id1"
if [[ ${id0%% *} == "${PREFIX}0" && ${id1%% *} == "${PREFIX}1" && ${id0#* } != "$root_boot" &&
    ${id0#* } != "${id1#* }" ]]; then
    pass "each node has its own hostname and boot id"
else
    fail "node hostnames / boot ids not distinct"
fi

if ! command -v ucx_perftest >/dev/null; then
    echo "skip   UCX checks: ucx_perftest not installed (apt-get install ucx-utils)"
else
    # $1 node of the server, $2 address the client connects to; client runs in node $3 (or in the
    # server's node, same agent call, when $3 is empty). Prints the client's output.
    perftest() {
        local args="-t tag_bw -s 4194304 -n 12 -p 13400"
        local client="for i in 1 2 3 4 5 6 7 8 9 10; do
                UCX_LOG_LEVEL=info ucx_perftest $2 $args && exit 0; sleep 0.3; done; exit 1"
        if [[ -z ${3:-} ]]; then
            timeout 60 "$AGENT" "$1" "ucx_perftest $args >/dev/null 2>&1 & s=\$!; sleep 0.3; ($client); rc=\$?;
                wait \$s; exit \$rc"
        else
            timeout 60 "$AGENT" "$1" "ucx_perftest $args" >/dev/null 2>&1 &
            local s=$!
            sleep 0.3
            timeout 60 "$AGENT" "$3" "$client"
            wait "$s"
        fi
    }
    echo "== UCX across nodes (ucx_perftest tag_bw 12 x 4 MiB, node1 -> node0)"
    read -r rx0 _ < <(eth0_bytes "${PREFIX}0")
    perftest "$NET.1" "$NET.1" "$NET.2" >"$work/ucx-remote.log" 2>&1 || true
    read -r rx1 _ < <(eth0_bytes "${PREFIX}0")
    cfg=$(grep -o 'ep_cfg\[0\]: tag([^)]*)' "$work/ucx-remote.log" | head -n1 || true)
    mibs=$(awk '$1 == "Final:" {print $7}' "$work/ucx-remote.log")
    echo "   $cfg, ${mibs:-?} MiB/s, node0 eth0 rx +$((rx1 - rx0)) bytes"
    if [[ $cfg == *tcp/eth0* ]]; then pass "UCX uses tcp/eth0 between nodes"; else
        fail "UCX between nodes: '${cfg:-no ep_cfg}' (log: $(tail -n3 "$work/ucx-remote.log" | tr '\n' ' '))"
    fi
    if ((rx1 - rx0 >= 12 * 4194304)); then pass "UCX payload crossed eth0"; else
        fail "UCX payload did not cross eth0"
    fi
    if [[ -n $mibs ]] && awk -v m="$mibs" -v r="$RATE_BPS" 'BEGIN {b = m * 8 * 1048576; exit !(b <= 1.1 * r && b >= 0.3 * r)}'; then
        pass "UCX bandwidth between nodes within [0.3, 1.1] x link rate"
    else
        fail "UCX bandwidth between nodes: ${mibs:-?} MiB/s"
    fi

    echo "== UCX inside a node (both processes in node0)"
    read -r rx0 _ < <(eth0_bytes "${PREFIX}0")
    perftest "$NET.1" "$NET.1" >"$work/ucx-local.log" 2>&1 || true
    read -r rx1 _ < <(eth0_bytes "${PREFIX}0")
    cfg=$(grep -o 'ep_cfg\[0\]: tag([^)]*)' "$work/ucx-local.log" | head -n1 || true)
    mibs=$(awk '$1 == "Final:" {print $7}' "$work/ucx-local.log")
    echo "   $cfg, ${mibs:-?} MiB/s, node0 eth0 rx +$((rx1 - rx0)) bytes"
    if [[ $cfg =~ (sysv|posix|cma) && $cfg != *tcp* ]]; then pass "UCX uses shared memory inside a node"; else
        fail "UCX inside a node: '${cfg:-no ep_cfg}' (log: $(tail -n3 "$work/ucx-local.log" | tr '\n' ' '))"
    fi
fi

echo "== down, twice (nothing left to remove the second time)"
if "${CL[@]}" down && "${CL[@]}" down; then pass "down succeeds, also when nothing exists"; else
    fail "down failed"
fi
left=$(leftovers)
if [[ -z $left ]]; then pass "nothing left after down"; else fail "left after down: $left"; fi

if ((fails == 0)); then
    echo "PASS"
else
    echo "FAIL ($fails failed checks)"
    exit 1
fi

#!/usr/bin/env bash
# Emulated multi-node cluster on one machine: N network namespaces ("nodes") on a bridge, each link
# shaped with tc, and Open MPI launching into them through rsh-agent.sh.
#
#   cluster.sh [options] -- <mpirun args and program...>   up, run under mpirun, always tear down
#   cluster.sh [options] up | down | status | flags         manual use
#
# Needs root, iproute2 (ip, tc), util-linux (unshare) and Open MPI's mpirun. See README.md.
set -Eeuo pipefail
trap 'echo "cluster.sh: failed (status $?) at line $LINENO: $BASH_COMMAND" >&2' ERR

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
AGENT="$HERE/rsh-agent.sh"

NODES=${MPIXC_NODES:-4}
PPN=${MPIXC_PPN:-1}
RATE=${MPIXC_RATE:-1gbit}
DELAY=${MPIXC_DELAY:-0}
QUEUE=${MPIXC_QUEUE:-100ms}
PREFIX=${MPIXC_PREFIX:-mpixc}
SUBNET=${MPIXC_SUBNET:-10.213.0.0/24}
STATE_ROOT=${MPIXC_STATE_ROOT:-/run/mpixc-cluster}
# Interface name of each node's veth inside its namespace (the same in every node).
NODE_IF=eth0
VERBOSE=0
MPIRUN_PID=""
WATCHDOG_PID=""
LOCK_FD=""

usage() {
    cat <<EOF
usage: ${0##*/} [options] -- <mpirun args and program...>
       ${0##*/} [options] up|down|status|flags
options (environment variable in parentheses):
  --nodes N       number of nodes (namespaces), 1..250; default 4          (MPIXC_NODES)
  --ppn K         MPI ranks per node; default 1                            (MPIXC_PPN)
  --rate R        tc tbf rate per link and direction, e.g. 1gbit, 200mbit; 0 = unshaped; default 1gbit
                                                                            (MPIXC_RATE)
  --delay D       netem one-way delay per link end, e.g. 1ms; 0 = none; default 0   (MPIXC_DELAY)
  --queue T       longest a packet waits in a shaped link's queue before it is dropped (tbf latency),
                  e.g. 100ms, 5s; a long queue emulates a lossless fabric; default 100ms  (MPIXC_QUEUE)
  --prefix P      name prefix: namespaces P0..P(N-1), bridge Pbr; default mpixc    (MPIXC_PREFIX)
  --subnet S      private /24 for the nodes, x.y.z.0/24; default 10.213.0.0/24     (MPIXC_SUBNET)
  -v, --verbose   print the mpirun command line
  -h, --help      this text
Run mode returns the program's (mpirun's) exit status and always tears the cluster down.
Exit status 77: this machine cannot host the cluster (not root, no namespaces, missing tools);
ctest: set_tests_properties(... SKIP_RETURN_CODE 77). Exit status 2: usage or setup error.
EOF
}

die() { echo "cluster.sh: $*" >&2; exit 2; }
skip() { echo "cluster.sh: SKIP: $*" >&2; exit 77; }
log() { echo "cluster.sh: $*" >&2; }

# ---- names and addresses -------------------------------------------------------------------------

bridge_name() { echo "${PREFIX}br"; }
ns_name() { echo "${PREFIX}$1"; }
host_veth() { echo "${PREFIX}h$1"; }      # bridge side, in the root namespace
net_base() { echo "${SUBNET%.*}"; }        # 10.213.0.0/24 -> 10.213.0
node_ip() { echo "$(net_base).$(($1 + 1))"; }
bridge_ip() { echo "$(net_base).254"; }
state_dir() { echo "$STATE_ROOT/$PREFIX"; }

validate() {
    if ! [[ $NODES =~ ^[0-9]+$ ]] || ((NODES < 1 || NODES > 250)); then die "--nodes must be 1..250"; fi
    if ! [[ $PPN =~ ^[0-9]+$ ]] || ((PPN < 1)); then die "--ppn must be >= 1"; fi
    # Interface names are at most 15 characters: "<prefix>h<index>" must fit.
    [[ $PREFIX =~ ^[a-z][a-z0-9]{0,8}$ ]] || die "--prefix must match [a-z][a-z0-9]{0,8}"
    [[ $SUBNET =~ ^([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})\.0/24$ ]] ||
        die "--subnet must look like x.y.z.0/24"
    [[ $RATE =~ ^(0|[0-9]+(bit|kbit|mbit|gbit))$ ]] || die "--rate must be 0 or <int>{bit,kbit,mbit,gbit}"
    [[ $DELAY =~ ^(0|[0-9]+(\.[0-9]+)?(us|ms|s))$ ]] || die "--delay must be 0 or <num>{us,ms,s}"
    [[ $QUEUE =~ ^[0-9]+(\.[0-9]+)?(us|ms|s)$ ]] || die "--queue must be <num>{us,ms,s}"
}

# Rate in bit/s, for sizing the tbf bucket.
rate_bps() {
    local n=${RATE%%[a-z]*} unit=${RATE##*[0-9]}
    case $unit in
    gbit) echo $((n * 1000000000)) ;;
    mbit) echo $((n * 1000000)) ;;
    kbit) echo $((n * 1000)) ;;
    *) echo "$n" ;;
    esac
}

# ---- teardown ------------------------------------------------------------------------------------

# Everything named with PREFIX, whatever N a previous (possibly crashed) run used.
existing_namespaces() {
    ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${PREFIX}[0-9]+\$" || true
}

kill_ns_processes() {
    local ns=$1 pids sig
    for sig in TERM KILL; do
        pids=$(ip netns pids "$ns" 2>/dev/null || true)
        [[ -z $pids ]] && return 0
        # shellcheck disable=SC2086  # one pid per word
        kill -s "$sig" $pids 2>/dev/null || true
        if [[ $sig == TERM ]]; then sleep 0.5; fi
    done
    return 0
}

# mpirun of a crashed run with this prefix (it runs in the root namespace and would hang on).
kill_stale_mpirun() {
    local f pid hostfile argv=()
    hostfile="$(state_dir)/hostfile"
    for f in /proc/[0-9]*/cmdline; do
        pid=${f#/proc/}
        pid=${pid%/cmdline}
        [[ $pid != "$$" ]] || continue
        mapfile -d '' -t argv 2>/dev/null <"$f" || continue
        if ((${#argv[@]} == 0)) || ! [[ ${argv[0]} =~ (^|/)(mpirun|mpiexec|orterun)$ ]]; then
            continue
        fi
        if printf '%s\n' "${argv[@]}" | grep -xF -- "$hostfile" >/dev/null; then
            log "killing stale mpirun $pid"
            kill -KILL "$pid" 2>/dev/null || true
        fi
    done
    return 0
}

cluster_down() {
    local ns link
    kill_stale_mpirun
    for ns in $(existing_namespaces); do
        kill_ns_processes "$ns"
        ip netns del "$ns" 2>/dev/null || true
    done
    # Deleting a namespace deletes its veth end and thus the pair; catch strays anyway.
    for link in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' |
        grep -E "^${PREFIX}h[0-9]+\$" || true); do
        ip link del "$link" 2>/dev/null || true
    done
    if ip link show "$(bridge_name)" >/dev/null 2>&1; then
        ip link del "$(bridge_name)"
    fi
    # Open MPI session directories of crashed orteds are named after the node's hostname.
    rm -rf "${TMPDIR:-/tmp}/ompi.${PREFIX}"[0-9]*.* 2>/dev/null || true
    rm -rf "$(state_dir)"
}

# ---- bring-up ------------------------------------------------------------------------------------

# Shape egress of one device: tbf at RATE, under netem if DELAY is set.
shape() {
    local nsargs=() dev=$1
    [[ -n ${2:-} ]] && nsargs=(-n "$2")
    [[ $RATE == 0 && $DELAY == 0 ]] && return 0
    local bps burst parent=root
    bps=$(rate_bps)
    # Bucket of ~4 ms at line rate (at least 64 KiB, so one GSO super-packet fits).
    burst=$((bps / 8 / 250))
    ((burst < 65536)) && burst=65536
    if [[ $DELAY != 0 ]]; then
        tc "${nsargs[@]}" qdisc add dev "$dev" root handle 1: netem delay "$DELAY" limit 100000
        parent="parent 1:1"
    fi
    if [[ $RATE != 0 ]]; then
        # shellcheck disable=SC2086  # parent is "root" or "parent 1:1"
        tc "${nsargs[@]}" qdisc add dev "$dev" $parent handle 10: tbf rate "$RATE" burst "$burst" \
            latency "$QUEUE"
    fi
}

# Fake boot id per node: UCX decides "same host" (shared memory reachable) by the kernel boot id
# (which all network namespaces share) and the IPC namespace. rsh-agent.sh bind-mounts this file
# over /proc/sys/kernel/random/boot_id (and unshares IPC) so each node is its own host to UCX.
write_boot_id() {
    local ns=$1 h
    h=$(printf '%s %s\n' "$(cat /proc/sys/kernel/random/boot_id)" "$ns" | md5sum)
    printf '%s-%s-%s-%s-%s\n' "${h:0:8}" "${h:8:4}" "${h:12:4}" "${h:16:4}" "${h:20:12}" \
        >"$(state_dir)/$ns.boot_id"
}

cluster_up() {
    validate
    cluster_down # idempotent: clear whatever a crashed run left behind
    local br i ns hv sd clash
    br=$(bridge_name)
    sd=$(state_dir)
    clash=$(ip -o -4 addr show | awk -v b="$(net_base)." 'index($4, b) == 1 {print $2 " " $4}')
    [[ -z $clash ]] || die "subnet $SUBNET already in use in the root namespace ($clash): pick --subnet"
    mkdir -p "$sd"
    ip link add "$br" type bridge
    if [[ $DELAY != 0 ]] && ! tc qdisc add dev "$br" root netem delay "$DELAY" 2>/dev/null; then
        die "--delay needs the netem qdisc, which this kernel lacks (CONFIG_NET_SCH_NETEM)"
    fi
    tc qdisc del dev "$br" root 2>/dev/null || true
    # Bridged frames must not go through the host's iptables (br_netfilter); this is per bridge.
    ip link set "$br" type bridge nf_call_iptables 0 nf_call_ip6tables 0 nf_call_arptables 0 2>/dev/null ||
        true
    ip addr add "$(bridge_ip)/24" dev "$br"
    ip link set "$br" up
    : >"$sd/hostfile"
    for ((i = 0; i < NODES; i++)); do
        ns=$(ns_name "$i")
        hv=$(host_veth "$i")
        ip netns add "$ns"
        ip link add "$hv" type veth peer name "${PREFIX}n$i"
        ip link set "${PREFIX}n$i" netns "$ns"
        ip -n "$ns" link set "${PREFIX}n$i" name "$NODE_IF"
        ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
        ip -n "$ns" addr add "$(node_ip "$i")/24" dev "$NODE_IF"
        ip -n "$ns" link set lo up
        ip -n "$ns" link set "$NODE_IF" up
        ip link set "$hv" master "$br"
        ip link set "$hv" up
        shape "$NODE_IF" "$ns" # node -> bridge
        shape "$hv"            # bridge -> node
        write_boot_id "$ns"
        echo "$(node_ip "$i") slots=$PPN" >>"$sd/hostfile"
    done
}

# ---- mpirun flags --------------------------------------------------------------------------------

mpirun_flags() {
    # shellcheck disable=SC2054  # commas belong to MCA values
    local flags=(
        -np "$((NODES * PPN))"
        --hostfile "$(state_dir)/hostfile"
        --map-by "ppr:$PPN:node"
        --mca plm_rsh_agent "$AGENT"
        --mca plm_rsh_no_tree_spawn 1
        --mca oob_tcp_if_include "$SUBNET"
        --mca btl_tcp_if_include "$SUBNET"
        --mca btl self,vader,tcp
        --bind-to none
        --oversubscribe
    )
    if ((EUID == 0)); then
        flags+=(--allow-run-as-root)
    fi
    printf '%s\n' "${flags[@]}"
}

cluster_status() {
    local ns link any=0
    for ns in $(existing_namespaces); do
        any=1
        echo "== $ns: $(ip -n "$ns" -o -4 addr show dev "$NODE_IF" 2>/dev/null | awk '{print $4}')" \
            "pids: $(ip netns pids "$ns" | tr '\n' ' ')"
        ip -n "$ns" -s link show dev "$NODE_IF" 2>/dev/null | sed 's/^/   /'
        tc -n "$ns" qdisc show dev "$NODE_IF" 2>/dev/null | sed 's/^/   tc: /'
    done
    if ip link show "$(bridge_name)" >/dev/null 2>&1; then
        any=1
        echo "== bridge $(bridge_name): $(ip -o -4 addr show dev "$(bridge_name)" | awk '{print $4}')"
        for link in $(ip -o link show master "$(bridge_name)" | awk -F': ' '{print $2}' | sed 's/@.*//'); do
            echo "   $link tc: $(tc qdisc show dev "$link" | tr '\n' ';')"
        done
    fi
    [[ ! -f "$(state_dir)/hostfile" ]] || echo "== hostfile $(state_dir)/hostfile: $(tr '\n' ';' <"$(state_dir)/hostfile")"
    ((any)) || echo "no cluster with prefix '$PREFIX'"
}

# Can this machine host the cluster at all? Exit 77 (skip) if not.
preflight() {
    local c missing=()
    for c in ip tc unshare setsid flock mount md5sum; do
        command -v "$c" >/dev/null || missing+=("$c")
    done
    if [[ $1 == run ]] && ! command -v mpirun >/dev/null; then missing+=(mpirun); fi
    ((${#missing[@]} == 0)) || skip "missing commands: ${missing[*]}"
    ((EUID == 0)) || skip "needs root (network namespaces, bind mounts)"
    unshare --net --uts --ipc --mount true 2>/dev/null || skip "cannot create namespaces here"
    # Open MPI splits plm_rsh_agent at spaces.
    [[ $AGENT != *" "* ]] || die "the path of rsh-agent.sh must not contain spaces: $AGENT"
}

# ---- run mode ------------------------------------------------------------------------------------

# One cluster.sh at a time per prefix (ctest -j): the bridge and namespaces are shared by name.
take_lock() {
    mkdir -p "$STATE_ROOT"
    exec {LOCK_FD}>"$STATE_ROOT/$PREFIX.lock"
    if ! flock -n "$LOCK_FD"; then
        log "waiting for another cluster.sh with prefix '$PREFIX' (lock $STATE_ROOT/$PREFIX.lock)"
        flock -w "${MPIXC_LOCK_TIMEOUT:-900}" "$LOCK_FD" || die "timed out waiting for the lock"
    fi
}

stop_mpirun() {
    local i
    if [[ -z $MPIRUN_PID ]] || ! kill -0 "$MPIRUN_PID" 2>/dev/null; then
        return 0
    fi
    kill -TERM "$MPIRUN_PID" 2>/dev/null || true
    for ((i = 0; i < 20; i++)); do
        kill -0 "$MPIRUN_PID" 2>/dev/null || return 0
        sleep 0.25
    done
    kill -KILL "$MPIRUN_PID" 2>/dev/null || true
}

# ctest kills a timed-out test with SIGKILL, so no trap of ours runs: a detached watchdog (outside
# our process tree, its own session, no lock, no stdio) tears down if we die without finish().
start_watchdog() {
    WATCHDOG_PID=$(setsid "$HERE/cluster.sh" --prefix "$PREFIX" --subnet "$SUBNET" _watchdog "$$" \
        </dev/null >/dev/null 2>&1 {LOCK_FD}>&- & echo $!)
}

watchdog() {
    local pid=$1
    trap '' INT HUP TERM
    while kill -0 "$pid" 2>/dev/null; do sleep 0.5; done
    take_lock
    cluster_down
}

# One line on what the shaped links did during the run: packets the shapers sent and dropped (both
# directions of every link), and TCP segments the nodes retransmitted. Drops cost TCP a retransmit,
# or a 200 ms timeout when they end a burst: times that grow with them are the emulation's loss.
# "sent dropped" packets of one device's tbf: tbf_counts DEV [NAMESPACE]
tbf_counts() {
    local nsargs=()
    [[ -n ${2:-} ]] && nsargs=(-n "$2")
    tc "${nsargs[@]}" -s qdisc show dev "$1" 2>/dev/null |
        awk '/^qdisc tbf/ {t = 1} t && /Sent/ {gsub(/,/, ""); print $4, $7; exit}'
}

link_report() {
    local ns sent=0 dropped=0 retrans=0 s d r
    for ns in $(existing_namespaces); do
        read -r s d < <(tbf_counts "$NODE_IF" "$ns")
        sent=$((sent + ${s:-0})) dropped=$((dropped + ${d:-0}))
        # shellcheck disable=SC2016  # awk's own $i and $c
        r=$(ip netns exec "$ns" awk '/^Tcp:/ && !h {for (i = 1; i <= NF; i++) if ($i == "RetransSegs") c = i; h = 1; next}
            /^Tcp:/ {print $c}' /proc/net/snmp 2>/dev/null)
        retrans=$((retrans + ${r:-0}))
    done
    for s in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E "^${PREFIX}h[0-9]+\$" || true); do
        read -r r d < <(tbf_counts "$s")
        sent=$((sent + ${r:-0})) dropped=$((dropped + ${d:-0}))
    done
    [[ $RATE == 0 ]] || log "links: $sent packets sent, $dropped dropped by the shapers (queue $QUEUE); TCP retransmitted $retrans segments"
}

finish() {
    local rc=$?
    trap - EXIT INT TERM HUP
    if [[ -n $WATCHDOG_PID ]]; then kill -KILL "$WATCHDOG_PID" 2>/dev/null || true; fi
    stop_mpirun
    link_report || true
    cluster_down || log "teardown incomplete; run: $0 --prefix $PREFIX down"
    exit "$rc"
}

on_signal() {
    log "caught SIG$1: stopping mpirun and tearing down"
    exit "$2"
}

# ---- main ----------------------------------------------------------------------------------------

main() {
    local cmd=""
    while (($#)); do
        case $1 in
        --nodes) NODES=${2:?}; shift 2 ;;
        --ppn) PPN=${2:?}; shift 2 ;;
        --rate) RATE=${2:?}; shift 2 ;;
        --delay) DELAY=${2:?}; shift 2 ;;
        --queue) QUEUE=${2:?}; shift 2 ;;
        --prefix) PREFIX=${2:?}; shift 2 ;;
        --subnet) SUBNET=${2:?}; shift 2 ;;
        -v | --verbose) VERBOSE=1; shift ;;
        -h | --help) usage; exit 0 ;;
        _watchdog) cmd=_watchdog; WATCH_PID=${2:?}; shift 2 ;;
        up | down | status | flags)
            [[ -z $cmd ]] || die "only one subcommand"
            cmd=$1
            shift
            ;;
        --)
            shift
            [[ -z $cmd ]] || die "'--' runs a program; do not combine it with '$cmd'"
            cmd=run
            break
            ;;
        *) usage >&2; die "unknown argument '$1'" ;;
        esac
    done
    [[ -n $cmd ]] || { usage >&2; exit 2; }
    validate
    case $cmd in
    up | run) preflight "$cmd" ;;
    down | status | _watchdog) ((EUID == 0)) || skip "needs root" ;;
    esac
    # status and flags only look; the others change the cluster and take turns per prefix.
    case $cmd in up | down | run) take_lock ;; esac

    case $cmd in
    _watchdog) watchdog "$WATCH_PID" ;;
    down) cluster_down ;;
    status) cluster_status ;;
    flags) mpirun_flags | tr '\n' ' '; echo ;;
    up)
        cluster_up
        log "up: $NODES nodes x $PPN ranks, rate ${RATE}, delay ${DELAY}, queue ${QUEUE}; hostfile $(state_dir)/hostfile"
        echo "mpirun $(mpirun_flags | tr '\n' ' ')<program...>"
        ;;
    run)
        (($#)) || die "nothing to run after '--'"
        trap finish EXIT
        trap 'on_signal INT 130' INT
        trap 'on_signal TERM 143' TERM
        trap 'on_signal HUP 129' HUP
        start_watchdog
        cluster_up
        local flags rc=0
        mapfile -t flags < <(mpirun_flags)
        if ((VERBOSE)); then log "mpirun ${flags[*]} $*"; fi
        # In the background so that a signal reaches our trap at once (bash runs traps only between
        # foreground commands); keep stdin; do not leak the lock to mpirun and its daemons.
        mpirun "${flags[@]}" "$@" <&0 {LOCK_FD}>&- &
        MPIRUN_PID=$!
        wait "$MPIRUN_PID" || rc=$?
        MPIRUN_PID=""
        exit "$rc"
        ;;
    esac
}

main "$@"

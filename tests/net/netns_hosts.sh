# Sourced by the multi-host tests: makes K "hosts" as network namespaces on one bridge, each with its own
# address (198.19.0.(i+1)/24 on an interface named eth0), its own host identity (CHORUS_HOSTID) and its own
# loopback, and removes them all on exit (trap). Names contain "chorusnet" and the shell's pid, so that
# concurrent runs and other users of namespaces never collide.
#   hosts_up K             make hosts 0..K-1 (exits 77, skipped, when not root or namespaces are refused)
#   host_ns I              the namespace of host I
#   host_ip I              its address
#   host_env I             the environment a rank on host I gets (VAR=value words)
#   host_link I down|up    take host I's link down or up (from the bridge side)
#   pmix_reachable         export what mpirun's PMIx server needs to listen on the bridge
#   host_tbf I RATE        rate-limit host I's link (tc tbf, both directions on the bridge side and inside)
tag=$$
br=cnbr$tag
declare -a chorusnet_hosts=()

hosts_cleanup() {
  local pids
  pids=$(jobs -p)
  [ -n "$pids" ] && kill -9 $pids 2>/dev/null
  for ns in "${chorusnet_hosts[@]}"; do
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
    ip netns del "$ns" 2>/dev/null
  done
  ip link del "$br" 2>/dev/null
  true
}
trap hosts_cleanup EXIT INT TERM

host_ns() { echo "chorusnet-$tag-h$1"; }
host_ip() { echo "198.19.0.$(($1 + 1))"; }
host_veth() { echo "cnv${tag}h$1"; }

hosts_up() {
  local k=$1 i ns v
  [ "$(id -u)" -eq 0 ] || { echo "skipped: needs root for ip netns"; exit 77; }
  command -v ip >/dev/null || { echo "skipped: no iproute2"; exit 77; }
  ip link add "$br" type bridge 2>/dev/null || { echo "skipped: cannot create a bridge"; exit 77; }
  # The bridge's own address lets mpirun's PMIx server (in this namespace) reach the ranks (pmix_reachable).
  ip addr add 198.19.0.254/24 dev "$br"
  ip link set "$br" up
  for ((i = 0; i < k; ++i)); do
    ns=$(host_ns $i)
    v=$(host_veth $i)
    ip netns add "$ns" || { echo "skipped: cannot create namespaces"; exit 77; }
    chorusnet_hosts+=("$ns")
    ip link add "$v" type veth peer name "${v}p" || { echo "skipped: cannot create veth pairs"; exit 77; }
    ip link set "${v}p" netns "$ns"
    ip -n "$ns" link set "${v}p" name eth0
    ip -n "$ns" addr add "$(host_ip $i)/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    ip link set "$v" master "$br"
    ip link set "$v" up
  done
}

# mpirun's PMIx server listens on the bridge, so that ranks in the namespaces reach it.
pmix_reachable() {
  export PMIX_MCA_ptl_tcp_if_include=$br PMIX_MCA_ptl_tcp_remote_connections=1
}

host_env() {
  echo "CHORUS_HOSTID=chorusnet-host$1 CHORUS_SOCKET_IFNAME==eth0 UCX_NET_DEVICES=eth0"
}

host_link() {
  ip link set "$(host_veth $1)" "$2"
}

# A short queue (16 KiB burst, 2 ms): TCP then holds what it sends in its socket buffers, where a close on
# another connection (a plugin's setup socket) overtakes it; the ucx plugin once failed that way.
host_tbf() {
  tc qdisc replace dev "$(host_veth $1)" root tbf rate "$2" burst 16kb latency 2ms
  ip netns exec "$(host_ns $1)" tc qdisc replace dev eth0 root tbf rate "$2" burst 16kb latency 2ms
}

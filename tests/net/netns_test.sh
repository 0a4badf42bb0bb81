#!/usr/bin/env bash
# Two hosts in network namespaces joined by a veth pair (addresses in 198.18.0.0/15, the benchmarking range,
# reachable only inside this machine). Usage: netns_test.sh NET_RANK_BINARY {collectives|kill|cut}
#   collectives: rank 0 and rank 1 on different hosts run every collective over TCP and check every element;
#   kill: rank 1 is SIGKILLed while rank 0 waits -> rank 0 must report chorusRemoteError within seconds;
#   cut:  the link goes down while rank 0 waits -> rank 0 must end at its deadline (chorusTimeout) or with
#         chorusRemoteError, never hang.
# Exits 77 (skipped) when not root or when namespaces cannot be made.
set -u
bin=$1
mode=$2
[ "$(id -u)" -eq 0 ] || { echo "skipped: needs root for ip netns"; exit 77; }
command -v ip >/dev/null || { echo "skipped: no iproute2"; exit 77; }
tag=$$
a=chorus-a-$tag; b=chorus-b-$tag; va=cva$tag; vb=cvb$tag
cleanup() {
  jobs -p | xargs -r kill -9 2>/dev/null
  ip netns del "$a" 2>/dev/null; ip netns del "$b" 2>/dev/null
}
trap cleanup EXIT
ip netns add "$a" && ip netns add "$b" || { echo "skipped: cannot create namespaces"; exit 77; }
ip link add "$va" type veth peer name "$vb" || { echo "skipped: cannot create veth"; exit 77; }
ip link set "$va" netns "$a"; ip link set "$vb" netns "$b"
ip -n "$a" addr add 198.18.7.1/24 dev "$va"; ip -n "$b" addr add 198.18.7.2/24 dev "$vb"
ip -n "$a" link set "$va" up; ip -n "$b" link set "$vb" up
ip -n "$a" link set lo up; ip -n "$b" link set lo up

port=$((20000 + tag % 20000))
common=(CHORUS_WORLD_SIZE=2 CHORUS_ADDR=198.18.7.1:$port CHORUS_SECRET=00112233445566778899aabbccddeeff)
timeout_ms=20000
[ "$mode" = cut ] && timeout_ms=4000
ip netns exec "$a" env "${common[@]}" CHORUS_RANK=0 CHORUS_SOCKET_IFNAME="$va" CHORUS_TIMEOUT_MS=$timeout_ms \
  "$bin" ${mode:+$([ "$mode" != collectives ] && echo --fault wait)} >"/tmp/netns-$tag-0.log" 2>&1 &
p0=$!
ip netns exec "$b" env "${common[@]}" CHORUS_RANK=1 CHORUS_SOCKET_IFNAME="$vb" CHORUS_TIMEOUT_MS=$timeout_ms \
  "$bin" ${mode:+$([ "$mode" != collectives ] && echo --fault wait)} >"/tmp/netns-$tag-1.log" 2>&1 &
p1=$!
status=0
case "$mode" in
  collectives)
    wait $p0 || status=1
    wait $p1 || status=1
    ;;
  kill|cut)
    for _ in $(seq 100); do grep -q ready "/tmp/netns-$tag-1.log" 2>/dev/null && break; sleep 0.1; done
    sleep 0.5
    if [ "$mode" = kill ]; then kill -9 $p1; else ip -n "$a" link set "$va" down; fi
    start=$(date +%s)
    wait $p0; rc=$?
    took=$(( $(date +%s) - start ))
    # 10: chorusRemoteError, 11: chorusTimeout.
    if [ "$mode" = kill ] && [ $rc -ne 10 ]; then status=1; fi
    if [ "$mode" = cut ] && [ $rc -ne 10 ] && [ $rc -ne 11 ]; then status=1; fi
    [ $took -le 30 ] || status=1
    kill -9 $p1 2>/dev/null
    ;;
esac
cat "/tmp/netns-$tag-0.log" "/tmp/netns-$tag-1.log"
rm -f "/tmp/netns-$tag-0.log" "/tmp/netns-$tag-1.log"
exit $status

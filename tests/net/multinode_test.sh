#!/usr/bin/env bash
# Multi-host runs over network namespaces (netns_hosts.sh: K hosts on a bridge, each with its own address and
# host identity). Label net; needs root (exits 77, skipped, otherwise).
#   multinode_test.sh BIN MODE HOSTS RANKS_PER_HOST NET
#     BIN   the build's bin directory (chorusrun, mpi_compare, the perf tools, net_rank)
#     NET   socket or ucx (CHORUS_NET; ucx runs with UCX_TLS=tcp, so that it crosses the bridge over TCP)
#   MODE
#     mpirun     mpirun with one rank group per namespace (Open MPI's MPMD form, `ip netns exec` in front of
#                each group): mpi_compare checks every collective, type and op element by element against
#                Open MPI's own result; Open MPI itself runs over its TCP BTL across the bridge.
#     chorusrun  chorusrun -np H*R --hosts H with each rank moved into its host's namespace (netns_wrap.sh):
#                every perf tool with -c 1 -d all -o all (every type and op, every root), results checked.
#     bench      all_reduce_perf and all_gather_perf under mpirun --compare mpi: Chorus over NET and Open
#                MPI's TCP BTL in the same run, printed as tables.
#     linkdown   2 ranks loop over 64 MiB all-reduces; host 1's link goes down mid-collective: both must end
#                with an error within their deadline (CHORUS_TIMEOUT_MS=6000), nothing hangs.
#     slowlink   host 1's link limited to 200 Mbit/s (tc tbf): every collective of net_rank correct, then 10
#                rounds of a 4 MiB broadcast from the last rank, which closes its communicator as soon as its
#                sends completed while the data is still on the slow link (net_rank --farewell).
set -u
bin=$1 mode=$2 nhosts=$3 per=$4 net=$5
here=$(cd "$(dirname "$0")" && pwd)
source "$here/netns_hosts.sh"
hosts_up "$nhosts"
pmix_reachable
export CHORUSNET_TAG=$tag
np=$((nhosts * per))
netenv=(CHORUS_NET="$net" CHORUS_TIMEOUT_MS=120000)
[ "$net" = ucx ] && netenv+=(UCX_TLS=tcp)
mpirun_cmd=(mpirun --allow-run-as-root --oversubscribe --mca btl ${CHORUSNET_MPI_BTL:-self,tcp} --mca btl_tcp_if_include eth0
            --mca pml ob1)

# mpirun's MPMD form: one app context per host, each started through `ip netns exec` with its identity.
mpmd() {
  local args=() i
  for ((i = 0; i < nhosts; ++i)); do
    [ $i -gt 0 ] && args+=(":")
    args+=(-np "$per" ip netns exec "$(host_ns $i)" env $(host_env $i) "${netenv[@]}" "$@")
  done
  echo "${args[@]}"
}

status=0
case "$mode" in
  mpirun)
    timeout 900 "${mpirun_cmd[@]}" $(mpmd "$bin/mpi_compare") || status=1
    ;;
  chorusrun)
    for tool in all_reduce all_gather broadcast reduce reduce_scatter alltoall gather scatter sendrecv; do
      out=$(timeout 600 "$bin/chorusrun" -np "$np" --hosts "$nhosts" --timeout 500 -x CHORUS_NET="$net" \
              -x UCX_TLS=tcp -- "$here/netns_wrap.sh" "$bin/${tool}_perf" -b 8 -e 1048576 -f 32 -c 1 -n 1 -w 0 \
              -d all -o all -r -1 2>&1)
      rc=$?
      lines=$(echo "$out" | grep -cE '^(\[0\])? +[0-9]+ +[0-9]+ ')
      oob=$(echo "$out" | grep -m1 "Out of bounds values" | sed 's/.*: *//')
      echo "$tool: exit $rc, $lines result rows (every type, op and root), out of bounds values: $oob"
      if [ $rc -ne 0 ] || [ "$lines" -eq 0 ] || [ "$oob" != "0 OK" ]; then echo "$out" | tail -20; status=1; fi
    done
    ;;
  bench)
    for tool in all_reduce all_gather; do
      timeout 600 "${mpirun_cmd[@]}" $(mpmd "$bin/${tool}_perf" -b 64K -e 64M -f 4 -n 10 -w 3 -c 0 --compare mpi) \
        || status=1
    done
    ;;
  linkdown)
    for ((i = 0; i < np; ++i)); do
      h=$((i / per))
      ip netns exec "$(host_ns $h)" env $(host_env $h) "${netenv[@]}" CHORUS_TIMEOUT_MS=6000 CHORUS_RANK=$i \
        CHORUS_WORLD_SIZE=$np CHORUS_ADDR="$(host_ip 0):29517" CHORUS_SECRET=00112233445566778899aabbccddeeff \
        "$bin/net_rank" --fault loop >"/tmp/chorusnet-$tag-$i.log" 2>&1 &
    done
    for _ in $(seq 300); do grep -q looping "/tmp/chorusnet-$tag-$((np - 1)).log" 2>/dev/null && break; sleep 0.1; done
    sleep 1
    host_link $((nhosts - 1)) down
    start=$(date +%s)
    for job in $(jobs -p); do
      wait "$job"
      rc=$?
      # 10: chorusRemoteError, 11: chorusTimeout; 0 or anything else: wrong.
      [ $rc -eq 10 ] || [ $rc -eq 11 ] || { echo "a rank ended with $rc"; status=1; }
    done
    took=$(($(date +%s) - start))
    echo "every rank ended $took s after the link went down"
    [ $took -le 30 ] || status=1
    cat /tmp/chorusnet-$tag-*.log
    rm -f /tmp/chorusnet-$tag-*.log
    ;;
  slowlink)
    host_tbf $((nhosts - 1)) 200mbit
    for ((i = 0; i < np; ++i)); do
      h=$((i / per))
      ip netns exec "$(host_ns $h)" env $(host_env $h) "${netenv[@]}" CHORUS_RANK=$i CHORUS_WORLD_SIZE=$np \
        CHORUS_ADDR="$(host_ip 0):29518" CHORUS_SECRET=00112233445566778899aabbccddeeff \
        "$bin/net_rank" --farewell 10 >"/tmp/chorusnet-$tag-$i.log" 2>&1 &
    done
    start=$(date +%s)
    for job in $(jobs -p); do wait "$job" || status=1; done
    echo "net_rank over a 200 Mbit/s link: $(($(date +%s) - start)) s"
    cat /tmp/chorusnet-$tag-*.log
    rm -f /tmp/chorusnet-$tag-*.log
    ;;
  *)
    echo "unknown mode $mode"
    exit 2
    ;;
esac
exit $status

#!/usr/bin/env bash
# Runs one rank of a chorusrun job inside the namespace of its host (netns_hosts.sh): host = rank / local size
# (chorusrun --hosts places ranks in blocks), the rendezvous address moved from 127.0.0.1 to host 0's address
# (rank 0 serves it there), and the host's identity and interface. Needs CHORUSNET_TAG (the harness's tag).
set -u
rank=${CHORUS_RANK:?}
per=${CHORUS_LOCAL_SIZE:?}
host=$((rank / per))
port=${CHORUS_ADDR##*:}
exec ip netns exec "chorusnet-$CHORUSNET_TAG-h$host" env CHORUS_ADDR="198.19.0.1:$port" \
  CHORUS_HOSTID="chorusnet-host$host" CHORUS_SOCKET_IFNAME="=eth0" UCX_NET_DEVICES=eth0 "$@"

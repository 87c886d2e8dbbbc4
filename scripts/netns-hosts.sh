#!/usr/bin/env bash
# netns-hosts.sh — two hosts of your own on one machine, to run mpirun
# across hosts by hand: network namespaces NAME-a (10.77.0.1) and NAME-b
# (10.77.0.2) joined by a veth pair (eth0 in each), and an rsh agent for
# Open MPI that runs orted in either, as ssh would on a real host. What
# cmd/train/hosts_linux_test.go does, for trying things out. Needs root,
# iproute2 (ip) and util-linux (unshare).
#
# Usage: scripts/netns-hosts.sh up|run|cut|plug|down
#   up     makes the hosts and the agent (/tmp/NAME-agent)
#   run PROG ARGS...
#          runs mpirun in NAME-a, one rank of PROG on each host, over TCP
#          between the two addresses only; as root (--allow-run-as-root)
#   cut    pulls NAME-b's cable (its eth0 down); plug puts it back
#   down   kills what still runs in the hosts (by process ID) and deletes
#          them
# NETNS_HOSTS=NAME names the hosts (gkhosts). run adds Open MPI's OOB
# keepalive flags, with which mpirun notices a host cut off in about 4 s;
# KEEPALIVE=0 leaves them out (Open MPI's default: 300 s, then 9 probes
# 20 s apart; and once a daemon has something to send over the dead link,
# TCP's retransmissions, about 15 minutes: mpirun ended 940 s after a cut).
#
# Example, a host cut off mid-run (train built with go build ./cmd/train):
#   scripts/netns-hosts.sh up
#   scripts/netns-hosts.sh run ./train --synthetic --epochs 9 \
#       --distributed --distributed-timeout 10s &
#   scripts/netns-hosts.sh cut          # in epoch 3, say
#   ip netns pids gkhosts-b             # who is left, and when
#   scripts/netns-hosts.sh down
set -euo pipefail

cmd=${1:-}
name=${NETNS_HOSTS:-gkhosts}
a=$name-a b=$name-b agent=/tmp/$name-agent

case $cmd in
up)
	if ! ip netns list | grep -qx "$a\( .*\)\?"; then
		ip netns add "$a"
		ip netns add "$b"
		ip link add name eth0 netns "$a" type veth peer name eth0 netns "$b"
		ip -n "$a" addr add 10.77.0.1/24 dev eth0
		ip -n "$b" addr add 10.77.0.2/24 dev eth0
		for ns in "$a" "$b"; do
			ip -n "$ns" link set lo up
			ip -n "$ns" link set eth0 up
		done
		# Open MPI runs `agent HOST orted ARGS...` as it would run ssh:
		# the words joined, parsed by the host's shell. Each host gets a
		# host name of its own (unshare --uts), as real hosts have.
		cat >"$agent" <<EOF
#!/bin/sh
host=\$1; shift
case \$host in
10.77.0.1) ns=$a ;;
10.77.0.2) ns=$b ;;
*) echo "agent: no host \$host here" >&2; exit 255 ;;
esac
exec ip netns exec "\$ns" unshare --uts sh -c 'hostname "\$0" && exec sh -c "\$1"' "\$ns" "\$*"
EOF
		chmod +x "$agent"
	fi
	;;
run)
	shift
	keepalive=(--mca oob_tcp_keepalive_time 1 --mca oob_tcp_keepalive_intvl 1 --mca oob_tcp_keepalive_probes 3)
	[ "${KEEPALIVE:-1}" = 0 ] && keepalive=()
	exec ip netns exec "$a" unshare --uts sh -c 'hostname "$0" && exec "$@"' "$a" \
		mpirun --allow-run-as-root --oversubscribe -np 2 --host 10.77.0.1,10.77.0.2 --mca plm_rsh_agent "$agent" \
		--mca btl tcp,self --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24 \
		"${keepalive[@]}" "$@"
	;;
cut) ip -n "$b" link set eth0 down ;;
plug) ip -n "$b" link set eth0 up ;;
down)
	for ns in "$a" "$b"; do
		for _ in 1 2 3 4 5; do
			pids=$(ip netns pids "$ns" 2>/dev/null || true)
			[ -z "$pids" ] && break
			# shellcheck disable=SC2086 # one ID a word
			kill -9 $pids 2>/dev/null || true
			sleep 0.2
		done
		ip netns del "$ns" 2>/dev/null || true
	done
	rm -f "$agent"
	;;
*)
	sed -n '2,/^set -e/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac

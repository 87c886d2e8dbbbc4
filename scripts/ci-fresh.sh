#!/usr/bin/env bash
# ci-fresh.sh — run CI (.ci/run) as it runs on a fresh machine: in a clean
# clone of a commit, inside a Debian 12 root made from Debian's packages
# with debootstrap, where nothing was installed by hand. Only the Go
# toolchain is copied in (a fresh machine has Go at /usr/local/go). A CI
# that is green on this machine can hide an install step that only this
# machine's earlier sessions made; this cannot.
#
# It then runs the README's set-up commands in the same root: the tests
# (go test ./..., which .ci/run runs too) and the main job, on generated
# CIFAR-shaped data (--synthetic: these machines cannot download CIFAR-10).
#
#   1. debootstrap --variant=minbase bookworm into WORK/base (once; kept,
#      and reused read-only: --rebase makes it anew);
#   2. a copy of it, WORK/root, for this run, with Go copied in, the host's
#      apt sources, DNS and local certificate authorities, and /proc, /sys,
#      /dev, /dev/shm and a /tmp of its own mounted;
#   3. git clone of COMMIT (default HEAD) of this repository into
#      /work/gokeras in the root, and shared/ beside it if there is one;
#   4. chroot: env -i CI=true bash .ci/run, with only PATH, HOME, TERM
#      and the Go proxy settings set, as CI's runner does;
#   5. the set-up commands; the log of everything goes to WORK/log and the
#      exit status is .ci/run's (or the set-up commands').
#
# Needs root (debootstrap, chroot, mounts) and Debian's debootstrap package,
# which it installs with apt-get when missing. Takes the time CI takes plus
# a few minutes (about 6 GB of disk under WORK while it runs).
#
# Usage: scripts/ci-fresh.sh [--work DIR] [--commit REV] [--avx2] [--rebase] [--keep]
#   --work DIR    where the roots live (default /var/tmp/gokeras-ci-fresh)
#   --commit REV  the commit to test (default HEAD; uncommitted changes are
#                 never tested)
#   --avx2        on an AVX-512 CPU, run as an AVX2-only one (AMD Zen 3) would:
#                 Go is told the CPU lacks AVX-512 (GODEBUG=cpu.avx512f=off,
#                 which golang.org/x/sys/cpu and the runtime honour, so the
#                 AVX2 kernels multiply) and OpenBLAS takes its Zen kernels
#                 (OPENBLAS_CORETYPE=Zen); .ci/run's own checks of
#                 /proc/cpuinfo still see AVX-512. Not a real Zen 3, but every
#                 multiply path one takes.
#   --rebase      debootstrap the base root anew
#   --keep        keep WORK/root afterwards (to look around: chroot WORK/root)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=/var/tmp/gokeras-ci-fresh
commit=HEAD
rebase=0
keep=0
avx2=0
while [ $# -gt 0 ]; do
	case $1 in
	--work)
		[ $# -ge 2 ] || { echo "ci-fresh.sh: --work needs a directory" >&2; exit 2; }
		work=$2
		shift
		;;
	--commit)
		[ $# -ge 2 ] || { echo "ci-fresh.sh: --commit needs a revision" >&2; exit 2; }
		commit=$2
		shift
		;;
	--avx2) avx2=1 ;;
	--rebase) rebase=1 ;;
	--keep) keep=1 ;;
	-h | --help)
		sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*) echo "ci-fresh.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done

die() { echo "ci-fresh.sh: error: $*" >&2; exit 1; }
say() { echo "ci-fresh.sh: $*" >&2; }

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot and mounts): run it with sudo"
goroot=$(go env GOROOT 2>/dev/null || true)
[ -x "$goroot/bin/go" ] || die "no Go toolchain found (go env GOROOT): install Go 1.26 at /usr/local/go"
rev=$(git -C "$repo" rev-parse --verify "$commit^{commit}") || die "$commit is not a commit of $repo"
mkdir -p "$work"
work=$(cd "$work" && pwd)
base=$work/base
root=$work/root
log=$work/log

# The mirror the host's apt uses, so that the root is made of the same
# Debian the host gets its packages from.
mirror=$(sed -n 's/^URIs: *\(http[^ ]*debian\)\/\{0,1\} *$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)
if [ -z "$mirror" ]; then
	mirror=$(awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
fi
mirror=${mirror:-http://deb.debian.org/debian}

if ! command -v debootstrap >/dev/null; then
	say "installing debootstrap with apt-get"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi

# Mounts are undone whatever happens, those the tests made inside the root
# (ip netns's) included; the run's root is removed unless kept.
mounted=0
cleanup() {
	if [ "$mounted" = 1 ]; then umount -R -l "$root" 2>/dev/null || true; fi
	if [ "$keep" = 0 ] && [ -d "$root" ]; then rm -rf --one-file-system "$root"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mountit() { mount "$@"; }

if [ "$rebase" = 1 ] || [ ! -e "$base/.complete" ]; then
	say "debootstrap bookworm (minbase) from $mirror into $base"
	rm -rf --one-file-system "$base"
	debootstrap --variant=minbase bookworm "$base" "$mirror" >"$work/debootstrap.log" 2>&1 ||
		die "debootstrap failed: see $work/debootstrap.log"
	touch "$base/.complete"
fi

say "a fresh root for this run: $root"
rm -rf --one-file-system "$root"
cp -a "$base" "$root"
mkdir -p "$root/usr/local"
cp -a "$goroot" "$root/usr/local/go"
# The host's apt sources (the same mirror and components) and its DNS.
rm -f "$root"/etc/apt/sources.list "$root"/etc/apt/sources.list.d/*
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
	cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/"
else
	cp /etc/apt/sources.list "$root/etc/apt/"
fi
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
# The machine's own certificate authorities (a network that inspects TLS
# signs with one): part of the machine, not of what CI installs. They take
# effect when .ci/run installs ca-certificates, as on a fresh machine.
if [ -d /usr/local/share/ca-certificates ]; then
	mkdir -p "$root/usr/local/share/ca-certificates"
	cp -a /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/"
fi
mkdir -p "$root/work"
git clone -q --no-local "$repo" "$root/work/gokeras"
git -C "$root/work/gokeras" checkout -q --detach "$rev"
if [ -d "$repo/../shared" ]; then cp -a "$repo/../shared" "$root/work/shared"; fi

# The root is a mount point of its own, as / is on a machine: ip netns exec
# (the tests across hosts) remounts / as a slave, which a plain directory
# refuses ("mount --make-rslave /" failed: Invalid argument).
mount --bind "$root" "$root"
mounted=1
mountit -t proc proc "$root/proc"
mountit -t sysfs sys "$root/sys"
mountit --bind /dev "$root/dev"
mountit -t tmpfs -o size=4g shm "$root/dev/shm"
mountit -t devpts -o newinstance,ptmxmode=0666 devpts "$root/dev/pts"
mountit -t tmpfs -o size=8g tmp "$root/tmp"

# CI's environment: nothing of this shell's but the Go proxy settings.
envs=(HOME=/root TERM=dumb CI=true PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	"GOPROXY=$(go env GOPROXY)" "GOSUMDB=$(go env GOSUMDB)" GOFLAGS=-buildvcs=false GOTOOLCHAIN=local)
if [ "$avx2" = 1 ]; then
	envs+=(GODEBUG=cpu.avx512f=off OPENBLAS_CORETYPE=Zen)
fi
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
avx512=no
grep -qw avx512f /proc/cpuinfo && avx512=yes
{
	echo "ci-fresh.sh: commit $rev, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	[ "$avx2" = 0 ] || echo "ci-fresh.sh: run as an AVX2-only CPU: GODEBUG=cpu.avx512f=off OPENBLAS_CORETYPE=Zen"
	echo "ci-fresh.sh: CPU $cpu (AVX-512: $avx512), $(nproc) cores; Debian $(cat "$root/etc/debian_version") root from $mirror; $("$goroot/bin/go" version)"
} | tee "$log" >&2

status=0
say "bash .ci/run in the fresh root (log: $log)"
SECONDS=0
chroot "$root" /usr/bin/env -i "${envs[@]}" bash -c 'cd /work/gokeras && bash .ci/run </dev/null' >>"$log" 2>&1 || status=$?
echo "ci-fresh.sh: .ci/run exited $status after ${SECONDS}s" | tee -a "$log" >&2

if [ "$status" = 0 ]; then
	say "the README's set-up commands in the same root"
	# The tests (go test ./...) ran within .ci/run; the main job, on
	# generated data, ends with its test scores.
	chroot "$root" /usr/bin/env -i "${envs[@]}" bash -c '
		set -e
		cd /work/gokeras
		go run ./cmd/train --device=/CPU:0 --synthetic --epochs 2 --steps-per-epoch 50
	' >>"$log" 2>&1 || status=$?
	echo "ci-fresh.sh: the main job (go run ./cmd/train --device=/CPU:0 --synthetic --epochs 2 --steps-per-epoch 50) exited $status" | tee -a "$log" >&2
fi
tail -n 25 "$log" >&2
exit "$status"

//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gokeras/gokeras/datasets/cifar10"
	"github.com/gokeras/gokeras/internal/sys/mpitest"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/safetensors"
)

// The tests here run train --distributed across two hosts of their own:
// two network namespaces joined by a veth pair, 10.77.0.1 and 10.77.0.2,
// each with nothing but loopback and that link. mpirun runs in the first
// with rank 0, and starts rank 1's orted in the second through Open MPI's
// rsh launcher (plm_rsh_agent), whose agent does what ssh would do:
// `agent HOST ARGS...` runs the ARGS, joined by spaces, with sh in HOST's
// namespace. The ranks talk over Open MPI's TCP transport between those
// two addresses only (btl tcp,self; btl_tcp_if_include and
// oob_tcp_if_include 10.77.0.0/24): no shared memory, no loopback.
//
// The host names are the addresses, so nothing has to resolve. Each host
// also gets a host name of its own (unshare --uts, then hostname), as real
// hosts have: without it both report the machine's name. Open MPI 4.1 ran
// the job either way, to the same weights (it tells the nodes apart by the
// --host names, and takes the first for itself by its address), but its
// messages then name both hosts alike.
//
// They need root (namespaces), iproute2's ip, util-linux' unshare and
// Open MPI; without them they skip, saying why, unless
// GOKERAS_REQUIRE_NETNS=1 (what .ci/run sets), which makes them fail.

// requireNetnsVar names the variable that turns missing prerequisites of
// the tests across hosts into failures.
const requireNetnsVar = "GOKERAS_REQUIRE_NETNS"

// hostsSubnet is the subnet of the two hosts. Each pair of namespaces has
// its own network, so runs in parallel may use the same addresses.
const hostsSubnet = "10.77.0.0/24"

// hostPair is two hosts, network namespaces joined by one link (eth0 in
// each), and the rsh agent that starts a command in either.
type hostPair struct {
	ns    [2]string // the namespaces' names: the hosts' host names too
	addr  [2]string // their addresses: the names mpirun is given
	agent string    // the rsh agent's path
	log   string    // where the agent writes each host it is asked for
}

// pairs counts the pairs of namespaces this process made: with its
// process ID it makes their names unique on the machine.
var pairs atomic.Int32

// newHostPair makes two hosts for t, removed when t ends, passed or not:
// the processes left in them are killed first (by ID: they are the
// job's), then the namespaces deleted, which deletes the link.
func newHostPair(t *testing.T) *hostPair {
	t.Helper()
	missing := func(why string) {
		t.Helper()
		if os.Getenv(requireNetnsVar) == "1" {
			t.Fatalf("%s=1 but %s", requireNetnsVar, why)
		}
		t.Skipf("skipped: %s (set %s=1 to fail instead)", why, requireNetnsVar)
	}
	mpitest.Need(t) // before making anything
	if os.Geteuid() != 0 {
		missing("the hosts are network namespaces, which only root can make")
	}
	for _, tool := range []string{"ip", "unshare", "sh", "hostname"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing(tool + " is not on PATH (Debian: apt-get install -y iproute2 util-linux hostname)")
		}
	}
	removeStaleNetns(t)
	h := &hostPair{addr: [2]string{"10.77.0.1", "10.77.0.2"}}
	n := pairs.Add(1)
	for i := range h.ns {
		h.ns[i] = fmt.Sprintf("gk%d-%d%c", os.Getpid(), n, 'a'+i)
	}
	for i, ns := range h.ns {
		if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
			if i == 0 {
				missing(fmt.Sprintf("ip netns add: %v: %s", err, bytes.TrimSpace(out)))
			}
			t.Fatalf("ip netns add %s: %v: %s", ns, err, out)
		}
		t.Cleanup(func() { removeNetns(t, ns) })
		if i == 0 { // a namespace that cannot be entered (a chroot whose / is no mount point) is no host
			if out, err := exec.Command("ip", "netns", "exec", ns, "true").CombinedOutput(); err != nil {
				missing(fmt.Sprintf("ip netns exec cannot enter a namespace here: %v: %s", err, bytes.TrimSpace(out)))
			}
		}
	}
	h.ip(t, "link", "add", "name", "eth0", "netns", h.ns[0], "type", "veth", "peer", "name", "eth0", "netns", h.ns[1])
	for i, ns := range h.ns {
		h.ip(t, "-n", ns, "addr", "add", h.addr[i]+"/24", "dev", "eth0")
		h.ip(t, "-n", ns, "link", "set", "lo", "up")
		h.ip(t, "-n", ns, "link", "set", "eth0", "up")
	}

	dir := t.TempDir()
	h.agent, h.log = filepath.Join(dir, "agent"), filepath.Join(dir, "agent.log")
	// Open MPI runs `agent HOST orted -mca ... "quoted values"`, as it
	// would run ssh: the remote shell parses the words joined.
	script := fmt.Sprintf(`#!/bin/sh
# The rsh agent of the hosts of %s: runs "$2 ..." as ssh would, in host $1.
host=$1; shift
case $host in
%s) ns=%s ;;
%s) ns=%s ;;
*) echo "agent: no host $host here" >&2; exit 255 ;;
esac
echo "$host" >> %s
exec ip netns exec "$ns" unshare --uts sh -c 'hostname "$0" && exec sh -c "$1"' "$ns" "$*"
`, t.Name(), h.addr[0], h.ns[0], h.addr[1], h.ns[1], h.log)
	if err := os.WriteFile(h.agent, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return h
}

// ip runs ip with args, failing t on error.
func (h *hostPair) ip(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// link brings the second host's link up or down: its cable, plugged in or
// pulled (the first host's end loses its carrier too).
func (h *hostPair) link(t *testing.T, up bool) {
	t.Helper()
	state := "down"
	if up {
		state = "up"
	}
	h.ip(t, "-n", h.ns[1], "link", "set", "eth0", state)
}

// killAll kills what still runs on either host: what a job left.
func (h *hostPair) killAll() {
	for _, ns := range h.ns {
		killNetns(ns)
	}
}

// killNetns kills what runs in the namespace ns (by process ID: what the
// jobs started there) and waits, a few seconds at most, for it to go.
func killNetns(ns string) {
	for range 50 {
		pids := netnsPids(ns)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// removeNetns kills what still runs in the namespace ns and deletes it.
func removeNetns(t *testing.T, ns string) {
	killNetns(ns)
	if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
		t.Errorf("ip netns del %s: %v: %s", ns, err, out)
	}
}

// staleNetns matches the names newHostPair gives, with the process ID of
// the test that made them.
var staleNetns = regexp.MustCompile(`^gk(\d+)-\d+[ab]$`)

// removeStaleNetns removes the hosts a test process left when it was
// killed before its cleanups ran (go test -timeout, say): those named
// after a process that is gone.
func removeStaleNetns(t *testing.T) {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(out), "\n") {
		name, _, _ := strings.Cut(line, " ")
		m := staleNetns.FindStringSubmatch(name)
		if m == nil {
			continue
		}
		pid, _ := strconv.Atoi(m[1])
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			t.Logf("removing %s, left by process %d", name, pid)
			removeNetns(t, name)
		}
	}
}

// netnsPids lists the processes in the namespace ns.
func netnsPids(ns string) []int {
	out, _ := exec.Command("ip", "netns", "pids", ns).Output()
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// ranksIn lists the processes of this test binary (train's ranks) in the
// namespace ns.
func ranksIn(t *testing.T, ns string) []int {
	t.Helper()
	// The same file, not the same path: a process that ip netns exec
	// started lives in a mount namespace of its own, where the path of
	// its executable can read differently (in a chroot, it did).
	self, err := os.Stat("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	var ranks []int
	for _, pid := range netnsPids(ns) {
		if exe, err := os.Stat(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && os.SameFile(exe, self) {
			ranks = append(ranks, pid)
		}
	}
	return ranks
}

// keepalive is what mpirun needs to notice a host that is cut off: Open
// MPI's daemons (mpirun, each host's orted) talk over TCP (the OOB), and
// by default probe an idle connection only after 300 s, then 9 times 20 s
// apart. These flags declare a silent host lost after about 4 s; mpirun
// then ends the job ("ORTE has lost communication with a remote daemon",
// exit status 205), and the cut-off host's orted kills its ranks and exits.
//
// Keepalive probes only a connection with nothing unacknowledged, so it
// must find the lost host before --distributed-timeout ends a rank: once a
// daemon has something to send over the dead link (a rank's exit, its
// last words), it waits for TCP's retransmissions to give up
// (net.ipv4.tcp_retries2, about 15 minutes). Without these flags mpirun
// ended 940 s after the cut; with them and --distributed-timeout 2s,
// mpirun still ended 5 s after the cut, but the cut-off host's orted
// stayed (its rank had gone at its timeout).
var keepalive = []string{"--mca", "oob_tcp_keepalive_time", "1", "--mca", "oob_tcp_keepalive_intvl", "1", "--mca", "oob_tcp_keepalive_probes", "3"}

// job starts train with args under mpirun on the two hosts, one rank on
// each, given mpirun's own flags mpiArgs too. Each rank's output also goes
// to out/1/rank.N/std{out,err} (--output-filename), written on its own
// host: what a rank cut off says never reaches mpirun.
func (h *hostPair) job(t *testing.T, ctx context.Context, out string, mpiArgs []string, args ...string) (*exec.Cmd, *hostsBuffer) {
	t.Helper()
	mpirun := mpitest.Need(t)
	mpiArgs = append([]string{"--host", h.addr[0] + "," + h.addr[1],
		"--mca", "plm_rsh_agent", h.agent,
		"--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", hostsSubnet, "--mca", "oob_tcp_if_include", hostsSubnet,
		"--output-filename", out}, mpiArgs...)
	cmd := mpitest.Command(t, ctx, mpirun, 2, []string{asTrainEnv}, mpiArgs, os.Args[0], args...)
	cmd.Env = append(cmd.Env, asTrainEnv+"=1", cifar10.HomeEnv+"="+t.TempDir())
	// mpirun, in the first host, with its host name: ip netns exec,
	// unshare and sh exec, so the process is mpirun's.
	ip, err := exec.LookPath("ip")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Path = ip
	cmd.Args = append([]string{"ip", "netns", "exec", h.ns[0], "unshare", "--uts", "sh", "-c", `hostname "$0" && exec "$@"`, h.ns[0]}, cmd.Args...)
	buf := &hostsBuffer{}
	cmd.Stdout, cmd.Stderr = buf, buf
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, buf
}

// hostsFlags are the flags of the jobs across hosts, less --distributed
// (hostsDistributed): the flagship on small synthetic data.
var hostsFlags = []string{"--device=/CPU:0", "--synthetic", "--synthetic-samples", "2000", "--batch-size", "32", "--seed", "7",
	"--optimizer", "adam", "--verbose", "2"}

// hostsDistributed makes the flags a job's, with a short
// --distributed-timeout.
var hostsDistributed = []string{"--distributed", "--distributed-timeout", "10s"}

// Two hosts of one rank each train, bit for bit, what two ranks on one
// host train, through TCP between the hosts' addresses; and, up to the
// order of float32 sums, what one process trains.
func TestTrainAcrossHosts(t *testing.T) {
	h := newHostPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	one := append(slices.Clone(hostsFlags), "--epochs", "2", "--steps-per-epoch", "5")
	args := append(slices.Clone(one), hostsDistributed...)

	start := time.Now()
	cmd, out := h.job(t, ctx, dir+"/out", nil, append(args, "--save", dir+"/hosts.safetensors")...)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the job across hosts: %v\n%s", err, out)
	}
	took := time.Since(start)
	if log, err := os.ReadFile(h.log); err != nil || string(log) != h.addr[1]+"\n" {
		t.Errorf("the agent started %q (%v), want one orted, on %s", log, err, h.addr[1])
	}
	if !strings.Contains(out.String(), "Distributed: 2 processes share the global batch of 32") {
		t.Errorf("the job across hosts is not one job of 2 processes:\n%s", out)
	}

	local, localOut := mpiTrain(t, ctx, nil, append(args, "--save", dir+"/local.safetensors")...)
	if err := local.Wait(); err != nil {
		t.Fatalf("the job on one host: %v\n%s", err, localOut)
	}
	if r := runTrain(t, append(one, "--save", dir+"/one.safetensors")...); r.err != nil {
		t.Fatalf("one process: %v\n%s%s", r.err, r.stdout, r.stderr)
	}

	hosts, err := os.ReadFile(dir + "/hosts.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(dir + "/local.safetensors"); err != nil || !bytes.Equal(hosts, b) {
		t.Errorf("the weights trained across hosts differ from those trained on one host (%d bytes against %d, %v)", len(hosts), len(b), err)
	}
	diff := weightsDiff(t, dir+"/hosts.safetensors", dir+"/one.safetensors")
	if diff > 1e-4 {
		t.Errorf("the weights trained across hosts differ from one process's by up to %g of the largest weight, want 1e-4 at most", diff)
	}
	t.Logf("across hosts %v; one process's weights within %g (relative to the largest)", took.Round(time.Millisecond), diff)
}

// weightsDiff is the largest difference between the weights in two
// safetensors files, relative to the largest weight of each tensor in a.
func weightsDiff(t *testing.T, a, b string) float64 {
	t.Helper()
	fa, err := safetensors.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := safetensors.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(fa.Names(), fb.Names()) {
		t.Fatalf("%s holds %v, %s %v", a, fa.Names(), b, fb.Names())
	}
	var worst float64
	for _, ta := range fa.Tensors {
		tb, _ := fb.Tensor(ta.Name)
		if len(ta.Data) != len(tb.Data) {
			t.Fatalf("%s: %d values against %d", ta.Name, len(ta.Data), len(tb.Data))
		}
		var largest, d float64
		for i, v := range ta.Data {
			largest = max(largest, math.Abs(float64(v)))
			d = max(d, math.Abs(float64(v)-float64(tb.Data[i])))
		}
		if largest > 0 {
			worst = max(worst, d/largest)
		}
	}
	return worst
}

// A host cut off mid-epoch (its link down) ends the job on both hosts,
// within --distributed-timeout, saying so; the checkpoint of the last
// epoch stays loadable, and the job resumed from it ends with the weights
// of the job that was never cut, bit for bit.
//
// With Open MPI's default keepalive, each rank stops by itself after
// --distributed-timeout, saying it waited, but mpirun and the cut-off
// host's orted stay: mpirun waits for that orted to say its rank has gone,
// over a TCP connection whose peer no longer answers, and the orted for
// mpirun. The "defaults" case shows the ranks ending and logs what was
// left; "keepalive" shows mpirun ending the job with the flags that make
// it notice the lost host.
func TestTrainAcrossHostsLinkDown(t *testing.T) {
	h := newHostPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := t.TempDir()
	args := append(append(slices.Clone(hostsFlags), hostsDistributed...), "--epochs", "4", "--steps-per-epoch", "10")

	start := time.Now()
	cmd, out := h.job(t, ctx, dir+"/full", nil, append(args, "--save", dir+"/full.safetensors")...)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the job never cut: %v\n%s", err, out)
	}
	full := time.Since(start)
	// Half an epoch: the cut comes then, after epoch 3 has started.
	half := 5 * 300 * time.Millisecond
	if m := regexp.MustCompile(`(\d+)ms/step`).FindAllStringSubmatch(out.String(), -1); m != nil {
		ms, _ := strconv.Atoi(m[len(m)-1][1])
		half = 5 * time.Duration(ms) * time.Millisecond
	}
	const timeout, slack = 10 * time.Second, 20 * time.Second

	// cut starts a job with --checkpoint given mpirun's flags mpiArgs,
	// pulls the second host's cable mid-epoch 3, and returns the job's
	// output, its end (mpirun's exit), its checkpoint, when the cable was
	// pulled, and where the ranks' own output is. The job is killed when
	// t ends, and whatever it left on the hosts.
	cut := func(t *testing.T, mpiArgs []string) (out *hostsBuffer, done chan error, ck string, at time.Time, ranksOut string) {
		t.Helper()
		h.link(t, true)
		sub := t.TempDir()
		ck, ranksOut = sub+"/ck.safetensors", sub+"/out"
		cmd, out := h.job(t, ctx, ranksOut, mpiArgs, append(args, "--checkpoint", ck)...)
		done = make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			<-done
			h.killAll()
		})
		for !strings.Contains(out.String(), "Epoch 3/4") {
			if ctx.Err() != nil {
				t.Fatalf("epoch 3 never started:\n%s", out)
			}
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(half)
		if a, b := ranksIn(t, h.ns[0]), ranksIn(t, h.ns[1]); len(a) != 1 || len(b) != 1 {
			t.Fatalf("want one rank on each host, have %v on %s and %v on %s", a, h.ns[0], b, h.ns[1])
		}
		h.link(t, false)
		return out, done, ck, time.Now(), ranksOut
	}

	// gone waits until no rank is left on either host, failing t after
	// the timeout and the slack.
	gone := func(t *testing.T, since time.Time) time.Duration {
		t.Helper()
		for len(ranksIn(t, h.ns[0]))+len(ranksIn(t, h.ns[1])) > 0 {
			if time.Since(since) > timeout+slack {
				t.Fatalf("ranks still run %v after the cut: %v on %s, %v on %s", time.Since(since).Round(time.Millisecond),
					ranksIn(t, h.ns[0]), h.ns[0], ranksIn(t, h.ns[1]), h.ns[1])
			}
			time.Sleep(50 * time.Millisecond)
		}
		return time.Since(since)
	}

	// loadable checks that the checkpoint is epoch 2's, whole.
	loadable := func(t *testing.T, ck string) {
		t.Helper()
		c, err := nn.ReadCheckpoint(ck)
		if err != nil || c.Epoch != 2 || c.Step != 0 {
			t.Fatalf("the checkpoint left: %+v, %v; want the end of epoch 2", c, err)
		}
		if _, err := safetensors.ReadFile(ck); err != nil {
			t.Fatalf("the checkpoint left: %v", err)
		}
	}

	t.Run("defaults", func(t *testing.T) {
		out, done, ck, at, ranksOut := cut(t, nil)
		took := gone(t, at)
		for rank := range 2 {
			// What a rank wrote reaches its file after it exits: its
			// host's daemon (mpirun, orted) copies it there.
			want := regexp.MustCompile(fmt.Sprintf(`distribute: rank %d of 2: .* waited more than 10s for the other replicas`, rank))
			var b []byte
			for deadline := time.Now().Add(5 * time.Second); !want.Match(b) && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				b, _ = os.ReadFile(fmt.Sprintf("%s/1/rank.%d/stderr", ranksOut, rank))
			}
			if !want.Match(b) {
				t.Errorf("rank %d's stderr %q, want it to say it waited more than 10s; mpirun's output:\n%s", rank, b, out)
			}
		}
		loadable(t, ck)
		// Give mpirun a few seconds more to end by itself, then say what
		// is left (the cleanup kills it).
		select {
		case err := <-done:
			done <- err // for the cleanup
			t.Logf("the ranks stopped %v after the cut, mpirun %v after it: %v", took.Round(time.Millisecond), time.Since(at).Round(time.Millisecond), err)
			if err == nil {
				t.Errorf("mpirun exited 0 after a host was cut off:\n%s", out)
			}
		case <-time.After(5 * time.Second):
			t.Logf("the ranks stopped %v after the cut; mpirun still runs %v after it (processes left: %v on %s, %v on %s), as Open MPI's default keepalive has it",
				took.Round(time.Millisecond), time.Since(at).Round(time.Millisecond), netnsPids(h.ns[0]), h.ns[0], netnsPids(h.ns[1]), h.ns[1])
		}
	})

	t.Run("keepalive", func(t *testing.T) {
		out, done, ck, at, _ := cut(t, keepalive)
		var err error
		select {
		case err = <-done:
			done <- err // for the cleanup
		case <-time.After(timeout + slack):
			t.Fatalf("mpirun still runs %v after the cut:\n%s", time.Since(at).Round(time.Millisecond), out)
		}
		ended := time.Since(at)
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Errorf("mpirun: %v, want a non-zero exit", err)
		}
		text := out.String()
		if !strings.Contains(text, "ORTE has lost communication with a remote daemon") || !strings.Contains(text, "on node "+h.addr[1]) {
			t.Errorf("mpirun did not say it lost %s:\n%s", h.addr[1], text)
		}
		took := gone(t, at)
		for len(netnsPids(h.ns[1])) > 0 && time.Since(at) < timeout+slack { // the orted too
			time.Sleep(50 * time.Millisecond)
		}
		if left := netnsPids(h.ns[1]); len(left) > 0 {
			t.Errorf("processes left on the host cut off %v after the cut: %v", time.Since(at).Round(time.Millisecond), left)
		}
		if ended > timeout+slack || took > timeout+slack {
			t.Errorf("mpirun ended %v after the cut, the ranks %v, want %v at most", ended, took, timeout+slack)
		}
		loadable(t, ck)

		h.link(t, true)
		resumed := filepath.Dir(ck) + "/resumed.safetensors"
		cmd, out := h.job(t, ctx, filepath.Dir(ck)+"/resumed", nil, append(args, "--resume", ck, "--save", resumed)...)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("the resumed job: %v\n%s", err, out)
		}
		if !strings.Contains(out.String(), "Resuming from "+ck+" at epoch 3\n") {
			t.Errorf("the resumed job did not say it resumed at epoch 3:\n%s", out)
		}
		a, errA := os.ReadFile(dir + "/full.safetensors")
		b, errB := os.ReadFile(resumed)
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("the resumed job's weights (%d bytes, %v) differ from those of the job never cut (%d bytes, %v)", len(b), errB, len(a), errA)
		}
		t.Logf("mpirun ended %v after the cut (%v), every rank %v after it; the job never cut took %v", ended.Round(time.Millisecond), err,
			took.Round(time.Millisecond), full.Round(time.Millisecond))
	})
}

// hostsBuffer is a bytes.Buffer that a command writes while a test reads.
type hostsBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *hostsBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *hostsBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

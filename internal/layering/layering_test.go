package layering

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/gokeras/gokeras"

// A rule says what the packages matching pkgs (less those matching except)
// may depend on, directly or through other packages. Patterns are go list's,
// relative to the module: "device/..." is device and every package below it,
// "...onnx..." any import path holding onnx (outside the module too).
type rule struct {
	pkgs, except []string
	// forbid: packages they must not reach.
	forbid []string
	// only: when set, the only packages of the module they may reach.
	only []string
	// serves: for a test helper, the package whose tests it serves; the
	// helper reaches nothing of the module that package does not reach.
	serves string
	why    string
}

// helpers are the ordinary (non-test) packages that exist for tests; only
// tests import them.
var helpers = []string{
	"device/internal/opstest",
	"internal/modeltest",
	"internal/kernels/gemmtest",
	"internal/sys/mpitest",
	"internal/sys/term/termtest",
	"datasets/cifar10/cifar10test",
	"internal/leaktest",
}

// rules is the one place the import rules are written.
var rules = []rule{
	{pkgs: []string{"..."}, forbid: []string{"nn"},
		except: []string{"nn", "callbacks", "applications", "export/...", "cmd/...", "examples/...", "bench/...", "scripts/...", "internal/modeltest"},
		why:    "no package imports nn but callbacks, applications, export/*, cmd/*, examples/*, bench/*, scripts/* and the test helpers above nn"},
	{pkgs: []string{"device/..."}, forbid: []string{"nn", "layers", "losses", "metrics", "callbacks", "data", "export/...", "datasets/...", "safetensors"},
		why: "the device layer (device, device/driver, the plan compiler, the backends and their helpers) imports no model package"},
	{pkgs: []string{"data/..."}, only: []string{"data/...", "internal/formats/shapes"},
		why: "data imports no gokeras package but the internal ones it needs, so that a user's data code does not pull in the trainer"},
	{pkgs: []string{"nn"}, forbid: []string{"...onnx..."},
		why: "nn imports nothing ONNX-related: the export is package export/onnx, on nn's public model API"},
	{pkgs: []string{"..."}, except: helpers, forbid: helpers,
		why: "test helpers are imported by tests only (and by one another)"},
	{pkgs: []string{"device/internal/opstest"}, serves: "device/internal/plan",
		why: "the device layer's test helper imports nothing above the device layer"},
	{pkgs: []string{"internal/modeltest"}, serves: "nn",
		why: "the helper of tests that fit models imports nothing above nn"},
	{pkgs: []string{"internal/kernels/gemmtest"}, serves: "internal/kernels/avx512",
		why: "the products' checker imports nothing above the kernels it checks"},
	{pkgs: []string{"internal/sys/mpitest"}, serves: "distribute/mpi",
		why: "the mpirun helper imports nothing above distribute/mpi"},
	{pkgs: []string{"internal/sys/term/termtest"}, serves: "internal/sys/term",
		why: "the pseudo-terminal helper imports nothing above internal/sys/term"},
	{pkgs: []string{"datasets/cifar10/cifar10test"}, serves: "datasets/cifar10",
		why: "the CIFAR-10 archive writer imports nothing above datasets/cifar10"},
	{pkgs: []string{"internal/leaktest"}, serves: "data",
		why: "the goroutine-leak check imports nothing of the module"},
	{pkgs: []string{"bench/internal/parity"}, serves: "bench/cnnparity",
		why: "the parity programs' shared code imports nothing above the programs"},
}

// tagSets are the build tags CI builds and tests with.
var tagSets = []string{"", "kernelemu", "cudavm", "cudavm kernelemu"}

func TestImportRules(t *testing.T) {
	for _, tags := range tagSets {
		name := tags
		if name == "" {
			name = "no tags"
		}
		t.Run(name, func(t *testing.T) {
			g := list(t, tags)
			for _, v := range check(g, rules) {
				t.Error(v)
			}
		})
	}
}

// TestEveryHelperHasARule fails when an ordinary package named *test has no
// row in the table, so that a new helper comes with its rule.
func TestEveryHelperHasARule(t *testing.T) {
	g := list(t, "cudavm kernelemu")
	listed := map[string]bool{}
	for _, h := range helpers {
		listed[h] = true
	}
	for _, p := range g.own {
		if strings.HasSuffix(g.names[p], "test") && !listed[rel(p)] {
			t.Errorf("%s (package %s) looks like a test helper: add it to helpers and give it a serves rule in layering_test.go", rel(p), g.names[p])
		}
	}
}

// TestRulesCatchAnUpwardImport checks the checker on a made-up graph.
func TestRulesCatchAnUpwardImport(t *testing.T) {
	g := &graph{imports: map[string][]string{}, names: map[string]string{}}
	add := func(p string, imports ...string) {
		g.own = append(g.own, module+"/"+p)
		g.imports[module+"/"+p] = nil
		for _, i := range imports {
			g.imports[module+"/"+p] = append(g.imports[module+"/"+p], module+"/"+i)
		}
	}
	add("data", "internal/formats/shapes")
	add("internal/formats/shapes")
	add("device/internal/plan")
	add("device/internal/opstest", "internal/helper")
	add("internal/helper", "nn")
	add("nn", "data", "device/internal/plan")
	got := check(g, []rule{
		{pkgs: []string{"device/..."}, forbid: []string{"nn", "data"}, why: "down"},
		{pkgs: []string{"device/internal/opstest"}, serves: "device/internal/plan", why: "helper"},
	})
	want := []string{
		"device/internal/opstest → internal/helper → nn",
		"device/internal/opstest → internal/helper",
	}
	for _, w := range want {
		found := false
		for _, v := range got {
			found = found || strings.Contains(v, w+":") || strings.Contains(v, w+" ")
		}
		if !found {
			t.Errorf("no violation names the chain %q; got:\n%s", w, strings.Join(got, "\n"))
		}
	}
}

// graph is what go list says of the module's packages and all they import.
type graph struct {
	tags    string
	own     []string            // the module's packages, sorted
	imports map[string][]string // every listed package's direct imports
	names   map[string]string   // package names
}

func list(t *testing.T, tags string) *graph {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, err := os.Stat(goTool); err != nil {
			t.Skip("no go command to list the packages with")
		}
	}
	cmd := exec.Command(goTool, "list", "-e", "-deps", "-tags", tags,
		"-json=ImportPath,Name,Imports,Standard,Error,DepsErrors", module+"/...")
	// cgo's files count: a tag's files importing "C" are part of the graph
	// wherever the test runs.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -tags %q: %v\n%s", tags, err, stderr.Bytes())
	}
	g := &graph{tags: tags, imports: map[string][]string{}, names: map[string]string{}}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath, Name string
			Imports          []string
			Standard         bool
			Error            *struct{ Err string }
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list -tags %q: %v", tags, err)
		}
		if p.Error != nil {
			t.Errorf("go list -tags %q: %s: %s", tags, p.ImportPath, p.Error.Err)
		}
		g.imports[p.ImportPath] = p.Imports
		g.names[p.ImportPath] = p.Name
		if inModule(p.ImportPath) {
			g.own = append(g.own, p.ImportPath)
		}
	}
	sort.Strings(g.own)
	return g
}

// check returns a sentence per broken rule, each naming its chain of imports.
func check(g *graph, rules []rule) []string {
	var out []string
	seen := map[string]bool{}
	report := func(r rule, chain []string, what string) {
		s := fmt.Sprintf("%s%s: %s (rule: %s)", strings.Join(relAll(chain), " → "), onTags(g.tags), what, r.why)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, r := range rules {
		matched := false
		for _, p := range g.own {
			if !matchAny(r.pkgs, p) {
				continue
			}
			matched = true
			if matchAny(r.except, p) {
				continue
			}
			var allowed map[string]bool
			if r.serves != "" {
				s := module + "/" + r.serves
				if _, ok := g.imports[s]; !ok {
					out = append(out, fmt.Sprintf("the rule for %s serves %s, which go list does not list%s: fix the table", rel(p), r.serves, onTags(g.tags)))
					continue
				}
				allowed = g.reach(s, nil)
				allowed[s] = true
			}
			bad := func(q string) string {
				switch {
				case matchAny(r.forbid, q):
					return "imports " + rel(q)
				case r.only != nil && inModule(q) && !matchAny(r.only, q):
					return rel(q) + " is not among " + strings.Join(r.only, ", ")
				case allowed != nil && inModule(q) && !allowed[q]:
					return rel(q) + " is above " + r.serves + ", the package it serves, which does not import it"
				}
				return ""
			}
			parent := map[string]string{}
			g.reach(p, func(from, q string) bool {
				parent[q] = from
				if why := bad(q); why != "" {
					chain := []string{q}
					for c := q; c != p; {
						c = parent[c]
						chain = append([]string{c}, chain...)
					}
					report(r, chain, why)
					return false
				}
				return true
			})
		}
		if !matched {
			out = append(out, fmt.Sprintf("no package matches %s%s: fix the table (rule: %s)", strings.Join(r.pkgs, ", "), onTags(g.tags), r.why))
		}
		for _, pats := range [][]string{r.forbid, r.only, r.except} {
			for _, pat := range pats {
				if !strings.Contains(pat, "...") && !matchAnyOf(g.own, pat) {
					out = append(out, fmt.Sprintf("no package is %s%s: fix the table (rule: %s)", pat, onTags(g.tags), r.why))
				}
			}
		}
	}
	return out
}

// reach walks the imports from p breadth first, so that each package is
// first met through a shortest chain; visit (when not nil) is told each
// edge to a package not met before and says whether to go on past it. It
// returns the packages met, p not included.
func (g *graph) reach(p string, visit func(from, to string) bool) map[string]bool {
	met := map[string]bool{}
	queue := []string{p}
	for len(queue) > 0 {
		from := queue[0]
		queue = queue[1:]
		for _, q := range g.imports[from] {
			if met[q] || q == p {
				continue
			}
			met[q] = true
			if visit == nil || visit(from, q) {
				queue = append(queue, q)
			}
		}
	}
	return met
}

var patterns = map[string]*regexp.Regexp{}

// match reports whether import path p matches pattern pat as go list
// matches patterns, pat being relative to the module when it does not start
// with "...".
func match(pat, p string) bool {
	if !strings.HasPrefix(pat, "...") {
		pat = module + "/" + pat
	}
	re, ok := patterns[pat]
	if !ok {
		s := regexp.QuoteMeta(pat)
		if strings.HasSuffix(s, `/\.\.\.`) {
			s = strings.TrimSuffix(s, `/\.\.\.`) + `(/\.\.\.)?`
		}
		re = regexp.MustCompile("^" + strings.ReplaceAll(s, `\.\.\.`, `.*`) + "$")
		patterns[pat] = re
	}
	return re.MatchString(p)
}

func matchAny(pats []string, p string) bool {
	for _, pat := range pats {
		if match(pat, p) {
			return true
		}
	}
	return false
}

func matchAnyOf(ps []string, pat string) bool {
	for _, p := range ps {
		if match(pat, p) {
			return true
		}
	}
	return false
}

func inModule(p string) bool { return p == module || strings.HasPrefix(p, module+"/") }

func rel(p string) string { return strings.TrimPrefix(p, module+"/") }

func relAll(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = rel(p)
	}
	return out
}

func onTags(tags string) string {
	if tags == "" {
		return ""
	}
	return fmt.Sprintf(" (tags %s)", tags)
}

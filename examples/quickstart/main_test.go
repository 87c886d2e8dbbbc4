package main

import (
	"os"
	"strings"
	"testing"
)

// The README's Go API example is this program, line for line, and stays
// short.
func TestREADMEShowsThisProgram(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	program, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## The Go API\n")
	if !ok {
		t.Fatal(`README.md has no "## The Go API" section`)
	}
	_, block, ok := strings.Cut(section, "\n```go\n")
	if !ok {
		t.Fatal("the Go API section has no ```go block")
	}
	block, _, ok = strings.Cut(block, "\n```\n")
	if !ok {
		t.Fatal("the Go API section's ```go block does not end")
	}
	if got, want := block+"\n", string(program); got != want {
		t.Errorf("the README's Go API block differs from examples/quickstart/main.go; copy the file into the README.\nREADME:\n%s\nmain.go:\n%s", got, want)
	}
	lines := 0
	for _, l := range strings.Split(string(program), "\n") {
		if strings.TrimSpace(l) != "" {
			lines++
		}
	}
	if lines > 35 {
		t.Errorf("main.go has %d non-blank lines; the README promises at most 35", lines)
	}
}

// The program trains and predicts XOR.
func Example() {
	main()
	// Output: [0 1 1 0]
}

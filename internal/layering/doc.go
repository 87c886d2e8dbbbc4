// Package layering has no code: its test keeps the rules of who may import
// whom (docs' ARCHITECTURE, "Packages and who may import whom"). The rules
// are one table, in layering_test.go; the test lists the module's packages
// with go list under each set of build tags CI uses and fails with the
// chain of imports that breaks a rule.
package layering

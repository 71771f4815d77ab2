// Package modcheck holds the test that keeps the repository's Go modules
// apart: no package of one module, tests included, imports a package under
// another module's internal/. A nested module (kube, the collector's) is
// built against a published version of the main module, whose internal/
// carries no promise.
package modcheck

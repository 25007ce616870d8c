// Package docnames holds no code, only a test: every exported name of the
// packages barriers, results, hwtree and cpuset that README.md, docs/
// (docs/lab/ included) and the comments of the repository's Go files
// mention, qualified by its package, is declared there, and a mention of a
// type's member (a method or a field, as in results.File.FloorFor) names
// one that the type has.
package docnames

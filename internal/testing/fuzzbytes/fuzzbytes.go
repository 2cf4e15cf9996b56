/*
Copyright 2026 The provider-cloudsql-postgres Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package fuzzbytes turns a fuzzer's bytes into choices, for the generators of
// the fuzz tests: each byte picks one value, and past the end every choice is
// the first (the common, valid one), so that a short input is a plain object and
// the fuzzer grows it into an odd one.
package fuzzbytes

// Choices draws choices from a fuzzer's bytes.
type Choices struct {
	b []byte
	i int
}

// New draws choices from b.
func New(b []byte) *Choices { return &Choices{b: b} }

// Byte is the next byte, 0 past the end.
func (c *Choices) Byte() int {
	if c.i >= len(c.b) {
		return 0
	}
	c.i++
	return int(c.b[c.i-1])
}

// Intn is a choice among n: 0 to n-1.
func (c *Choices) Intn(n int) int { return c.Byte() % n }

// Pick is one of xs.
func (c *Choices) Pick(xs ...string) string { return xs[c.Intn(len(xs))] }

// Rarely is true one time in sixteen.
func (c *Choices) Rarely() bool { return c.Intn(16) == 15 }

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

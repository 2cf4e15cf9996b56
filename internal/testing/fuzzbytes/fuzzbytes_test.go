package fuzzbytes

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestChoices(t *testing.T) {
	g := NewWithT(t)
	c := New([]byte{5, 17, 15})
	g.Expect(c.Intn(4)).To(Equal(1), "5 mod 4")
	g.Expect(c.Pick("a", "b", "c")).To(Equal("c"), "17 mod 3")
	g.Expect(c.Rarely()).To(BeTrue(), "15 mod 16")
	// Past the end, every choice is the first.
	g.Expect(c.Intn(4)).To(BeZero())
	g.Expect(c.Pick("a", "b")).To(Equal("a"))
	g.Expect(c.Rarely()).To(BeFalse())
}

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

package soak

import (
	"context"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// The short soak of `make test`: 10 instances, 2 imported, the provider
// SIGKILLed four times while they are created, changed, taken over and deleted.
// `make soak` runs the long one.
func TestShortSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("the soak takes minutes")
	}
	g := NewWithT(t)
	r, err := Run(context.Background(), Options{
		Instances: 10, Imports: 2, Quota: 180,
		KillMin: 5 * time.Second, KillMax: 20 * time.Second, MaxKills: 4,
		Timeout: 5 * time.Minute, Log: os.Stderr,
	})
	r.Print(os.Stderr)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(Check(r)).To(Succeed(), "%v", r.Conditions)
	g.Expect(r.Kills).To(BeNumerically(">", 0), "the provider was never killed: the soak proved nothing")
}

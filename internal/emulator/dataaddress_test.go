package emulator

import (
	"net/netip"
	"testing"

	. "github.com/onsi/gomega"
)

func TestDataAddress(t *testing.T) {
	for name, tc := range map[string]struct {
		prefix    netip.Prefix
		h         uint32
		want      string
		wantHosts uint32
	}{
		"LoopbackByDefault":   {h: 2, want: "127.0.0.2", wantHosts: 1<<24 - 3},
		"LoopbackCarriedOver": {h: 258, want: "127.0.1.2", wantHosts: 1<<24 - 3},
		"ARangeTheCallerGave": {prefix: netip.MustParsePrefix("10.253.0.0/24"), h: 2, want: "10.253.0.2", wantHosts: 253},
		"ItsLastHost":         {prefix: netip.MustParsePrefix("10.253.0.0/24"), h: 254, want: "10.253.0.254", wantHosts: 253},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			got, hosts := dataAddress(tc.prefix, tc.h)
			g.Expect(got.String()).To(Equal(tc.want))
			g.Expect(hosts).To(Equal(tc.wantHosts))
		})
	}
}

func TestDataPlaneAddressesRefusesWhatItCannotNumber(t *testing.T) {
	for _, p := range []string{"fd00::/64", "10.0.0.0/31", "10.0.0.1/32"} {
		NewWithT(t).Expect(func() { WithDataPlaneAddresses(netip.MustParsePrefix(p)) }).To(Panic(), p)
	}
	NewWithT(t).Expect(func() { WithDataPlaneAddresses(netip.MustParsePrefix("10.0.0.0/30")) }).NotTo(Panic())
}

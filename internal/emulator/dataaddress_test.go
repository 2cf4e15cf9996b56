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

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

package pause

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestFor(t *testing.T) {
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	cases := map[string]struct {
		ctx  context.Context
		d    time.Duration
		want error
	}{
		"a wait that runs out returns nil":          {ctx: context.Background(), d: time.Millisecond},
		"no wait returns nil, even past its end":    {ctx: ended, d: 0},
		"a negative wait returns nil":               {ctx: context.Background(), d: -time.Second},
		"an ended context ends a long wait at once": {ctx: ended, d: time.Hour, want: context.Canceled},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			err := For(tc.ctx, tc.d)
			if tc.want == nil {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(MatchError(tc.want))
		})
	}
}

package podinject

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestParseAnnotation(t *testing.T) {
	for value, want := range map[string]struct {
		l  lookup
		ok bool
	}{
		"orders":              {lookup{name: "orders"}, true},
		"orders.eu":           {lookup{name: "orders.eu"}, true},
		"team-a/orders":       {lookup{namespace: "team-a", name: "orders"}, true},
		"team-a/":             {lookup{namespace: "team-a"}, false},
		"/orders":             {lookup{name: "orders"}, false},
		"team-a/orders/extra": {lookup{namespace: "team-a", name: "orders/extra"}, false},
		"Orders":              {lookup{name: "Orders"}, false},
		"team.a/orders":       {lookup{namespace: "team.a", name: "orders"}, false},
	} {
		t.Run(value, func(t *testing.T) {
			g := NewWithT(t)
			l, ok := parseAnnotation(value)
			g.Expect(ok).To(Equal(want.ok))
			if ok {
				g.Expect(l).To(Equal(want.l))
			}
		})
	}
}

// The denial of a pod whose annotation names no instance says where the
// injector looked, and which kinds this cluster does not serve.
func TestNotFound(t *testing.T) {
	for name, tc := range map[string]struct {
		value string
		res   resolution
		want  []string
	}{
		"both served": {
			value: "orders", res: resolution{namespacedServed: true, clusterServed: true},
			want: []string{"neither in the pod's namespace team-b (postgresqlinstances.cloudsql.m.travelaudience.com) nor cluster-scoped (postgresqlinstances.cloudsql.travelaudience.com)", "serves only pods of its own namespace"},
		},
		"only the cluster-scoped kind served": {
			value: "orders", res: resolution{clusterServed: true},
			want: []string{"neither in the pod's namespace team-b (that kind is not served in this cluster) nor cluster-scoped (postgresqlinstances.cloudsql.travelaudience.com)"},
		},
		"only the namespaced kind served": {
			value: "orders", res: resolution{namespacedServed: true},
			want: []string{"nor cluster-scoped (that kind is not served in this cluster)"},
		},
		"none served": {
			value: "orders", res: resolution{},
			want: []string{"this cluster serves no PostgresqlInstances"},
		},
		"namespace named, served": {
			value: "team-b/orders", res: resolution{namespacedServed: true},
			want: []string{`names PostgresqlInstance "orders" of namespace team-b (postgresqlinstances.cloudsql.m.travelaudience.com), which does not exist`},
		},
		"namespace named, not served": {
			value: "team-b/orders", res: resolution{clusterServed: true},
			want: []string{"this cluster does not serve namespaced PostgresqlInstances", "activate the ManagedResourceDefinition postgresqlinstances.cloudsql.m.travelaudience.com"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			l, ok := parseAnnotation(tc.value)
			g.Expect(ok).To(BeTrue())
			msg := notFound("team-b/web", "team-b", tc.value, l, tc.res)
			g.Expect(msg).To(HavePrefix("pod team-b/web: "))
			for _, w := range tc.want {
				g.Expect(msg).To(ContainSubstring(w))
			}
		})
	}
}

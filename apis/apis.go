// Package apis holds the API groups of provider-cloudsql-postgres.
package apis

import (
	"k8s.io/apimachinery/pkg/runtime"

	namespacedv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// AddToScheme adds every API group of this provider to a scheme.
func AddToScheme(s *runtime.Scheme) error {
	if err := v1alpha1.SchemeBuilder.AddToScheme(s); err != nil {
		return err
	}
	return namespacedv1alpha1.SchemeBuilder.AddToScheme(s)
}

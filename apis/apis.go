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

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

package composepg

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The apiVersion and kind of the function's input, the input of a Composition's
// pipeline step that calls the function.
const (
	InputAPIVersion = "cloudsql.fn.travelaudience.com/v1alpha1"
	InputKind       = "Input"
)

// Fields of the function's input, as platform teams write them in a Composition.
const (
	FieldInputSharedInstance  = "input.sharedInstance"
	FieldInputClusterInstance = "input.sharedInstance.clusterInstance"
	FieldInputInstance        = "input.sharedInstance.instance"
)

// Input is the function's input, which the platform team writes in the
// Composition. Without one (or without sharedInstance) every composite gets a
// PostgresqlInstance of its own.
type Input struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// SharedInstance, when set, gives each composite a PostgresqlDatabase and
	// a PostgresqlUser that owns it on this PostgresqlInstance, which the
	// platform runs, instead of an instance of its own.
	SharedInstance *SharedInstance `json:"sharedInstance,omitempty"`
}

// SharedInstance names the PostgresqlInstance that composites share: exactly
// one of its fields is set. They are named as the instance fields of
// PostgresqlDatabase and PostgresqlUser are.
type SharedInstance struct {
	// ClusterInstance is the metadata.name of a cluster-scoped
	// PostgresqlInstance. A namespaced composite may use it only if the
	// instance's spec.injection admits the composite's namespace.
	ClusterInstance string `json:"clusterInstance,omitempty"`
	// Instance is the metadata.name of a namespaced PostgresqlInstance in the
	// namespace of each composite; only namespaced composites can have one.
	Instance string `json:"instance,omitempty"`
}

// Messages of the errors in the function's input. They are the platform team's
// to fix, in the Composition.
const (
	errReadInput          = "cannot read the function's input (the Composition's pipeline step input): %s; write apiVersion: " + InputAPIVersion + ", kind: " + InputKind + " and, for shared instances, sharedInstance.clusterInstance or sharedInstance.instance"
	errInputKind          = "the function's input is apiVersion %q, kind %q, which is not this function's: write apiVersion: " + InputAPIVersion + ", kind: " + InputKind
	errSharedNone         = FieldInputSharedInstance + " names no PostgresqlInstance: set clusterInstance to the name of a cluster-scoped PostgresqlInstance or, for namespaced composites, instance to the name of a PostgresqlInstance in each composite's namespace; or remove sharedInstance to give each composite an instance of its own"
	errSharedBoth         = FieldInputSharedInstance + " names both clusterInstance %q and instance %q: a database belongs to one PostgresqlInstance; keep one of them"
	errSharedBadName      = "%s %q is not the name of a PostgresqlInstance: use lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"
	errSharedNotNamespace = FieldInputInstance + " %q names a namespaced PostgresqlInstance, which the cluster-scoped %s %s cannot use: name a cluster-scoped PostgresqlInstance with clusterInstance in this Composition"
)

// ParseInput reads and checks the function's input from req. A request without
// input is an Input without sharedInstance. The error, if any, is meant for the
// platform team that wrote the Composition.
func ParseInput(req *fnv1.RunFunctionRequest) (Input, error) {
	in := Input{}
	if len(req.GetInput().GetFields()) == 0 {
		return in, nil
	}
	j, err := protojson.Marshal(req.GetInput())
	if err != nil {
		return Input{}, errors.Errorf(errReadInput, err.Error())
	}
	// A misspelt field would otherwise silently give every composite an
	// instance of its own.
	d := json.NewDecoder(bytes.NewReader(j))
	d.DisallowUnknownFields()
	if err := d.Decode(&in); err != nil {
		return Input{}, errors.Errorf(errReadInput, strings.TrimPrefix(err.Error(), "json: "))
	}
	if in.APIVersion != InputAPIVersion || in.Kind != InputKind {
		return Input{}, errors.Errorf(errInputKind, in.APIVersion, in.Kind)
	}
	if s := in.SharedInstance; s != nil {
		switch {
		case s.ClusterInstance == "" && s.Instance == "":
			return Input{}, errors.New(errSharedNone)
		case s.ClusterInstance != "" && s.Instance != "":
			return Input{}, errors.Errorf(errSharedBoth, s.ClusterInstance, s.Instance)
		case s.ClusterInstance != "" && len(validation.IsDNS1123Subdomain(s.ClusterInstance)) > 0:
			return Input{}, errors.Errorf(errSharedBadName, FieldInputClusterInstance, s.ClusterInstance)
		case s.Instance != "" && len(validation.IsDNS1123Subdomain(s.Instance)) > 0:
			return Input{}, errors.Errorf(errSharedBadName, FieldInputInstance, s.Instance)
		}
	}
	return in, nil
}

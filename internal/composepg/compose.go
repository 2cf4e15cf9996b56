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
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
)

// ResourceName names the PostgresqlInstance in the pipeline's desired and observed
// state. Changing it would make Crossplane replace the instance, so it is part of the
// function's contract.
const ResourceName resource.Name = "postgresqlinstance"

// SecretSuffix follows the composite's name in the name of the instance's
// connection secret, as in the examples of PostgresqlInstance.
const SecretSuffix = "-postgres"

// DefaultConnectionSecretNamespace holds the instances' connection secrets when
// neither the composite nor the function's options say otherwise; it is where
// Crossplane itself runs, which application teams usually cannot read.
const DefaultConnectionSecretNamespace = "crossplane-system"

// Connection details the composite (and its claim's secret) receives from the
// instance's connection secret. They are keys of that secret (see
// internal/clients/cloudsql); the rest of it (the pgpass line, the CA, both IPs)
// stays with the instance.
const (
	ConnectionDetailConnectionName = "connectionName"
	ConnectionDetailEndpoint       = "endpoint"
	ConnectionDetailPort           = "port"
	ConnectionDetailUsername       = "username"
	ConnectionDetailPassword       = "password"
)

// ConnectionDetailKeys are the connection details passed on, in the order the
// XRD's connectionSecretKeys lists them.
var ConnectionDetailKeys = []string{
	ConnectionDetailConnectionName,
	ConnectionDetailEndpoint,
	ConnectionDetailPort,
	ConnectionDetailUsername,
	ConnectionDetailPassword,
}

// Compose returns the PostgresqlInstance that p asks for. observed is the instance
// as it exists, or nil before it is created: a change the instance cannot take
// (another version or region, private networking undone) is an error for the user
// rather than an update the API server refuses, and the disk never shrinks when a
// composite moves to a smaller size.
func Compose(p Parameters, observed *v1alpha1.PostgresqlInstance) (*v1alpha1.PostgresqlInstance, error) {
	fp, err := ForProvider(p, parametersOf(observed))
	if err != nil {
		return nil, err
	}

	pi := &v1alpha1.PostgresqlInstance{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.PostgresqlInstanceKind},
		ObjectMeta: metav1.ObjectMeta{
			// Deleting the claim is how a team gives its database back, so the
			// webhook's guard against deleting instances by accident must not
			// block it; deletionPolicy says whether the data goes too.
			Annotations: map[string]string{v1alpha1.AnnotationAllowDeletion: "true"},
		},
		Spec: v1alpha1.PostgresqlInstanceSpec{ForProvider: fp},
	}
	pi.SetDeletionPolicy(p.DeletionPolicy)
	pi.SetWriteConnectionSecretToReference(&xpv2.SecretReference{
		Name:      p.Name + SecretSuffix,
		Namespace: p.ConnectionSecretNamespace,
	})
	if p.AllowedNamespaces != nil {
		pi.Spec.Injection = &v1alpha1.Injection{AllowedNamespaces: p.AllowedNamespaces}
	}
	return pi, nil
}

// ForProvider returns the settings of the Cloud SQL instance that p asks for, which
// both PostgresqlInstance kinds share. was holds the existing instance's settings,
// or nil before it is created: a change the instance cannot take (a lower version,
// another region, private networking undone) is an error for the user rather than an
// update the API server refuses, and the disk never shrinks when a composite moves
// to a smaller size.
func ForProvider(p Parameters, was *v1alpha1.PostgresqlInstanceParameters) (v1alpha1.PostgresqlInstanceParameters, error) {
	shape := Shapes[p.Size]
	disk := v1alpha1.Disk{
		SizeMinimumGb: shape.DiskMinimumGb,
		SizeMaximumGb: shape.DiskMaximumGb,
		Type:          v1alpha1.DiskTypeSSD,
	}

	if was != nil {
		if was.Version != "" && cloudsql.IsUpgrade(cloudsql.DatabaseVersion(p.Version), cloudsql.DatabaseVersion(was.Version)) {
			// Up is a guarded upgrade in place; down, never.
			return v1alpha1.PostgresqlInstanceParameters{}, errors.Errorf(errVersionDown, was.Version, p.Version, p.owner())
		}
		if was.Location.Region != "" && was.Location.Region != p.Region {
			return v1alpha1.PostgresqlInstanceParameters{}, errors.Errorf(errRegionImmutable, was.Location.Region, p.Region, p.owner())
		}
		if was.Networking.PrivateIP.Enabled && p.Networking != NetworkingPrivate {
			return v1alpha1.PostgresqlInstanceParameters{}, errors.New(errPrivateIPPermanent)
		}
		// Cloud SQL cannot shrink a disk: a smaller size keeps the disk it has,
		// and its limit is raised to match, which turns automatic growth off
		// rather than asking for a maximum below the minimum.
		disk.SizeMinimumGb = max(disk.SizeMinimumGb, was.Resources.Disk.SizeMinimumGb)
		disk.SizeMaximumGb = max(disk.SizeMaximumGb, disk.SizeMinimumGb)
	}

	return v1alpha1.PostgresqlInstanceParameters{
		Version:      p.Version,
		Edition:      v1alpha1.EditionEnterprise,
		Availability: v1alpha1.Availability{Type: shape.Availability},
		Location:     v1alpha1.Location{Region: p.Region, Zone: v1alpha1.Any},
		Networking:   networking(p),
		Resources:    v1alpha1.Resources{InstanceType: shape.InstanceType, Disk: disk},
	}, nil
}

// anyInstance is a pointer to either PostgresqlInstance kind, both of which hold their
// Cloud SQL settings in the same type. It is a pointer type rather than an interface
// value so that parametersOf sees a nil instance as nil.
type anyInstance[T any] interface {
	*T
	Parameters() *v1alpha1.PostgresqlInstanceParameters
}

// parametersOf returns the settings of observed, an instance of either kind, or nil
// when there is none yet, as ForProvider takes them.
func parametersOf[T any, I anyInstance[T]](observed I) *v1alpha1.PostgresqlInstanceParameters {
	if observed == nil {
		return nil
	}
	return observed.Parameters()
}

// networking is the PostgresqlInstance's networking for p. Public instances get no
// authorized networks: the Cloud SQL Auth Proxy, which the injector adds to pods,
// needs none, and nothing else should reach the database from the internet.
func networking(p Parameters) v1alpha1.Networking {
	if p.Networking == NetworkingPrivate {
		return v1alpha1.Networking{PrivateIP: v1alpha1.PrivateIP{Enabled: true, Network: p.Network}}
	}
	return v1alpha1.Networking{PublicIP: v1alpha1.PublicIP{Enabled: true}}
}

// Ready is whether the composed instance counts as ready: when Crossplane observed
// it with condition Ready True, that is, when Cloud SQL reports it RUNNABLE.
// Crossplane does not look at composed resources' conditions itself: a composite is
// ready when every resource the pipeline returns is marked ready.
func Ready(observed *composed.Unstructured) resource.Ready {
	if observed == nil || observed.GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue {
		return resource.ReadyFalse
	}
	return resource.ReadyTrue
}

// ConnectionDetailsFrom picks the connection details the composite passes on from
// those of the observed instance. Keys the instance has not published yet are
// left out rather than passed on empty, so that a claim's secret never holds an
// empty password.
func ConnectionDetailsFrom(observed resource.ConnectionDetails) resource.ConnectionDetails {
	out := resource.ConnectionDetails{}
	for _, k := range ConnectionDetailKeys {
		if v, ok := observed[k]; ok && len(v) > 0 {
			out[k] = v
		}
	}
	return out
}

// AsComposed converts a PostgresqlInstance (of either kind) or a Secret into the
// unstructured form the pipeline returns, leaving out every field that is not set,
// so that Crossplane's server-side apply claims only the fields the function has an
// opinion on.
func AsComposed(o runtime.Object) (*composed.Unstructured, error) {
	u, err := composed.From(o)
	if err != nil {
		return nil, err
	}
	// The observation's integers have no omitempty that go-json-experiment
	// honours for zero numbers; the provider, not the function, owns status.
	delete(u.Object, "status")
	return u, nil
}

// composed.From finds an object's kind in composed.Scheme, which starts empty: the
// function adds both PostgresqlInstance kinds and the Secret.
func init() {
	for _, add := range []func(*runtime.Scheme) error{v1alpha1.SchemeBuilder.AddToScheme, nsv1alpha1.SchemeBuilder.AddToScheme, corev1.AddToScheme} {
		if err := add(composed.Scheme); err != nil {
			panic(err)
		}
	}
}

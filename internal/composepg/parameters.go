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
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/resource/composite"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// A Size is a named set of instance type, disk and availability, so that teams ask
// for "medium" rather than learning Cloud SQL's machine types.
type Size string

// The sizes a composite may ask for.
const (
	SizeSmall  Size = "small"
	SizeMedium Size = "medium"
	SizeLarge  Size = "large"
)

// A Shape is what a Size means for the PostgresqlInstance.
type Shape struct {
	// InstanceType is the Cloud SQL machine type.
	InstanceType string
	// DiskMinimumGb is the disk provisioned at creation.
	DiskMinimumGb int32
	// DiskMaximumGb caps automatic storage growth.
	DiskMaximumGb int32
	// Availability is Zonal or Regional (a standby in another zone).
	Availability string
}

// Shapes are the defaults per size. Small and medium are zonal because they are
// meant for development and services that tolerate minutes of downtime; large pays
// for a standby. The disks grow automatically up to five (small, medium) or ten
// (large) times what they start with, so that a growing database does not page
// anyone, while a runaway one cannot grow the bill without limit.
var Shapes = map[Size]Shape{
	SizeSmall:  {InstanceType: "db-custom-1-3840", DiskMinimumGb: 10, DiskMaximumGb: 50, Availability: v1alpha1.AvailabilityZonal},
	SizeMedium: {InstanceType: "db-custom-2-7680", DiskMinimumGb: 50, DiskMaximumGb: 250, Availability: v1alpha1.AvailabilityZonal},
	SizeLarge:  {InstanceType: "db-custom-4-15360", DiskMinimumGb: 100, DiskMaximumGb: 1000, Availability: v1alpha1.AvailabilityRegional},
}

// Networking is how the composed instance can be reached.
type Networking string

// The kinds of networking a composite may ask for.
const (
	// NetworkingPublic gives the instance a public IP with no authorized networks:
	// only the Cloud SQL Auth Proxy (which the injector adds) can connect.
	NetworkingPublic Networking = "public"
	// NetworkingPrivate gives the instance only a private IP in a VPC network.
	NetworkingPrivate Networking = "private"
)

// Defaults for fields the composite leaves out. The XRD in examples/composition
// declares the same defaults, so that users see them with kubectl; these apply when
// a composite reaches the function without them (an XRD of the platform team's
// own, or crossplane render without --xrd).
const (
	DefaultSize           = SizeSmall
	DefaultRegion         = "europe-west1"
	DefaultVersion        = "18"
	DefaultNetworking     = NetworkingPublic
	DefaultDeletionPolicy = xpv2.DeletionDelete
)

// Versions are the PostgreSQL major versions offered to teams: those Cloud SQL
// supports without extended-support charges. PostgresqlInstance itself accepts
// older ones, for instances that are imported rather than composed.
var Versions = []string{"14", "15", "16", "17", "18"}

// Fields of the composite's spec, as users write them.
const (
	FieldSize              = "spec.size"
	FieldRegion            = "spec.region"
	FieldVersion           = "spec.version"
	FieldNetworking        = "spec.networking"
	FieldNetwork           = "spec.network"
	FieldAllowedNamespaces = "spec.allowedNamespaces"
	FieldDeletionPolicy    = "spec.deletionPolicy"
)

// Messages of the errors a user can cause. Each names the field and says what to do.
// Where a message tells the team what to create or delete, %s is what it created:
// "claim" for a claimed composite, the kind of a namespaced composite.
const (
	errNotString          = "%s must be a string, not %v: quote it, for example %s: %q"
	errBadSize            = "spec.size %q is not a size: use small, medium or large"
	errBadRegion          = "spec.region %q is not a Google Cloud region: use one such as europe-west1"
	errBadVersion         = "spec.version %q is not offered: use one of %s"
	errBadNetworking      = "spec.networking %q is not a kind of networking: use public or private"
	errNoNetwork          = "spec.network is required when spec.networking is private: give the VPC network as projects/<project-id>/global/networks/<network-name>"
	errNetworkNotPrivate  = "spec.network may only be set when spec.networking is private: remove it, or set networking: private"
	errBadNetwork         = "spec.network %q is not a VPC network resource link: use projects/<project-id>/global/networks/<network-name>"
	errNamespacesNotList  = "spec.allowedNamespaces must be a list of namespace names, not %v"
	errNoNamespaces       = "spec.allowedNamespaces is empty, which would let no pod use the database: list namespaces, [\"*\"] for all, or remove it to allow the claim's namespace"
	errBadNamespace       = "spec.allowedNamespaces[%d] %v is not a namespace name: use lowercase letters, digits and '-', or \"*\" alone for every namespace"
	errStarNotAlone       = "spec.allowedNamespaces lists \"*\" with other namespaces: \"*\" already allows every namespace, so list either \"*\" alone or namespace names"
	errBadDeletionPolicy  = "spec.deletionPolicy %q is not a deletion policy: use Delete (the Cloud SQL instance goes with the %s) or Orphan (it stays)"
	errBadCompositeName   = "metadata.name %q of the composite cannot start a Cloud SQL instance name: it must start with a lowercase letter and hold only lowercase letters, digits and '-' (for a claim, rename the claim)"
	errCompositeNameLong  = "metadata.name %q of the composite is longer than %d characters: give it (or its claim) a shorter name"
	errVersionDown        = "spec.version cannot go down from %s to %s: Cloud SQL upgrades a major version in place but never downgrades; to go back, restore the backup taken before the upgrade into a new %s"
	errRegionImmutable    = "spec.region cannot change from %s to %s: a Cloud SQL instance cannot move; create a new %s in the new region and migrate the data"
	errPrivateIPPermanent = "spec.networking cannot change from private to public: Cloud SQL cannot remove a private IP once the instance has one; set networking: private again"

	errBadNamespacedName      = "metadata.name %q of %s %s cannot start a Cloud SQL instance name: it must start with a lowercase letter and hold only lowercase letters, digits and '-'; create the %s again under such a name"
	errNamespacedNameLong     = "metadata.name %q of %s %s is longer than %d characters: create the %s again under a shorter name"
	errNamespacedAllowedNSSet = "spec.allowedNamespaces of %s %s/%s cannot be set: its PostgresqlInstance is namespaced and serves only pods of namespace %s; remove the field, and create the %s in the namespace of the pods that use it"
)

// ownerClaim is how messages about a claimed (cluster-scoped) composite name what
// the team created.
const ownerClaim = "claim"

// maxCompositeName keeps the name of the connection secret, the composite's name
// plus SecretSuffix, within the 253 characters of a Kubernetes name.
const maxCompositeName = validation.DNS1123SubdomainMaxLength - len(SecretSuffix)

// maxNamespacedCompositeName keeps both secrets of a namespaced composite, its name
// plus ConnectionSecretSuffix or InstanceSecretSuffix (the longer), within the 253
// characters of a Kubernetes name.
const maxNamespacedCompositeName = validation.DNS1123SubdomainMaxLength - len(InstanceSecretSuffix)

// The same rules as the PostgresqlInstance CRD's, checked here so that a mistake is
// reported on the claim, in the claim's terms.
var (
	regionPattern  = regexp.MustCompile(`^[a-z]+-[a-z]+[0-9]+$`)
	networkPattern = regexp.MustCompile(`^projects/([a-z][a-z0-9.-]*[a-z0-9]:)?[a-z][a-z0-9-]{4,28}[a-z0-9]/global/networks/[a-z]([-a-z0-9]{0,61}[a-z0-9])?$`)
	// namePrefixPattern is what a composite's name must look like to prefix the
	// generated name of a PostgresqlInstance, which is also the Cloud SQL name.
	namePrefixPattern = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
)

// Parameters are what a composite resource asks for, with defaults applied.
type Parameters struct {
	// Name of the composite resource.
	Name string
	// Size of the instance.
	Size Size
	// Region of the instance.
	Region string
	// Version is the PostgreSQL major version.
	Version string
	// Networking is public or private.
	Networking Networking
	// Network is the VPC network for private networking.
	Network string
	// AllowedNamespaces may request the instance through the injector; nil leaves
	// the decision to the provider's configuration.
	AllowedNamespaces []string
	// DeletionPolicy of the instance.
	DeletionPolicy xpv2.DeletionPolicy
	// ConnectionSecretNamespace is where the instance's connection secret goes.
	ConnectionSecretNamespace string
	// Namespace of a namespaced composite, where everything it composes goes; ""
	// for a cluster-scoped composite.
	Namespace string
	// Kind of the composite, which messages to the owner of a namespaced
	// composite name it by.
	Kind string
}

// owner is how messages name what the team created, and would create again: the
// claim of a cluster-scoped composite, or the namespaced composite itself.
func (p Parameters) owner() string {
	if p.Namespace == "" {
		return ownerClaim
	}
	return p.Kind
}

// Parse reads and checks the spec of a composite resource. defaultSecretNamespace is
// where the instance's connection secret goes unless the composite writes its own
// connection secret to a namespace (which Crossplane sets from the Composition's
// writeConnectionSecretsToNamespace). The error, if any, is meant for the user.
func Parse(xr *composite.Unstructured, defaultSecretNamespace string) (Parameters, error) {
	p := Parameters{Name: xr.GetName(), Kind: xr.GetKind()}
	if err := checkCompositeName(p.Name); err != nil {
		return Parameters{}, err
	}
	p, err := parseSpec(xr, p)
	if err != nil {
		return Parameters{}, err
	}

	if p.AllowedNamespaces, err = allowedNamespaces(xr); err != nil {
		return Parameters{}, err
	}

	p.ConnectionSecretNamespace = defaultSecretNamespace
	if ref := xr.GetWriteConnectionSecretToReference(); ref != nil && ref.Namespace != "" {
		p.ConnectionSecretNamespace = ref.Namespace
	}
	return p, nil
}

// ParseNamespaced reads and checks the spec of a namespaced composite resource
// (apiextensions.crossplane.io/v2, scope Namespaced; see
// examples/composition/definition-v2.yaml), whose PostgresqlInstance and Secrets go
// into the composite's own namespace. It has no allowedNamespaces: a namespaced
// PostgresqlInstance serves only pods of its namespace. The error, if any, is meant
// for the user.
func ParseNamespaced(xr *composite.Unstructured) (Parameters, error) {
	p := Parameters{Name: xr.GetName(), Namespace: xr.GetNamespace(), Kind: xr.GetKind(), ConnectionSecretNamespace: xr.GetNamespace()}
	if p.Kind == "" {
		// Crossplane always sends the kind; a hand-made request may not.
		p.Kind = "composite resource"
	}
	ref := p.Namespace + "/" + p.Name
	if !namePrefixPattern.MatchString(p.Name) {
		return Parameters{}, errors.Errorf(errBadNamespacedName, p.Name, p.Kind, ref, p.Kind)
	}
	if len(p.Name) > maxNamespacedCompositeName {
		return Parameters{}, errors.Errorf(errNamespacedNameLong, p.Name, p.Kind, ref, maxNamespacedCompositeName, p.Kind)
	}
	if v, err := xr.GetValue(FieldAllowedNamespaces); err == nil && v != nil {
		// An XRD of the platform team's own may still declare the field;
		// silently ignoring it would let a team believe other namespaces may
		// use the database.
		return Parameters{}, errors.Errorf(errNamespacedAllowedNSSet, p.Kind, p.Namespace, p.Name, p.Namespace, p.Kind)
	}
	return parseSpec(xr, p)
}

// parseSpec reads and checks the spec fields that every composite has into p.
func parseSpec(xr *composite.Unstructured, p Parameters) (Parameters, error) {
	var err error
	var size, networking, policy string
	fields := []struct {
		path string
		into *string
		def  string
	}{
		{FieldSize, &size, string(DefaultSize)},
		{FieldRegion, &p.Region, DefaultRegion},
		{FieldVersion, &p.Version, DefaultVersion},
		{FieldNetworking, &networking, string(DefaultNetworking)},
		{FieldNetwork, &p.Network, ""},
		{FieldDeletionPolicy, &policy, string(DefaultDeletionPolicy)},
	}
	for _, f := range fields {
		if *f.into, err = optionalString(xr, f.path, f.def); err != nil {
			return Parameters{}, err
		}
	}

	p.Size = Size(size)
	if _, ok := Shapes[p.Size]; !ok {
		return Parameters{}, errors.Errorf(errBadSize, size)
	}
	if !regionPattern.MatchString(p.Region) || len(p.Region) > 32 {
		return Parameters{}, errors.Errorf(errBadRegion, p.Region)
	}
	if !slices.Contains(Versions, p.Version) {
		return Parameters{}, errors.Errorf(errBadVersion, p.Version, strings.Join(Versions, ", "))
	}

	p.Networking = Networking(networking)
	switch {
	case p.Networking != NetworkingPublic && p.Networking != NetworkingPrivate:
		return Parameters{}, errors.Errorf(errBadNetworking, networking)
	case p.Networking == NetworkingPrivate && p.Network == "":
		return Parameters{}, errors.New(errNoNetwork)
	case p.Networking == NetworkingPublic && p.Network != "":
		return Parameters{}, errors.New(errNetworkNotPrivate)
	case p.Network != "" && (!networkPattern.MatchString(p.Network) || len(p.Network) > 128):
		return Parameters{}, errors.Errorf(errBadNetwork, p.Network)
	}

	p.DeletionPolicy = xpv2.DeletionPolicy(policy)
	if p.DeletionPolicy != xpv2.DeletionDelete && p.DeletionPolicy != xpv2.DeletionOrphan {
		return Parameters{}, errors.Errorf(errBadDeletionPolicy, policy, p.owner())
	}
	return p, nil
}

// checkCompositeName reports whether name can prefix the generated name of the
// PostgresqlInstance: Crossplane names composed resources <composite>-<random>, and
// the provider names the Cloud SQL instance after the PostgresqlInstance.
func checkCompositeName(name string) error {
	if !namePrefixPattern.MatchString(name) {
		return errors.Errorf(errBadCompositeName, name)
	}
	if len(name) > maxCompositeName {
		return errors.Errorf(errCompositeNameLong, name, maxCompositeName)
	}
	return nil
}

// optionalString returns the string at path, or def when the path is absent.
func optionalString(xr *composite.Unstructured, path, def string) (string, error) {
	v, err := xr.GetValue(path)
	if err != nil || v == nil {
		// Only a missing field fails to be read from a well-formed object.
		return def, nil // absent means default
	}
	s, ok := v.(string)
	if !ok {
		return "", errors.Errorf(errNotString, path, v, path[strings.LastIndex(path, ".")+1:], fmt.Sprint(v))
	}
	return s, nil
}

// allowedNamespaces returns the namespaces the composite allows, else the claim's
// namespace, else nil (the provider's configuration decides). Defaulting to the
// claim's namespace keeps one team's database out of other teams' pods, which the
// provider's own default (every namespace) would not.
func allowedNamespaces(xr *composite.Unstructured) ([]string, error) {
	v, err := xr.GetValue(FieldAllowedNamespaces)
	if err != nil || v == nil {
		if ns := claimNamespace(xr); ns != "" {
			return []string{ns}, nil
		}
		return nil, nil // absent means default
	}
	list, ok := v.([]any)
	if !ok {
		return nil, errors.Errorf(errNamespacesNotList, v)
	}
	if len(list) == 0 {
		// An empty list would become injection: {}, which allows no namespace;
		// nobody asks for a database that no pod may use.
		return nil, errors.New(errNoNamespaces)
	}
	out := make([]string, 0, len(list))
	for i, item := range list {
		s, ok := item.(string)
		if !ok || (s != "*" && len(validation.IsDNS1123Label(s)) > 0) {
			return nil, errors.Errorf(errBadNamespace, i, item)
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if slices.Contains(out, "*") && len(out) > 1 {
		return nil, errors.New(errStarNotAlone)
	}
	return out, nil
}

// claimNamespace is the namespace of the composite's claim, or "" when it has none.
func claimNamespace(xr *composite.Unstructured) string {
	if ref := xr.GetClaimReference(); ref != nil && ref.Namespace != "" {
		return ref.Namespace
	}
	// Crossplane labels composites with their claim too; the reference is missing
	// only briefly, but the label survives copies that drop spec.claimRef.
	return xr.GetLabels()[LabelClaimNamespace]
}

// LabelClaimNamespace is the label Crossplane sets on a claimed composite.
const LabelClaimNamespace = "crossplane.io/claim-namespace"

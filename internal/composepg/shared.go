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
	"slices"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
)

// Names of the PostgresqlUser and the PostgresqlDatabase in the pipeline's desired
// and observed state, when the Composition's input names a shared instance.
// Changing them would make Crossplane replace both, so they are part of the
// function's contract.
const (
	ResourceNameUser     resource.Name = "postgresqluser"
	ResourceNameDatabase resource.Name = "postgresqldatabase"
)

// UserSecretSuffix follows a namespaced composite's name in the name of its
// PostgresqlUser's own connection secret, which the provider writes (with the
// pgpass line, the CA and both IPs besides); it must not be the team's Secret,
// which the function owns.
const UserSecretSuffix = "-postgresqluser"

// Where a composite on a shared instance shows the names of its PostgresqlUser,
// which pods give in the annotation cloudsql.travelaudience.com/postgresqluser-name,
// and of its PostgresqlDatabase, which is also the database's name in PostgreSQL.
const (
	FieldStatusUserName     = "status.userName"
	FieldStatusDatabaseName = "status.databaseName"
)

// ConnectionDetailDatabase is the connection detail that names the database the
// user owns, a key of the user's connection secret.
const ConnectionDetailDatabase = cloudsql.ConnectionKeyDatabase

// SharedConnectionDetailKeys are the connection details that a composite on a
// shared instance passes on from its PostgresqlUser: those of an instance of its
// own, here with the user's login and password, and the database it owns.
var SharedConnectionDetailKeys = append(slices.Clone(ConnectionDetailKeys), ConnectionDetailDatabase)

// generatedSuffix is what Crossplane appends to a composite's name to name what it
// composes: '-' and five random characters.
const generatedSuffix = len("-xxxxx")

// maxPostgresName is the longest name of a PostgreSQL role or database.
const maxPostgresName = 63

// maxSharedCompositeName keeps the names of the PostgresqlUser and the
// PostgresqlDatabase, which are also their names in PostgreSQL, within 63
// characters.
const maxSharedCompositeName = maxPostgresName - generatedSuffix

// Messages of the errors of composites on a shared instance.
const (
	errSharedNameLong           = "metadata.name %q of the composite is longer than %d characters: its PostgresqlUser and PostgresqlDatabase are named after it, and PostgreSQL names hold at most 63 characters; give it (or its claim) a shorter name"
	errSharedNamespacedNameLong = "metadata.name %q of %s %s is longer than %d characters: its PostgresqlUser and PostgresqlDatabase are named after it, and PostgreSQL names hold at most 63 characters; create the %s again under a shorter name"
	errSharedHasOwnInstance     = "the Composition now asks for a database on the shared %s, but this %s has a PostgresqlInstance of its own, %s, which composing the database would delete with its data: select a Composition without sharedInstance for it (spec.compositionRef), or create a new %s and migrate the data"
	errOwnInstanceWasShared     = "the Composition now asks for a PostgresqlInstance of its own, but this %s has the %s %s on the shared %s, which composing an instance would delete with its data: select a Composition with that sharedInstance for it (spec.compositionRef), or create a new %s and migrate the data"
	errSharedMoved              = "the Composition now names the shared %s, but the %s %s of this %s is on the %s and cannot move: name that instance in the Composition's input again, or create a new %s and migrate the data"
	errConvertShared            = "cannot convert the composed %s for the response"
)

// name is the name of the PostgresqlInstance that s names.
func (s SharedInstance) name() string {
	if s.ClusterInstance != "" {
		return s.ClusterInstance
	}
	return s.Instance
}

// describe is how messages name the PostgresqlInstance that s names, for a
// composite in namespace ns.
func (s SharedInstance) describe(ns string) string {
	if s.ClusterInstance != "" || ns == "" {
		return "cluster-scoped PostgresqlInstance " + s.name()
	}
	return "PostgresqlInstance " + s.Instance + " of namespace " + ns
}

// ComposeShared returns the cluster-scoped PostgresqlUser and PostgresqlDatabase
// that p, the parameters of a claimed composite, asks for on the cluster-scoped
// PostgresqlInstance s.ClusterInstance. owner is the metadata.name of the composed
// PostgresqlUser once Crossplane has created it, "" before.
//
// The user writes its connection secret where an instance of the composite's own
// would (<composite>-postgres), so that the composite passes on the user's
// credentials; the pods of the namespaces that the composite allows (its claim's,
// by default) may request it, among those that the instance allows.
func ComposeShared(p Parameters, s SharedInstance, owner string) (*v1alpha1.PostgresqlUser, *v1alpha1.PostgresqlDatabase) {
	u := &v1alpha1.PostgresqlUser{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.PostgresqlUserKind},
		Spec: v1alpha1.PostgresqlUserSpec{
			WriteConnectionSecretToReference: &xpv2.SecretReference{Name: p.Name + SecretSuffix, Namespace: p.ConnectionSecretNamespace},
			DeletionPolicy:                   p.DeletionPolicy,
			ForProvider: v1alpha1.PostgresqlUserParameters{
				Instance:               s.ClusterInstance,
				PostgresqlUserSettings: v1alpha1.PostgresqlUserSettings{Type: v1alpha1.UserTypeBuiltIn},
			},
		},
	}
	// A user's own allow-list cannot hold "*": without one, the instance's
	// allow-list decides, which is what "*" asks for.
	if len(p.AllowedNamespaces) > 0 && !slices.Contains(p.AllowedNamespaces, "*") {
		u.Spec.ForProvider.Injection = &v1alpha1.UserInjection{AllowedNamespaces: p.AllowedNamespaces}
	}

	d := &v1alpha1.PostgresqlDatabase{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.PostgresqlDatabaseKind},
		ObjectMeta: metav1.ObjectMeta{Annotations: allowDeletion()},
		Spec: v1alpha1.PostgresqlDatabaseSpec{
			DeletionPolicy: p.DeletionPolicy,
			ForProvider: v1alpha1.PostgresqlDatabaseParameters{
				Instance: s.ClusterInstance,
				Owner:    owner,
				// Until the user exists its generated name is unknown: the
				// provider resolves the owner to the PostgresqlUser that the
				// same composite controls, and creates no database before.
				OwnerSelector: &xpv2.Selector{MatchControllerRef: ptr.To(true)},
			},
		},
	}
	return u, d
}

// ComposeSharedNamespaced returns the namespaced PostgresqlUser and
// PostgresqlDatabase that p, the parameters of a namespaced composite, asks for in
// its namespace, on the cluster-scoped PostgresqlInstance s.ClusterInstance (whose
// spec.injection must admit the namespace) or on the PostgresqlInstance s.Instance
// of the namespace. owner is the metadata.name of the composed PostgresqlUser once
// Crossplane has created it, "" before. The user's own connection secret is
// <composite>-postgresqluser; ConnectionSecret composes the team's.
func ComposeSharedNamespaced(p Parameters, s SharedInstance, owner string) (*nsv1alpha1.PostgresqlUser, *nsv1alpha1.PostgresqlDatabase) {
	u := &nsv1alpha1.PostgresqlUser{
		TypeMeta:   metav1.TypeMeta{APIVersion: nsv1alpha1.SchemeGroupVersion.String(), Kind: nsv1alpha1.PostgresqlUserKind},
		ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace},
		Spec: nsv1alpha1.PostgresqlUserSpec{
			WriteConnectionSecretToReference: &xpv2.LocalSecretReference{Name: p.Name + UserSecretSuffix},
			ForProvider: nsv1alpha1.PostgresqlUserParameters{
				Instance:               s.Instance,
				ClusterInstance:        s.ClusterInstance,
				PostgresqlUserSettings: v1alpha1.PostgresqlUserSettings{Type: v1alpha1.UserTypeBuiltIn},
			},
		},
	}
	d := &nsv1alpha1.PostgresqlDatabase{
		TypeMeta:   metav1.TypeMeta{APIVersion: nsv1alpha1.SchemeGroupVersion.String(), Kind: nsv1alpha1.PostgresqlDatabaseKind},
		ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Annotations: allowDeletion()},
		Spec: nsv1alpha1.PostgresqlDatabaseSpec{
			ForProvider: nsv1alpha1.PostgresqlDatabaseParameters{
				Instance:        s.Instance,
				ClusterInstance: s.ClusterInstance,
				Owner:           owner,
				OwnerSelector:   &xpv2.NamespacedSelector{MatchControllerRef: ptr.To(true)},
			},
		},
	}
	// The namespaced kinds have no deletion policy; Delete leaves the CRDs'
	// default, every action.
	if p.DeletionPolicy == xpv2.DeletionOrphan {
		u.SetManagementPolicies(orphanPolicies)
		d.SetManagementPolicies(orphanPolicies)
	}
	return u, d
}

// allowDeletion lets the provider drop the composed database: deleting the
// composite is how a team gives its database back, so the guard against deleting
// data by accident must not block it; deletionPolicy says whether the data goes.
func allowDeletion() map[string]string {
	return map[string]string{v1alpha1.AnnotationAllowDeletion: "true"}
}

// checkShared refuses a composite on the shared instance s whose name is too long
// for the names of PostgreSQL, or whose composed resources the move to s would
// delete or could not take: an instance of its own (the Composition used to give
// it one), a user or database on another instance (the Composition used to name
// another).
func checkShared(p Parameters, s SharedInstance, observed map[resource.Name]resource.ObservedComposed) error {
	if len(p.Name) > maxSharedCompositeName {
		if p.Namespace == "" {
			return errors.Errorf(errSharedNameLong, p.Name, maxSharedCompositeName)
		}
		return errors.Errorf(errSharedNamespacedNameLong, p.Name, p.Kind, p.Namespace+"/"+p.Name, maxSharedCompositeName, p.Kind)
	}
	if oi, ok := observed[ResourceName]; ok {
		return errors.Errorf(errSharedHasOwnInstance, s.describe(p.Namespace), p.owner(), oi.Resource.GetName(), p.owner())
	}
	for _, n := range []resource.Name{ResourceNameUser, ResourceNameDatabase} {
		o, ok := observed[n]
		if !ok {
			continue
		}
		if was := sharedInstanceOf(o, p.Namespace == ""); was != s {
			return errors.Errorf(errSharedMoved, s.describe(p.Namespace), o.Resource.GetKind(), o.Resource.GetName(), p.owner(), was.describe(p.Namespace), p.owner())
		}
	}
	return nil
}

// checkNotShared refuses to give a composite an instance of its own while it has a
// user or a database on a shared instance, which Crossplane would delete.
func checkNotShared(p Parameters, observed map[resource.Name]resource.ObservedComposed) error {
	for _, n := range []resource.Name{ResourceNameDatabase, ResourceNameUser} {
		if o, ok := observed[n]; ok {
			return errors.Errorf(errOwnInstanceWasShared, p.owner(), o.Resource.GetKind(), o.Resource.GetName(), sharedInstanceOf(o, p.Namespace == "").describe(p.Namespace), p.owner())
		}
	}
	return nil
}

// sharedInstanceOf is the instance that o, an observed user or database, is on.
// The instance of a cluster-scoped user or database is cluster-scoped.
func sharedInstanceOf(o resource.ObservedComposed, clusterScoped bool) SharedInstance {
	instance, _ := o.Resource.GetString("spec.forProvider.instance")
	if clusterScoped {
		return SharedInstance{ClusterInstance: instance}
	}
	cluster, _ := o.Resource.GetString("spec.forProvider.clusterInstance")
	return SharedInstance{Instance: instance, ClusterInstance: cluster}
}

// pick returns the keys of details that are there and not empty: a claim's
// secret never holds an empty password.
func pick(details resource.ConnectionDetails, keys []string) resource.ConnectionDetails {
	out := resource.ConnectionDetails{}
	for _, k := range keys {
		if v, ok := details[k]; ok && len(v) > 0 {
			out[k] = v
		}
	}
	return out
}

// runShared composes a composite on the shared instance s: a PostgresqlUser and a
// PostgresqlDatabase that it owns, cluster-scoped for a claimed composite and in
// its namespace for a namespaced one, each ready when the provider reports it
// Ready. The user's connection details (its login and password, not postgres's)
// become the composite's connection details, or for a namespaced composite the
// Secret of ConnectionSecret, ready once complete. The composite shows the names
// of the user and of the database once they exist.
func (f *Function) runShared(rsp *fnv1.RunFunctionResponse, req *fnv1.RunFunctionRequest, oxr *resource.Composite, observed map[resource.Name]resource.ObservedComposed, s SharedInstance, log logging.Logger) *fnv1.RunFunctionResponse {
	c := &sharedComposition{rsp: rsp, oxr: oxr, observed: observed, s: s,
		claimed: oxr.Resource.GetNamespace() == "", secretNamespace: f.secretNamespace}
	if err := c.parse(); err != nil {
		var invalid invalidSpec
		if errors.As(err, &invalid) {
			log.Info("Cannot compose a PostgresqlDatabase and a PostgresqlUser", "error", err)
			response.Fatal(rsp, err)
			aimed(c.claimed, response.ConditionFalse(rsp, ConditionTypeSpecValid, ReasonInvalidSpec).WithMessage(err.Error()))
			return rsp
		}
		response.Fatal(rsp, err)
		return rsp
	}
	complete, err := c.compose(req)
	if err != nil {
		response.Fatal(rsp, err)
		return rsp
	}
	aimed(c.claimed, response.ConditionTrue(rsp, ConditionTypeSpecValid, ReasonValid))
	log.Debug("Composed a PostgresqlDatabase and a PostgresqlUser", "sharedInstance", s.name(), "userExists", c.userExists(), "secretComplete", complete)
	return rsp
}

// invalidSpec is an error in what the team asked for, rather than in the
// platform's Composition or in the request: SpecValid turns False with it.
type invalidSpec struct{ error }

func (e invalidSpec) Unwrap() error { return e.error }

// sharedComposition is one run of runShared, in the steps it takes: parse what
// the composite asks for, then compose the user, the database and what carries
// their connection details.
type sharedComposition struct {
	rsp      *fnv1.RunFunctionResponse
	oxr      *resource.Composite
	observed map[resource.Name]resource.ObservedComposed
	s        SharedInstance
	// claimed composites are cluster-scoped and have claims; others are
	// namespaced.
	claimed bool
	// secretNamespace is where a claimed composite's secrets go (Parse).
	secretNamespace string

	p         Parameters
	wasSecret *corev1.Secret
}

// aimed points a condition or a result at the composite and, for a claimed
// one, at its claim too.
func aimed[T interface {
	TargetComposite() T
	TargetCompositeAndClaim() T
}](claimed bool, o T) {
	if claimed {
		o.TargetCompositeAndClaim()
		return
	}
	o.TargetComposite()
}

func (c *sharedComposition) userExists() bool {
	_, ok := c.observed[ResourceNameUser]
	return ok
}

// parse reads the composite's parameters and the Secret composed before.
func (c *sharedComposition) parse() error {
	if c.claimed && c.s.Instance != "" {
		// The platform's mistake rather than the team's: no SpecValid.
		return errors.Errorf(errSharedNotNamespace, c.s.Instance, c.oxr.Resource.GetKind(), c.oxr.Resource.GetName())
	}
	if osc, ok := c.observed[ConnectionSecretResourceName]; ok && !c.claimed {
		c.wasSecret = &corev1.Secret{}
		if err := fromObserved(osc, c.wasSecret); err != nil {
			return errors.Wrap(err, errReadObservedSecret)
		}
	}
	var err error
	if c.claimed {
		c.p, err = Parse(c.oxr.Resource, c.secretNamespace)
	} else {
		c.p, err = ParseNamespaced(c.oxr.Resource)
	}
	if err == nil {
		err = checkShared(c.p, c.s, c.observed)
	}
	if err != nil {
		return invalidSpec{err}
	}
	return nil
}

// compose adds the user, the database and the connection details to the
// desired state, keeping what earlier steps of the pipeline desired. It says
// whether a namespaced composite's Secret is complete.
func (c *sharedComposition) compose(req *fnv1.RunFunctionRequest) (bool, error) {
	desired, err := request.GetDesiredComposedResources(req)
	if err != nil {
		return false, errors.Wrap(err, errGetDesiredCDs)
	}
	dxr, err := request.GetDesiredCompositeResource(req)
	if err != nil {
		return false, errors.Wrap(err, errGetDesiredXR)
	}
	if err := c.composeObjects(desired, dxr); err != nil {
		return false, err
	}
	complete, err := c.composeDetails(desired, dxr)
	if err != nil {
		return false, err
	}
	// Crossplane derives the composite's readiness from every desired resource.
	if err := response.SetDesiredCompositeResource(c.rsp, dxr); err != nil {
		return false, errors.Wrap(err, errSetDesiredXR)
	}
	if err := response.SetDesiredComposedResources(c.rsp, desired); err != nil {
		return false, errors.Wrap(err, errSetDesiredCDs)
	}
	return complete, nil
}

// composeObjects adds the PostgresqlUser and the PostgresqlDatabase, each ready
// when the provider reports it Ready, and shows the names of those that exist
// on the composite.
func (c *sharedComposition) composeObjects(desired map[resource.Name]*resource.DesiredComposed, dxr *resource.Composite) error {
	ouser, userExists := c.observed[ResourceNameUser]
	odb, dbExists := c.observed[ResourceNameDatabase]
	owner := ""
	if userExists {
		owner = ouser.Resource.GetName()
	}
	var user, db runtime.Object
	if c.claimed {
		user, db = ComposeShared(c.p, c.s, owner)
	} else {
		user, db = ComposeSharedNamespaced(c.p, c.s, owner)
	}
	for _, o := range []struct {
		name     resource.Name
		kind     string
		obj      runtime.Object
		observed resource.ObservedComposed
		exists   bool
		status   string
	}{
		{ResourceNameUser, v1alpha1.PostgresqlUserKind, user, ouser, userExists, FieldStatusUserName},
		{ResourceNameDatabase, v1alpha1.PostgresqlDatabaseKind, db, odb, dbExists, FieldStatusDatabaseName},
	} {
		dcd, err := AsComposed(o.obj)
		if err != nil {
			return errors.Wrapf(err, errConvertShared, o.kind)
		}
		ready := resource.ReadyFalse
		if o.exists {
			ready = Ready(o.observed.Resource)
			if err := dxr.Resource.SetString(o.status, o.observed.Resource.GetName()); err != nil {
				return errors.Wrap(err, errSetDesiredXR)
			}
			if w := warnNotSynced(c.rsp, o.observed); w != nil {
				aimed(c.claimed, w)
			}
		}
		desired[o.name] = &resource.DesiredComposed{Resource: dcd, Ready: ready}
	}
	return nil
}

// composeDetails passes the user's connection details on: to a claimed
// composite's connection details, or to a namespaced composite's Secret, which
// is ready (and reported complete) once it holds every key.
func (c *sharedComposition) composeDetails(desired map[resource.Name]*resource.DesiredComposed, dxr *resource.Composite) (bool, error) {
	var details resource.ConnectionDetails
	if ouser, ok := c.observed[ResourceNameUser]; ok {
		details = ouser.ConnectionDetails
	}
	if c.claimed {
		if dxr.ConnectionDetails == nil {
			dxr.ConnectionDetails = resource.ConnectionDetails{}
		}
		for k, v := range pick(details, SharedConnectionDetailKeys) {
			dxr.ConnectionDetails[k] = v
		}
		return false, nil
	}
	secret, complete := connectionSecret(c.p, SharedConnectionDetailKeys, details, c.wasSecret)
	dsecret, err := AsComposed(secret)
	if err != nil {
		return false, errors.Wrap(err, errConvertSecret)
	}
	if err := dxr.Resource.SetString(FieldStatusConnectionSecretName, secret.GetName()); err != nil {
		return false, errors.Wrap(err, errSetDesiredXR)
	}
	desired[ConnectionSecretResourceName] = &resource.DesiredComposed{Resource: dsecret, Ready: readyIf(complete)}
	return complete, nil
}

// readyIf is ReadyTrue when ready is, else ReadyFalse.
func readyIf(ready bool) resource.Ready {
	if ready {
		return resource.ReadyTrue
	}
	return resource.ReadyFalse
}

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

// Package instance is the validating webhook of PostgresqlInstances: it judges
// what the CRD's schema cannot, because it needs a lookup or an annotation.
//
// On CREATE it denies
//
//   - an effective Cloud SQL name, taken from the crossplane.io/external-name
//     annotation when spec.forProvider.name is not set, that Cloud SQL would
//     refuse (CEL cannot see annotations);
//   - a name that, with the ProviderConfig's project ID, exceeds 97 characters;
//   - a name that an instance in the ProviderConfig's project already has.
//     With WithListings, a complete listing of the project that began at most
//     its maximum age ago settles it, shared with the controllers and with the
//     other admissions of a burst (one listing answers for them all); the
//     webhook waits for such a listing for up to half its timeout, then asks
//     instances.get. Cloud SQL's 404 instanceDoesNotExist admits the name; any
//     other answer admits it with the warning below;
//   - an instance whose configuration may not use its credentials or endpoint
//     (providerconfig.IsRefused): a namespaced ProviderConfig with a key that
//     is not a service-account key or an endpoint that [tenancy]
//     namespaced_endpoints does not allow, a platform's external_account key
//     with a credential_source the configuration file does not allow. Dry runs
//     are denied too: the provider must never try such credentials.
//
// Instances that the provider may not create (managementPolicies without Create
// or *) are not checked against Cloud SQL: they are meant to observe an existing
// instance. When the ProviderConfig, its credentials or Cloud SQL cannot be used
// within the configured timeout, the instance is admitted with a warning and the
// controller reports the problem on the instance: an outage of Cloud SQL must not
// block declaring instances, and the controller never adopts an instance whose
// creation it did not start (a conflict shows as a failed create). Names of
// deleted instances stay reserved by Cloud SQL for up to a week but are not
// visible to instances.get, so such a conflict also shows only when the
// controller creates the instance.
//
// A namespaced instance is denied when it names no configuration, names a
// ClusterProviderConfig whose spec.namespaces does not admit its namespace, or
// only observes (an import) through a ClusterProviderConfig whose
// spec.importPolicy is not Allow.
//
// A dry run of either kind asks Cloud SQL nothing: it must not spend the
// request budget. With WithListings, a complete listing of the project at hand
// (one that began at most its maximum age ago) settles its name as on a real
// create: a taken name is denied, a free one admitted with a warning that
// says how old the listing is. Without one the name is not checked, and the
// dry run is admitted with a warning that says so and why.
//
// On DELETE it denies unless the object carries
// cloudsql.travelaudience.com/allow-deletion: "true". Dry-run deletions are
// answered like the others. A namespaced PostgresqlInstance whose namespace is
// being deleted is let go without the annotation, so that the namespace can
// finish terminating; the controller then leaves its Cloud SQL instance in
// place (orphaned, with its data), as the guard would have.
//
// Every request whose object's namespace differs from the request's is denied:
// the API server never sends one.
package instance

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/spf13/afero"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/budget"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/observer"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/providerconfig"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/tenancy"
)

// Path is where the validator is served; package/webhookconfigurations names it.
const Path = "/validate-postgresqlinstances"

// MaxNameAndProject is the longest instance name plus project ID that Cloud SQL
// accepts.
const MaxNameAndProject = 97

// maxName is the longest Cloud SQL instance name.
const maxName = 91

// DefaultTimeout bounds the Cloud SQL lookup unless WithTimeout says otherwise.
const DefaultTimeout = 5 * time.Second

// namePattern is what Cloud SQL accepts as an instance name.
var namePattern = regexp.MustCompile(`^[a-z][a-z0-9-]+[a-z0-9]$`)

// Denials and warnings. Each names the instance and says what to do.
const (
	errDecode          = "cannot decode the PostgresqlInstance"
	errBadExternalName = "PostgresqlInstance %s: %s %q is not a valid Cloud SQL instance name: it must start with a lowercase letter, hold only lowercase letters, digits and hyphens, end with a letter or digit, and have 3 to %d characters; set spec.forProvider.name (or the annotation crossplane.io/external-name) to a valid name"
	errTooLong         = "PostgresqlInstance %s: Cloud SQL instance name %s (%d characters) and project ID %s (%d characters) of %s add up to %d characters, more than the %d Cloud SQL allows: choose a shorter spec.forProvider.name"
	errTaken           = "PostgresqlInstance %s: a Cloud SQL instance named %s already exists in project %s (%s): choose another spec.forProvider.name; to manage the existing instance instead, create the PostgresqlInstance with spec.managementPolicies [\"Observe\"] and widen them once it is observed"
	errNoDeletion      = "PostgresqlInstance %s may not be deleted: deleting it %s. If that is what you want, allow it first with `kubectl annotate %s %s=true`, then delete it again"
	msgObserveOnly     = "the provider may not create this instance, so an existing one is expected"
	msgNamespaceGoes   = "namespace %s is being deleted: the PostgresqlInstance goes, and Cloud SQL instance %s is kept (it is deleted only with the allow-deletion annotation)"
	warnNoPC           = "PostgresqlInstance %s: %s does not exist, so whether Cloud SQL instance %s is free was not checked; the instance stays unsynced until it exists"
	warnUnchecked      = "PostgresqlInstance %s: whether a Cloud SQL instance named %s exists in project %s was not checked (%s); if it does, the controller reports the conflict on the instance"
	errRefused         = "PostgresqlInstance %s is denied: %s"
	warnDryRun         = "PostgresqlInstance %s: whether a Cloud SQL instance named %s exists in project %s was not checked on this dry run: %s, and dry runs spend none of the Cloud SQL request budget; the real create checks it (if it is taken, choose another spec.forProvider.name)"
	warnDryRunFree     = "PostgresqlInstance %s: no Cloud SQL instance named %s was in a listing of project %s made %s ago; this dry run asked Cloud SQL nothing (dry runs spend none of the request budget), and the real create checks the name again (if it is taken by then, choose another spec.forProvider.name)"
	reasonNoListings   = "no listing of the project is at hand"
	reasonNoListing    = "no listing of the project from the last %s is at hand"
	reasonIncomplete   = "the listing of the project at hand (made %s ago) warned that it may lack instances"
	reasonUnreadable   = "the listing of the project at hand could not be read"
	errNoConfigRef     = "PostgresqlInstance %s: spec.providerConfigRef is not set: name a ProviderConfig of namespace %s, or a ClusterProviderConfig that the platform team lends to it; no configuration is used implicitly"
	errNotLent         = "PostgresqlInstance %s: spec.providerConfigRef names a configuration this namespace may not use: %v"
	errNoImport        = "PostgresqlInstance %s: managementPolicies %v only observe, which imports an existing Cloud SQL instance that no PostgresqlInstance created: %v"
	errOtherNamespace  = "the PostgresqlInstance's metadata.namespace %q differs from the admission request's namespace %q: the request was not sent by the API server for this object, and is refused"
)

// A Validator is the admission handler of PostgresqlInstances.
type Validator struct {
	pcs      client.Reader
	secrets  client.Reader
	fs       afero.Fs
	services *providerconfig.ServiceCache
	timeout  time.Duration
	decoder  admission.Decoder
	log      logging.Logger
	// resolve are the rules for namespaced ProviderConfigs (their endpoints).
	resolve []providerconfig.ResolveOption
	// listings, when not nil, answers name checks from listings of the
	// project no older than listingAge.
	listings   *observer.Observer
	listingAge time.Duration
	// admits, when not nil, says whether a cluster-scoped PostgresqlInstance
	// may be the source of a namespaced one, named in field.
	admits func(ctx context.Context, mg client.Object, field string, pi *v1alpha1.PostgresqlInstance) error
}

// An Option configures a Validator.
type Option func(*Validator)

// WithLogger logs decisions at debug level.
func WithLogger(l logging.Logger) Option { return func(v *Validator) { v.log = l } }

// WithTimeout bounds the Cloud SQL lookup (DefaultTimeout otherwise).
func WithTimeout(d time.Duration) Option { return func(v *Validator) { v.timeout = d } }

// WithNamespacedEndpoints allows namespaced ProviderConfigs to name one of
// urls as spec.endpoint ("*": any); by default they may name none.
func WithNamespacedEndpoints(urls []string) Option {
	return func(v *Validator) {
		v.resolve = append(v.resolve, providerconfig.WithNamespacedEndpoints(urls))
	}
}

// WithListings answers whether a name is taken from o's listing of the
// project, when a complete one began at most maxAge ago, listing the project
// (once for every admission waiting) when none did: a burst of creates costs a
// listing, not a request each. o is the controllers' observer, so that
// admissions and first observations share what they list.
func WithListings(o *observer.Observer, maxAge time.Duration) Option {
	return func(v *Validator) { v.listings, v.listingAge = o, maxAge }
}

// WithAdmits checks, when a namespaced PostgresqlInstance is created to
// recover from a cluster-scoped one (spec.forProvider.source.clusterInstance),
// that the cluster-scoped one may be its source, as the controller checks
// again; admits returns the denial, naming the field.
func WithAdmits(admits func(ctx context.Context, mg client.Object, field string, pi *v1alpha1.PostgresqlInstance) error) Option {
	return func(v *Validator) { v.admits = admits }
}

// WithFs is where credentials of source Filesystem are read (the OS otherwise).
func WithFs(fs afero.Fs) Option { return func(v *Validator) { v.fs = fs } }

// New returns a Validator that reads ProviderConfigs through pcs, their
// credentials through secrets (uncached), and talks to Cloud SQL through the
// clients of services.
func New(pcs, secrets client.Reader, scheme *runtime.Scheme, services *providerconfig.ServiceCache, o ...Option) *Validator {
	v := &Validator{
		pcs: pcs, secrets: secrets, fs: afero.NewOsFs(), services: services,
		timeout: DefaultTimeout, decoder: admission.NewDecoder(scheme), log: logging.NewNopLogger(),
	}
	for _, fn := range o {
		fn(v)
	}
	return v
}

// Setup serves a Validator at Path on mgr's webhook server.
func Setup(mgr ctrl.Manager, services *providerconfig.ServiceCache, o ...Option) {
	v := New(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetScheme(), services, o...)
	mgr.GetWebhookServer().Register(Path, &webhook.Admission{Handler: v})
}

// subject is the PostgresqlInstance under admission, of either kind.
type subject struct {
	obj cloudsql.NamedInstance
	// ref is how messages name it: its name, or namespace/name.
	ref string
	// kubectl names it on a kubectl command line: resource, name and namespace.
	kubectl  string
	policies xpv2.ManagementPolicies
	// orphan is deletionPolicy Orphan (the cluster-scoped kind has one).
	orphan bool
	// forProviderName is spec.forProvider.name.
	forProviderName *string
	// config reads the provider configuration it names, as the cluster-scoped
	// kind's; pcName is how messages name that configuration: its kind, name
	// and, for a namespaced ProviderConfig, namespace.
	config func(ctx context.Context) (pc *v1alpha1.ProviderConfig, pcName string, err error)
	// access, for the namespaced kind, returns the denial of an instance whose
	// configuration it may not use or import through, or nil.
	access func(ctx context.Context) *admission.Response
}

// subjectOf decodes the object of raw as the kind req names.
func (v *Validator) subjectOf(req admission.Request, raw runtime.RawExtension) (*subject, error) {
	if req.Kind.Group == nsv1alpha1.Group {
		pi := &nsv1alpha1.PostgresqlInstance{}
		if err := v.decoder.DecodeRaw(raw, pi); err != nil {
			return nil, err
		}
		ref := providerconfig.NamespacedRef(pi.GetProviderConfigReference())
		s := &subject{
			obj: pi, ref: pi.Namespace + "/" + pi.Name,
			kubectl:  fmt.Sprintf("-n %s postgresqlinstances.%s %s", pi.Namespace, nsv1alpha1.Group, pi.Name),
			policies: pi.GetManagementPolicies(), forProviderName: pi.Spec.ForProvider.Name,
			config: func(ctx context.Context) (*v1alpha1.ProviderConfig, string, error) {
				name := providerconfig.NamedRef(pi.Namespace, ref)
				pc, err := providerconfig.ForNamespaced(ctx, v.pcs, pi.Namespace, ref, v.resolve...)
				if kerrors.IsNotFound(errors.Cause(err)) {
					// The cache may not have a configuration applied
					// together with the instance yet: the API server decides.
					pc, err = providerconfig.ForNamespaced(ctx, v.secrets, pi.Namespace, ref, v.resolve...)
				}
				if providerconfig.IsRefused(err) {
					return pc, name, err
				}
				return pc, name, errors.Cause(err)
			},
		}
		s.access = func(ctx context.Context) *admission.Response {
			if r := v.access(ctx, s, pi); r != nil {
				return r
			}
			return v.source(ctx, pi)
		}
		return s, nil
	}
	pi := &v1alpha1.PostgresqlInstance{}
	if err := v.decoder.DecodeRaw(raw, pi); err != nil {
		return nil, err
	}
	pcName := "default"
	if r := pi.GetProviderConfigReference(); r != nil && r.Name != "" {
		pcName = r.Name
	}
	return &subject{
		obj: pi, ref: pi.Name, kubectl: "postgresqlinstances." + v1alpha1.Group + " " + pi.Name,
		policies: pi.GetManagementPolicies(), orphan: pi.GetDeletionPolicy() == xpv2.DeletionOrphan, forProviderName: pi.Spec.ForProvider.Name,
		config: func(ctx context.Context) (*v1alpha1.ProviderConfig, string, error) {
			pc := &v1alpha1.ProviderConfig{}
			err := v.pcs.Get(ctx, types.NamespacedName{Name: pcName}, pc)
			if kerrors.IsNotFound(err) {
				// The cache may not have a ProviderConfig applied together
				// with the instance yet (one kubectl apply): the API server
				// decides.
				err = v.secrets.Get(ctx, types.NamespacedName{Name: pcName}, pc)
			}
			return pc, providerconfig.Named(v1alpha1.ProviderConfigKind, pcName, ""), err
		},
	}, nil
}

// Handle implements admission.Handler.
func (v *Validator) Handle(ctx context.Context, req admission.Request) admission.Response {
	switch req.Operation {
	case admissionv1.Create:
		s, err := v.subjectOf(req, req.Object)
		if err != nil {
			return admission.Errored(http.StatusBadRequest, errors.Wrap(err, errDecode))
		}
		if r := sameNamespace(req, s); r != nil {
			return *r
		}
		return v.create(ctx, s, req.DryRun != nil && *req.DryRun)
	case admissionv1.Delete:
		s, err := v.subjectOf(req, req.OldObject)
		if err != nil {
			return admission.Errored(http.StatusBadRequest, errors.Wrap(err, errDecode))
		}
		if r := sameNamespace(req, s); r != nil {
			return *r
		}
		return v.delete(ctx, s)
	default:
		return admission.Allowed("")
	}
}

// sameNamespace denies a request whose object is not of the request's
// namespace. The API server never sends one; anyone else who reaches the
// webhook could, to have one namespace's object judged as another's.
func sameNamespace(req admission.Request, s *subject) *admission.Response {
	if s.obj.GetNamespace() == req.Namespace {
		return nil
	}
	r := admission.Denied(fmt.Sprintf(errOtherNamespace, s.obj.GetNamespace(), req.Namespace))
	return &r
}

// source denies a namespaced instance pi that recovers from a cluster-scoped
// instance that may not be its source: named directly, or as the instance of
// the PostgresqlBackup it restores. What does not exist yet (or cannot be
// read) is the controller's to wait for; it checks the same.
func (v *Validator) source(ctx context.Context, pi *nsv1alpha1.PostgresqlInstance) *admission.Response {
	src := pi.Spec.ForProvider.Source
	if v.admits == nil || src == nil {
		return nil
	}
	shared, field := src.ClusterInstance, fieldSourceClusterInstance
	if src.Backup != "" {
		b := &nsv1alpha1.PostgresqlBackup{}
		if err := v.read(ctx, types.NamespacedName{Namespace: pi.Namespace, Name: src.Backup}, b); err != nil {
			return nil
		}
		shared, field = b.Spec.ForProvider.ClusterInstance, fieldSourceBackup+" (PostgresqlBackup "+pi.Namespace+"/"+src.Backup+")"
	}
	if shared == "" {
		return nil
	}
	inst := &v1alpha1.PostgresqlInstance{}
	if err := v.read(ctx, types.NamespacedName{Name: shared}, inst); err != nil {
		return nil
	}
	if err := v.admits(ctx, pi, field, inst); err != nil {
		r := admission.Denied(err.Error())
		return &r
	}
	return nil
}

// Where a namespaced PostgresqlInstance names what it recovers from.
const (
	fieldSourceClusterInstance = "spec.forProvider.source.clusterInstance"
	fieldSourceBackup          = "spec.forProvider.source.backup"
)

// read gets key into obj from the cache, or from the API server when the
// cache does not have it yet (applied together with the object judged).
func (v *Validator) read(ctx context.Context, key types.NamespacedName, obj client.Object) error {
	err := v.pcs.Get(ctx, key, obj)
	if kerrors.IsNotFound(err) {
		err = v.secrets.Get(ctx, key, obj)
	}
	return err
}

// access denies a namespaced instance pi that names no configuration, names a
// ClusterProviderConfig that does not admit its namespace, or only observes
// (an import) through a ClusterProviderConfig that does not allow importing.
// A configuration that does not exist or cannot be read is left to create (a
// warning): the controller enforces the same rules.
func (v *Validator) access(ctx context.Context, s *subject, pi *nsv1alpha1.PostgresqlInstance) *admission.Response {
	deny := func(msg string) *admission.Response { r := admission.Denied(msg); return &r }
	ref := pi.GetProviderConfigReference()
	if ref == nil || ref.Name == "" {
		return deny(fmt.Sprintf(errNoConfigRef, s.ref, pi.Namespace))
	}
	if ref.Kind != nsv1alpha1.ClusterProviderConfigKind {
		return nil
	}
	cpc, err := tenancy.LentClusterConfig(ctx, v.pcs, v.secrets, pi.Namespace, ref.Name)
	if kerrors.IsNotFound(errors.Cause(err)) || tenancy.IsNotLent(err) {
		// The cache may lag a configuration just created or changed.
		cpc, err = tenancy.LentClusterConfig(ctx, v.secrets, v.secrets, pi.Namespace, ref.Name)
	}
	switch {
	case tenancy.IsNotLent(err):
		return deny(fmt.Sprintf(errNotLent, s.ref, err))
	case err != nil:
		// Missing or unreadable: create warns, and the controller, which
		// enforces the same rules, reports it on the instance.
		return nil
	}
	if !mayCreate(s) && !tenancy.ImportAllowed(cpc) {
		return deny(fmt.Sprintf(errNoImport, s.ref, s.policies, tenancy.ImportDenied(cpc)))
	}
	return nil
}

func (v *Validator) delete(ctx context.Context, s *subject) admission.Response {
	if s.obj.GetAnnotations()[v1alpha1.AnnotationAllowDeletion] == "true" {
		return admission.Allowed("deletion allowed by annotation " + v1alpha1.AnnotationAllowDeletion)
	}
	name := cloudsql.InstanceName(s.obj)
	if ns := s.obj.GetNamespace(); ns != "" {
		// Denying the namespace's own deletion of its objects would keep it
		// Terminating for ever. The controller keeps the Cloud SQL instance of
		// an object that goes this way (see the package doc).
		n := &corev1.Namespace{}
		err := v.secrets.Get(ctx, types.NamespacedName{Name: ns}, n)
		if err == nil && n.DeletionTimestamp != nil {
			v.log.Debug("Letting a PostgresqlInstance of a terminating namespace go, keeping its Cloud SQL instance", "postgresqlinstance", s.ref, "instance", name)
			return admission.Allowed(fmt.Sprintf(msgNamespaceGoes, ns, name))
		}
	}
	effect := fmt.Sprintf("deletes Cloud SQL instance %s and its data", name)
	if !deletesExternal(s) {
		effect = fmt.Sprintf("stops managing Cloud SQL instance %s, which keeps running", name)
	}
	return admission.Denied(fmt.Sprintf(errNoDeletion, s.ref, effect, s.kubectl, v1alpha1.AnnotationAllowDeletion))
}

// deletesExternal reports whether deleting s deletes its Cloud SQL instance.
func deletesExternal(s *subject) bool {
	return DeletesExternal(s.policies, s.orphan)
}

// DeletesExternal reports whether deleting a managed resource with management
// policies p and, when orphan, deletionPolicy Orphan deletes what it manages:
// the deletion guards of every kind judge their objects alike.
func DeletesExternal(p xpv2.ManagementPolicies, orphan bool) bool {
	return !orphan && (len(p) == 0 || slices.Contains(p, xpv2.ManagementActionAll) || slices.Contains(p, xpv2.ManagementActionDelete))
}

// mayCreate reports whether the provider may create s's Cloud SQL instance.
func mayCreate(s *subject) bool {
	p := s.policies
	return len(p) == 0 || slices.Contains(p, xpv2.ManagementActionAll) || slices.Contains(p, xpv2.ManagementActionCreate)
}

func (v *Validator) create(ctx context.Context, s *subject, dryRun bool) admission.Response {
	name := cloudsql.InstanceName(s.obj)
	if s.forProviderName == nil {
		// The CRD checks spec.forProvider.name; the annotation, and metadata.name
		// when there is none, only this webhook can judge (CEL cannot see
		// annotations, and a metadata.name with dots is fine beside a valid one).
		ext, from := meta.GetExternalName(s.obj), "annotation "+meta.AnnotationKeyExternalName
		if ext == "" {
			ext, from = s.obj.GetName(), "metadata.name"
		}
		if len(ext) > maxName || !namePattern.MatchString(ext) {
			return admission.Denied(fmt.Sprintf(errBadExternalName, s.ref, from, ext, maxName))
		}
	}
	if s.access != nil {
		if r := s.access(ctx); r != nil {
			return *r
		}
	}
	// An instance the provider may not create is meant to observe an
	// existing one: Cloud SQL is not asked whether its name is free. Its
	// configuration, endpoint and key are judged all the same (they make no
	// Cloud SQL call): the controller would use them to read the instance, so
	// a tenant's external_account key or a disallowed endpoint is refused here
	// too. A configuration that is missing or cannot be read is the
	// controller's to report.
	observeOnly := !mayCreate(s)

	pc, pcName, err := s.config(ctx)
	switch {
	case providerconfig.IsRefused(err):
		return refused(s, err)
	case err != nil && observeOnly:
		return admission.Allowed(msgObserveOnly)
	case kerrors.IsNotFound(err):
		return admission.Allowed("").WithWarnings(fmt.Sprintf(warnNoPC, s.ref, pcName, name))
	case err != nil:
		return v.unchecked(s, name, "?", err)
	}
	project := pc.Spec.ProjectID
	if n := len(name) + len(project); n > MaxNameAndProject && !observeOnly {
		return admission.Denied(fmt.Sprintf(errTooLong, s.ref, name, len(name), project, len(project), pcName, n, MaxNameAndProject))
	}

	creds, err := providerconfig.Credentials(ctx, v.secrets, v.fs, pc)
	if providerconfig.IsRefused(err) {
		return refused(s, err)
	}
	if err != nil {
		if observeOnly {
			return admission.Allowed(msgObserveOnly)
		}
		return v.unchecked(s, name, project, err)
	}
	svc, err := v.services.Get(pc, creds)
	if providerconfig.IsRefused(err) {
		return refused(s, err)
	}
	if observeOnly {
		return admission.Allowed(msgObserveOnly)
	}
	if err != nil {
		return v.unchecked(s, name, project, err)
	}
	if dryRun {
		// Its credentials are judged (refused ones are denied, as on a
		// real create), but a dry run creates nothing: it must not spend
		// the request budget that real creates and the controllers need.
		return v.dryRun(s, pc.Name, pcName, project, name)
	}
	// The lookup draws on the budget's admission reserve: someone waits for
	// kubectl, and the controllers' polling must not make the check time out.
	// Each namespace has its own share of that reserve, so that one
	// namespace's creates cannot leave another's unchecked.
	lctx, cancel := context.WithTimeout(budget.ForAdmissionBy(ctx, s.obj.GetNamespace()), v.timeout)
	defer cancel()
	if taken, settled := v.listed(lctx, svc, pc.Name, project, name); settled {
		if taken {
			v.log.Debug("Denying a PostgresqlInstance whose name a listing shows taken", "postgresqlinstance", s.ref, "instance", name, "project", project)
			return admission.Denied(fmt.Sprintf(errTaken, s.ref, name, project, pcName))
		}
		return admission.Allowed("")
	}
	_, err = svc.Instances.Get(project, name).Context(lctx).Do()
	switch {
	case err == nil:
		v.log.Debug("Denying a PostgresqlInstance whose name is taken", "postgresqlinstance", s.ref, "instance", name, "project", project)
		return admission.Denied(fmt.Sprintf(errTaken, s.ref, name, project, pcName))
	case cloudsql.IsNotFound(err):
		return admission.Allowed("")
	default:
		return v.unchecked(s, name, project, err)
	}
}

// listed says whether a complete listing of project, through the
// configuration named source, that began at most the listings' maximum age
// ago shows name taken. A listing it starts draws on the admission reserve
// unless the project's last listing took more than one page. settled is
// false when there is none within half of ctx's time (the caller then asks
// instances.get with the rest), when the credentials may not list, or when
// the listing warned that it may lack instances.
func (v *Validator) listed(ctx context.Context, svc *sqladmin.Service, source, project, name string) (taken, settled bool) {
	if v.listings == nil {
		return false, false
	}
	wait := v.timeout / 2
	if dl, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(dl)/2)
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if v.listings.Pages(source, project) > 1 {
		// A listing of many pages would take
		// the admission reserve that one-request lookups need: it waits as
		// the controllers' reads do, and instances.get checks the name if
		// it does not come in time. A one-page listing costs what a lookup
		// does, and serves the whole burst.
		wctx = budget.NotForAdmission(wctx)
	}
	r, err := v.listings.Instance(wctx, svc, source, project, name, time.Now().Add(-v.listingAge), v.listingAge)
	switch {
	case err != nil:
		v.log.Debug("No listing answered a name check in time; asking instances.get", "instance", name, "project", project, "error", err)
		return false, false
	case r.Listed && r.Instance != nil:
		return true, true
	case r.Listed && r.Complete:
		return false, true
	}
	return false, false
}

// dryRun judges the name of s, a dry run, from a listing of project through
// the configuration named source that is already at hand and as fresh as a
// real create would take: a GitOps preview then shows a taken name as the
// apply would, at no request. Without such a listing the name is not checked:
// listing the project, or asking instances.get, would spend the budget.
func (v *Validator) dryRun(s *subject, source, pcName, project, name string) admission.Response {
	reason := reasonNoListings
	if v.listings != nil {
		reason = fmt.Sprintf(reasonNoListing, v.listingAge)
		r, err := v.listings.Peek(source, project, name, time.Now().Add(-v.listingAge))
		switch {
		case err != nil:
			v.log.Debug("The listing at hand could not answer a dry run's name check", "postgresqlinstance", s.ref, "instance", name, "project", project, "error", err)
			reason = reasonUnreadable
		case r.Listed && r.Instance != nil:
			v.log.Debug("Denying a dry run whose name a listing at hand shows taken", "postgresqlinstance", s.ref, "instance", name, "project", project)
			return admission.Denied(fmt.Sprintf(errTaken, s.ref, name, project, pcName))
		case r.Listed && r.Complete:
			return admission.Allowed("").WithWarnings(fmt.Sprintf(warnDryRunFree, s.ref, name, project, ago(time.Since(r.ReadAt))))
		case r.Listed:
			reason = fmt.Sprintf(reasonIncomplete, ago(time.Since(r.ReadAt)))
		}
	}
	return admission.Allowed("").WithWarnings(fmt.Sprintf(warnDryRun, s.ref, name, project, reason))
}

// ago is how a warning says how long ago a listing was made: in whole
// seconds, which is what a reader can use.
func ago(d time.Duration) string {
	if d < time.Second {
		return "less than a second"
	}
	return d.Round(time.Second).String()
}

// unchecked admits s with a warning that says what could not be checked. The
// error's text, which may come from the configuration's endpoint, is cut.
func (v *Validator) unchecked(s *subject, name, project string, err error) admission.Response {
	v.log.Debug("Admitting a PostgresqlInstance whose name could not be checked", "postgresqlinstance", s.ref, "error", err)
	return admission.Allowed("").WithWarnings(fmt.Sprintf(warnUnchecked, s.ref, name, project, cloudsql.Truncate(err.Error())))
}

// refused denies s, whose configuration may not use its credentials or
// endpoint: the controller would never use them either, and a dry run must
// not be a way to make the provider try.
func refused(s *subject, err error) admission.Response {
	return admission.Denied(fmt.Sprintf(errRefused, s.ref, cloudsql.Truncate(err.Error())))
}

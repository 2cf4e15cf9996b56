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

// Package postgresqlobject is the validating webhook of PostgresqlDatabases,
// PostgresqlUsers and PostgresqlBackups, of both scopes: it judges what their
// CRDs cannot, because it needs a lookup or an annotation.
//
// On CREATE and UPDATE it denies
//
//   - a namespaced object (of any of the three kinds) that names a
//     cluster-scoped PostgresqlInstance
//     (spec.forProvider.clusterInstance or clusterInstanceRef) whose
//     spec.tenancy or spec.injection does not admit the object's namespace
//     (CheckClusterInstance). A
//     clusterInstanceSelector cannot be judged here: the controller resolves
//     it, and this webhook judges the update that writes the resolved name,
//     while the controller checks the instance again whenever it uses it. An
//     instance of another namespace the CRD already forbids;
//   - a PostgresqlDatabase whose owner (spec.forProvider.owner or ownerRef)
//     is a PostgresqlUser, of its scope and namespace, that belongs to another
//     instance. A user that does not exist yet is admitted: it may be created
//     next;
//   - an object that names a login or database of an instance that another
//     object, of either scope, already names: read live, and answered with
//     that object's name. The controller's record of who holds each name
//     (tenancy.Records) settles two objects that race past this check.
//
// An UPDATE is judged on the references it changes only: an object whose
// instance later narrows its allow-list must still take its finalizer off,
// and the allow-deletion annotation on. What cannot be read is admitted with a
// warning; the controller enforces the same rules.
//
// On DELETE a PostgresqlDatabase or a PostgresqlBackup, which hold data, is
// denied unless it carries cloudsql.travelaudience.com/allow-deletion: "true",
// as a PostgresqlInstance is; a namespaced one whose namespace is being deleted
// is let go without it, so that the namespace can finish terminating (the
// controller then keeps the database or the backup). PostgresqlUsers are
// deleted freely: their controller keeps a login that still owns a database.
//
// Every request whose object's namespace differs from the request's is denied:
// the API server never sends one.
package postgresqlobject

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/tenancy"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/instance"
)

// Paths where the validator is served; package/webhookconfigurations names
// them.
const (
	DatabasePath = "/validate-postgresqldatabases"
	UserPath     = "/validate-postgresqlusers"
	BackupPath   = "/validate-postgresqlbackups"
)

// Fields that messages name.
const (
	fieldInstance           = "spec.forProvider.instance"
	fieldInstanceRef        = "spec.forProvider.instanceRef.name"
	fieldClusterInstance    = "spec.forProvider.clusterInstance"
	fieldClusterInstanceRef = "spec.forProvider.clusterInstanceRef.name"
	fieldOwner              = "spec.forProvider.owner"
	fieldOwnerRef           = "spec.forProvider.ownerRef.name"
)

// Denials and warnings. Each names the object and the field, and says what to
// do.
const (
	errDecode         = "cannot decode the %s"
	errUnknownKind    = "this webhook judges PostgresqlDatabases, PostgresqlUsers and PostgresqlBackups, not %s"
	errOtherNamespace = "the %s's metadata.namespace %q differs from the admission request's namespace %q: the request was not sent by the API server for this object, and is refused"
	errNotAdmitted    = "%s %s: %s names the cluster-scoped PostgresqlInstance %s, which does not admit namespace %s: %s (the platform team decides); or use a PostgresqlInstance of namespace %s, with %s, instead"
	errCheckAdmitted  = "cannot decide whether PostgresqlInstance %s admits namespace %s"
	errNoSource       = "%s %s: %s names the cluster-scoped PostgresqlInstance %s, whose spec.injection does not admit namespace %s: " +
		"a recovered copy holds every database of the instance, with a postgres password, which only a namespace that may receive the instance's own postgres password may have " +
		"(spec.tenancy admits users and databases only); %s; or recover from a PostgresqlInstance of namespace %s instead"
	errOwnerElsewhere = "%s %s: %s names PostgresqlUser %s, which belongs to PostgresqlInstance %s, not to %s, the database's instance: a database can be owned only by a login of its own instance; name a PostgresqlUser of %s in %s, or create one"
	errNamesake       = "%s %s names %s %s of PostgresqlInstance %s, which %s already names: a login or database belongs to the object that made it, and no other object may take, reset, re-own or drop it; choose another name (spec.forProvider.name, or metadata.name), or ask whoever owns that object to delete it first if the %s is to change hands"
	warnNamesake      = "%s %s: whether another object already names %s %s of PostgresqlInstance %s was not checked (%s); the controller refuses to manage a name another object holds"
	errNoDeletion     = "%s %s may not be deleted: deleting it %s. If that is what you want, allow it first with `kubectl annotate %s %s=true`, then delete it again"
	warnNoInstance    = "%s %s: %s names the cluster-scoped PostgresqlInstance %s, which does not exist (yet): whether it admits namespace %s was not checked; the controller checks it before it uses the instance"
	warnInstance      = "%s %s: whether the cluster-scoped PostgresqlInstance %s named by %s admits namespace %s was not checked (%s); the controller checks it before it uses the instance"
	warnOwner         = "%s %s: whether PostgresqlUser %s named by %s belongs to the database's instance was not checked (%s); the controller checks it before it makes the user the owner"
	msgNamespaceGoes  = "namespace %s is being deleted: the %s goes, and %s is kept (it is %s only with the allow-deletion annotation)"
	msgBeingDeleted   = "the object is being deleted: its finalizers may change whatever its instance allows now"
)

// A Validator is the admission handler of PostgresqlDatabases,
// PostgresqlUsers and PostgresqlBackups.
type Validator struct {
	reader  client.Reader
	policy  tenancy.Policy
	decoder admission.Decoder
	log     logging.Logger
}

// An Option configures a Validator.
type Option func(*Validator)

// WithLogger logs decisions at debug level.
func WithLogger(l logging.Logger) Option { return func(v *Validator) { v.log = l } }

// New returns a Validator that reads instances, users and namespaces through
// reader, and decides which namespaces a cluster-scoped instance admits with
// policy, the pod injector's: the provider's [injection]
// default_allowed_namespaces applies to instances without spec.injection.
//
// reader should not be a cache: these admissions are rare, a cache would lag
// an instance or user applied together with the object, and it would start
// informers for kinds whose CRDs may not be installed.
func New(reader client.Reader, scheme *runtime.Scheme, policy tenancy.Policy, o ...Option) *Validator {
	v := &Validator{reader: reader, policy: policy, decoder: admission.NewDecoder(scheme), log: logging.NewNopLogger()}
	for _, fn := range o {
		fn(v)
	}
	return v
}

// Setup serves a Validator at DatabasePath, UserPath and BackupPath on mgr's
// webhook server, reading through mgr's API reader.
func Setup(mgr ctrl.Manager, policy tenancy.Policy, o ...Option) {
	v := New(mgr.GetAPIReader(), mgr.GetScheme(), policy, o...)
	mgr.GetWebhookServer().Register(DatabasePath, &webhook.Admission{Handler: v})
	mgr.GetWebhookServer().Register(UserPath, &webhook.Admission{Handler: v})
	mgr.GetWebhookServer().Register(BackupPath, &webhook.Admission{Handler: v})
}

// A reference is a name that one field of an object gives to another object.
type reference struct {
	field string
	key   types.NamespacedName
}

// subject is the PostgresqlDatabase, PostgresqlUser or PostgresqlBackup under
// admission.
type subject struct {
	obj client.Object
	// kind is PostgresqlDatabase, PostgresqlUser or PostgresqlBackup.
	kind string
	// ref is how messages name it: its name, or namespace/name.
	ref string
	// kubectl names it on a kubectl command line.
	kubectl string
	// instances are the names its fields give its instance, the value field
	// first; the namespace of a cluster-scoped instance is empty.
	instances []reference
	// owners are the names a database's fields give its owner.
	owners   []reference
	policies xpv2.ManagementPolicies
	orphan   bool
	// database is a database's name in PostgreSQL.
	database string
	// login is a user's login name in PostgreSQL.
	login string
	// backupID is a backup's run ID (its external name), "" before it has one.
	backupID string
}

// pgName is the name s gives its login or database in PostgreSQL, and the
// field that sets it, for messages.
func (s *subject) pgName() (what, name string) {
	if s.isDatabase() {
		return "database", s.database
	}
	return "login", s.login
}

func (s *subject) namespace() string { return s.obj.GetNamespace() }

func (s *subject) isDatabase() bool {
	return s.kind == v1alpha1.PostgresqlDatabaseKind
}

func (s *subject) isBackup() bool {
	return s.kind == v1alpha1.PostgresqlBackupKind
}

// holding names what s holds in Cloud SQL, for the messages of its deletion,
// and the verb of its deletion there.
func (s *subject) holding() (what, verb string) {
	switch {
	case s.isBackup() && s.backupID != "":
		return "backup run " + s.backupID, "deleted"
	case s.isBackup():
		return "the backup it took", "deleted"
	}
	return "PostgreSQL database " + s.database, "dropped"
}

// instance is the instance s belongs to (the value field wins, as the
// reference resolver leaves it), and whether it is known yet.
func (s *subject) instance() (types.NamespacedName, bool) {
	if len(s.instances) == 0 {
		return types.NamespacedName{}, false
	}
	return s.instances[0].key, true
}

// names reports whether any of refs names key.
func names(refs []reference, key types.NamespacedName) bool {
	return slices.ContainsFunc(refs, func(r reference) bool { return r.key == key })
}

// add appends to refs a reference of field to name, unless name is empty.
func add(refs []reference, field, namespace, name string) []reference {
	if name == "" {
		return refs
	}
	return append(refs, reference{field: field, key: types.NamespacedName{Namespace: namespace, Name: name}})
}

// newObject returns an empty object of the kind req is about.
func newObject(req admission.Request) (client.Object, error) {
	switch {
	case req.Kind.Group == v1alpha1.Group && req.Kind.Kind == v1alpha1.PostgresqlDatabaseKind:
		return &v1alpha1.PostgresqlDatabase{}, nil
	case req.Kind.Group == v1alpha1.Group && req.Kind.Kind == v1alpha1.PostgresqlUserKind:
		return &v1alpha1.PostgresqlUser{}, nil
	case req.Kind.Group == nsv1alpha1.Group && req.Kind.Kind == nsv1alpha1.PostgresqlDatabaseKind:
		return &nsv1alpha1.PostgresqlDatabase{}, nil
	case req.Kind.Group == nsv1alpha1.Group && req.Kind.Kind == nsv1alpha1.PostgresqlUserKind:
		return &nsv1alpha1.PostgresqlUser{}, nil
	case req.Kind.Group == v1alpha1.Group && req.Kind.Kind == v1alpha1.PostgresqlBackupKind:
		return &v1alpha1.PostgresqlBackup{}, nil
	case req.Kind.Group == nsv1alpha1.Group && req.Kind.Kind == nsv1alpha1.PostgresqlBackupKind:
		return &nsv1alpha1.PostgresqlBackup{}, nil
	}
	return nil, errors.Errorf(errUnknownKind, req.Kind.Kind+"."+req.Kind.Group)
}

// subjectOf describes obj, one of the six kinds; nil for any other.
func subjectOf(obj client.Object) *subject {
	ns, name := obj.GetNamespace(), obj.GetName()
	s := &subject{obj: obj, ref: name}
	if ns != "" {
		s.ref = ns + "/" + name
	}
	resource := func(plural, group string) string {
		if ns == "" {
			return plural + "." + group + " " + name
		}
		return fmt.Sprintf("-n %s %s.%s %s", ns, plural, group, name)
	}
	switch o := obj.(type) {
	case *v1alpha1.PostgresqlDatabase:
		p := o.Spec.ForProvider
		s.kind, s.kubectl = v1alpha1.PostgresqlDatabaseKind, resource("postgresqldatabases", v1alpha1.Group)
		s.instances = clusterInstancesOf(p.Instance, p.InstanceRef)
		s.owners = add(s.owners, fieldOwner, "", p.Owner)
		if p.OwnerRef != nil {
			s.owners = add(s.owners, fieldOwnerRef, "", p.OwnerRef.Name)
		}
		s.policies, s.orphan = o.Spec.ManagementPolicies, o.Spec.DeletionPolicy == xpv2.DeletionOrphan
		s.database = databaseName(p.Name, name)
	case *v1alpha1.PostgresqlUser:
		p := o.Spec.ForProvider
		s.kind, s.kubectl = v1alpha1.PostgresqlUserKind, resource("postgresqlusers", v1alpha1.Group)
		s.instances = clusterInstancesOf(p.Instance, p.InstanceRef)
		s.policies, s.orphan = o.Spec.ManagementPolicies, o.Spec.DeletionPolicy == xpv2.DeletionOrphan
		s.login = cloudsql.UserName(&p.PostgresqlUserSettings, name)
	case *nsv1alpha1.PostgresqlDatabase:
		p := o.Spec.ForProvider
		s.kind, s.kubectl = nsv1alpha1.PostgresqlDatabaseKind, resource("postgresqldatabases", nsv1alpha1.Group)
		s.instances = instancesOf(ns, p.Instance, p.InstanceRef, p.ClusterInstance, p.ClusterInstanceRef)
		s.owners = add(s.owners, fieldOwner, ns, p.Owner)
		if p.OwnerRef != nil {
			s.owners = add(s.owners, fieldOwnerRef, ns, p.OwnerRef.Name)
		}
		s.policies = o.Spec.ManagementPolicies
		s.database = databaseName(p.Name, name)
	case *nsv1alpha1.PostgresqlUser:
		p := o.Spec.ForProvider
		s.kind, s.kubectl = nsv1alpha1.PostgresqlUserKind, resource("postgresqlusers", nsv1alpha1.Group)
		s.instances = instancesOf(ns, p.Instance, p.InstanceRef, p.ClusterInstance, p.ClusterInstanceRef)
		s.policies = o.Spec.ManagementPolicies
		s.login = cloudsql.UserName(&p.PostgresqlUserSettings, name)
	case *v1alpha1.PostgresqlBackup:
		p := o.Spec.ForProvider
		s.kind, s.kubectl = v1alpha1.PostgresqlBackupKind, resource("postgresqlbackups", v1alpha1.Group)
		s.instances = clusterInstancesOf(p.Instance, p.InstanceRef)
		s.policies, s.orphan = o.Spec.ManagementPolicies, o.Spec.DeletionPolicy == xpv2.DeletionOrphan
		s.backupID = meta.GetExternalName(o)
	case *nsv1alpha1.PostgresqlBackup:
		p := o.Spec.ForProvider
		s.kind, s.kubectl = nsv1alpha1.PostgresqlBackupKind, resource("postgresqlbackups", nsv1alpha1.Group)
		s.instances = instancesOf(ns, p.Instance, p.InstanceRef, p.ClusterInstance, p.ClusterInstanceRef)
		s.policies = o.Spec.ManagementPolicies
		s.backupID = meta.GetExternalName(o)
	default:
		return nil
	}
	return s
}

// clusterInstancesOf are the instances a cluster-scoped object's fields name:
// cluster-scoped ones.
func clusterInstancesOf(instance string, ref *xpv2.Reference) []reference {
	refs := add(nil, fieldInstance, "", instance)
	if ref != nil {
		refs = add(refs, fieldInstanceRef, "", ref.Name)
	}
	return refs
}

// instancesOf are the instances a namespaced object's fields name: of its
// namespace ns (the CRD keeps instanceRef's namespace empty), or
// cluster-scoped.
func instancesOf(ns, instance string, ref *xpv2.NamespacedReference, cluster string, clusterRef *xpv2.Reference) []reference {
	var refs []reference
	refs = add(refs, fieldInstance, ns, instance)
	if ref != nil {
		refs = add(refs, fieldInstanceRef, ns, ref.Name)
	}
	refs = add(refs, fieldClusterInstance, "", cluster)
	if clusterRef != nil {
		refs = add(refs, fieldClusterInstanceRef, "", clusterRef.Name)
	}
	return refs
}

// databaseName is a database's name in PostgreSQL: spec.forProvider.name, else
// metadata.name.
func databaseName(name *string, metaName string) string {
	if name != nil && *name != "" {
		return *name
	}
	return metaName
}

// Handle implements admission.Handler.
func (v *Validator) Handle(ctx context.Context, req admission.Request) admission.Response {
	switch req.Operation {
	case admissionv1.Create:
		s, r := v.decode(req, req.Object)
		if r != nil {
			return *r
		}
		return v.admit(ctx, s, nil)
	case admissionv1.Update:
		s, r := v.decode(req, req.Object)
		if r != nil {
			return *r
		}
		if s.obj.GetDeletionTimestamp() != nil {
			// Removing the finalizer must never be refused: the object
			// would stay for ever.
			return admission.Allowed(msgBeingDeleted)
		}
		old, r := v.decode(req, req.OldObject)
		if r != nil {
			return *r
		}
		return v.admit(ctx, s, old)
	case admissionv1.Delete:
		s, r := v.decode(req, req.OldObject)
		if r != nil {
			return *r
		}
		if !s.isDatabase() && !s.isBackup() {
			return admission.Allowed("")
		}
		return v.delete(ctx, s)
	default:
		return admission.Allowed("")
	}
}

// decode decodes raw as the kind req names, and denies an object that is not
// of the request's namespace.
func (v *Validator) decode(req admission.Request, raw runtime.RawExtension) (*subject, *admission.Response) {
	obj, err := newObject(req)
	if err != nil {
		r := admission.Errored(http.StatusBadRequest, err)
		return nil, &r
	}
	if err := v.decoder.DecodeRaw(raw, obj); err != nil {
		r := admission.Errored(http.StatusBadRequest, errors.Wrapf(err, errDecode, req.Kind.Kind))
		return nil, &r
	}
	s := subjectOf(obj)
	// The API server never sends an object of another namespace; anyone else
	// who reaches the webhook could, to have one namespace's object judged as
	// another's.
	if obj.GetNamespace() != req.Namespace {
		r := admission.Denied(fmt.Sprintf(errOtherNamespace, s.kind, obj.GetNamespace(), req.Namespace))
		return nil, &r
	}
	return s, nil
}

// admit judges a created object s, or s updated from old: the references that
// are new.
func (v *Validator) admit(ctx context.Context, s *subject, old *subject) admission.Response {
	var warnings []string
	for _, ref := range s.instances {
		if ref.key.Namespace != "" || s.namespace() == "" || (old != nil && names(old.instances, ref.key)) {
			// Only a namespaced object's cluster-scoped instance has an
			// allow-list to obey; a name the object had already was judged
			// when it was set.
			continue
		}
		deny, warn := v.clusterInstance(ctx, s, ref)
		if deny != nil {
			return *deny
		}
		warnings = append(warnings, warn...)
	}
	if s.isBackup() {
		// A backup names no login or database, and has no owner.
		return admission.Allowed("").WithWarnings(warnings...)
	}
	deny, warn := v.namesakes(ctx, s, old)
	if deny != nil {
		return *deny
	}
	warnings = append(warnings, warn...)
	if s.isDatabase() {
		deny, warn := v.owners(ctx, s, old)
		if deny != nil {
			return *deny
		}
		warnings = append(warnings, warn...)
	}
	return admission.Allowed("").WithWarnings(warnings...)
}

// clusterInstance judges whether the cluster-scoped instance ref admits the
// namespace of s.
func (v *Validator) clusterInstance(ctx context.Context, s *subject, ref reference) (*admission.Response, []string) {
	pi := &v1alpha1.PostgresqlInstance{}
	err := v.reader.Get(ctx, ref.key, pi)
	if kerrors.IsNotFound(err) {
		return nil, []string{fmt.Sprintf(warnNoInstance, s.kind, s.ref, ref.field, ref.key.Name, s.namespace())}
	}
	if err == nil {
		err = CheckClusterInstance(ctx, v.policy, v.reader, s.obj, ref.field, pi)
	}
	switch {
	case IsNotAdmitted(err):
		v.log.Debug("Denying a reference to a cluster-scoped PostgresqlInstance that does not admit the namespace", "kind", s.kind, "object", s.ref, "instance", ref.key.Name)
		r := admission.Denied(err.Error())
		return &r, nil
	case err != nil:
		return nil, []string{fmt.Sprintf(warnInstance, s.kind, s.ref, ref.key.Name, ref.field, s.namespace(), cloudsql.Truncate(err.Error()))}
	}
	return nil, nil
}

// namesakes denies s when another object of its kind, of either scope,
// already names the same login or database of the same instance: a name
// belongs to the object that made it. Only a new instance or name is judged.
// The controller holds the same line when two objects race past this check
// (tenancy.Records).
func (v *Validator) namesakes(ctx context.Context, s *subject, old *subject) (*admission.Response, []string) {
	inst, known := s.instance()
	if !known {
		// A selector names the instance: judged on the update that writes
		// the resolved name.
		return nil, nil
	}
	what, name := s.pgName()
	if old != nil {
		oldInst, oldKnown := old.instance()
		_, oldName := old.pgName()
		if oldKnown && oldInst == inst && oldName == name {
			return nil, nil
		}
	}
	others, err := v.naming(ctx, s, inst)
	if err != nil {
		return nil, []string{fmt.Sprintf(warnNamesake, s.kind, s.ref, what, name, instanceRef(inst), cloudsql.Truncate(err.Error()))}
	}
	for _, o := range others {
		oInst, ok := o.instance()
		_, oName := o.pgName()
		if !ok || oInst != inst || oName != name || (o.namespace() == s.namespace() && o.obj.GetName() == s.obj.GetName() && o.kind == s.kind && sameScope(o, s)) {
			continue
		}
		v.log.Debug("Denying an object that names a login or database another object names", "kind", s.kind, "object", s.ref, what, name, "other", o.ref)
		r := admission.Denied(fmt.Sprintf(errNamesake, s.kind, s.ref, what, name, instanceRef(inst), o.scopedRef(), what))
		return &r, nil
	}
	return nil, nil
}

// sameScope says whether a and b are of the same scope.
func sameScope(a, b *subject) bool { return (a.namespace() == "") == (b.namespace() == "") }

// scopedRef names s with its kind and scope, as kubectl would find it.
func (s *subject) scopedRef() string {
	if s.namespace() == "" {
		return fmt.Sprintf("%s %s (cluster-scoped)", s.kind, s.ref)
	}
	return fmt.Sprintf("%s %s", s.kind, s.ref)
}

// naming lists, live, the objects of s's kind, of both scopes, that may name
// instance inst: those of inst's namespace for a namespaced instance; every
// cluster-scoped one and every namespaced one for a cluster-scoped instance.
// Each listing asks the API server only for the objects whose instance field
// (or reference) names inst, through the CRDs' selectable fields, so that an
// admission costs what one instance holds, not what the cluster holds (5,000
// users of a fleet took seconds to list, on every admission). An API server
// that cannot select by those fields (before Kubernetes 1.31) is asked for
// every object of the scope instead.
func (v *Validator) naming(ctx context.Context, s *subject, inst types.NamespacedName) ([]*subject, error) {
	type query struct {
		list   func() client.ObjectList
		opts   []client.ListOption
		fields []string
	}
	var cluster, namespaced func() client.ObjectList
	if s.isDatabase() {
		cluster = func() client.ObjectList { return &v1alpha1.PostgresqlDatabaseList{} }
		namespaced = func() client.ObjectList { return &nsv1alpha1.PostgresqlDatabaseList{} }
	} else {
		cluster = func() client.ObjectList { return &v1alpha1.PostgresqlUserList{} }
		namespaced = func() client.ObjectList { return &nsv1alpha1.PostgresqlUserList{} }
	}
	queries := []query{{list: namespaced, opts: []client.ListOption{client.InNamespace(inst.Namespace)}, fields: []string{fieldInstance, fieldInstanceRef}}}
	if inst.Namespace == "" {
		queries = []query{
			{list: cluster, fields: []string{fieldInstance, fieldInstanceRef}},
			{list: namespaced, fields: []string{fieldClusterInstance, fieldClusterInstanceRef}},
		}
	}
	var out []*subject
	// An object that names the instance by value and by reference is
	// listed twice; the two scopes' names never meet (a cluster-scoped
	// object has no namespace).
	seen := map[types.NamespacedName]bool{}
	for _, q := range queries {
		lists, err := v.selecting(ctx, q.list, q.opts, q.fields, inst.Name)
		if err != nil {
			return nil, err
		}
		for _, l := range lists {
			if err := apimeta.EachListItem(l, func(o runtime.Object) error {
				obj, ok := o.(client.Object)
				key := client.ObjectKeyFromObject(obj)
				if !ok || seen[key] {
					return nil
				}
				seen[key] = true
				if sub := subjectOf(obj); sub != nil {
					out = append(out, sub)
				}
				return nil
			}); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// selecting lists the objects of one kind and scope whose fields (selectable
// fields of the CRD) name name, one listing per field, or, when the API server
// cannot select by them, every object of the scope in one listing. A kind the
// cluster does not serve names nothing.
func (v *Validator) selecting(ctx context.Context, newList func() client.ObjectList, opts []client.ListOption, fields []string, name string) ([]client.ObjectList, error) {
	var out []client.ObjectList
	for _, f := range fields {
		l := newList()
		err := v.reader.List(ctx, l, append(slices.Clip(opts), client.MatchingFields{f: name})...)
		switch {
		case apimeta.IsNoMatchError(err):
			return nil, nil
		case kerrors.IsBadRequest(err):
			// "field label not supported": an API server without
			// selectable fields, or CRDs installed before they had them.
			l = newList()
			if err := v.reader.List(ctx, l, opts...); err != nil {
				if apimeta.IsNoMatchError(err) {
					return nil, nil
				}
				return nil, err
			}
			return []client.ObjectList{l}, nil
		case err != nil:
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// owners judges whether the PostgresqlUsers that database s names as owner
// belong to its instance: those newly named, or all when its instance is new.
func (v *Validator) owners(ctx context.Context, s *subject, old *subject) (*admission.Response, []string) {
	inst, known := s.instance()
	if !known {
		// Only a selector names the instance: the controller checks the
		// owner once it is resolved, and so does this webhook, on the update
		// that writes the resolved name.
		return nil, nil
	}
	instanceIsNew := true
	if old != nil {
		oldInst, oldKnown := old.instance()
		instanceIsNew = !oldKnown || oldInst != inst
	}
	var warnings []string
	for _, ref := range s.owners {
		if !instanceIsNew && names(old.owners, ref.key) {
			continue
		}
		u, err := v.user(ctx, s, ref.key)
		switch {
		case kerrors.IsNotFound(err):
			// It may be created next; the controller waits for it.
			continue
		case err != nil:
			warnings = append(warnings, fmt.Sprintf(warnOwner, s.kind, s.ref, ref.key.Name, ref.field, cloudsql.Truncate(err.Error())))
			continue
		}
		uInst, uKnown := u.instance()
		if !uKnown || uInst == inst {
			continue
		}
		v.log.Debug("Denying a PostgresqlDatabase whose owner belongs to another instance", "object", s.ref, "owner", ref.key.Name, "instance", inst, "owner-instance", uInst)
		r := admission.Denied(fmt.Sprintf(errOwnerElsewhere, s.kind, s.ref, ref.field, u.ref, instanceRef(uInst), instanceRef(inst), instanceRef(inst), scopeOf(s)))
		return &r, nil
	}
	return nil, warnings
}

// user reads the PostgresqlUser key of the scope of database s.
func (v *Validator) user(ctx context.Context, s *subject, key types.NamespacedName) (*subject, error) {
	var u client.Object = &v1alpha1.PostgresqlUser{}
	if s.namespace() != "" {
		u = &nsv1alpha1.PostgresqlUser{}
	}
	if err := v.reader.Get(ctx, key, u); err != nil {
		return nil, err
	}
	return subjectOf(u), nil
}

// instanceRef is how messages name the instance key: namespace/name, or
// name (cluster-scoped).
func instanceRef(key types.NamespacedName) string {
	if key.Namespace == "" {
		return key.Name + " (cluster-scoped)"
	}
	return key.String()
}

// scopeOf says where the users that database s may name live.
func scopeOf(s *subject) string {
	if s.namespace() == "" {
		return "the cluster scope"
	}
	return "namespace " + s.namespace()
}

func (v *Validator) delete(ctx context.Context, s *subject) admission.Response {
	if s.obj.GetAnnotations()[v1alpha1.AnnotationAllowDeletion] == "true" {
		return admission.Allowed("deletion allowed by annotation " + v1alpha1.AnnotationAllowDeletion)
	}
	if ns := s.namespace(); ns != "" {
		// Denying the namespace's own deletion of its objects would keep it
		// Terminating for ever. The controller keeps the PostgreSQL database
		// of an object that goes this way, as the guard would have.
		n := &corev1.Namespace{}
		err := v.reader.Get(ctx, types.NamespacedName{Name: ns}, n)
		if err == nil && n.DeletionTimestamp != nil {
			what, verb := s.holding()
			v.log.Debug("Letting an object of a terminating namespace go, keeping what it holds", "kind", s.kind, "object", s.ref, "keeps", what)
			return admission.Allowed(fmt.Sprintf(msgNamespaceGoes, ns, s.kind, what, verb))
		}
	}
	what, _ := s.holding()
	effect := fmt.Sprintf("drops %s and its data", what)
	if s.isBackup() {
		effect = fmt.Sprintf("deletes %s of its Cloud SQL instance", what)
	}
	if !instance.DeletesExternal(s.policies, s.orphan) {
		effect = fmt.Sprintf("stops managing %s, which stays with its data", what)
		if s.isBackup() {
			effect = fmt.Sprintf("stops managing %s, which Cloud SQL keeps", what)
		}
	}
	return admission.Denied(fmt.Sprintf(errNoDeletion, s.kind, s.ref, effect, s.kubectl, v1alpha1.AnnotationAllowDeletion))
}

// A notAdmitted error says that a cluster-scoped PostgresqlInstance does not
// admit the namespace of an object that names it.
type notAdmitted struct{ msg string }

func (e *notAdmitted) Error() string { return e.msg }

// IsNotAdmitted reports whether err is CheckClusterInstance's answer that the
// instance does not admit the object's namespace.
func IsNotAdmitted(err error) bool {
	var n *notAdmitted
	return errors.As(err, &n)
}

// CheckSourceInstance returns nil when the cluster-scoped PostgresqlInstance
// pi may be the source of mg, a namespaced PostgresqlInstance that recovers
// from it (field names where mg names it, directly or through a
// PostgresqlBackup): only a namespace whose pods may receive pi's postgres
// password (policy.Allows) may copy all its data and get a postgres password
// to the copy; spec.tenancy, which admits users and databases, does not
// suffice. A refusal is an error that IsNotAdmitted recognises.
func CheckSourceInstance(ctx context.Context, policy tenancy.Policy, namespaces client.Reader, mg client.Object, field string, pi *v1alpha1.PostgresqlInstance) error {
	ns := mg.GetNamespace()
	ok, err := policy.Allows(ctx, pi, ns, func(ctx context.Context, name string) (*corev1.Namespace, error) {
		n := &corev1.Namespace{}
		return n, namespaces.Get(ctx, types.NamespacedName{Name: name}, n)
	})
	if err != nil {
		return errors.Wrapf(err, errCheckAdmitted, pi.GetName(), ns)
	}
	if ok {
		return nil
	}
	return &notAdmitted{msg: fmt.Sprintf(errNoSource, nsv1alpha1.PostgresqlInstanceKind, ns+"/"+mg.GetName(), field, pi.GetName(), ns, policy.Explain(pi, ns), ns)}
}

// CheckClusterInstance returns nil when the cluster-scoped PostgresqlInstance
// pi admits the namespace of mg, a namespaced PostgresqlDatabase,
// PostgresqlUser or PostgresqlBackup that names pi in field (for example
// spec.forProvider.clusterInstance). pi admits the namespaces of its
// spec.tenancy, and those whose pods it serves postgres, as the pod injector
// decides with policy (Policy.AdmitsObjects): its spec.injection, or the
// provider's [injection] default_allowed_namespaces without one; namespaces
// reads the namespace when either selects namespaces by label.
//
// When pi does not admit the namespace, the error (IsNotAdmitted) names mg,
// field and pi and says what to do. Any other error says that it cannot be
// decided (the namespace cannot be read, the selector is invalid).
//
// The admission webhook calls it when an object is created or names another
// instance; the controller must call it too, with the resolved
// spec.forProvider.clusterInstance, whenever it uses the instance: a
// clusterInstanceSelector is resolved only there, and the instance's
// allow-list may shrink after admission.
func CheckClusterInstance(ctx context.Context, policy tenancy.Policy, namespaces client.Reader, mg client.Object, field string, pi *v1alpha1.PostgresqlInstance) error {
	ns := mg.GetNamespace()
	ok, err := policy.AdmitsObjects(ctx, pi, ns, func(ctx context.Context, name string) (*corev1.Namespace, error) {
		n := &corev1.Namespace{}
		return n, namespaces.Get(ctx, types.NamespacedName{Name: name}, n)
	})
	if err != nil {
		return errors.Wrapf(err, errCheckAdmitted, pi.GetName(), ns)
	}
	if ok {
		return nil
	}
	kind := mg.GetObjectKind().GroupVersionKind().Kind
	switch mg.(type) {
	case *nsv1alpha1.PostgresqlDatabase:
		kind = nsv1alpha1.PostgresqlDatabaseKind
	case *nsv1alpha1.PostgresqlUser:
		kind = nsv1alpha1.PostgresqlUserKind
	case *nsv1alpha1.PostgresqlBackup:
		kind = nsv1alpha1.PostgresqlBackupKind
	}
	return &notAdmitted{msg: fmt.Sprintf(errNotAdmitted, kind, ns+"/"+mg.GetName(), field, pi.GetName(), ns,
		policy.ExplainObjects(pi, ns), ns, fieldInstance)}
}

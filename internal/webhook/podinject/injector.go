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

package podinject

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/providerconfig"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/configfile"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/metrics"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/tenancy"
)

// Path is where the injector is served; package/webhookconfigurations names it.
const Path = "/mutate-pods"

// Denials and errors. Each names the pod and the instance, and says what to do.
// An instance is named as target.String does: PostgresqlInstance "<name>" for the
// cluster-scoped kind, with its group and namespace for the namespaced one.
const (
	errDecode               = "cannot decode the pod"
	errOtherPodNamespace    = "pod %s: the admission request is for namespace %s but the pod's metadata.namespace is %s: the API server never sends that, so the request did not come from it; create pods through the API server"
	errEmptyAnnotation      = "pod %s: annotation %s is empty: set it to the metadata.name of a PostgresqlInstance, or remove it"
	errBadAnnotation        = "pod %s: annotation %s is %q, which names no PostgresqlInstance: set it to the metadata.name of a PostgresqlInstance, to <namespace>/<name> of a namespaced one in the pod's own namespace, or to /<name> of a cluster-scoped one"
	errNoInstance           = "pod %s: annotation %s names PostgresqlInstance %q, which exists neither in the pod's namespace %s (%s) nor cluster-scoped (%s): a namespaced PostgresqlInstance serves only pods of its own namespace; create one here, or set the annotation to the metadata.name of an existing PostgresqlInstance (not its spec.forProvider.name)"
	errNoNamespacedInstance = "pod %s: annotation %s names PostgresqlInstance %q of namespace %s (%s), which does not exist: create it, or set the annotation to the metadata.name of an existing PostgresqlInstance (not its spec.forProvider.name)"
	errNoClusterInstance    = "pod %s: annotation %s names the cluster-scoped PostgresqlInstance %q (%s), which does not exist: create it, or set the annotation to the metadata.name of an existing PostgresqlInstance (not its spec.forProvider.name)"
	errOtherNamespace       = "pod %s: annotation %s names %q, a PostgresqlInstance of namespace %s, but a namespaced PostgresqlInstance serves only pods of its own namespace and this pod is in %s: use a PostgresqlInstance of namespace %s, or a cluster-scoped one (as /<name>) whose spec.injection allows %s"
	errGetInstance          = "pod %s: cannot read PostgresqlInstance %q named by annotation %s"
	errKindNotServed        = "pod %s: annotation %s names PostgresqlInstance %q, but this cluster serves no PostgresqlInstances: activate the ManagedResourceDefinition postgresqlinstances.cloudsql.m.travelaudience.com or postgresqlinstances.cloudsql.travelaudience.com (with a ManagedResourceActivationPolicy), or remove the annotation"
	errNamespacedNotServed  = "pod %s: annotation %s names %q, a namespaced PostgresqlInstance, but this cluster does not serve namespaced PostgresqlInstances: activate the ManagedResourceDefinition postgresqlinstances.cloudsql.m.travelaudience.com (with a ManagedResourceActivationPolicy), or name a cluster-scoped PostgresqlInstance as /<name>"
	errClusterNotServed     = "pod %s: annotation %s is %q, which names a cluster-scoped PostgresqlInstance, but this cluster does not serve cluster-scoped PostgresqlInstances: activate the ManagedResourceDefinition postgresqlinstances.cloudsql.travelaudience.com (with a ManagedResourceActivationPolicy), or name a PostgresqlInstance of the pod's namespace as <namespace>/<name>"
	errNotAllowed           = "pod %s: PostgresqlInstance %q may not be used from namespace %s: %s"
	errPolicy               = "pod %s: cannot decide whether namespace %s may use PostgresqlInstance %q"
	errTenantOnly           = "namespace %s may put its own PostgresqlUsers and PostgresqlDatabases on it (spec.tenancy), but its pods never receive the instance's postgres password, which can do anything to every team's data: " +
		"name a PostgresqlUser of this namespace with the annotation %s instead, or, if pods of %s must be the instance's administrator, ask the instance's owner to add the namespace to spec.injection.allowedNamespaces"
	errNotLent      = "pod %s: %s gets nothing from the configuration it names: %v"
	errLendCheck    = "pod %s: cannot decide whether ClusterProviderConfig %q, which %s names, is lent to namespace %s (the pod is refused until it can be read; try again)"
	errNotReady     = "pod %s: %s is not ready (%s): create the pod again once `%s` shows READY True (a Deployment's ReplicaSet retries by itself)"
	errNoSecretRef  = "pod %s: %s has no spec.writeConnectionSecretToRef, so there is no password to give the pod: set it on the instance"
	errUnconfirmed  = "pod %s: the provider is setting a new password for %s and Cloud SQL has not confirmed it yet: create the pod again in a minute"
	errNoPgpass     = "pod %s: connection secret %s/%s of %s holds no %s yet: wait until the provider has published the instance's connection details, then create the pod again"
	errGetSecret    = "pod %s: cannot read connection secret %s/%s of %s"
	errGetPC        = "pod %s: cannot read %s of %s"
	errNoProxyKey   = "pod %s: %s names key %q of secret %s/%s in spec.proxyCredentials, which does not exist: fix spec.proxyCredentials or create the secret"
	errGetProxyKey  = "pod %s: cannot read secret %s/%s named by spec.proxyCredentials of %s"
	errBadPodKey    = "pod %s: annotation %s is %q, which is not the name of a Secret: set it to the name of a Secret of the pod's namespace whose key %s holds the proxy's Google credentials file, or remove it"
	errNoPodKey     = "pod %s: annotation %s names secret %s/%s, which does not exist or has no key %s: create it with the proxy's Google credentials file (a service-account key) under that key, or remove the annotation"
	errGetPodKey    = "pod %s: cannot read secret %s/%s named by annotation %s"
	errInject       = "pod %s: cannot inject the Cloud SQL Auth Proxy for %s: %s"
	errModeChanged  = "pod %s: %s logs in %s, but another admission webhook changed the pod's annotations after the injector had given its proxy the arguments to log in %s: have that webhook leave the injector's annotations alone, and create the pod again"
	errShapeChanged = "pod %s: the pod's proxy-* annotations now ask for %s, but another admission webhook changed them after the injector had made the proxy for %s: have that webhook leave the injector's annotations alone, and create the pod again"
	errCopy         = "pod %s: cannot copy the credentials of %s into namespace %s"
	errEncode       = "cannot encode the injected pod"
	errQuantity     = "%s: %q is not a Kubernetes quantity"
	errShape        = "pod %s: cannot inject the Cloud SQL Auth Proxy for %s as the pod's annotations ask: %s"
	errLongName     = "pod %s: %s cannot be injected: its copies in namespaces are labelled %s=<its name>, and a label value holds at most 63 characters; use an instance with a shorter metadata.name (spec.forProvider.name may stay as it is)"
)

// Config is the injector's part of the provider's configuration file.
type Config struct {
	// ProxyImage is the Cloud SQL Auth Proxy v2 image.
	ProxyImage string
	// WriterImage runs the init containers that write the password files.
	WriterImage string
	// Native runs the proxy as a native sidecar.
	Native bool
	// ProxyResources are the proxy container's requests and limits.
	ProxyResources corev1.ResourceRequirements
	// Limits cap what pods may ask of their proxy with the proxy-*
	// annotations; an instance's provider configuration may narrow them.
	Limits Limits
	// Policy decides which namespaces may request which instances.
	Policy tenancy.Policy
}

// ConfigFrom takes the injector's settings from the provider's configuration;
// native says whether the proxy runs as a native sidecar (see
// webhook.NativeSidecars).
func ConfigFrom(c configfile.Config, native bool) (Config, error) {
	res := corev1.ResourceRequirements{Requests: corev1.ResourceList{}}
	for _, q := range []struct {
		key, value string
		into       corev1.ResourceList
		name       corev1.ResourceName
	}{
		{"proxy.cpu_request", c.Proxy.CPURequest, res.Requests, corev1.ResourceCPU},
		{"proxy.memory_request", c.Proxy.MemoryRequest, res.Requests, corev1.ResourceMemory},
	} {
		v, err := resource.ParseQuantity(q.value)
		if err != nil {
			return Config{}, errors.Errorf(errQuantity, q.key, q.value)
		}
		q.into[q.name] = v
	}
	if c.Proxy.MemoryLimit != "" {
		v, err := resource.ParseQuantity(c.Proxy.MemoryLimit)
		if err != nil {
			return Config{}, errors.Errorf(errQuantity, "proxy.memory_limit", c.Proxy.MemoryLimit)
		}
		res.Limits = corev1.ResourceList{corev1.ResourceMemory: v}
	}
	limits, err := LimitsFrom(c.Proxy)
	if err != nil {
		return Config{}, err
	}
	return Config{
		Limits:         limits,
		ProxyImage:     c.Proxy.Image,
		WriterImage:    c.Injection.PgpassWriterImage,
		Native:         native,
		ProxyResources: res,
		Policy:         tenancy.Policy{DefaultAllowedNamespaces: c.Injection.DefaultAllowedNamespaces},
	}, nil
}

// An Injector is the admission handler of pods. It answers pods without the
// annotations with an unchanged admission, denies pods whose instance (or
// user) is missing, not ready or not allowed in their namespace, and otherwise
// copies the instance's password, or the user's, (and the proxy's key) into
// the pod's namespace and returns the pod changed by Mutate. Dry-run requests
// copy nothing.
type Injector struct {
	cached  client.Reader
	live    client.Reader
	writer  client.Writer
	decoder admission.Decoder
	cfg     Config
	log     logging.Logger
	resolve []providerconfig.ResolveOption
}

// An Option configures an Injector or a copy reconciler.
type Option func(*options)

type options struct {
	log     logging.Logger
	resolve []providerconfig.ResolveOption
}

// WithNamespacedEndpoints allows namespaced ProviderConfigs to name one of
// urls as spec.endpoint ("*": any), which the proxies are given; by default
// they may name none ([tenancy] namespaced_endpoints).
func WithNamespacedEndpoints(urls []string) Option {
	return func(o *options) { o.resolve = append(o.resolve, providerconfig.WithNamespacedEndpoints(urls)) }
}

// WithLogger logs what the injector or a copy reconciler does at debug level.
func WithLogger(l logging.Logger) Option {
	return func(o *options) { o.log = l }
}

func newOptions(o []Option) options {
	opts := options{log: logging.NewNopLogger()}
	for _, fn := range o {
		fn(&opts)
	}
	return opts
}

// NewInjector returns an injector that reads instances, users, ProviderConfigs
// and namespaces through cached, confirms every denial and reads secrets through
// live (uncached, so that the injector does not cache every secret of the
// cluster), and writes the copies with writer.
func NewInjector(cached, live client.Reader, writer client.Writer, scheme *runtime.Scheme, cfg Config, o ...Option) *Injector {
	opts := newOptions(o)
	return &Injector{cached: cached, live: live, writer: writer, decoder: admission.NewDecoder(scheme), cfg: cfg, log: opts.log, resolve: opts.resolve}
}

// Handle implements admission.Handler. It counts, by namespace, the pods it
// injected, denied, or failed on (metrics.Injections); pods it leaves alone are
// not counted.
func (i *Injector) Handle(ctx context.Context, req admission.Request) admission.Response {
	resp := i.handle(ctx, req)
	outcome := ""
	switch {
	case resp.Allowed && len(resp.Patches) > 0:
		outcome = metrics.OutcomeInjected
	case !resp.Allowed && resp.Result != nil && resp.Result.Code == http.StatusForbidden:
		outcome = metrics.OutcomeDenied
	case !resp.Allowed:
		outcome = metrics.OutcomeError
	}
	if outcome != "" {
		metrics.Injections.WithLabelValues(req.Namespace, outcome).Inc()
	}
	return resp
}

// handle decides the admission of one pod.
func (i *Injector) handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create {
		return admission.Allowed("the injector changes pods only when they are created")
	}
	pod := &corev1.Pod{}
	if err := i.decoder.Decode(req, pod); err != nil {
		return admission.Errored(http.StatusBadRequest, errors.Wrap(err, errDecode))
	}
	// The request's namespace is what the API server authorized; a pod that
	// says otherwise would have its copies made where the request was not
	// authorized. Pods often come without one: then the request's is theirs.
	if pod.Namespace != "" && pod.Namespace != req.Namespace {
		return admission.Denied(fmt.Sprintf(errOtherPodNamespace, podRef(pod.Namespace, pod), req.Namespace, pod.Namespace))
	}
	ref := podRef(req.Namespace, pod)
	name, wantsInstance := pod.Annotations[v1alpha1.AnnotationInstanceName]
	userName, wantsUser := pod.Annotations[v1alpha1.AnnotationUserName]
	_, wantsDatabase := pod.Annotations[v1alpha1.AnnotationDatabaseName]
	switch {
	case !wantsInstance && !wantsUser:
		return admission.Allowed("the pod requests neither a PostgresqlInstance nor a PostgresqlUser")
	case wantsInstance && wantsUser:
		return admission.Denied(fmt.Sprintf(errBothAnnotations, ref, v1alpha1.AnnotationInstanceName, v1alpha1.AnnotationUserName,
			v1alpha1.AnnotationUserName, v1alpha1.AnnotationInstanceName))
	case wantsInstance && wantsDatabase:
		return admission.Denied(fmt.Sprintf(errDatabaseWithoutUser, ref, v1alpha1.AnnotationDatabaseName, v1alpha1.AnnotationUserName,
			v1alpha1.AnnotationInstanceName, v1alpha1.AnnotationDatabaseName))
	case wantsInstance && name == "":
		return admission.Denied(fmt.Sprintf(errEmptyAnnotation, ref, v1alpha1.AnnotationInstanceName))
	case wantsUser && userName == "":
		return admission.Denied(fmt.Sprintf(errEmptyUserAnnotation, ref, v1alpha1.AnnotationUserName))
	}
	if LeftAsIs(pod, i.cfg.ProxyImage) {
		return admission.Allowed("the pod has a Cloud SQL Auth Proxy of its own, or is marked injected")
	}

	x, what, resp := i.resolvePod(ctx, ref, req.Namespace, pod)
	if resp != nil {
		return *resp
	}
	if was, ok := ParseProxyConfig(pod.Annotations[AnnotationProxyConfig]); ok && pod.Annotations[v1alpha1.AnnotationProxyInjected] == injectedValue {
		// A reinvocation after another webhook changed the annotations: the
		// proxy runs as the first pass made it, and cannot take the other
		// way of logging in, nor another shape.
		if was.IAMAuthN != x.IAMAuthN {
			return admission.Denied(fmt.Sprintf(errModeChanged, ref, what, loginMode(x.IAMAuthN), loginMode(was.IAMAuthN)))
		}
		if now := x.Shape.String(); was.Shape != now {
			return admission.Denied(fmt.Sprintf(errShapeChanged, ref, orNone(now), orNone(was.Shape)))
		}
	}
	out, err := Mutate(pod, x.Inputs)
	if err != nil {
		return admission.Denied(fmt.Sprintf(errInject, ref, what, err.Error()))
	}
	if equality.Semantic.DeepEqual(out, pod) {
		return admission.Allowed("the pod is injected already")
	}
	if pod.Annotations[v1alpha1.AnnotationProxyInjected] != injectedValue {
		// What this proxy starts with, for the rollout to compare; a
		// reinvocation leaves the first injection's record.
		out.Annotations[AnnotationProxyConfig] = ProxyConfigOf(x.Inputs).String()
		if out.Labels == nil {
			out.Labels = map[string]string{}
		}
		out.Labels[LabelInjected] = injectedValue
	}
	if req.DryRun == nil || !*req.DryRun {
		for _, s := range x.copies {
			if err := ensureCopy(ctx, i.live, i.writer, s); err != nil {
				return admission.Errored(http.StatusInternalServerError, errors.Wrapf(err, errCopy, ref, what, req.Namespace))
			}
		}
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, errors.Wrap(err, errEncode))
	}
	i.log.Debug("Injecting the Cloud SQL Auth Proxy", "pod", ref, "instance", x.Instance, "user", x.User, "dryRun", req.DryRun != nil && *req.DryRun)
	return admission.PatchResponseFromRaw(req.Object.Raw, raw)
}

// loginMode says how a proxy logs in, in messages.
func loginMode(iam bool) string {
	if iam {
		return "with IAM database authentication"
	}
	return "with a password"
}

// resolvePod reads what a pod of namespace ns needs of the PostgresqlInstance
// or PostgresqlUser its annotations name, and that object for messages, or
// the denial.
func (i *Injector) resolvePod(ctx context.Context, ref, ns string, pod *corev1.Pod) (prepared, fmt.Stringer, *admission.Response) {
	if userName, ok := pod.Annotations[v1alpha1.AnnotationUserName]; ok {
		ut, t, resp := i.usableUser(ctx, ref, ns, userName)
		if resp != nil {
			return prepared{}, nil, resp
		}
		x, resp := i.prepareUser(ctx, ref, ns, ut, t, pod.Annotations)
		x.target = t
		return x, ut, resp
	}
	t, resp := i.usableInstance(ctx, ref, ns, pod.Annotations[v1alpha1.AnnotationInstanceName])
	if resp != nil {
		return prepared{}, nil, resp
	}
	x, resp := i.prepare(ctx, ref, ns, t, pod.Annotations)
	x.target = t
	return x, t, resp
}

// usableInstance returns the instance that the annotation's value names for a
// pod of namespace ns if the pod may use it and it is ready, else the denial.
// Denials are confirmed against the API server: the cache may not have seen an
// instance that was just created, made ready, or opened to the namespace. So
// are allows of cluster-scoped instances, whose spec.injection may have just
// closed the namespace out.
func (i *Injector) usableInstance(ctx context.Context, ref, ns, value string) (target, *admission.Response) {
	l, ok := parseAnnotation(value)
	if !ok {
		r := admission.Denied(fmt.Sprintf(errBadAnnotation, ref, v1alpha1.AnnotationInstanceName, value))
		return target{}, &r
	}
	if l.namespace != "" && l.namespace != ns {
		r := admission.Denied(fmt.Sprintf(errOtherNamespace, ref, v1alpha1.AnnotationInstanceName, value, l.namespace, ns, ns, ns))
		return target{}, &r
	}
	var deny admission.Response
	for _, r := range []client.Reader{i.cached, i.live} {
		res, err := resolve(ctx, r, i.live, ns, l)
		if err != nil {
			deny = admission.Errored(http.StatusInternalServerError, errors.Wrapf(err, errGetInstance, ref, value, v1alpha1.AnnotationInstanceName))
			continue
		}
		if !res.found {
			deny = admission.Denied(res.denial(instanceKind, ref, ns, value, l))
			continue
		}
		t := res.value
		confirm, resp := i.admitInstance(ctx, r, ref, ns, t, false)
		if resp != nil {
			deny = *resp
			continue
		}
		if confirm && r != i.live {
			continue
		}
		return t, nil
	}
	return target{}, &deny
}

// admitInstance decides, reading through r, whether a pod of namespace ns may
// use instance t: whether its spec.injection (or the default) allows ns, its
// ClusterProviderConfig is lent to ns, and it is ready. It returns the denial,
// else whether the decision must be confirmed against the API server before
// anything is copied into ns.
//
// forUser says that the pod names a user of t, not t itself: then t must
// admit ns's users and databases (spec.tenancy, or spec.injection), else it
// must give ns's pods postgres (spec.injection, or the default).
func (i *Injector) admitInstance(ctx context.Context, r client.Reader, ref, ns string, t target, forUser bool) (confirm bool, deny *admission.Response) {
	fail := func(resp admission.Response) (bool, *admission.Response) { return false, &resp }
	if t.cluster != nil {
		allows, explain := i.cfg.Policy.Allows, i.cfg.Policy.Explain
		if forUser {
			allows, explain = i.cfg.Policy.AdmitsObjects, i.cfg.Policy.ExplainObjects
		}
		ok, err := allows(ctx, t.cluster, ns, tenancy.NamespaceGetter(r))
		if err != nil {
			return fail(admission.Errored(http.StatusInternalServerError, errors.Wrapf(err, errPolicy, ref, ns, t.name())))
		}
		if !ok {
			why := explain(t.cluster, ns)
			if !forUser {
				// A tenant of the instance gets its own logins, never
				// the administrator's: say so rather than only "no".
				if tenant, err := i.cfg.Policy.AdmitsObjects(ctx, t.cluster, ns, tenancy.NamespaceGetter(r)); err == nil && tenant {
					why = fmt.Sprintf(errTenantOnly, ns, v1alpha1.AnnotationUserName, ns)
				}
			}
			return fail(admission.Denied(fmt.Sprintf(errNotAllowed, ref, t.name(), ns, why)))
		}
	}
	// A namespaced instance whose ClusterProviderConfig is not lent to its
	// namespace gives its pods nothing: no proxy key, no password.
	// Only a decision that it is not lent is a denial; one that could
	// not be made (a read that failed) is an error the API server may
	// retry, not an answer about the configuration.
	lent := false
	if npi, ok := t.pi.(*nsv1alpha1.PostgresqlInstance); ok {
		pcRef := npi.GetProviderConfigReference()
		lent = pcRef != nil && pcRef.Kind == nsv1alpha1.ClusterProviderConfigKind
		err := tenancy.CheckNamespacedRef(ctx, r, i.live, ns, pcRef)
		switch {
		case tenancy.IsNotLent(err):
			return fail(admission.Denied(fmt.Sprintf(errNotLent, ref, t, err)))
		case err != nil:
			return fail(admission.Errored(http.StatusInternalServerError, errors.Wrapf(err, errLendCheck, ref, pcRef.Name, t, ns)))
		}
	}
	if why := notReady(t.pi); why != "" {
		return fail(admission.Denied(fmt.Sprintf(errNotReady, ref, t, why, t.kubectlGet())))
	}
	// The cache may not have seen spec.injection, or a
	// ClusterProviderConfig's spec.namespaces, shrink yet: the password goes
	// to the namespace only once the API server agrees.
	return t.cluster != nil || lent, nil
}

// notReady says why pi cannot be connected to yet, or "" when it can.
func notReady(pi instance) string {
	if why := notReadyCondition(pi); why != "" {
		return why
	}
	if pi.Observation().ConnectionName == "" {
		return "status.atProvider.connectionName is empty"
	}
	return ""
}

// notReadyCondition says why o's Ready condition is not True, or "" when it is.
func notReadyCondition(o interface {
	GetCondition(xpv2.ConditionType) xpv2.Condition
}) string {
	c := o.GetCondition(xpv2.TypeReady)
	switch {
	case c.Status != corev1.ConditionTrue && c.Reason == "":
		return "it has no Ready condition yet"
	case c.Status != corev1.ConditionTrue && c.Message != "":
		return fmt.Sprintf("Ready is %s, reason %s: %s", c.Status, c.Reason, c.Message)
	case c.Status != corev1.ConditionTrue:
		return fmt.Sprintf("Ready is %s, reason %s", c.Status, c.Reason)
	}
	return ""
}

// prepared are Mutate's inputs for a pod in ns, and the secrets to copy there.
type prepared struct {
	Inputs
	copies []*corev1.Secret
	// target is the PostgresqlInstance the pod connects to.
	target target
}

// prepare reads what the pod needs of t. The password and the proxy's key of a
// namespaced instance usually live in the pod's namespace already, and are
// mounted as they are; what lives elsewhere is copied into the pod's namespace.
func (i *Injector) prepare(ctx context.Context, ref, ns string, t target, annotations map[string]string) (prepared, *admission.Response) {
	fail := func(r admission.Response) (prepared, *admission.Response) { return prepared{}, &r }

	sr := t.pi.ConnectionSecret()
	if sr == nil {
		return fail(admission.Denied(fmt.Sprintf(errNoSecretRef, ref, t)))
	}
	cs := &corev1.Secret{}
	err := i.live.Get(ctx, types.NamespacedName{Namespace: sr.Namespace, Name: sr.Name}, cs)
	if err != nil && !kerrors.IsNotFound(err) {
		return fail(admission.Errored(http.StatusInternalServerError, errors.Wrapf(err, errGetSecret, ref, sr.Namespace, sr.Name, t)))
	}
	pgpass := cs.Data[cloudsql.ConnectionKeyPgpass]
	if len(pgpass) == 0 {
		return fail(admission.Denied(fmt.Sprintf(errNoPgpass, ref, sr.Namespace, sr.Name, t, cloudsql.ConnectionKeyPgpass)))
	}
	// A password the provider is still setting may never work: a pod started with
	// it would fail to connect until restarted.
	if cs.GetAnnotations()[v1alpha1.AnnotationPasswordUnconfirmed] == "true" {
		return fail(admission.Denied(fmt.Sprintf(errUnconfirmed, ref, t)))
	}
	x := prepared{Inputs: i.inputs(t)}
	x.PgpassSecret = sr.Name
	// The cluster-scoped kind's password is always copied, so that the
	// copy reconciler can take it away from a namespace that its policy stops allowing.
	if sr.Namespace != ns || t.cluster != nil {
		if resp := copyable(ref, t); resp != nil {
			return fail(*resp)
		}
		x.PgpassSecret = t.copyName(CopyPgpass)
		x.copies = append(x.copies, pgpassCopy(t, ns, pgpass))
	}
	if resp := i.prepareProxy(ctx, ref, ns, t, &x, annotations); resp != nil {
		return fail(*resp)
	}
	return x, nil
}

// inputs are Mutate's inputs for instance t, without the password file and
// the proxy's key.
func (i *Injector) inputs(t target) Inputs {
	return Inputs{
		Instance:       t.resource(),
		ConnectionName: t.pi.Observation().ConnectionName,
		PrivateIP:      t.pi.Observation().PublicIP == "",
		ProxyImage:     i.cfg.ProxyImage,
		WriterImage:    i.cfg.WriterImage,
		Native:         i.cfg.Native,
		ProxyResources: i.cfg.ProxyResources,
		Rand:           rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())), // math/rand: ports need no secrecy
	}
}

// prepareProxy adds to x what the proxy takes from t's configuration: its
// Admin API endpoint, and its key, mounted as it is when it is in the pod's
// namespace already and a namespaced instance's, else copied there. A pod
// that names credentials of its own (AnnotationProxyCredentialsSecret) gets
// those instead, and a pod that logs in with IAM never gets the
// configuration's: the proxy's identity is then the login.
func (i *Injector) prepareProxy(ctx context.Context, ref, ns string, t target, x *prepared, annotations map[string]string) *admission.Response {
	own, named := annotations[v1alpha1.AnnotationProxyCredentialsSecret]
	pc, key, resp := i.proxyKey(ctx, ref, t, !named && !x.IAMAuthN)
	if resp != nil {
		return resp
	}
	x.AdminAPIEndpoint = pc.endpoint
	obs := t.pi.Observation()
	shape, err := ParseShape(annotations, i.cfg.ProxyResources, i.cfg.Limits.Narrow(pc.limits, pc.name),
		Paths{Public: obs.PublicIP != "", Private: obs.PrivateIP != "", PSC: obs.PSCEnabled})
	if err != nil {
		r := admission.Denied(fmt.Sprintf(errShape, ref, t, err))
		return &r
	}
	x.Shape = shape
	switch shape.IPType {
	case v1alpha1.ProxyIPTypePublic:
		x.PrivateIP = false
	case v1alpha1.ProxyIPTypePrivate:
		x.PrivateIP = true
	case v1alpha1.ProxyIPTypePSC:
		x.PrivateIP, x.PSC = false, true
	}
	switch sel := pc.key; {
	case named:
		return i.podProxyKey(ctx, ref, ns, own, x)
	case sel == nil || x.IAMAuthN:
	case sel.Namespace == ns && t.cluster == nil:
		x.ProxyCredentialsSecret, x.ProxyCredentialsSecretKey, x.ProxyCredentialsHash = sel.Name, sel.Key, KeyHash(key)
	default:
		if resp := copyable(ref, t); resp != nil {
			return resp
		}
		x.ProxyCredentialsSecret, x.ProxyCredentialsHash = t.copyName(CopyProxyCredentials), KeyHash(key)
		x.copies = append(x.copies, proxyKeyCopy(t, ns, key))
	}
	return nil
}

// podProxyKey makes the proxy authenticate with the credentials file of
// secret name in the pod's namespace ns, which the pod's annotation named,
// once the secret shows it holds one: a proxy without it would fail at
// every connection.
func (i *Injector) podProxyKey(ctx context.Context, ref, ns, name string, x *prepared) *admission.Response {
	deny := func(msg string) *admission.Response {
		r := admission.Denied(msg)
		return &r
	}
	if name == "" || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return deny(fmt.Sprintf(errBadPodKey, ref, v1alpha1.AnnotationProxyCredentialsSecret, name, ProxyCredentialsKey))
	}
	s := &corev1.Secret{}
	err := i.live.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, s)
	if err != nil && !kerrors.IsNotFound(err) {
		r := admission.Errored(http.StatusInternalServerError, errors.Wrapf(err, errGetPodKey, ref, ns, name, v1alpha1.AnnotationProxyCredentialsSecret))
		return &r
	}
	if len(s.Data[ProxyCredentialsKey]) == 0 {
		return deny(fmt.Sprintf(errNoPodKey, ref, v1alpha1.AnnotationProxyCredentialsSecret, ns, name, ProxyCredentialsKey))
	}
	x.ProxyCredentialsSecret, x.ProxyCredentialsSecretKey = name, ProxyCredentialsKey
	x.ProxyCredentialsHash = KeyHash(s.Data[ProxyCredentialsKey])
	return nil
}

// copyable denies the pod when the copies of t cannot carry its name in a
// label.
func copyable(ref string, t target) *admission.Response {
	if len(validation.IsValidLabelValue(t.name())) == 0 {
		return nil
	}
	r := admission.Denied(fmt.Sprintf(errLongName, ref, t, t.label()))
	return &r
}

// proxyKey is what the proxy takes from t's configuration, and the
// service-account key it names when the proxy is to use it (wanted), nil when
// it names none (the proxy then authenticates as the pod, with Workload
// Identity).
func (i *Injector) proxyKey(ctx context.Context, ref string, t target, wanted bool) (proxyConfig, []byte, *admission.Response) {
	fail := func(r admission.Response) (proxyConfig, []byte, *admission.Response) { return proxyConfig{}, nil, &r }
	pc, err := t.proxyConfig(ctx, i.cached, i.resolve...)
	if providerconfig.IsRefused(err) {
		return fail(admission.Denied(errors.Wrapf(err, errGetPC, ref, pc.name, t).Error()))
	}
	if err != nil {
		return fail(admission.Errored(http.StatusInternalServerError, errors.Wrapf(err, errGetPC, ref, pc.name, t)))
	}
	sel := pc.key
	if sel == nil || !wanted {
		return pc, nil, nil
	}
	s := &corev1.Secret{}
	err = i.live.Get(ctx, types.NamespacedName{Namespace: sel.Namespace, Name: sel.Name}, s)
	if err != nil && !kerrors.IsNotFound(err) {
		return fail(admission.Errored(http.StatusInternalServerError, errors.Wrapf(err, errGetProxyKey, ref, sel.Namespace, sel.Name, pc.name)))
	}
	if len(s.Data[sel.Key]) == 0 {
		return fail(admission.Denied(fmt.Sprintf(errNoProxyKey, ref, pc.name, sel.Key, sel.Namespace, sel.Name)))
	}
	return pc, s.Data[sel.Key], nil
}

// pcName is the name of pi's ProviderConfig.
func pcName(pi *v1alpha1.PostgresqlInstance) string {
	if r := pi.GetProviderConfigReference(); r != nil && r.Name != "" {
		return r.Name
	}
	return "default"
}

// providerConfig reads pi's ProviderConfig; nil when it does not exist (the
// controller reports that on the instance, and the proxy then needs no key).
func providerConfig(ctx context.Context, r client.Reader, pi *v1alpha1.PostgresqlInstance) (*v1alpha1.ProviderConfig, error) {
	pc := &v1alpha1.ProviderConfig{}
	err := r.Get(ctx, types.NamespacedName{Name: pcName(pi)}, pc)
	if kerrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return pc, nil
}

// podRef names a pod in messages; pods made by controllers have only a
// generateName when they are admitted.
func podRef(ns string, pod *corev1.Pod) string {
	switch {
	case pod.Name != "":
		return ns + "/" + pod.Name
	case pod.GenerateName != "":
		return ns + "/" + pod.GenerateName + "<generated>"
	default:
		return ns + "/<unnamed>"
	}
}

// Serve serves an Injector at Path on mgr's webhook server, and indexes the
// cache of secrets' metadata for the copy reconcilers, which must happen before
// mgr starts. The copy reconcilers are added apart (SetupCopies), once the
// kinds they watch are served: the
// injector answers from the start, and denies pods while PostgresqlInstances
// are not served.
func Serve(mgr ctrl.Manager, cfg Config, o ...Option) error {
	if err := indexCopies(mgr); err != nil {
		return err
	}
	inj := NewInjector(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetClient(), mgr.GetScheme(), cfg, o...)
	mgr.GetWebhookServer().Register(Path, &webhook.Admission{Handler: inj})
	return nil
}

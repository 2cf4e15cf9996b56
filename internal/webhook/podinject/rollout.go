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
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"golang.org/x/time/rate"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// RolloutName names the rollout controller.
const RolloutName = "proxy-rollout"

// ConditionProxyRollout is the condition of a PostgresqlInstance that says
// which workloads the rollout restarted for it last, and why.
const ConditionProxyRollout xpv2.ConditionType = "ProxyRollout"

// Reasons of ConditionProxyRollout.
const (
	ReasonRestarted xpv2.ConditionReason = "Restarted"
	ReasonWaiting   xpv2.ConditionReason = "WaitingForRateLimit"
	// ReasonNoRights says that a workload's namespace does not let the
	// provider restart it (no RoleBinding of RolloutClusterRole there).
	ReasonNoRights xpv2.ConditionReason = "NoRights"
)

// The ClusterRoles of cluster/deploy/rollout.yaml: the first is bound once,
// cluster-wide, to watch the injected pods; the second is bound in each
// namespace whose workloads the rollout may restart.
const (
	RolloutWatchClusterRole = "provider-cloudsql-postgres-rollout-pods"
	RolloutClusterRole      = "provider-cloudsql-postgres-rollout"
)

const (
	errGetPod        = "cannot read pod %s"
	errCheckRightsIn = "cannot ask the API server whether the provider may restart the workloads of namespace %s"
	errGetOwner      = "cannot read %s %s/%s, which owns pod %s"
	errRestart       = "cannot restart %s %s/%s"
	errRecord        = "cannot record on %s what the rollout did"
	errCheckRights   = "cannot ask the API server whether the provider may restart workloads"
	msgNoRights      = "The proxy rollout is off: the provider's service account may not %s in every namespace; apply cluster/deploy/rollout.yaml (the ClusterRole " + RolloutWatchClusterRole + " and its binding) and restart the provider, or set [injection] rollouts_per_minute = 0 to say so"
	msgNoRightsIn    = "the workload of pod %s/%s is not restarted, though its Cloud SQL Auth Proxy no longer matches (%s): the provider's service account may not %s in namespace %s. " +
		"Bind the ClusterRole " + RolloutClusterRole + " there with a RoleBinding (cluster/deploy/rollout.yaml shows one), or take away the opt-in (annotation or namespace label " + v1alpha1.AnnotationProxyRollout + ")"
	errReadNamespace = "cannot read namespace %s to see whether it opts in to rollouts"
	msgRestarted     = "restarted %s %s/%s at %s, whose pod %s runs a Cloud SQL Auth Proxy that no longer matches: %s"
	msgWaiting       = "%s %s/%s waits for the rollout's rate limit of its namespace (%s): its pod %s runs a Cloud SQL Auth Proxy that no longer matches: %s"
	eventRestarted   = "Restarted for the Cloud SQL Auth Proxy of %s: %s"
	rolloutPodPrefix = "pod "
)

// Defaults of the rollout.
const (
	// DefaultRolloutResync is how often each injected pod is compared again
	// with what the injector would give it now: the changes it looks for
	// (the provider's configuration, an instance's connection name, a key)
	// come from several kinds, and the pod is the one place they meet.
	DefaultRolloutResync = 5 * time.Minute
	// desiredTTL is how long, at most, what the injector would give a pod
	// is reused for the pods of one namespace with the same annotations: a
	// Deployment's replicas cost one resolution, not one each. It is also
	// at most half the resync, so that a change is seen at the next one.
	desiredTTL = 30 * time.Second
)

// A workload is what owns an injected pod and restarts it when its pod
// template changes.
type workload struct {
	kind string
	obj  client.Object
	// template is the pod template's metadata, in obj.
	template *metav1.ObjectMeta
	// current says the pod is of the workload's current revision, not of
	// one it is replacing.
	current bool
}

// Labels and annotations by which the workload controllers mark revisions.
const (
	annotationDeploymentRevision = "deployment.kubernetes.io/revision"
	labelRevisionHash            = appsv1.ControllerRevisionHashLabelKey
)

// requestAnnotations are the pod annotations that decide what the injector
// gives a pod.
var requestAnnotations = append([]string{
	v1alpha1.AnnotationInstanceName, v1alpha1.AnnotationUserName, v1alpha1.AnnotationDatabaseName, v1alpha1.AnnotationProxyCredentialsSecret,
}, shapeAnnotations...)

// requestKey is what decides the injector's answer for a pod of ns with
// these annotations: the request annotations, and every other proxy-*
// annotation the injector would judge (an unknown one is denied), each with
// whether it is there at all (an empty value is not an absent one).
func requestKey(ns string, annotations map[string]string) string {
	var keys []string
	for k := range annotations {
		if slices.Contains(requestAnnotations, k) ||
			(strings.HasPrefix(k, v1alpha1.Group+"/proxy-") && k != AnnotationProxyConfig && k != v1alpha1.AnnotationProxyInjected) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString(ns)
	for _, k := range keys {
		b.WriteString("\x00" + k + "=" + annotations[k])
	}
	return b.String()
}

// requestsTheSame says whether a workload's pod template asks for the same
// instance or user, database and proxy credentials as pod.
func requestsTheSame(template *metav1.ObjectMeta, pod *metav1.PartialObjectMetadata) bool {
	for _, k := range requestAnnotations {
		if template.Annotations[k] != pod.Annotations[k] {
			return false
		}
	}
	return true
}

// Rollout restarts the Deployments, StatefulSets and DaemonSets whose
// injected pods run a proxy that a file cannot bring up to date (see
// ProxyConfig), when their instance or their namespace opts in
// (v1alpha1.AnnotationProxyRollout), at most perMinute a minute in each
// namespace, and only where the namespace grants it the rights to (a
// RoleBinding of RolloutClusterRole; ConditionProxyRollout says where one is
// missing). It restarts
// a workload as `kubectl rollout restart` does, by an annotation on its pod
// template, which also records what it was restarted for, so that pods that
// are still being replaced do not restart it again. It says what it did on
// the instance (ConditionProxyRollout) and in events of the workload.
type Rollout struct {
	cached client.Client
	live   client.Reader
	inj    *Injector
	// every is how often a namespace may restart a workload.
	every  time.Duration
	resync time.Duration
	now    func() time.Time
	rec    event.Recorder
	log    logging.Logger
	// injOpts configure inj, as the webhook's injector.
	injOpts []Option

	mu      sync.Mutex
	desired map[string]desiredEntry
	// limits are the rate limits of the namespaces that restarted a
	// workload lately: one tenant cannot spend another's.
	limits map[string]*rate.Limiter
	// rights are what each namespace lets the rollout not do, as
	// RolloutDeniedIn says, and when that was asked.
	rights map[string]rightsEntry
	// pruned is when desired, limits and rights were last cleared of
	// expired entries.
	pruned time.Time
}

// rightsEntry is what the rollout may not do in a namespace, and when that
// was asked.
type rightsEntry struct {
	missing []string
	at      time.Time
}

// desiredEntry is what the injector would give the pods of one namespace
// with the same annotations, and when that was read.
type desiredEntry struct {
	config ProxyConfig
	target target
	denied string
	at     time.Time
}

// A RolloutOption configures a Rollout.
type RolloutOption func(*Rollout)

// WithRolloutResync compares each injected pod again every d.
func WithRolloutResync(d time.Duration) RolloutOption { return func(r *Rollout) { r.resync = d } }

// WithRolloutLogger logs what the rollout does.
func WithRolloutLogger(l logging.Logger) RolloutOption { return func(r *Rollout) { r.log = l } }

// WithInjectorOptions resolves pods as the injector served with o does (its
// namespaced endpoints above all): the rollout must judge a pod as its
// admission would.
func WithInjectorOptions(o ...Option) RolloutOption { return func(r *Rollout) { r.injOpts = o } }

// PodCacheOptions restrict the cache of pods to the injected ones
// (LabelInjected), which the rollout reads: the provider does not hold every
// pod of the cluster in memory. The rollout watches their metadata alone
// (metav1.PartialObjectMetadata): the API server sends no pod's spec or
// status, so no container's environment reaches the provider.
func PodCacheOptions() cache.ByObject {
	return cache.ByObject{Label: labels.SelectorFromSet(labels.Set{LabelInjected: injectedValue})}
}

// SetupRollout adds a Rollout to mgr, which compares the pods injected with
// cfg with what the injector would give them now, and restarts at most
// perMinute workloads a minute in each namespace. Pods must be cached as
// PodCacheOptions says.
func SetupRollout(mgr ctrl.Manager, cfg Config, perMinute int, o ...RolloutOption) error {
	r := &Rollout{
		cached: mgr.GetClient(), live: mgr.GetAPIReader(),
		every:  time.Minute / time.Duration(max(perMinute, 1)),
		resync: DefaultRolloutResync, now: time.Now,
		//lint:ignore SA1019 crossplane-runtime's event.NewAPIRecorder takes only the old API's record.EventRecorder, and GetEventRecorder's events.k8s.io Events are outside the RBAC Crossplane grants providers (core events only)
		rec: event.NewAPIRecorder(mgr.GetEventRecorderFor(RolloutName)),
		log: logging.NewNopLogger(), desired: map[string]desiredEntry{},
		limits: map[string]*rate.Limiter{}, rights: map[string]rightsEntry{},
	}
	for _, fn := range o {
		fn(r)
	}
	// It reads only: resolvePod never writes, and inj gets no writer.
	r.inj = NewInjector(mgr.GetClient(), mgr.GetAPIReader(), nil, mgr.GetScheme(), cfg, r.injOpts...)
	// Without the rights to watch pods, their informer would never sync and
	// take the manager down: an install without cluster/deploy/rollout.yaml
	// has no rollout, and is told why. The rights to restart are asked of
	// each namespace when a workload there needs it (RolloutDeniedIn).
	missing, err := RolloutDenied(context.Background(), mgr.GetClient())
	if err != nil {
		return errors.Wrap(err, errCheckRights)
	}
	if len(missing) > 0 {
		r.log.Info(fmt.Sprintf(msgNoRights, strings.Join(missing, ", ")))
		return nil
	}
	return ctrl.NewControllerManagedBy(mgr).Named(RolloutName).For(&corev1.Pod{}, builder.OnlyMetadata).Complete(r)
}

// RolloutWatchRights are what the rollout does with the Kubernetes API in
// every namespace: it watches the injected pods' metadata (one informer for
// the cluster).
var RolloutWatchRights = []authorizationv1.ResourceAttributes{
	{Resource: "pods", Verb: "list"},
	{Resource: "pods", Verb: "watch"},
}

// RolloutNamespaceRights are what the rollout does with the Kubernetes API in
// a namespace whose workload it restarts: it reads the pod (its phase, which
// the cache does not hold), the ReplicaSet and the workload that own it, and
// patches the workload's pod template.
var RolloutNamespaceRights = []authorizationv1.ResourceAttributes{
	{Resource: "pods", Verb: "get"},
	{Group: "apps", Resource: "replicasets", Verb: "get"},
	{Group: "apps", Resource: "deployments", Verb: "get"},
	{Group: "apps", Resource: "deployments", Verb: "patch"},
	{Group: "apps", Resource: "statefulsets", Verb: "get"},
	{Group: "apps", Resource: "statefulsets", Verb: "patch"},
	{Group: "apps", Resource: "daemonsets", Verb: "get"},
	{Group: "apps", Resource: "daemonsets", Verb: "patch"},
}

// RolloutDenied lists, as "verb group/resource", what the rollout needs to
// do with the Kubernetes API in every namespace (RolloutWatchRights) and c's
// user may not; the rollout does not start without it.
func RolloutDenied(ctx context.Context, c client.Client) ([]string, error) {
	return denied(ctx, c, "", RolloutWatchRights)
}

// RolloutDeniedIn lists, as "verb group/resource", what the rollout needs to
// do in namespace ns to restart a workload there (RolloutNamespaceRights)
// and c's user may not.
func RolloutDeniedIn(ctx context.Context, c client.Client, ns string) ([]string, error) {
	return denied(ctx, c, ns, RolloutNamespaceRights)
}

// denied lists which of rights c's user may not use in namespace ns (all
// namespaces when ns is empty).
func denied(ctx context.Context, c client.Client, ns string, rights []authorizationv1.ResourceAttributes) ([]string, error) {
	var missing []string
	for _, ra := range rights {
		ra.Namespace = ns
		ssar := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &ra}}
		if err := c.Create(ctx, ssar); err != nil {
			return nil, err
		}
		if !ssar.Status.Allowed {
			missing = append(missing, ra.Verb+" "+strings.TrimPrefix(ra.Group+"/"+ra.Resource, "/"))
		}
	}
	return missing, nil
}

// Reconcile compares one injected pod with what the injector would give it
// now, and restarts its workload when they differ and the instance or the
// namespace opts in.
func (r *Rollout) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	again := reconcile.Result{RequeueAfter: r.resync}
	pod := &metav1.PartialObjectMetadata{}
	pod.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
	if err := r.cached.Get(ctx, req.NamespacedName, pod); err != nil {
		return reconcile.Result{}, errors.Wrapf(client.IgnoreNotFound(err), errGetPod, req)
	}
	was, ok := ParseProxyConfig(pod.Annotations[AnnotationProxyConfig])
	if !ok || pod.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	d := r.want(ctx, pod)
	if d.denied != "" {
		// A pod admitted now would be denied: a restart would leave the
		// workload without pods. The denial is the user's to mend.
		r.log.Debug("Not rolling out: the pod would be denied now", "pod", req, "why", d.denied)
		return again, nil
	}
	changes := d.config.Changes(was)
	if len(changes) == 0 {
		return again, nil
	}
	optIn, err := r.optedIn(ctx, pod.Namespace, d.target.pi)
	if err != nil || !optIn {
		return again, err
	}
	if !restartable(pod) {
		return again, nil
	}
	why := strings.Join(changes, ", ")
	missing, err := r.deniedIn(ctx, pod.Namespace)
	if err != nil {
		return reconcile.Result{}, err
	}
	if len(missing) > 0 {
		// Each namespace lets the provider restart its workloads by a
		// RoleBinding of its own; until it does, the instance says so
		// (once, not at every resync) and nothing is restarted there.
		c := xpv2.Condition{Type: ConditionProxyRollout, Status: corev1.ConditionFalse, Reason: ReasonNoRights,
			Message: fmt.Sprintf(msgNoRightsIn, pod.Namespace, pod.Name, why, strings.Join(missing, ", "), pod.Namespace)}
		if was := d.target.pi.GetCondition(ConditionProxyRollout); was.Reason != c.Reason || was.Message != c.Message {
			r.record(ctx, d.target, c)
		}
		return again, nil
	}
	w, err := r.workloadOf(ctx, pod)
	if err != nil || w == nil || !w.current || !requestsTheSame(w.template, pod) {
		// An old revision's pods are being replaced already (acting on them
		// could flip a workload between two configurations), and a
		// workload whose template does not ask for what the pod asks for is
		// not the pod's to restart.
		return again, err
	}
	if w.template.Annotations[AnnotationProxyConfig] == d.config.String() {
		// Restarted for this already: its new pods are on their way.
		return again, nil
	}
	if ended, err := r.ended(ctx, pod); err != nil || ended {
		// A pod that ran to its end (evicted, say) is no sign of what the
		// workload's running pods have.
		return reconcile.Result{}, err
	}
	res := r.limiter(pod.Namespace).Reserve()
	if delay := res.Delay(); delay > 0 {
		res.Cancel()
		if d.target.pi.GetCondition(ConditionProxyRollout).Reason != ReasonWaiting {
			// Said once while workloads wait, not at every retry of each.
			r.record(ctx, d.target, xpv2.Condition{Type: ConditionProxyRollout, Status: corev1.ConditionFalse, Reason: ReasonWaiting,
				Message: fmt.Sprintf(msgWaiting, w.kind, w.obj.GetNamespace(), w.obj.GetName(), delay.Round(time.Second), pod.Name, why)})
		}
		return reconcile.Result{RequeueAfter: delay}, nil
	}
	at := r.now().UTC().Format(time.RFC3339)
	if err := r.restart(ctx, w, d.config, at); err != nil {
		res.Cancel()
		return reconcile.Result{}, err
	}
	r.log.Info("Restarted a workload for its Cloud SQL Auth Proxy", "kind", w.kind, "workload", client.ObjectKeyFromObject(w.obj), "pod", req, "changes", why)
	r.rec.Event(w.obj, event.Normal(event.Reason(ReasonRestarted), fmt.Sprintf(eventRestarted, d.target, why)))
	r.record(ctx, d.target, xpv2.Condition{Type: ConditionProxyRollout, Status: corev1.ConditionTrue, Reason: ReasonRestarted,
		Message: fmt.Sprintf(msgRestarted, w.kind, w.obj.GetNamespace(), w.obj.GetName(), at, pod.Name, why)})
	return again, nil
}

// want is what the injector would give pod now, reused for desiredTTL by the
// pods of its namespace that have the same annotations.
func (r *Rollout) want(ctx context.Context, pod *metav1.PartialObjectMetadata) desiredEntry {
	key := requestKey(pod.Namespace, pod.Annotations)
	now := r.now()
	r.mu.Lock()
	d, ok := r.desired[key]
	r.mu.Unlock()
	ttl := min(desiredTTL, r.resync/2)
	if ok && now.Sub(d.at) < ttl {
		return d
	}
	// The injector judges a pod by its metadata alone (its annotations).
	x, _, resp := r.inj.resolvePod(ctx, rolloutPodPrefix+pod.Namespace+"/"+pod.Name, pod.Namespace, &corev1.Pod{ObjectMeta: pod.ObjectMeta})
	d = desiredEntry{at: now}
	switch {
	case resp != nil && resp.Result != nil:
		d.denied = resp.Result.Message
	case resp != nil:
		d.denied = "denied"
	default:
		d.config, d.target = ProxyConfigOf(x.Inputs), x.target
	}
	r.mu.Lock()
	r.prune(now, ttl)
	r.desired[key] = d
	r.mu.Unlock()
	return d
}

// prune clears desired and rights of what is older than ttl, and limits of
// the namespaces whose limit is full again, once a ttl: not at every miss,
// since a fleet of namespaces would make each miss walk them all. r.mu must
// be held.
func (r *Rollout) prune(now time.Time, ttl time.Duration) {
	if now.Sub(r.pruned) < ttl {
		return
	}
	for k, e := range r.desired {
		if now.Sub(e.at) >= ttl {
			delete(r.desired, k)
		}
	}
	for ns, e := range r.rights {
		if now.Sub(e.at) >= ttl {
			delete(r.rights, ns)
		}
	}
	for ns, l := range r.limits {
		if l.TokensAt(now) >= 1 {
			delete(r.limits, ns)
		}
	}
	r.pruned = now
}

// limiter is the rate limit of namespace ns.
func (r *Rollout) limiter(ns string) *rate.Limiter {
	r.mu.Lock()
	defer r.mu.Unlock()
	l, ok := r.limits[ns]
	if !ok {
		l = rate.NewLimiter(rate.Every(r.every), 1)
		r.limits[ns] = l
	}
	return l
}

// deniedIn is what RolloutDeniedIn says of namespace ns, asked again at most
// once a desired TTL: a RoleBinding made or taken away counts within it, and
// the pods of one namespace cost one set of reviews.
func (r *Rollout) deniedIn(ctx context.Context, ns string) ([]string, error) {
	now := r.now()
	ttl := min(desiredTTL, r.resync/2)
	r.mu.Lock()
	e, ok := r.rights[ns]
	r.mu.Unlock()
	if ok && now.Sub(e.at) < ttl {
		return e.missing, nil
	}
	missing, err := RolloutDeniedIn(ctx, r.cached, ns)
	if err != nil {
		return nil, errors.Wrapf(err, errCheckRightsIn, ns)
	}
	r.mu.Lock()
	r.prune(now, ttl)
	r.rights[ns] = rightsEntry{missing: missing, at: now}
	r.mu.Unlock()
	return missing, nil
}

// ended says whether pod, read from the API server (the cache holds no
// phase), is gone or ran to its end.
func (r *Rollout) ended(ctx context.Context, pod *metav1.PartialObjectMetadata) (bool, error) {
	p := &corev1.Pod{}
	err := r.live.Get(ctx, client.ObjectKeyFromObject(pod), p)
	if kerrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, errors.Wrapf(err, errGetPod, client.ObjectKeyFromObject(pod))
	}
	return p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed, nil
}

// optedIn says whether the instance (its annotation) or the namespace (its
// label) lets the rollout restart workloads.
func (r *Rollout) optedIn(ctx context.Context, ns string, inst instance) (bool, error) {
	if inst.GetAnnotations()[v1alpha1.AnnotationProxyRollout] == "true" {
		return true, nil
	}
	n := &corev1.Namespace{}
	if err := r.cached.Get(ctx, types.NamespacedName{Name: ns}, n); err != nil {
		return false, errors.Wrapf(client.IgnoreNotFound(err), errReadNamespace, ns)
	}
	return n.Labels[v1alpha1.AnnotationProxyRollout] == "true", nil
}

// restartable says whether pod's controller is of a kind whose workload the
// rollout restarts, as far as the pod tells: a Job's pod needs no rights in
// its namespace, and is not said to lack them.
func restartable(pod metav1.Object) bool {
	ref := metav1.GetControllerOf(pod)
	return ref != nil && (ref.Kind == "ReplicaSet" || ref.Kind == "StatefulSet" || ref.Kind == "DaemonSet")
}

// workloadOf is the Deployment (through its ReplicaSet), StatefulSet or
// DaemonSet that controls pod, read from the API server (the provider
// caches none of them); nil for a pod of anything else, such as a Job.
func (r *Rollout) workloadOf(ctx context.Context, pod *metav1.PartialObjectMetadata) (*workload, error) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		return nil, nil
	}
	// get reads the owner that ref names, and reports false when it is gone
	// or is another object of that name than the one ref was made for.
	get := func(ref *metav1.OwnerReference, o client.Object) (bool, error) {
		err := r.live.Get(ctx, types.NamespacedName{Namespace: pod.Namespace, Name: ref.Name}, o)
		if kerrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, errors.Wrapf(err, errGetOwner, ref.Kind, pod.Namespace, ref.Name, pod.Name)
		}
		return o.GetUID() == ref.UID, nil
	}
	switch ref.Kind {
	case "ReplicaSet":
		rs := &appsv1.ReplicaSet{}
		if ok, err := get(ref, rs); !ok {
			return nil, err
		}
		dref := metav1.GetControllerOf(rs)
		if dref == nil || dref.Kind != "Deployment" {
			return nil, nil
		}
		d := &appsv1.Deployment{}
		if ok, err := get(dref, d); !ok {
			return nil, err
		}
		current := rs.Annotations[annotationDeploymentRevision] == d.Annotations[annotationDeploymentRevision]
		return &workload{kind: dref.Kind, obj: d, template: &d.Spec.Template.ObjectMeta, current: current}, nil
	case "StatefulSet":
		s := &appsv1.StatefulSet{}
		if ok, err := get(ref, s); !ok {
			return nil, err
		}
		current := s.Status.UpdateRevision == "" || pod.Labels[labelRevisionHash] == s.Status.UpdateRevision
		return &workload{kind: ref.Kind, obj: s, template: &s.Spec.Template.ObjectMeta, current: current}, nil
	case "DaemonSet":
		s := &appsv1.DaemonSet{}
		if ok, err := get(ref, s); !ok {
			return nil, err
		}
		// A DaemonSet shows no update revision: while it replaces pods, none
		// of them is judged.
		current := s.Status.UpdatedNumberScheduled >= s.Status.DesiredNumberScheduled
		return &workload{kind: ref.Kind, obj: s, template: &s.Spec.Template.ObjectMeta, current: current}, nil
	}
	return nil, nil
}

// restart changes w's pod template as `kubectl rollout restart` does, and
// records the ProxyConfig it restarted it for, with a merge patch that
// touches nothing else of the workload.
func (r *Rollout) restart(ctx context.Context, w *workload, c ProxyConfig, at string) error {
	base := w.obj.DeepCopyObject().(client.Object)
	if w.template.Annotations == nil {
		w.template.Annotations = map[string]string{}
	}
	w.template.Annotations[AnnotationProxyConfig] = c.String()
	w.template.Annotations[AnnotationRestartedAt] = at
	err := r.cached.Patch(ctx, w.obj, client.MergeFrom(base))
	return errors.Wrapf(err, errRestart, w.kind, w.obj.GetNamespace(), w.obj.GetName())
}

// record sets c on inst, read again until the update lands; a failure is
// logged, never retried through the pod.
func (r *Rollout) record(ctx context.Context, t target, c xpv2.Condition) {
	c.LastTransitionTime = metav1.NewTime(r.now())
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		o := t.pi.DeepCopyObject().(instance)
		if err := r.cached.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
			return err
		}
		o.SetConditions(c)
		return r.cached.Status().Update(ctx, o)
	})
	if err != nil {
		r.log.Info(errors.Wrapf(err, errRecord, t).Error())
	}
}

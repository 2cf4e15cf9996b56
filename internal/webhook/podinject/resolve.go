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

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// A scopedKind is a kind of both scopes that a pod annotation names, with
// the words of the denials of a pod that names none.
type scopedKind struct {
	annotation string
	// namespacedResource and clusterResource name the two kinds'
	// resources, as kubectl does.
	namespacedResource, clusterResource string
	// The denials' formats: none of either scope; none of the namespace the
	// annotation names; none cluster-scoped (/name); no kind served; the
	// namespaced kind not served; the cluster-scoped kind not served.
	errNone, errNoNamespaced, errNoCluster, errKindNotServed, errNamespacedNotServed, errClusterNotServed string
}

// The kinds a pod annotation names.
var (
	instanceKind = scopedKind{
		annotation:         v1alpha1.AnnotationInstanceName,
		namespacedResource: namespacedResource, clusterResource: clusterResource,
		errNone: errNoInstance, errNoNamespaced: errNoNamespacedInstance, errNoCluster: errNoClusterInstance,
		errKindNotServed: errKindNotServed, errNamespacedNotServed: errNamespacedNotServed, errClusterNotServed: errClusterNotServed,
	}
	userKind = scopedKind{
		annotation:         v1alpha1.AnnotationUserName,
		namespacedResource: namespacedUserResource, clusterResource: clusterUserResource,
		errNone: errNoUser, errNoNamespaced: errNoNamespacedUser, errNoCluster: errNoClusterUser,
		errKindNotServed: errUserKindNotServed, errNamespacedNotServed: errNamespacedUserNotServed, errClusterNotServed: errClusterUserNotServed,
	}
)

// errAmbiguous is the denial of a pod whose annotation, a bare name, names
// both an object of the pod's namespace and a cluster-scoped one.
const errAmbiguous = "pod %s: annotation %s is %q, which names both %s and the cluster-scoped %s (%s): a bare name picks neither when both exist; set the annotation to %q for the one of namespace %s, or to %q for the cluster-scoped one"

// A resolved value is an object that an annotation resolved to, which
// messages name.
type resolved interface{ object() scoped }

// object is the object itself: targets and userTargets embed it.
func (s scoped) object() scoped { return s }

// A resolution is the outcome of looking an annotation up through one
// reader: what it names (an instance's target, a user), or why there is none.
type resolution[T resolved] struct {
	value T
	found bool
	// served says, by kind, whether the API server serves it.
	namespacedServed, clusterServed bool
	// ambiguous is set, and found is not, when a bare name named both an
	// object of the pod's namespace (value) and a cluster-scoped one
	// (cluster): the pod must say which it means.
	ambiguous bool
	cluster   T
}

// resolveScoped looks the object named by l up for a pod of namespace ns:
// with namespace/name, one of the pod's own namespace (read into namespaced);
// with /name, the cluster-scoped one (into cluster); with a bare name,
// whichever of the two exists, and neither when both do (ambiguous), so that
// a namespaced object never silently shadows a cluster-scoped one.
//
// A miss through the cache that would decide is confirmed through live: a
// namespaced object missing from the cache before a cluster-scoped one is
// chosen, a cluster-scoped one missing from it before a namespaced one is.
// A new object must never be passed over for one of the other scope. A
// cluster-scoped miss that leaves nothing found is not confirmed here: the
// callers confirm every denial with a pass through live.
func resolveScoped[T resolved, N, C client.Object](ctx context.Context, r, live client.Reader, ns string, l lookup,
	namespaced N, fromNamespaced func(N) T, cluster C, fromCluster func(C) T) (resolution[T], error) {
	res := resolution[T]{namespacedServed: true, clusterServed: true}
	if !l.cluster {
		key := types.NamespacedName{Namespace: ns, Name: l.name}
		err := r.Get(ctx, key, namespaced)
		if kerrors.IsNotFound(err) && r != live {
			err = live.Get(ctx, key, namespaced)
		}
		switch {
		case err == nil:
			res.value, res.found = fromNamespaced(namespaced), true
		case apimeta.IsNoMatchError(err):
			res.namespacedServed = false
		case !kerrors.IsNotFound(err):
			return res, err
		}
	}
	if l.namespace != "" {
		return res, nil
	}
	key := types.NamespacedName{Name: l.name}
	err := r.Get(ctx, key, cluster)
	if kerrors.IsNotFound(err) && res.found && r != live {
		err = live.Get(ctx, key, cluster)
	}
	switch {
	case err == nil && res.found:
		res.found, res.ambiguous, res.cluster = false, true, fromCluster(cluster)
	case err == nil:
		res.value, res.found = fromCluster(cluster), true
	case apimeta.IsNoMatchError(err):
		res.clusterServed = false
	case !kerrors.IsNotFound(err):
		return res, err
	}
	return res, nil
}

// denial is the denial of pod ref, of namespace ns, whose annotation (of
// value value, read as l) found no single object of kind k: the two it names
// and how to pick one, or where the injector looked (notFound).
func (res resolution[T]) denial(k scopedKind, ref, ns, value string, l lookup) string {
	if !res.ambiguous {
		return res.notFound(k, ref, ns, value, l)
	}
	return fmt.Sprintf(errAmbiguous, ref, k.annotation, value, res.value.object(), res.cluster.object(), v1alpha1.Group,
		ns+"/"+l.name, ns, "/"+l.name)
}

// notFound is the denial of pod ref, of namespace ns, whose annotation (of
// value value, read as l) names no object of kind k: where the injector
// looked, in order, and why a namespaced object of another namespace is
// never found.
func (res resolution[T]) notFound(k scopedKind, ref, ns, value string, l lookup) string {
	switch {
	case !res.clusterServed && l.cluster:
		return fmt.Sprintf(k.errClusterNotServed, ref, k.annotation, value)
	case l.cluster:
		return fmt.Sprintf(k.errNoCluster, ref, k.annotation, l.name, k.clusterResource)
	case !res.namespacedServed && l.namespace != "":
		return fmt.Sprintf(k.errNamespacedNotServed, ref, k.annotation, value)
	case !res.namespacedServed && !res.clusterServed:
		return fmt.Sprintf(k.errKindNotServed, ref, k.annotation, value)
	}
	served := func(ok bool, resource string) string {
		if ok {
			return resource
		}
		return "that kind is not served in this cluster"
	}
	if l.namespace != "" {
		return fmt.Sprintf(k.errNoNamespaced, ref, k.annotation, l.name, ns, k.namespacedResource)
	}
	return fmt.Sprintf(k.errNone, ref, k.annotation, value, ns,
		served(res.namespacedServed, k.namespacedResource), served(res.clusterServed, k.clusterResource))
}

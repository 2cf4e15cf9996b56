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
	// annotation names; no kind served; the namespaced kind not served.
	errNone, errNoNamespaced, errKindNotServed, errNamespacedNotServed string
}

// The kinds a pod annotation names.
var (
	instanceKind = scopedKind{
		annotation:         v1alpha1.AnnotationInstanceName,
		namespacedResource: namespacedResource, clusterResource: clusterResource,
		errNone: errNoInstance, errNoNamespaced: errNoNamespacedInstance,
		errKindNotServed: errKindNotServed, errNamespacedNotServed: errNamespacedNotServed,
	}
	userKind = scopedKind{
		annotation:         v1alpha1.AnnotationUserName,
		namespacedResource: namespacedUserResource, clusterResource: clusterUserResource,
		errNone: errNoUser, errNoNamespaced: errNoNamespacedUser,
		errKindNotServed: errUserKindNotServed, errNamespacedNotServed: errNamespacedUserNotServed,
	}
)

// A resolution is the outcome of looking an annotation up through one
// reader: what it names (an instance's target, a user), or why there is none.
type resolution[T any] struct {
	value T
	found bool
	// served says, by kind, whether the API server serves it.
	namespacedServed, clusterServed bool
}

// resolveScoped looks the object named by l up for a pod of namespace ns:
// one of the pod's own namespace first (read into namespaced), else the
// cluster-scoped one (into cluster). A namespaced object missing from the
// cache is confirmed missing through live before a cluster-scoped one is
// chosen: a new namespaced object must never be passed over for an older
// cluster-scoped one of the same name.
func resolveScoped[T any, N, C client.Object](ctx context.Context, r, live client.Reader, ns string, l lookup,
	namespaced N, fromNamespaced func(N) T, cluster C, fromCluster func(C) T) (resolution[T], error) {
	res := resolution[T]{namespacedServed: true, clusterServed: true}
	key := types.NamespacedName{Namespace: ns, Name: l.name}
	err := r.Get(ctx, key, namespaced)
	if kerrors.IsNotFound(err) && r != live {
		err = live.Get(ctx, key, namespaced)
	}
	switch {
	case err == nil:
		res.value, res.found = fromNamespaced(namespaced), true
		return res, nil
	case apimeta.IsNoMatchError(err):
		res.namespacedServed = false
	case !kerrors.IsNotFound(err):
		return res, err
	}
	if l.namespace != "" {
		return res, nil
	}
	err = r.Get(ctx, types.NamespacedName{Name: l.name}, cluster)
	switch {
	case err == nil:
		res.value, res.found = fromCluster(cluster), true
	case apimeta.IsNoMatchError(err):
		res.clusterServed = false
	case !kerrors.IsNotFound(err):
		return res, err
	}
	return res, nil
}

// notFound is the denial of pod ref, of namespace ns, whose annotation (of
// value value, read as l) names no object of kind k: where the injector
// looked, in order, and why a namespaced object of another namespace is
// never found.
func (res resolution[T]) notFound(k scopedKind, ref, ns, value string, l lookup) string {
	switch {
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

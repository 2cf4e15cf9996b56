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
	"context"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// ConditionTypeSpecValid is the condition the function sets on the composite and
// its claim: False, with the message of the fatal result, while the spec cannot be
// composed, so that the team that owns the claim sees what to fix.
const ConditionTypeSpecValid = "SpecValid"

// FieldStatusInstanceName is where the composite (and its claim) shows the name of
// its PostgresqlInstance, which pods give in the annotation
// cloudsql.travelaudience.com/postgresqlinstance-name.
const FieldStatusInstanceName = "status.instanceName"

// Reasons of the SpecValid condition and of the function's results.
const (
	ReasonValid       = "Valid"
	ReasonInvalidSpec = "InvalidSpec"
	ReasonNotSynced   = "NotSynced"
)

// Errors of the pipeline itself rather than of the user's spec.
const (
	errGetObservedXR      = "cannot read the observed composite resource from the request"
	errGetDesiredXR       = "cannot read the desired composite resource from the request"
	errGetObservedCDs     = "cannot read the observed composed resources from the request"
	errGetDesiredCDs      = "cannot read the desired composed resources from the request"
	errReadObserved       = "cannot read the observed PostgresqlInstance"
	errReadObservedSecret = "cannot read the observed connection Secret"
	errConvert            = "cannot convert the PostgresqlInstance for the response"
	errConvertSecret      = "cannot convert the connection Secret for the response"
	errSetDesiredXR       = "cannot set the desired composite resource in the response"
	errSetDesiredCDs      = "cannot set the desired composed resources in the response"
	errFmtNotSynced       = "%s %s is not synced with Cloud SQL (%s): %s"
)

// Function composes a PostgresqlInstance for a composite resource. It implements
// function-sdk-go's FunctionRunnerService.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	log             logging.Logger
	secretNamespace string
}

// An Option configures a Function.
type Option func(*Function)

// WithLogger makes the Function log to l.
func WithLogger(l logging.Logger) Option {
	return func(f *Function) { f.log = l }
}

// WithConnectionSecretNamespace puts the instances' connection secrets into ns
// when the composite does not write its own secret to a namespace.
func WithConnectionSecretNamespace(ns string) Option {
	return func(f *Function) { f.secretNamespace = ns }
}

// New returns a Function that logs nothing and keeps connection secrets in
// DefaultConnectionSecretNamespace unless told otherwise.
func New(o ...Option) *Function {
	f := &Function{log: logging.NewNopLogger(), secretNamespace: DefaultConnectionSecretNamespace}
	for _, fn := range o {
		fn(f)
	}
	return f
}

// RunFunction composes the PostgresqlInstance for the observed composite, marks it
// ready when the observed instance is, and passes its connection details to the
// composite. A spec that cannot be composed yields a fatal result for the user
// (and the condition SpecValid False); so does a malformed request, which the
// composite's events then show.
//
// A namespaced composite (Crossplane v2, examples/composition/definition-v2.yaml)
// gets a namespaced PostgresqlInstance and a Secret in its namespace instead, as
// runNamespaced describes: being namespaced, rather than its kind, decides, because
// a namespaced composite can compose nothing outside its namespace.
func (f *Function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, response.DefaultTTL)

	in, err := ParseInput(req)
	if err != nil {
		// The platform's mistake, in the Composition, rather than the team's:
		// no SpecValid condition.
		f.log.Info("Cannot read the function's input", "error", err)
		response.Fatal(rsp, err)
		return rsp, nil
	}

	oxr, err := request.GetObservedCompositeResource(req)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, errGetObservedXR))
		return rsp, nil
	}
	log := f.log.WithValues("xr-kind", oxr.Resource.GetKind(), "xr-name", oxr.Resource.GetName())

	observed, err := request.GetObservedComposedResources(req)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, errGetObservedCDs))
		return rsp, nil
	}
	if ns := oxr.Resource.GetNamespace(); ns != "" {
		log = log.WithValues("xr-namespace", ns)
	}
	if in.SharedInstance != nil {
		return f.runShared(rsp, req, oxr, observed, *in.SharedInstance, log), nil
	}
	if oxr.Resource.GetNamespace() != "" {
		return f.runNamespaced(rsp, req, oxr, observed, log), nil
	}
	var was *v1alpha1.PostgresqlInstance
	ocd, exists := observed[ResourceName]
	if exists {
		was = &v1alpha1.PostgresqlInstance{}
		if err := fromObserved(ocd, was); err != nil {
			response.Fatal(rsp, errors.Wrap(err, errReadObserved))
			return rsp, nil
		}
	}

	p, err := Parse(oxr.Resource, f.secretNamespace)
	if err == nil {
		err = checkNotShared(p, observed)
	}
	if err == nil {
		var pi *v1alpha1.PostgresqlInstance
		if pi, err = Compose(p, was); err == nil {
			return f.respond(rsp, req, pi, ocd, exists, log)
		}
	}
	log.Info("Cannot compose a PostgresqlInstance", "error", err)
	response.Fatal(rsp, err)
	response.ConditionFalse(rsp, ConditionTypeSpecValid, ReasonInvalidSpec).WithMessage(err.Error()).TargetCompositeAndClaim()
	return rsp, nil
}

// respond adds pi, its readiness and its connection details to rsp, keeping what
// earlier steps of the pipeline desired.
func (f *Function) respond(rsp *fnv1.RunFunctionResponse, req *fnv1.RunFunctionRequest, pi *v1alpha1.PostgresqlInstance, ocd resource.ObservedComposed, exists bool, log logging.Logger) (*fnv1.RunFunctionResponse, error) {
	dcd, err := AsComposed(pi)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, errConvert))
		return rsp, nil
	}
	desired, err := request.GetDesiredComposedResources(req)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, errGetDesiredCDs))
		return rsp, nil
	}
	dxr, err := request.GetDesiredCompositeResource(req)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, errGetDesiredXR))
		return rsp, nil
	}

	ready := resource.ReadyFalse
	if exists {
		ready = Ready(ocd.Resource)
		if dxr.ConnectionDetails == nil {
			dxr.ConnectionDetails = resource.ConnectionDetails{}
		}
		for k, v := range ConnectionDetailsFrom(ocd.ConnectionDetails) {
			dxr.ConnectionDetails[k] = v
		}
		// Pods name the instance in their annotation, and its generated name
		// is otherwise visible only on the cluster-scoped composite; Crossplane
		// copies the composite's status to the claim.
		if err := dxr.Resource.SetString(FieldStatusInstanceName, ocd.Resource.GetName()); err != nil {
			response.Fatal(rsp, errors.Wrap(err, errSetDesiredXR))
			return rsp, nil
		}
		// Why an instance is stuck (a name Cloud SQL reserves, a missing
		// permission) is otherwise visible only on the cluster-scoped
		// PostgresqlInstance, which the claim's owners may not be able to read.
		if w := warnNotSynced(rsp, ocd); w != nil {
			w.TargetCompositeAndClaim()
		}
	}
	desired[ResourceName] = &resource.DesiredComposed{Resource: dcd, Ready: ready}

	// Readiness is left to Crossplane, which marks the composite ready when every
	// desired resource is: setting it here would override what other steps of the
	// pipeline compose.
	if err := response.SetDesiredCompositeResource(rsp, dxr); err != nil {
		response.Fatal(rsp, errors.Wrap(err, errSetDesiredXR))
		return rsp, nil
	}
	if err := response.SetDesiredComposedResources(rsp, desired); err != nil {
		response.Fatal(rsp, errors.Wrap(err, errSetDesiredCDs))
		return rsp, nil
	}
	response.ConditionTrue(rsp, ConditionTypeSpecValid, ReasonValid).TargetCompositeAndClaim()
	log.Debug("Composed a PostgresqlInstance", "instanceType", pi.Spec.ForProvider.Resources.InstanceType, "ready", ready)
	return rsp, nil
}

// runNamespaced composes a namespaced composite: a namespaced PostgresqlInstance and
// the Secret of ConnectionSecret, both in the composite's namespace, the instance
// ready when Cloud SQL reports it RUNNABLE and the Secret when it holds all five
// keys, so that the composite (which Crossplane makes ready when every composed
// resource is) is ready only once its pods can connect. The composite shows the
// names of both. Results and conditions target the composite alone: it has no
// claim, and no connection details of its own (Crossplane v2 composites have none).
func (f *Function) runNamespaced(rsp *fnv1.RunFunctionResponse, req *fnv1.RunFunctionRequest, oxr *resource.Composite, observed map[resource.Name]resource.ObservedComposed, log logging.Logger) *fnv1.RunFunctionResponse {
	var was *nsv1alpha1.PostgresqlInstance
	ocd, exists := observed[ResourceName]
	if exists {
		was = &nsv1alpha1.PostgresqlInstance{}
		if err := fromObserved(ocd, was); err != nil {
			response.Fatal(rsp, errors.Wrap(err, errReadObserved))
			return rsp
		}
	}
	var wasSecret *corev1.Secret
	if osc, ok := observed[ConnectionSecretResourceName]; ok {
		wasSecret = &corev1.Secret{}
		if err := fromObserved(osc, wasSecret); err != nil {
			response.Fatal(rsp, errors.Wrap(err, errReadObservedSecret))
			return rsp
		}
	}

	p, err := ParseNamespaced(oxr.Resource)
	if err == nil {
		err = checkNotShared(p, observed)
	}
	var pi *nsv1alpha1.PostgresqlInstance
	if err == nil {
		pi, err = ComposeNamespaced(p, was)
	}
	if err != nil {
		log.Info("Cannot compose a PostgresqlInstance", "error", err)
		response.Fatal(rsp, err)
		response.ConditionFalse(rsp, ConditionTypeSpecValid, ReasonInvalidSpec).WithMessage(err.Error()).TargetComposite()
		return rsp
	}
	var details resource.ConnectionDetails
	if exists {
		details = ocd.ConnectionDetails
	}
	secret, complete := ConnectionSecret(p, details, wasSecret)

	dpi, err := AsComposed(pi)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, errConvert))
		return rsp
	}
	dsecret, err := AsComposed(secret)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, errConvertSecret))
		return rsp
	}
	desired, err := request.GetDesiredComposedResources(req)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, errGetDesiredCDs))
		return rsp
	}
	dxr, err := request.GetDesiredCompositeResource(req)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, errGetDesiredXR))
		return rsp
	}

	ready := resource.ReadyFalse
	if exists {
		ready = Ready(ocd.Resource)
		if err := dxr.Resource.SetString(FieldStatusInstanceName, ocd.Resource.GetName()); err != nil {
			response.Fatal(rsp, errors.Wrap(err, errSetDesiredXR))
			return rsp
		}
		if w := warnNotSynced(rsp, ocd); w != nil {
			w.TargetComposite()
		}
	}
	if err := dxr.Resource.SetString(FieldStatusConnectionSecretName, secret.GetName()); err != nil {
		response.Fatal(rsp, errors.Wrap(err, errSetDesiredXR))
		return rsp
	}
	secretReady := resource.ReadyFalse
	if complete {
		secretReady = resource.ReadyTrue
	}
	desired[ResourceName] = &resource.DesiredComposed{Resource: dpi, Ready: ready}
	desired[ConnectionSecretResourceName] = &resource.DesiredComposed{Resource: dsecret, Ready: secretReady}

	// As for a claimed composite, Crossplane derives the composite's readiness.
	if err := response.SetDesiredCompositeResource(rsp, dxr); err != nil {
		response.Fatal(rsp, errors.Wrap(err, errSetDesiredXR))
		return rsp
	}
	if err := response.SetDesiredComposedResources(rsp, desired); err != nil {
		response.Fatal(rsp, errors.Wrap(err, errSetDesiredCDs))
		return rsp
	}
	response.ConditionTrue(rsp, ConditionTypeSpecValid, ReasonValid).TargetComposite()
	log.Debug("Composed a namespaced PostgresqlInstance", "instanceType", pi.Spec.ForProvider.Resources.InstanceType, "ready", ready, "secretComplete", complete)
	return rsp
}

// warnNotSynced adds a warning with the reason why the observed resource (an
// instance, a user or a database) is not synced with Cloud SQL (a name Cloud SQL
// reserves, a missing permission), which is otherwise visible only on the resource,
// whose message the composite's owners may not be able to read. It returns nil
// when the resource is synced.
func warnNotSynced(rsp *fnv1.RunFunctionResponse, ocd resource.ObservedComposed) *response.ResultOption {
	c := ocd.Resource.GetCondition(xpv2.TypeSynced)
	if c.Status != corev1.ConditionFalse {
		return nil
	}
	return response.Warning(rsp, errors.Errorf(errFmtNotSynced, ocd.Resource.GetKind(), ocd.Resource.GetName(), c.Reason, c.Message)).WithReason(ReasonNotSynced)
}

// fromObserved decodes an observed composed resource into a typed object.
func fromObserved(ocd resource.ObservedComposed, into runtime.Object) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(ocd.Resource.UnstructuredContent(), into)
}

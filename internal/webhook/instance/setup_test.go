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

package instance_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/providerconfig"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/instance"
)

// TestSetup serves AdmissionReviews through the webhook server of a manager
// that Setup configured, without starting it: deletions need no reads, so no
// API server is needed either.
func TestSetup(t *testing.T) {
	t.Parallel()
	mgr, err := ctrl.NewManager(&rest.Config{Host: "http://127.0.0.1:1"}, ctrl.Options{
		Scheme: scheme(t), Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		WebhookServer: webhook.NewServer(webhook.Options{}),
	})
	if err != nil {
		t.Fatal(err)
	}
	instance.Setup(mgr, providerconfig.NewServiceCache(nil))
	mux := mgr.GetWebhookServer().WebhookMux()

	type want struct {
		status  int
		allowed bool
		code    int32
	}
	cases := map[string]struct {
		reason string
		path   string
		object []byte
		want   want
	}{
		"DeleteWithoutAllowDeletion": {
			reason: "Setup serves the validator at Path: a deletion without the annotation is denied.",
			path:   instance.Path,
			object: rawOf(t, clusterInstance("orders")),
			want:   want{status: http.StatusOK, code: http.StatusForbidden},
		},
		"DeleteWithAllowDeletion": {
			reason: "Setup serves the validator at Path: a deletion with the annotation is allowed.",
			path:   instance.Path,
			object: rawOf(t, nsInstance("orders", allowDeletion())),
			want:   want{status: http.StatusOK, allowed: true, code: http.StatusOK},
		},
		"ElsewhereIsNotServed": {
			reason: "Setup serves the validator at Path only.",
			path:   instance.Path + "-not",
			object: rawOf(t, clusterInstance("orders")),
			want:   want{status: http.StatusNotFound},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			obj := &metav1.PartialObjectMetadata{}
			if err := json.Unmarshal(tc.object, obj); err != nil {
				t.Fatal(err)
			}
			gvk := obj.GroupVersionKind()
			b, err := json.Marshal(admissionv1.AdmissionReview{
				TypeMeta: metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "AdmissionReview"},
				Request: &admissionv1.AdmissionRequest{
					UID: "a-review", Operation: admissionv1.Delete, Name: obj.Name, Namespace: obj.Namespace,
					Kind:      metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind},
					OldObject: runtime.RawExtension{Raw: tc.object},
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest(http.MethodPost, tc.path, bytes.NewReader(b))
			r.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, r)

			got := want{status: rec.Code}
			if rec.Code == http.StatusOK {
				review := &admissionv1.AdmissionReview{}
				if err := json.Unmarshal(rec.Body.Bytes(), review); err != nil {
					t.Fatal(err)
				}
				got.allowed, got.code = review.Response.Allowed, review.Response.Result.Code
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("\n%s\nPOST %s: -want, +got:\n%s", tc.reason, tc.path, diff)
			}
		})
	}
}

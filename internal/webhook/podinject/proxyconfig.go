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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// What the injector and the rollout write on pods and workloads.
const (
	// AnnotationProxyConfig holds, on an injected pod, the ProxyConfig it was
	// injected with; on the pod template of a workload the rollout
	// restarted, the ProxyConfig it restarted it for.
	AnnotationProxyConfig = v1alpha1.Group + "/proxy-config"
	// AnnotationRestartedAt on the pod template of a workload says when the
	// rollout restarted it (RFC 3339); a changed template is what makes the
	// workload's controller replace its pods.
	AnnotationRestartedAt = v1alpha1.Group + "/restarted-at"
	// LabelInjected is "true" on the pods the injector injected, which the
	// rollout watches (and caches) alone.
	LabelInjected = v1alpha1.Group + "/proxy-injected"
)

// ProxyConfig is what an injected pod's proxy took at its start that no file
// of the pod can bring it later: a running pod keeps its image and its
// arguments, and the proxy reads its key only when it starts. Password files
// follow their secrets; a change of any of these needs new pods. The injector
// records it on each pod it injects (AnnotationProxyConfig), and the rollout
// compares it with what a pod admitted now would get.
type ProxyConfig struct {
	// Image is the proxy's image.
	Image string `json:"image"`
	// ConnectionName is the instance's, which the proxy connects to.
	ConnectionName string `json:"connectionName"`
	// Endpoint is the Admin API endpoint the proxy asks, empty for Google's.
	Endpoint string `json:"endpoint,omitempty"`
	// PrivateIP says the proxy connects to the instance's private IP.
	PrivateIP bool `json:"privateIP,omitempty"`
	// IAMAuthN says the proxy logs in with IAM database authentication.
	IAMAuthN bool `json:"iamAuthN,omitempty"`
	// Shape is what the pod's proxy-* annotations (and the caps that apply
	// to every pod) made of the proxy, as Shape.String writes it; empty for
	// the proxy every pod gets.
	Shape string `json:"shape,omitempty"`
	// Credentials names the secret the proxy's key is mounted from and a
	// fingerprint of the key (secret@sha256:<12 hex digits>); empty when
	// the proxy authenticates as the pod.
	Credentials string `json:"credentials,omitempty"`
}

// ProxyConfigOf is the ProxyConfig of a pod injected with x.
func ProxyConfigOf(x Inputs) ProxyConfig {
	c := ProxyConfig{
		Image: x.ProxyImage, ConnectionName: x.ConnectionName, Endpoint: x.AdminAPIEndpoint,
		PrivateIP: x.PrivateIP, IAMAuthN: x.IAMAuthN, Shape: x.Shape.String(),
	}
	if x.ProxyCredentialsSecret != "" {
		c.Credentials = x.ProxyCredentialsSecret + "@" + x.ProxyCredentialsHash
	}
	return c
}

// KeyHash is the fingerprint of a proxy key that ProxyConfig records: enough
// of its SHA-256 to tell keys apart, too little to say anything of the key.
func KeyHash(key []byte) string {
	sum := sha256.Sum256(key)
	return "sha256:" + hex.EncodeToString(sum[:6])
}

// String is c as AnnotationProxyConfig holds it: JSON, which kubectl shows
// readably.
func (c ProxyConfig) String() string {
	b, _ := json.Marshal(c) // strings and booleans always marshal
	return string(b)
}

// ParseProxyConfig reads what String wrote; false when s is not that.
func ParseProxyConfig(s string) (ProxyConfig, bool) {
	var c ProxyConfig
	if err := json.Unmarshal([]byte(s), &c); err != nil || c.Image == "" {
		return ProxyConfig{}, false
	}
	return c, true
}

// Changes says, one phrase each, how c differs from was, in the order a
// reader checks them; none when they are equal.
func (c ProxyConfig) Changes(was ProxyConfig) []string {
	var changes []string
	diff := func(what, from, to string) {
		if from != to {
			changes = append(changes, fmt.Sprintf("%s %s -> %s", what, orNone(from), orNone(to)))
		}
	}
	diff("proxy image", was.Image, c.Image)
	diff("connection name", was.ConnectionName, c.ConnectionName)
	diff("Admin API endpoint", was.Endpoint, c.Endpoint)
	diff("private IP", fmt.Sprint(was.PrivateIP), fmt.Sprint(c.PrivateIP))
	diff("IAM login", fmt.Sprint(was.IAMAuthN), fmt.Sprint(c.IAMAuthN))
	diff("proxy key", was.Credentials, c.Credentials)
	diff("proxy shape", was.Shape, c.Shape)
	return changes
}

// orNone is s, or "(none)" when it is empty.
func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

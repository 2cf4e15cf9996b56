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

// Package nodetest runs a one-node Kubernetes cluster with a real kubelet, for
// tests of what only a kubelet does with a pod spec: native-sidecar ordering and
// probes, init containers writing files as their user, read-only root file
// systems, runAsNonRoot, secret volume modes, containers finding each other on
// localhost.
//
// Everything runs in a network namespace that Main creates and the test binary
// is run again inside (the kubelet needs a non-loopback node address, and
// nothing may leave the machine): kube-apiserver and etcd, containerd (Debian's,
// with runc and the CNI plugins), a kubelet built from k8s.io/kubernetes, and
// whatever the tests start. No image can be pulled: tests build images with
// package images and hand their tarballs to Start. Main removes everything the
// run made afterwards, processes, mounts, cgroups, the namespace and the paths
// the kubelet, containerd and CNI insist on, even when a test fails. It needs
// root and writable cgroups; Unsupported says why a machine cannot run it.
package nodetest

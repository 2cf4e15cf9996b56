//go:build tools

// Package tools pins the control-plane commands that the Makefile builds for envtest,
// the demo and the node tests: kube-apiserver, kubectl and kubelet come from
// k8s.io/kubernetes, etcd from ./etcd.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)

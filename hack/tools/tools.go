//go:build tools

// Package tools pins the control-plane commands that the Makefile builds for envtest
// and the demo: kube-apiserver and kubectl come from k8s.io/kubernetes, etcd from ./etcd.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)

// Command demo runs provider-cloudsql-postgres on embedded defaults, with no cloud
// account: a local control plane (kube-apiserver and etcd built from Go modules) with
// the CRDs installed and the manifests under examples/ applied. `make demo` runs it;
// it prints how to point kubectl at the control plane and runs until interrupted.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controlplane"
)

func main() {
	runFor := flag.Duration("for", 0, "stop after this long (0 runs until interrupted)")
	flag.Parse()
	if err := run(*runFor); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(runFor time.Duration) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if runFor > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, runFor)
		defer cancel()
	}

	fmt.Println("starting a local control plane (kube-apiserver + etcd) with the CRDs from package/crds ...")
	env, err := controlplane.Start()
	if err != nil {
		return err
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "demo: cannot stop the control plane:", err)
		}
	}()

	dir := filepath.Join(controlplane.RepoRoot(), ".cache", "demo")
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(kubeconfig, env.KubeConfig(), 0o600); err != nil {
		return err
	}

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "crossplane-system"}}
	if err := env.Client.Create(ctx, ns); err != nil && !kerrors.IsAlreadyExists(err) {
		return err
	}
	files, err := filepath.Glob(filepath.Join(controlplane.RepoRoot(), "examples", "*.yaml"))
	if err != nil {
		return err
	}
	for _, f := range files {
		objs, err := controlplane.ReadManifests(f)
		if err != nil {
			return err
		}
		for _, o := range objs {
			if err := env.Client.Create(ctx, o); err != nil {
				return fmt.Errorf("the API server rejected %s %s from %s: %w", o.GetKind(), o.GetName(), f, err)
			}
			fmt.Printf("applied %s %s (%s)\n", o.GetKind(), o.GetName(), filepath.Base(f))
		}
	}

	list := &v1alpha1.PostgresqlInstanceList{}
	if err := env.Client.List(ctx, list); err != nil {
		return err
	}
	kubectl, _ := env.KubectlArgs()
	fmt.Printf("\n%d PostgresqlInstances stored. Try:\n", len(list.Items))
	fmt.Printf("  %s --kubeconfig %s get postgresqlinstances -o wide\n", kubectl, kubeconfig)
	fmt.Printf("  %s --kubeconfig %s explain postgresqlinstance.spec.forProvider\n", kubectl, kubeconfig)
	fmt.Println("\nthe control plane runs until you press Ctrl-C")
	<-ctx.Done()
	fmt.Println("stopping")
	return nil
}

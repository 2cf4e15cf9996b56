//go:build node

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

package nodee2e

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/podinject"
)

// quitWrapper is the one line the documentation gives a Job's container: it
// runs the application's command (%s), then asks every proxy of the pod to
// quit, and exits with the application's status. busybox's wget POSTs with
// --post-data.
const quitWrapper = `%s; rc=$?; for u in $CSQL_PROXY_QUIT_URLS; do wget -q -O- --post-data= "$u" >/dev/null; done; exit $rc`

// psqlLine is psql printing one value per line, as the other tests run it.
const psqlLine = `psql --no-psqlrc --tuples-only --no-align`

// jobQuitsItsProxy runs a Job (restartPolicy Never, no retry) whose pod's
// proxy is a classic sidecar with the quit endpoint, logging in with a
// password (so that a classic follower rewrites its password file): the
// application runs psql through the quit wrapper, the proxy quits, the
// follower sees its admin port close, the pod succeeds with every
// container's status 0, and the Job controller marks the Job Complete.
// Without the endpoint the classic proxy and follower would run on (the
// classic step of TestInjectedPodRunsOnAKubelet shows the proxy still
// running).
func (w *world) jobQuitsItsProxy(ctx context.Context, image string) {
	step(w.t, "Job %s/job-quits, classic sidecars with the quit endpoint, runs psql and calls %s: the Job completes", appNS, podinject.EnvQuitURLs)
	start := time.Now()
	tmpl := scriptPod(appNS, "", map[string]string{
		v1alpha1.AnnotationInstanceName:      instName,
		v1alpha1.AnnotationProxyQuitEndpoint: "true",
	}, image, fmt.Sprintf(quitWrapper, psqlLine+` --command 'select current_user'`))
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "job-quits"},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			Template:     corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: tmpl.Annotations}, Spec: tmpl.Spec},
		},
	}
	w.createWhenAdmitted(ctx, job)

	pod := &corev1.Pod{}
	w.g.Eventually(func(g Gomega) {
		pods := &corev1.PodList{}
		g.Expect(w.c.List(ctx, pods, client.InNamespace(appNS), client.MatchingLabels{batchv1.JobNameLabel: job.Name})).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(1), "the pod of Job %s/%s", appNS, job.Name)
		*pod = pods.Items[0]
	}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
	w.g.Expect(pod.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationProxyInjected, "true"))
	w.g.Expect(containerEnv(pod, "app")).To(HaveKeyWithValue(podinject.EnvQuitURLs, HavePrefix("http://127.0.0.1:")))
	w.g.Expect(pod.Spec.Containers[0].Name).To(Equal(podinject.ProxyContainerName), "a classic sidecar")
	w.g.Expect(pod.Spec.Containers[0].Args).To(ContainElement("--quitquitquit"))

	w.waitPhase(ctx, pod, corev1.PodSucceeded)
	w.g.Expect(w.logs(ctx, pod, "app")).To(Equal("postgres"), "psql reached the instance as postgres")
	got := w.expectAllExitedZero(ctx, pod)
	n := 0
	for _, st := range got.Status.ContainerStatuses {
		if strings.HasPrefix(st.Name, podinject.FollowerContainerPrefix) {
			n++
		}
	}
	w.g.Expect(n).To(Equal(1), "pod %s/%s has a classic follower, which ended by itself", got.Namespace, got.Name)
	w.g.Eventually(func(g Gomega) {
		g.Expect(w.c.Get(ctx, client.ObjectKeyFromObject(job), job)).To(Succeed())
		g.Expect(job.Status.Conditions).To(ContainElement(And(
			HaveField("Type", batchv1.JobComplete), HaveField("Status", corev1.ConditionTrue))),
			"Job %s/%s: %+v", job.Namespace, job.Name, job.Status)
	}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
	w.t.Logf("    Job %s/%s Complete %s after its creation (%d succeeded); pod %s: %s",
		job.Namespace, job.Name, time.Since(start).Round(time.Second), job.Status.Succeeded, got.Name, exitCodes(got))
}

// socketConnects runs a pod whose proxy listens on a Unix socket, with
// DATABASE_URL: psql connects through the socket with PGHOST and PGPORT, and
// again with DATABASE_URL alone (PGHOST, PGPORT and PGUSER removed), both
// reaching the instance as postgres. A classic proxy must be asked to quit
// (quit) for the pod to end; name tells the sidecar modes apart.
func (w *world) socketConnects(ctx context.Context, name, image string, quit bool) {
	step(w.t, "pod %s/%s: its proxy listens on a Unix socket; psql connects with PGHOST, and with %s alone", appNS, name, podinject.EnvDatabaseURL)
	// \conninfo names the socket psql used; current_user, the instance's
	// login it reached.
	query := ` --command '\conninfo' --command 'select current_user'`
	annotations := map[string]string{
		v1alpha1.AnnotationInstanceName:    instName,
		v1alpha1.AnnotationProxyUnixSocket: "true",
		v1alpha1.AnnotationDatabaseURL:     "true",
	}
	script := psqlLine + query + ` && env -u PGHOST -u PGPORT -u PGUSER ` + psqlLine + ` "$DATABASE_URL"` + query
	if quit {
		annotations[v1alpha1.AnnotationProxyQuitEndpoint] = "true"
		script = fmt.Sprintf(quitWrapper, script)
	}
	pod := w.createScriptPod(ctx, appNS, name, annotations, image, script)
	env := containerEnv(pod, "app")
	w.g.Expect(env).To(HaveKeyWithValue(podinject.EnvHost, podinject.SocketDir))
	w.g.Expect(env).To(HaveKeyWithValue(podinject.EnvDatabaseURL, "postgresql://postgres@%2Fvar%2Frun%2Fcloudsql-socket:5432"))
	w.waitPhase(ctx, pod, corev1.PodSucceeded)
	via := fmt.Sprintf(`via socket in "%s" at port "%s"`, podinject.SocketDir, podinject.SocketPort)
	lines := strings.Split(w.logs(ctx, pod, "app"), "\n")
	w.g.Expect(lines).To(HaveExactElements(ContainSubstring(via), "postgres", ContainSubstring(via), "postgres"),
		"pod %s/%s: psql connected through the socket twice", appNS, name)
	w.t.Logf("    %s/%s: %s", appNS, name, strings.Join(lines, "; "))
}

// expectAllExitedZero checks that every container of the finished pod,
// injected or not, ended with status 0 and was never restarted, and returns
// the pod.
func (w *world) expectAllExitedZero(ctx context.Context, pod *corev1.Pod) *corev1.Pod {
	got := &corev1.Pod{}
	w.g.Expect(w.c.Get(ctx, client.ObjectKeyFromObject(pod), got)).To(Succeed())
	for _, st := range append(append([]corev1.ContainerStatus{}, got.Status.InitContainerStatuses...), got.Status.ContainerStatuses...) {
		w.g.Expect(st.State.Terminated).NotTo(BeNil(), "pod %s/%s: container %s has not ended", got.Namespace, got.Name, st.Name)
		w.g.Expect(st.State.Terminated.ExitCode).To(BeZero(), "pod %s/%s: container %s: %s", got.Namespace, got.Name, st.Name, w.logs(ctx, got, st.Name))
		w.g.Expect(st.RestartCount).To(BeZero(), "pod %s/%s: container %s", got.Namespace, got.Name, st.Name)
	}
	return got
}

// exitCodes lists the pod's containers with their status, for the log.
func exitCodes(pod *corev1.Pod) string {
	var parts []string
	for _, st := range append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
		if t := st.State.Terminated; t != nil {
			parts = append(parts, fmt.Sprintf("%s exited %d", st.Name, t.ExitCode))
		}
	}
	return strings.Join(parts, ", ")
}

// containerEnv is the env of the pod's container name, as the injector left
// it.
func containerEnv(pod *corev1.Pod, name string) map[string]string {
	env := map[string]string{}
	for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		if c.Name == name {
			for _, e := range c.Env {
				env[e.Name] = e.Value
			}
		}
	}
	return env
}

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
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/tenants"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/podinject"
)

// connectLoop connects with psql every second, for as long as the pod runs,
// and prints "ok <the password file>" or "fail <psql's error>". SIGTERM ends
// it at once.
const connectLoop = `trap 'exit 0' TERM
while :; do
  if out=$(psql --no-psqlrc --tuples-only --no-align --command 'select current_user' 2>&1); then
    echo "ok $(cat "$PGPASSFILE")"
  else
    echo "fail" $out
  fi
  sleep 1 & wait $!
done`

// follower is a running pod that connects in a loop, and the connection
// secret whose password it uses.
type follower struct {
	pod    *corev1.Pod
	secret client.ObjectKey
}

// passwordsFollow shows that running pods follow password changes with no
// restart: a pod of appNS connecting as postgres (through the injector's copy
// of the instance's secret) and one of a namespaced PostgresqlUser's
// application (its own secret, mounted as it is) keep connecting in a loop
// while both passwords are changed twice, the way users change them (edited
// in the connection secret, which the provider then sets on Cloud SQL). After
// each change every pod's next connections succeed with the new password once
// the kubelet has brought the changed secret in, no container restarted and
// no probe failed; the followers end with status 0 when the pod is stopped.
func (w *world) passwordsFollow(ctx context.Context, image string) {
	app := tenants.Apps[0]
	step(w.t, "pods of %s (as postgres) and of %s (as %s) connect in a loop while both passwords change twice", appNS, app.Namespace, app.Login)
	conn := &corev1.Secret{}
	w.g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: secretNS, Name: instName + "-conn"}, conn)).To(Succeed())
	root := w.podSpec(appNS, "follows", image, false)
	root.Spec.Containers[0].Command = []string{"sh", "-c", connectLoop}
	w.createWhenAdmitted(ctx, root)
	pods := []follower{
		{pod: root, secret: client.ObjectKey{Namespace: secretNS, Name: instName + "-conn"}},
		{pod: w.createUserPod(ctx, app, app.User+"-follows", image, connectLoop, string(conn.Data[cloudsql.ConnectionKeyPassword])),
			secret: client.ObjectKey{Namespace: app.Namespace, Name: app.SecretName()}},
	}
	for _, f := range pods {
		w.waitPhase(ctx, f.pod, corev1.PodRunning)
	}

	for i := range 2 {
		password := fmt.Sprintf("Changed%dByHand%s", i+1, strings.Repeat("x", 20))
		changed := time.Now()
		for _, f := range pods {
			w.setPassword(ctx, f.secret, password)
		}
		for _, f := range pods {
			// Two connections in a row that read the new password: the
			// second read it before it connected.
			w.g.Eventually(func(g Gomega) {
				lines := strings.Split(w.logs(ctx, f.pod, "app"), "\n")
				g.Expect(len(lines)).To(BeNumerically(">=", 2))
				for _, l := range lines[len(lines)-2:] {
					g.Expect(l).To(And(HavePrefix("ok "), HaveSuffix(":"+password)), "the last connections")
				}
			}).WithTimeout(4*time.Minute).WithPolling(2*time.Second).Should(Succeed(), "%s/%s", f.pod.Namespace, f.pod.Name)
			w.t.Logf("    %s/%s connects with change %d's password %s after the change (kubelet sync, then the follower)",
				f.pod.Namespace, f.pod.Name, i+1, time.Since(changed).Round(time.Second))
		}
	}

	for _, f := range pods {
		got := &corev1.Pod{}
		w.g.Expect(w.c.Get(ctx, client.ObjectKeyFromObject(f.pod), got)).To(Succeed())
		for _, st := range append(append([]corev1.ContainerStatus{}, got.Status.InitContainerStatuses...), got.Status.ContainerStatuses...) {
			w.g.Expect(st.RestartCount).To(BeZero(), "%s/%s container %s", got.Namespace, got.Name, st.Name)
		}
		w.expectNoEvent(ctx, got, "Unhealthy")
		// Stopped by its deadline: the kubelet sends SIGTERM to every
		// container, and the followers end on it (a SIGKILL at the end of the
		// grace period would leave 137).
		got.Spec.ActiveDeadlineSeconds = ptr.To[int64](1)
		w.g.Expect(w.c.Update(ctx, got)).To(Succeed())
		w.g.Eventually(func(g Gomega) {
			g.Expect(w.c.Get(ctx, client.ObjectKeyFromObject(f.pod), got)).To(Succeed())
			n := 0
			for _, st := range got.Status.InitContainerStatuses {
				if !strings.HasPrefix(st.Name, podinject.FollowerContainerPrefix) {
					continue
				}
				n++
				g.Expect(st.State.Terminated).NotTo(BeNil(), "%s still runs", st.Name)
				g.Expect(st.State.Terminated.ExitCode).To(BeZero(), "%s ends with 0 on SIGTERM", st.Name)
			}
			g.Expect(n).To(Equal(1), "one follower, for the pod's one user")
		}).WithTimeout(podDone).WithPolling(time.Second).Should(Succeed())
	}
}

// setPassword edits the password of the connection secret key, as a user
// would, without the provider's fingerprint annotation: the provider sets it
// on Cloud SQL and completes the secret's other keys.
func (w *world) setPassword(ctx context.Context, key client.ObjectKey, password string) {
	sec := &corev1.Secret{}
	w.g.Expect(w.c.Get(ctx, key, sec)).To(Succeed())
	sec.Data[cloudsql.ConnectionKeyPassword] = []byte(password)
	w.g.Expect(w.c.Update(ctx, sec)).To(Succeed())
}

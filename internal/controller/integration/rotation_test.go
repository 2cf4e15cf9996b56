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

package integration_test

import (
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

// A due rotation sets a new generated password through the crash-safe path
// of an edited one: stored unconfirmed before users.update, so that while
// Cloud SQL refuses it the secret holds the new password, unconfirmed, and
// that same password (not a third) is set once Cloud SQL accepts; then it is
// confirmed with a new password-set-at, and not rotated again before its
// period.
func TestPasswordsRotateAtTheirPeriod(t *testing.T) {
	h := newHarness(t)
	start := time.Now().Add(-time.Second).UTC().Truncate(time.Second)
	pi := h.create(h.instance("rotates", func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.ForProvider.PasswordRotation = &v1alpha1.PasswordRotation{Period: metav1.Duration{Duration: time.Hour}}
	}))
	sec := h.secret(pi)
	h.g.Expect(sec.Annotations).To(HaveKey(v1alpha1.AnnotationPasswordSetAt))
	setAt, err := time.Parse(time.RFC3339, sec.Annotations[v1alpha1.AnnotationPasswordSetAt])
	h.g.Expect(err).NotTo(HaveOccurred())
	h.g.Expect(setAt).To(BeTemporally(">=", start), "set when the instance was created")
	old := string(sec.Data[cloudsql.ConnectionKeyPassword])

	// Not due: nothing changes.
	h.poke(pi.Name, 1)
	h.settle()
	h.g.Expect(h.calls(emulator.MethodUsersUpdate, "rotates")).To(BeZero())

	// Two hours later, as far as the record says, with Cloud SQL refusing
	// password changes for now.
	h.g.Expect(h.emu.InjectFault(emulator.Fault{Method: emulator.MethodUsersUpdate, ServerErrorShare: 1})).To(Succeed())
	sec = h.secret(pi)
	sec.Annotations[v1alpha1.AnnotationPasswordSetAt] = time.Now().Add(-2 * time.Hour).UTC().Format(time.RFC3339)
	h.g.Expect(env.Client.Update(h.ctx, sec)).To(Succeed())
	h.poke(pi.Name, 2)
	var rotated string
	h.g.Eventually(func(g Gomega) {
		s := h.secret(pi)
		rotated = string(s.Data[cloudsql.ConnectionKeyPassword])
		g.Expect(rotated).NotTo(Equal(old))
		g.Expect(s.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationPasswordUnconfirmed, "true"))
	}, 30*time.Second, 50*time.Millisecond).Should(Succeed())
	h.g.Expect(h.emu.PasswordIs(h.project, "rotates", cloudsql.RootUser, old)).To(BeTrue(), "Cloud SQL refused the change so far")
	h.g.Expect(rotated).To(HaveLen(cloudsql.PasswordLength))

	h.emu.ClearFaults()
	h.poke(pi.Name, 3)
	h.g.Eventually(func(g Gomega) {
		s := h.secret(pi)
		g.Expect(s.Annotations).NotTo(HaveKey(v1alpha1.AnnotationPasswordUnconfirmed))
		g.Expect(string(s.Data[cloudsql.ConnectionKeyPassword])).To(Equal(rotated), "the password stored before, not a third one")
		g.Expect(string(s.Data[cloudsql.ConnectionKeyPgpass])).To(Equal(cloudsql.Pgpass(cloudsql.ProxyAddress, "*", cloudsql.RootUser, rotated)))
		g.Expect(string(s.Data[cloudsql.ConnectionKeyURL])).To(Equal(cloudsql.URL(cloudsql.RootUser, rotated, "")), "url follows the password")
		at, err := time.Parse(time.RFC3339, s.Annotations[v1alpha1.AnnotationPasswordSetAt])
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(at).To(BeTemporally(">=", start))
		g.Expect(h.get("rotates").GetCondition(xpv2.TypeSynced).Status).To(Equal(corev1.ConditionTrue))
	}, 30*time.Second, 50*time.Millisecond).Should(Succeed())
	h.g.Expect(h.emu.PasswordIs(h.project, "rotates", cloudsql.RootUser, rotated)).To(BeTrue())
	h.g.Expect(h.emu.PasswordIs(h.project, "rotates", cloudsql.RootUser, old)).To(BeFalse())

	updates := h.calls(emulator.MethodUsersUpdate, "rotates")
	h.poke(pi.Name, 4)
	h.settle()
	h.g.Expect(h.calls(emulator.MethodUsersUpdate, "rotates")).To(Equal(updates), "not due again before its period")
	h.g.Expect(string(h.secret(pi).Data[cloudsql.ConnectionKeyPassword])).To(Equal(rotated))
}

// A rotation added to an instance whose secret has no record of when its
// password was set records now, and rotates nothing yet.
func TestARotationAddedLaterStartsItsPeriod(t *testing.T) {
	h := newHarness(t)
	pi := h.create(h.instance("later"))
	sec := h.secret(pi)
	old := string(sec.Data[cloudsql.ConnectionKeyPassword])
	delete(sec.Annotations, v1alpha1.AnnotationPasswordSetAt)
	h.g.Expect(env.Client.Update(h.ctx, sec)).To(Succeed())

	pi = h.get("later")
	pi.Spec.ForProvider.PasswordRotation = &v1alpha1.PasswordRotation{Period: metav1.Duration{Duration: time.Hour}}
	h.g.Expect(env.Client.Update(h.ctx, pi)).To(Succeed())
	h.g.Eventually(func(g Gomega) {
		g.Expect(h.secret(pi).Annotations).To(HaveKey(v1alpha1.AnnotationPasswordSetAt))
	}, 30*time.Second, 50*time.Millisecond).Should(Succeed())
	h.settle()
	h.g.Expect(string(h.secret(pi).Data[cloudsql.ConnectionKeyPassword])).To(Equal(old))
	h.g.Expect(h.calls(emulator.MethodUsersUpdate, "later")).To(BeZero())
}

// Cloud SQL answers users.update with an operation, and sets the password
// only if that operation succeeds. A password whose operation failed stays
// unconfirmed (Cloud SQL still has the old one) and is sent again; it is
// confirmed once an operation that set it is seen done. Confirmed on the
// answer alone, it was lost: the secret held a password Cloud SQL never set.
func TestAPasswordIsConfirmedOnlyOnceItsOperationSucceeded(t *testing.T) {
	h := newHarness(t)
	pi := h.create(h.instance("failing"))
	sec := h.secret(pi)
	old := string(sec.Data[cloudsql.ConnectionKeyPassword])

	h.g.Expect(h.emu.InjectFault(emulator.Fault{Method: emulator.MethodUsersUpdate, FailOperationShare: 1, Count: 2})).To(Succeed())
	sec.Data[cloudsql.ConnectionKeyPassword] = []byte("edited-by-hand-0123456789")
	h.g.Expect(env.Client.Update(h.ctx, sec)).To(Succeed())
	h.poke(pi.Name, 1)

	h.g.Eventually(func(g Gomega) {
		g.Expect(h.calls(emulator.MethodUsersUpdate, "failing")).To(BeNumerically(">=", 3), "sent again after each failed operation")
		g.Expect(h.emu.PasswordIs(h.project, "failing", cloudsql.RootUser, "edited-by-hand-0123456789")).To(BeTrue())
		s := h.secret(pi)
		g.Expect(s.Annotations).NotTo(HaveKey(v1alpha1.AnnotationPasswordUnconfirmed))
		g.Expect(s.Annotations).NotTo(HaveKey(v1alpha1.AnnotationPasswordOperation))
		g.Expect(string(s.Data[cloudsql.ConnectionKeyPassword])).To(Equal("edited-by-hand-0123456789"))
	}, 60*time.Second, 50*time.Millisecond).Should(Succeed())
	h.g.Expect(h.emu.PasswordIs(h.project, "failing", cloudsql.RootUser, old)).To(BeFalse())
}

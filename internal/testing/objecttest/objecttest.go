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

// Package objecttest holds what the table tests of the external clients of
// an instance's objects (databases, users, backups) share: a recorder of the
// pacing's marks, errors, conditions and calls as a case's result shows them,
// and an instance that nothing answers.
package objecttest

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/cloudsqlconn"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"google.golang.org/api/googleapi"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/pgsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

// Marks records the marks a reconcile left for the pacing
// (postgresqlinstance.Marks).
type Marks struct{ busy, made, stalled, waiting, settled, retried bool }

// Busy records that the object is busy.
func (r *Marks) Busy(metav1.Object) { r.busy = true }

// Made records that the object's insert was accepted.
func (r *Marks) Made(metav1.Object) { r.made = true }

// Stalled records that the object is stalled.
func (r *Marks) Stalled(metav1.Object) { r.stalled = true }

// Waiting records that the object waits on another.
func (r *Marks) Waiting(metav1.Object) { r.waiting = true }

// WriteFailed records that the object comes back at the busy poll
// interval, as the core's pacing decides: for a write that a look may settle.
func (r *Marks) WriteFailed(_ metav1.Object, err error) {
	r.retried = r.retried || cloudsql.IsUnsettled(err)
}

// Observed records nothing: no case is about the observation-gap metric.
func (r *Marks) Observed(metav1.Object, time.Time) {}

// Settled records that what the object manages no longer changes by itself.
func (r *Marks) Settled(metav1.Object) { r.settled = true }

// List is the marks left, in a fixed order: busy, made, stalled, waiting,
// settled, retried.
func (r *Marks) List() []string {
	var m []string
	if r.busy {
		m = append(m, "busy")
	}
	if r.made {
		m = append(m, "made")
	}
	if r.stalled {
		m = append(m, "stalled")
	}
	if r.waiting {
		m = append(m, "waiting")
	}
	if r.settled {
		m = append(m, "settled")
	}
	if r.retried {
		m = append(m, "retried")
	}
	return m
}

// Condition is mg's Ready condition as a case's result holds it: its reason
// and message, "" while it has none.
func Condition(mg interface {
	GetCondition(xpv2.ConditionType) xpv2.Condition
}) string {
	c := mg.GetCondition(xpv2.TypeReady)
	if c.Reason == "" {
		return ""
	}
	return string(c.Reason) + ": " + c.Message
}

// Calls are the Admin API methods of reqs, in order.
func Calls(reqs []emulator.Request) []string {
	var calls []string
	for _, req := range reqs {
		if req.Method != "" {
			calls = append(calls, req.Method)
		}
	}
	return calls
}

// Shown is err as a case's result holds it: a Cloud SQL Admin API error as
// its code, an unreachable instance as such, without the details that vary
// between runs.
func Shown(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	var gerr *googleapi.Error
	if errors.As(err, &gerr) {
		if i := strings.Index(msg, "googleapi: "); i >= 0 {
			msg = msg[:i]
		}
		return msg + "googleapi " + strconv.Itoa(gerr.Code)
	}
	if pgsql.IsUnreachable(err) {
		if i := strings.Index(msg, "cannot connect to Cloud SQL instance"); i >= 0 {
			msg = msg[:i]
		}
		return msg + "unreachable"
	}
	return msg
}

// RefusingDialer reaches the instance's address where nothing listens, as a
// firewall that rejects the provider would have it.
type RefusingDialer struct{ Addr string }

// Dial implements pgsql.Dialer.
func (d RefusingDialer) Dial(ctx context.Context, _ string, _ ...cloudsqlconn.DialOption) (net.Conn, error) {
	var nd net.Dialer
	return nd.DialContext(ctx, "tcp", d.Addr)
}

// ClosedAddress is a loopback address where nothing listens.
func ClosedAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

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

package budget

import (
	"fmt"
	"time"
)

// How a project's request budget is split. Observations are planned to use
// PollShare of it; reads may take all but the write reserve, so that writes
// always find DefaultWriteReserve; admission lookups alone may use
// DefaultAdmissionReserve; and the requests made for namespaced objects on
// the platform's configurations are capped by the namespace shares below.

// PollShare is the share of the request budget that the fleet's polling
// plans for: the rest is headroom for creates, updates, deletes, password
// changes and the webhooks' lookups.
const PollShare = 0.5

// HealthShare is the share of the request budget that the reads of the
// fleet's backup health (backupRuns.list, instances.getLatestRecoveryTime)
// plan for, out of the headroom that PollShare leaves: when the fleet's
// hourly reads would take more, each instance is read less often.
const HealthShare = 0.1

// DefaultWriteReserve is the share of a window that reads leave to writes, so that
// creates, updates, deletes and password changes keep a share of the quota however
// much there is to poll.
const DefaultWriteReserve = 0.2

// DefaultAdmissionReserve is the share of a window that only the admission
// webhook's lookups may use, so that a check of a new PostgresqlInstance's name
// finds a request free however busy the controllers are.
const DefaultAdmissionReserve = 0.05

// DefaultAdmissionPerNamespace is the share of the admission reserve that the
// lookups of one namespace may use, so that one namespace's creates cannot
// leave every other's unchecked.
const DefaultAdmissionPerNamespace = 1.0 / 3

// DefaultNamespaceShare is the share of the platform's window that the
// requests made for the objects of one namespace may use ([cloudsql]
// namespace_share), so that a team's burst of creates on a platform
// instance or ClusterProviderConfig leaves the platform's objects most of
// the window.
const DefaultNamespaceShare = 0.25

// DefaultAllNamespacesShare is the share of the platform's window that the
// requests made for the objects of every namespace together may use
// ([cloudsql] all_namespaces_share), so that several busy teams still leave
// the platform's objects half of it.
const DefaultAllNamespacesShare = 0.5

// WithNamespaceShares lets the requests made for the objects of one namespace
// (ForNamespace) use at most one (0 to 1) of the window's events in any
// period, and those of every namespace together at most all (one to 1), at
// least one event each. A request over its namespace's share is refused at
// once with a *ShareError, not held: the object comes back when the share has
// room (ForNamespace). Requests of no namespace (the cluster-scoped objects,
// the platform's) are bounded by the window alone, admission lookups by their
// own reserve (WithAdmissionPerKey).
func WithNamespaceShares(one, all float64) WindowOption {
	return func(w *Window) {
		one = min(max(one, 0), 1)
		all = min(max(all, one), 1)
		w.oneShare, w.allShare = one, all
		w.perNamespace = max(1, int(float64(w.limit)*one))
		w.namespaces = max(w.perNamespace, int(float64(w.limit)*all))
		w.comeBack = map[string]time.Time{}
	}
}

// shareLocked refuses a request of namespace ns, counting events for p, when
// ns, or every namespace together, has spent its share of the period. The
// objects so refused are told to come back one share's pace apart (a period
// over the namespace's share of it), so that a namespace's fifty waiting
// objects come back one by one as the share frees, not all at once, each a
// reconcile that the platform's objects share the rate of.
func (w *Window) shareLocked(now time.Time, p time.Duration, ns string) error {
	one := capWait(now, p, keyedTimes(w.spent, now, p, ns), w.perNamespace)
	all := capWait(now, p, keyedTimes(w.spent, now, p, ""), w.namespaces)
	d := max(one, all)
	if d <= 0 {
		return nil
	}
	for k, t := range w.comeBack {
		if !t.After(now) {
			delete(w.comeBack, k)
		}
	}
	at := now.Add(d)
	if last, ok := w.comeBack[ns]; ok {
		at = later(at, last.Add(p/time.Duration(w.perNamespace)))
	}
	w.comeBack[ns] = at
	e := &ShareError{Namespace: ns, Wait: at.Sub(now), limit: w.limit, most: w.perNamespace, share: w.oneShare}
	if all > one {
		e.All, e.most, e.share = true, w.namespaces, w.allShare
	}
	return e
}

// A ShareError says that a request made for an object of Namespace was not
// sent: the namespace (or, All, every namespace together) has spent its
// share of the platform's window, and the object should come back after
// Wait. It is ErrSpent (errors.Is).
type ShareError struct {
	Namespace string
	Wait      time.Duration
	All       bool
	// limit is the window's; most how many of them the share holds, share
	// its setting.
	limit, most int
	share       float64
}

func (e *ShareError) Error() string {
	wait := e.Wait.Round(time.Second)
	if e.All {
		return fmt.Sprintf("the namespaces together, %s among them, have spent their share of the platform's Cloud SQL request budget "+
			"(%d of cloudsql.requests_per_minute = %d: cloudsql.all_namespaces_share = %g), so this request was not sent; "+
			"the object is reconciled again in %s. The platform team may raise cloudsql.all_namespaces_share, or give busy namespaces "+
			"ProviderConfigs of their own (a service account of each team's), which spend budgets of their own", e.Namespace, e.most, e.limit, e.share, wait)
	}
	return fmt.Sprintf("namespace %s has spent its share of the platform's Cloud SQL request budget "+
		"(%d of cloudsql.requests_per_minute = %d: cloudsql.namespace_share = %g), so this request was not sent; "+
		"the object is reconciled again in %s. Create fewer objects at once, ask the platform team to raise cloudsql.namespace_share, "+
		"or use a ProviderConfig of the namespace's own (a service account of the team's), which spends a budget of its own", e.Namespace, e.most, e.limit, e.share, wait)
}

// Is says that a ShareError is ErrSpent.
func (e *ShareError) Is(target error) bool { return target == ErrSpent }

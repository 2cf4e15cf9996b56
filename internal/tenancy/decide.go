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

package tenancy

import (
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// Facts are what is known about one object and the name it manages.
type Facts struct {
	// Exists says that Cloud SQL lists the name on the instance.
	Exists bool
	// Holder is the live object that the record names as the holder, nil
	// when none does.
	Holder *Holder
	// Self is the object that asks.
	Self Holder
	// Deleting says that Self is being deleted.
	Deleting bool
	// ObserveOnly says that Self's management policies allow no change.
	ObserveOnly bool
	// Policy is the import policy of the instance.
	Policy v1alpha1.ObjectImportPolicy
	// Migrating says that Self was created before the provider recorded
	// holders: it may have made the name without a record.
	Migrating bool
}

// An Action is what an object may do with its name.
type Action int

// Actions, as Decide answers them.
const (
	// Manage: the object holds the name (Claim, when set, says that it
	// must be recorded first, and how).
	Manage Action = iota
	// Observe: the object may read the name, and change nothing.
	Observe
	// Absent: the name does not exist and nobody holds it: the object may
	// create it, recording that it holds it first.
	Absent
	// Leave: the object is being deleted and does not hold the name: it
	// goes without a request, and the name stays as it is.
	Leave
	// RefuseHeld: another object holds the name.
	RefuseHeld
	// RefuseImport: the name exists, nobody holds it, and the instance's
	// import policy does not let this object take it over.
	RefuseImport
)

// A Verdict is Decide's answer.
type Verdict struct {
	Action Action
	// Claim is how the object's hold must be recorded before it manages the
	// name (Imported, Migrated); empty when nothing is to be recorded.
	Claim string
}

// Decide says what an object may do with its name. A name that another live
// object holds is never changed, given away or dropped; a name that exists
// without a holder is taken over only as the instance's import policy says
// (or by an object that managed it before holders were recorded); an object
// that does not hold its name is deleted without touching it.
func Decide(f Facts) Verdict {
	namespaced := f.Self.Namespace != ""
	switch {
	case f.Holder != nil && f.Holder.UID == f.Self.UID:
		return Verdict{Action: Manage}
	case f.Holder != nil && f.Deleting:
		return Verdict{Action: Leave}
	case f.Holder != nil && f.ObserveOnly && !namespaced:
		// The platform may look at what any team has; a team may not.
		return Verdict{Action: Observe}
	case f.Holder != nil:
		return Verdict{Action: RefuseHeld}
	case !f.Exists:
		return Verdict{Action: Absent}
	case f.Migrating && f.ObserveOnly:
		return Verdict{Action: Observe}
	case f.Migrating:
		// Deleting too: what it managed before goes as it would have.
		return Verdict{Action: Manage, Claim: Migrated}
	case f.Deleting:
		return Verdict{Action: Leave}
	case !importAllowed(f.Policy, namespaced):
		return Verdict{Action: RefuseImport}
	case f.ObserveOnly:
		return Verdict{Action: Observe}
	}
	return Verdict{Action: Manage, Claim: Imported}
}

// importAllowed says whether policy lets an object of the scope given take
// over a name nobody holds.
func importAllowed(policy v1alpha1.ObjectImportPolicy, namespaced bool) bool {
	switch policy {
	case v1alpha1.ObjectImportAllow:
		return true
	case v1alpha1.ObjectImportDeny:
		return false
	}
	return !namespaced
}

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

package emulator_test

import (
	"crypto/sha1" // checking the API's SHA-1 fingerprint.
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

func TestInsertFillsServerFieldsAndDefaults(t *testing.T) {
	e := newEnv(t)
	op := e.insert("orders")
	e.g.Expect(op.OperationType).To(Equal("CREATE"))
	e.g.Expect(op.Status).To(Equal("DONE"))
	e.g.Expect(op.TargetId).To(Equal("orders"))
	e.g.Expect(op.TargetProject).To(Equal(project))
	e.g.Expect(op.TargetLink).To(HaveSuffix("/sql/v1beta4/projects/test-project/instances/orders"))
	e.g.Expect(op.SelfLink).To(HaveSuffix("/projects/test-project/operations/" + op.Name))
	e.g.Expect(op.Name).To(MatchRegexp(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`))
	e.g.Expect(op.InsertTime).To(Equal("2026-03-01T10:00:00.000Z"))
	e.g.Expect(op.EndTime).To(Equal("2026-03-01T10:00:00.000Z"))
	e.g.Expect(op.Error).To(BeNil())

	db := e.get("orders")
	e.g.Expect(db.Kind).To(Equal("sql#instance"))
	e.g.Expect(db.State).To(Equal(emulator.StateRunnable))
	e.g.Expect(db.Project).To(Equal(project))
	e.g.Expect(db.ConnectionName).To(Equal("test-project:europe-west1:orders"))
	e.g.Expect(db.GceZone).To(Equal("europe-west1-a"))
	e.g.Expect(db.SelfLink).To(Equal("https://sqladmin.googleapis.com/sql/v1beta4/projects/test-project/instances/orders"))
	e.g.Expect(db.BackendType).To(Equal("SECOND_GEN"))
	e.g.Expect(db.InstanceType).To(Equal("CLOUD_SQL_INSTANCE"))
	e.g.Expect(db.DatabaseVersion).To(Equal("POSTGRES_15"))
	e.g.Expect(db.DatabaseInstalledVersion).To(MatchRegexp(`^POSTGRES_15_[0-9]+$`))
	e.g.Expect(db.ServiceAccountEmailAddress).To(HaveSuffix("@gcp-sa-cloud-sql.iam.gserviceaccount.com"))
	e.g.Expect(db.CreateTime).To(Equal("2026-03-01T10:00:00.000Z"))
	e.g.Expect(db.RootPassword).To(BeEmpty())

	st := db.Settings
	e.g.Expect(st.SettingsVersion).To(Equal(int64(1)))
	e.g.Expect(st.Tier).To(Equal("db-custom-1-3840"))
	e.g.Expect(st.Edition).To(Equal("ENTERPRISE"))
	e.g.Expect(st.DataDiskSizeGb).To(Equal(int64(10)))
	e.g.Expect(st.DataDiskType).To(Equal("PD_SSD"))
	e.g.Expect(st.AvailabilityType).To(Equal("ZONAL"))
	e.g.Expect(st.PricingPlan).To(Equal("PER_USE"))
	e.g.Expect(st.ActivationPolicy).To(Equal("ALWAYS"))
	e.g.Expect(st.StorageAutoResize).To(HaveValue(BeTrue()))
	e.g.Expect(st.BackupConfiguration.StartTime).To(Equal("12:00"))
	e.g.Expect(st.LocationPreference.Zone).To(Equal("europe-west1-a"))
	e.g.Expect(st.IpConfiguration.Ipv4Enabled).To(BeTrue())

	e.g.Expect(ipTypes(db)).To(Equal([]string{"PRIMARY", "OUTGOING"}))
	for _, ip := range db.IpAddresses {
		e.g.Expect(net.ParseIP(ip.IpAddress)).NotTo(BeNil())
	}
	// Addresses are stable: the same name in the same project gets the same.
	e.g.Expect(e.get("orders").IpAddresses[0].IpAddress).To(Equal(db.IpAddresses[0].IpAddress))

	ca := db.ServerCaCert
	e.g.Expect(ca).NotTo(BeNil())
	block, _ := pem.Decode([]byte(ca.Cert))
	e.g.Expect(block).NotTo(BeNil())
	cert, err := x509.ParseCertificate(block.Bytes)
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(cert.IsCA).To(BeTrue())
	e.g.Expect(cert.CheckSignatureFrom(cert)).To(Succeed())
	e.g.Expect(cert.Subject.CommonName).To(Equal("Google Cloud SQL Server CA"))
	sum := sha1.Sum(block.Bytes) // the API's fingerprint.
	e.g.Expect(ca.Sha1Fingerprint).To(Equal(hex.EncodeToString(sum[:])))
	e.g.Expect(ca.CommonName).To(ContainSubstring("CN=Google Cloud SQL Server CA"))
	exp, err := time.Parse(time.RFC3339, ca.ExpirationTime)
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(exp).To(BeTemporally("~", cert.NotAfter, time.Second))
	e.g.Expect(ca.Instance).To(Equal("orders"))
}

func TestInsertHonoursRequestedNetworkingAndZone(t *testing.T) {
	e := newEnv(t)
	e.insert("private-only", func(db *sqladmin.DatabaseInstance) {
		db.Settings.LocationPreference = &sqladmin.LocationPreference{Zone: "europe-west1-d"}
		db.Settings.IpConfiguration = &sqladmin.IpConfiguration{
			Ipv4Enabled:     false,
			PrivateNetwork:  "projects/test-project/global/networks/default",
			ForceSendFields: []string{"Ipv4Enabled"},
		}
	})
	db := e.get("private-only")
	e.g.Expect(db.GceZone).To(Equal("europe-west1-d"))
	e.g.Expect(db.Settings.IpConfiguration.Ipv4Enabled).To(BeFalse())
	e.g.Expect(ipTypes(db)).To(Equal([]string{"PRIVATE"}))
	e.g.Expect(db.IpAddresses[0].IpAddress).To(HavePrefix("10."))

	e.insert("both", func(db *sqladmin.DatabaseInstance) {
		db.Settings.IpConfiguration = &sqladmin.IpConfiguration{PrivateNetwork: "projects/test-project/global/networks/default"}
	})
	// ipv4Enabled omitted means the default: public IP on.
	e.g.Expect(ipTypes(e.get("both"))).To(Equal([]string{"PRIMARY", "OUTGOING", "PRIVATE"}))
}

func TestInsertDefaultsTheEditionByVersion(t *testing.T) {
	cases := map[string]struct {
		mutators []func(*sqladmin.DatabaseInstance)
		edition  string
		reason   string
	}{
		"POSTGRES15DefaultsToENTERPRISE": {
			mutators: []func(*sqladmin.DatabaseInstance){withVersion("POSTGRES_15")},
			edition:  "ENTERPRISE",
		},
		"POSTGRES16DefaultsToENTERPRISEPLUS": {
			mutators: []func(*sqladmin.DatabaseInstance){withVersion("POSTGRES_16"), withTier("db-perf-optimized-N-2")},
			edition:  "ENTERPRISE_PLUS",
		},
		"POSTGRES17WithACustomTierNeedsENTERPRISESpelledOut": {
			mutators: []func(*sqladmin.DatabaseInstance){withVersion("POSTGRES_17")},
			reason:   "invalid",
		},
		"POSTGRES17WithENTERPRISEAndACustomTier": {
			mutators: []func(*sqladmin.DatabaseInstance){withVersion("POSTGRES_17"), withEdition("ENTERPRISE")},
			edition:  "ENTERPRISE",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			_, err := e.svc.Instances.Insert(project, instance("db", tc.mutators...)).Do()
			if tc.reason != "" {
				expectAPIError(e.g, err, http.StatusBadRequest, tc.reason)
				return
			}
			e.g.Expect(err).NotTo(HaveOccurred())
			e.g.Expect(e.get("db").Settings.Edition).To(Equal(tc.edition))
		})
	}
}

func TestInsertAcceptsValidTiers(t *testing.T) {
	cases := map[string][]func(*sqladmin.DatabaseInstance){
		"SharedCoreMicro":                {withTier("db-f1-micro")},
		"SharedCoreSmall":                {withTier("db-g1-small")},
		"Custom1VCPUMinimumMemory":       {withTier("db-custom-1-3840")},
		"Custom1VCPUMaximumMemory":       {withTier("db-custom-1-6656")},
		"Custom2VCPU":                    {withTier("db-custom-2-7680")},
		"Custom96VCPU":                   {withTier("db-custom-96-624640")},
		"Custom8VCPUAt0Point9GiBPerVCPU": {withTier("db-custom-8-7424")},
		"PredefinedN1":                   {withTier("db-n1-standard-2")},
		"PerfOptimizedInEnterprisePlus":  {withVersion("POSTGRES_17"), withTier("db-perf-optimized-N-8")},
		"EnterprisePlusSpelledOutOn15":   {withEdition("ENTERPRISE_PLUS"), withTier("db-perf-optimized-N-4")},
		"EveryVersionPOSTGRES96":         {withVersion("POSTGRES_9_6")},
		"EveryVersionPOSTGRES10":         {withVersion("POSTGRES_10")},
		"EveryVersionPOSTGRES18EPlus":    {withVersion("POSTGRES_18"), withTier("db-perf-optimized-N-2")},
		"EveryVersionPOSTGRES14ENT":      {withVersion("POSTGRES_14")},
	}
	for name, mutators := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.insert("db", mutators...)
			db := e.get("db")
			e.g.Expect(db.State).To(Equal(emulator.StateRunnable))
			// Cloud SQL reports POSTGRES_9_6 installed, without its minor
			// version; the others with it.
			e.g.Expect(db.DatabaseInstalledVersion).To(MatchRegexp("^" + db.DatabaseVersion + "(_[0-9]+)?$"))
			e.g.Expect(db.MaintenanceVersion).To(MatchRegexp(`^POSTGRES_[0-9_]+\.R[0-9]{8}\.[0-9]{2}_[0-9]{2}$`))
		})
	}
}

func TestInsertRejectsInvalidRequests(t *testing.T) {
	cases := map[string]struct {
		mutate func(*sqladmin.DatabaseInstance)
		reason string
	}{
		"MissingName":           {func(db *sqladmin.DatabaseInstance) { db.Name = "" }, "required"},
		"NameWithCapitals":      {func(db *sqladmin.DatabaseInstance) { db.Name = "Orders" }, "invalid"},
		"NameEndingInHyphen":    {func(db *sqladmin.DatabaseInstance) { db.Name = "orders-" }, "invalid"},
		"MissingVersion":        {func(db *sqladmin.DatabaseInstance) { db.DatabaseVersion = "" }, "required"},
		"UnknownVersion":        {withVersion("POSTGRES_8"), "invalid"},
		"MySQLVersion":          {withVersion("MYSQL_8_0"), "invalid"},
		"MissingSettings":       {func(db *sqladmin.DatabaseInstance) { db.Settings = nil }, "required"},
		"MissingTier":           {withTier(""), "required"},
		"UnknownTier":           {withTier("db-huge"), "invalid"},
		"CustomOddVCPU":         {withTier("db-custom-3-7680"), "invalid"},
		"CustomTooManyVCPU":     {withTier("db-custom-98-100352"), "invalid"},
		"CustomMemoryStep":      {withTier("db-custom-2-4000"), "invalid"},
		"CustomBelow3840MiB":    {withTier("db-custom-1-3584"), "invalid"},
		"CustomAbove6Point5GiB": {withTier("db-custom-1-6912"), "invalid"},
		"CustomBelow0Point9GiB": {withTier("db-custom-8-7168"), "invalid"},
		"CustomMalformed":       {withTier("db-custom-2"), "invalid"},
		"SharedCoreInEPlus": {func(db *sqladmin.DatabaseInstance) {
			db.Settings.Tier, db.Settings.Edition = "db-f1-micro", "ENTERPRISE_PLUS"
		}, "invalid"},
		"CustomInEPlus":       {withEdition("ENTERPRISE_PLUS"), "invalid"},
		"PerfOptimizedInE":    {withTier("db-perf-optimized-N-4"), "invalid"},
		"UnknownEdition":      {withEdition("STANDARD"), "invalid"},
		"DiskBelow10GB":       {func(db *sqladmin.DatabaseInstance) { db.Settings.DataDiskSizeGb = 5 }, "invalid"},
		"UnknownDiskType":     {func(db *sqladmin.DatabaseInstance) { db.Settings.DataDiskType = "PD_FAST" }, "invalid"},
		"UnknownAvailability": {func(db *sqladmin.DatabaseInstance) { db.Settings.AvailabilityType = "GLOBAL" }, "invalid"},
		"BadBackupStart": {func(db *sqladmin.DatabaseInstance) {
			db.Settings.BackupConfiguration = &sqladmin.BackupConfiguration{StartTime: "25:00"}
		}, "invalid"},
		"ZoneOfAnotherRegion": {func(db *sqladmin.DatabaseInstance) {
			db.Settings.LocationPreference = &sqladmin.LocationPreference{Zone: "us-east1-b"}
		}, "invalid"},
		"BadRegion": {func(db *sqladmin.DatabaseInstance) { db.Region = "Europe" }, "invalid"},
		"BadPrivateNetwork": {func(db *sqladmin.DatabaseInstance) {
			db.Settings.IpConfiguration = &sqladmin.IpConfiguration{PrivateNetwork: "default"}
		}, "invalid"},
		"NoConnectivity": {func(db *sqladmin.DatabaseInstance) {
			db.Settings.IpConfiguration = &sqladmin.IpConfiguration{ForceSendFields: []string{"Ipv4Enabled"}}
		}, "invalid"},
		"BadAuthorizedNetwork": {func(db *sqladmin.DatabaseInstance) {
			db.Settings.IpConfiguration = &sqladmin.IpConfiguration{Ipv4Enabled: true,
				AuthorizedNetworks: []*sqladmin.AclEntry{{Value: "10.0.0.0/33"}}}
		}, "invalid"},
		"FlagNameMalformed": {func(db *sqladmin.DatabaseInstance) {
			db.Settings.DatabaseFlags = []*sqladmin.DatabaseFlags{{Name: "Max-Connections", Value: "100"}}
		}, "invalidFlagValue"},
		"FlagIntegerMalformed": {func(db *sqladmin.DatabaseInstance) {
			db.Settings.DatabaseFlags = []*sqladmin.DatabaseFlags{{Name: "max_connections", Value: "lots"}}
		}, "invalidFlagValue"},
		"FlagIntegerOutOfRange": {func(db *sqladmin.DatabaseInstance) {
			db.Settings.DatabaseFlags = []*sqladmin.DatabaseFlags{{Name: "max_connections", Value: "5"}}
		}, "invalidFlagValue"},
		"FlagBooleanMalformed": {func(db *sqladmin.DatabaseInstance) {
			db.Settings.DatabaseFlags = []*sqladmin.DatabaseFlags{{Name: "log_connections", Value: "yes"}}
		}, "invalidFlagValue"},
		"FlagEnumMalformed": {func(db *sqladmin.DatabaseInstance) {
			db.Settings.DatabaseFlags = []*sqladmin.DatabaseFlags{{Name: "log_statement", Value: "everything"}}
		}, "invalidFlagValue"},
		"FlagSetTwice": {func(db *sqladmin.DatabaseInstance) {
			db.Settings.DatabaseFlags = []*sqladmin.DatabaseFlags{{Name: "work_mem", Value: "4096"}, {Name: "work_mem", Value: "8192"}}
		}, "invalidFlagValue"},
		"65Labels": {func(db *sqladmin.DatabaseInstance) {
			db.Settings.UserLabels = map[string]string{}
			for i := range 65 {
				db.Settings.UserLabels[fmt.Sprintf("l%d", i)] = "v"
			}
		}, "invalid"},
		"LabelKeyWithACapital": {func(db *sqladmin.DatabaseInstance) { db.Settings.UserLabels = map[string]string{"Team": "a"} }, "invalid"},
		"LabelKeyStartingWithADigit": {func(db *sqladmin.DatabaseInstance) {
			db.Settings.UserLabels = map[string]string{"1team": "a"}
		}, "invalid"},
		"LabelKeyOf64Characters": {func(db *sqladmin.DatabaseInstance) {
			db.Settings.UserLabels = map[string]string{"k" + strings.Repeat("a", 63): "a"}
		}, "invalid"},
		"LabelValueWithADot": {func(db *sqladmin.DatabaseInstance) { db.Settings.UserLabels = map[string]string{"team": "a.b"} }, "invalid"},
		"LabelValueOf64Characters": {func(db *sqladmin.DatabaseInstance) {
			db.Settings.UserLabels = map[string]string{"team": strings.Repeat("a", 64)}
		}, "invalid"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			db := instance("db")
			tc.mutate(db)
			_, err := e.svc.Instances.Insert(project, db).Do()
			gerr := expectAPIError(e.g, err, http.StatusBadRequest, tc.reason)
			e.g.Expect(gerr.Message).NotTo(BeEmpty())
			// Nothing was created.
			list, err := e.svc.Instances.List(project).Do()
			e.g.Expect(err).NotTo(HaveOccurred())
			e.g.Expect(list.Items).To(BeEmpty())
		})
	}
}

func TestInsertAcceptsWellFormedFlags(t *testing.T) {
	e := newEnv(t)
	flags := []*sqladmin.DatabaseFlags{
		{Name: "max_connections", Value: "200"},
		{Name: "cloudsql.iam_authentication", Value: "on"},
		{Name: "log_statement", Value: "ddl"},
		{Name: "random_page_cost", Value: "1.1"},
		{Name: "some_flag_the_emulator_does_not_know", Value: "anything"},
	}
	e.insert("flags", func(db *sqladmin.DatabaseInstance) { db.Settings.DatabaseFlags = flags })
	e.g.Expect(e.get("flags").Settings.DatabaseFlags).To(HaveLen(len(flags)))
}

func TestInsertConflictsWithLiveAndRecentlyDeletedNames(t *testing.T) {
	e := newEnv(t, emulator.WithNameReservation(48*time.Hour))
	e.insert("orders")

	_, err := e.svc.Instances.Insert(project, instance("orders")).Do()
	gerr := expectAPIError(e.g, err, http.StatusConflict, "instanceAlreadyExists")
	e.g.Expect(gerr.Message).To(Equal("The Cloud SQL instance already exists."))

	// The same name in another project is another instance.
	_, err = e.svc.Instances.Insert(otherProject, instance("orders")).Do()
	e.g.Expect(err).NotTo(HaveOccurred())

	_, err = e.svc.Instances.Delete(project, "orders").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	_, err = e.svc.Instances.Get(project, "orders").Do()
	expectAPIError(e.g, err, http.StatusNotFound, "instanceDoesNotExist")

	e.clk.Advance(47 * time.Hour)
	_, err = e.svc.Instances.Insert(project, instance("orders")).Do()
	gerr = expectAPIError(e.g, err, http.StatusConflict, "instanceAlreadyExists")
	e.g.Expect(gerr.Message).To(ContainSubstring(`"orders" was used by a deleted instance and can't be reused until 2026-03-03T10:00:00.000Z`))

	e.clk.Advance(time.Hour)
	e.insert("orders")
	e.g.Expect(e.get("orders").State).To(Equal(emulator.StateRunnable))
}

func TestNameReservationDefaultsToAWeek(t *testing.T) {
	e := newEnv(t)
	e.insert("orders")
	_, err := e.svc.Instances.Delete(project, "orders").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.clk.Advance(7*24*time.Hour - time.Second)
	_, err = e.svc.Instances.Insert(project, instance("orders")).Do()
	expectAPIError(e.g, err, http.StatusConflict, "instanceAlreadyExists")
	e.clk.Advance(time.Second)
	e.insert("orders")
}

func TestGetUnknownInstance(t *testing.T) {
	e := newEnv(t)
	_, err := e.svc.Instances.Get(project, "nope").Do()
	gerr := expectAPIError(e.g, err, http.StatusNotFound, "instanceDoesNotExist")
	e.g.Expect(gerr.Message).To(Equal("The Cloud SQL instance does not exist."))
}

func TestListFiltersAndPages(t *testing.T) {
	e := newEnv(t, emulator.WithDelays(10*time.Minute, 0, 0))
	for _, n := range []string{"charlie", "alpha", "bravo"} {
		e.insert(n, func(db *sqladmin.DatabaseInstance) {
			db.Settings.UserLabels = map[string]string{"team": "payments"}
		})
	}
	e.clk.Advance(10 * time.Minute)
	e.insert("delta")
	_, err := e.svc.Instances.Insert(otherProject, instance("echo")).Do()
	e.g.Expect(err).NotTo(HaveOccurred())

	names := func(list *sqladmin.InstancesListResponse) []string {
		var out []string
		for _, db := range list.Items {
			out = append(out, db.Name)
		}
		return out
	}

	all, err := e.svc.Instances.List(project).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(names(all)).To(Equal([]string{"alpha", "bravo", "charlie", "delta"}))
	e.g.Expect(all.NextPageToken).To(BeEmpty())

	runnable, err := e.svc.Instances.List(project).Filter("state:RUNNABLE").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(names(runnable)).To(Equal([]string{"alpha", "bravo", "charlie"}))

	pending, err := e.svc.Instances.List(project).Filter("state:PENDING_CREATE").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(names(pending)).To(Equal([]string{"delta"}))

	labelled, err := e.svc.Instances.List(project).Filter("settings.userLabels.team:payments AND name:bravo").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(names(labelled)).To(Equal([]string{"bravo"}))

	page1, err := e.svc.Instances.List(project).MaxResults(3).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(names(page1)).To(Equal([]string{"alpha", "bravo", "charlie"}))
	e.g.Expect(page1.NextPageToken).NotTo(BeEmpty())
	page2, err := e.svc.Instances.List(project).MaxResults(3).PageToken(page1.NextPageToken).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(names(page2)).To(Equal([]string{"delta"}))
	e.g.Expect(page2.NextPageToken).To(BeEmpty())

	var paged []string
	e.g.Expect(e.svc.Instances.List(project).MaxResults(1).Pages(e.ctx, func(l *sqladmin.InstancesListResponse) error {
		paged = append(paged, names(l)...)
		return nil
	})).To(Succeed())
	e.g.Expect(paged).To(Equal([]string{"alpha", "bravo", "charlie", "delta"}))

	_, err = e.svc.Instances.List(project).PageToken("not a token!").Do()
	expectAPIError(e.g, err, http.StatusBadRequest, "invalid")
	_, err = e.svc.Instances.List(project).Filter("state").Do()
	expectAPIError(e.g, err, http.StatusBadRequest, "invalid")
	_, err = e.svc.Instances.List(project).MaxResults(-1).Do()
	expectAPIError(e.g, err, http.StatusBadRequest, "invalid")

	empty, err := e.svc.Instances.List("empty-project").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(empty.Items).To(BeEmpty())
}

func TestDelete(t *testing.T) {
	e := newEnv(t)
	e.insert("orders")
	op, err := e.svc.Instances.Delete(project, "orders").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(op.OperationType).To(Equal("DELETE"))
	e.g.Expect(op.Status).To(Equal("DONE"))
	e.g.Expect(op.TargetId).To(Equal("orders"))
	_, err = e.svc.Instances.Get(project, "orders").Do()
	expectAPIError(e.g, err, http.StatusNotFound, "instanceDoesNotExist")
	// The operation outlives the instance.
	e.g.Expect(e.operation(op.Name).Status).To(Equal("DONE"))

	_, err = e.svc.Instances.Delete(project, "orders").Do()
	expectAPIError(e.g, err, http.StatusNotFound, "instanceDoesNotExist")
}

func TestDeleteHonoursDeletionProtection(t *testing.T) {
	e := newEnv(t)
	e.insert("precious", func(db *sqladmin.DatabaseInstance) { db.Settings.DeletionProtectionEnabled = true })
	_, err := e.svc.Instances.Delete(project, "precious").Do()
	gerr := expectAPIError(e.g, err, http.StatusBadRequest, "invalid")
	e.g.Expect(gerr.Message).To(Equal("The instance is protected. Please disable the deletion protection and try again. " +
		"To disable deletion protection, update the instance settings with deletionProtectionEnabled set to false."))
	e.g.Expect(e.get("precious").State).To(Equal(emulator.StateRunnable))
	e.g.Expect(e.get("precious").Settings.DeletionProtectionEnabled).To(BeTrue())

	// Turning protection off needs ForceSendFields, since false is omitted.
	_, err = e.svc.Instances.Patch(project, "precious", &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{
		DeletionProtectionEnabled: false, ForceSendFields: []string{"DeletionProtectionEnabled"},
	}}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	_, err = e.svc.Instances.Delete(project, "precious").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
}

func TestInstanceStateFollowsOperationsThroughTheLifecycle(t *testing.T) {
	e := newEnv(t, emulator.WithDelays(10*time.Minute, 5*time.Minute, 2*time.Minute))

	// Create: PENDING for the first tenth of the delay, then RUNNING, then DONE.
	op := e.insert("orders")
	e.g.Expect(op.Status).To(Equal("PENDING"))
	e.g.Expect(op.StartTime).To(BeEmpty())
	e.g.Expect(op.EndTime).To(BeEmpty())
	db := e.get("orders")
	e.g.Expect(db.State).To(Equal(emulator.StatePendingCreate))
	e.g.Expect(db.IpAddresses).To(BeEmpty())
	_, err := e.svc.Instances.Patch(project, "orders", &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{Tier: "db-custom-2-7680"}}).Do()
	expectAPIError(e.g, err, http.StatusConflict, "operationInProgress")
	_, err = e.svc.Instances.Delete(project, "orders").Do()
	expectAPIError(e.g, err, http.StatusConflict, "operationInProgress")

	e.clk.Advance(time.Minute)
	running := e.operation(op.Name)
	e.g.Expect(running.Status).To(Equal("RUNNING"))
	e.g.Expect(running.StartTime).To(Equal("2026-03-01T10:01:00.000Z"))
	e.g.Expect(running.EndTime).To(BeEmpty())
	e.g.Expect(e.get("orders").State).To(Equal(emulator.StatePendingCreate))

	e.clk.Advance(9 * time.Minute)
	done := e.operation(op.Name)
	e.g.Expect(done.Status).To(Equal("DONE"))
	e.g.Expect(done.EndTime).To(Equal("2026-03-01T10:10:00.000Z"))
	db = e.get("orders")
	e.g.Expect(db.State).To(Equal(emulator.StateRunnable))
	e.g.Expect(ipTypes(db)).To(Equal([]string{"PRIMARY", "OUTGOING"}))

	// Update: the instance stays RUNNABLE with its old settings until DONE,
	// and every other mutation is refused meanwhile.
	upd, err := e.svc.Instances.Patch(project, "orders", &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{Tier: "db-custom-2-7680"}}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(upd.OperationType).To(Equal("UPDATE"))
	e.g.Expect(upd.Status).To(Equal("PENDING"))
	db = e.get("orders")
	e.g.Expect(db.State).To(Equal(emulator.StateRunnable))
	e.g.Expect(db.Settings.Tier).To(Equal("db-custom-1-3840"))
	e.g.Expect(db.Settings.SettingsVersion).To(Equal(int64(1)))
	_, err = e.svc.Instances.Patch(project, "orders", &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{DataDiskSizeGb: 20}}).Do()
	expectAPIError(e.g, err, http.StatusConflict, "operationInProgress")
	_, err = e.svc.Users.Insert(project, "orders", &sqladmin.User{Name: "app", Password: "pw"}).Do()
	expectAPIError(e.g, err, http.StatusConflict, "operationInProgress")
	// Reads still work.
	_, err = e.svc.Users.List(project, "orders").Do()
	e.g.Expect(err).NotTo(HaveOccurred())

	e.clk.Advance(5 * time.Minute)
	e.g.Expect(e.operation(upd.Name).Status).To(Equal("DONE"))
	db = e.get("orders")
	e.g.Expect(db.Settings.Tier).To(Equal("db-custom-2-7680"))
	e.g.Expect(db.Settings.SettingsVersion).To(Equal(int64(2)))

	// Delete: PENDING_DELETE, then gone.
	del, err := e.svc.Instances.Delete(project, "orders").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(del.Status).To(Equal("PENDING"))
	e.g.Expect(e.get("orders").State).To(Equal(emulator.StatePendingDelete))
	_, err = e.svc.Instances.Delete(project, "orders").Do()
	expectAPIError(e.g, err, http.StatusConflict, "operationInProgress")
	e.clk.Advance(2 * time.Minute)
	_, err = e.svc.Instances.Get(project, "orders").Do()
	expectAPIError(e.g, err, http.StatusNotFound, "instanceDoesNotExist")
	e.g.Expect(e.operation(del.Name).Status).To(Equal("DONE"))
}

func TestMaintenanceAndSuspension(t *testing.T) {
	e := newEnv(t)
	e.insert("orders")
	e.g.Expect(e.emu.SetInstanceState(project, "orders", emulator.StateMaintenance)).To(Succeed())
	e.g.Expect(e.get("orders").State).To(Equal(emulator.StateMaintenance))
	patch := &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{DataDiskSizeGb: 20}}
	_, err := e.svc.Instances.Patch(project, "orders", patch).Do()
	expectAPIError(e.g, err, http.StatusConflict, "operationInProgress")
	_, err = e.svc.Instances.Delete(project, "orders").Do()
	expectAPIError(e.g, err, http.StatusConflict, "operationInProgress")

	e.g.Expect(e.emu.SetInstanceState(project, "orders", emulator.StateSuspended)).To(Succeed())
	e.g.Expect(e.get("orders").State).To(Equal(emulator.StateSuspended))

	e.g.Expect(e.emu.SetInstanceState(project, "orders", emulator.StateRunnable)).To(Succeed())
	_, err = e.svc.Instances.Patch(project, "orders", patch).Do()
	e.g.Expect(err).NotTo(HaveOccurred())

	e.g.Expect(e.emu.SetInstanceState(project, "orders", emulator.StatePendingCreate)).To(MatchError(emulator.ErrInvalidState))
	e.g.Expect(e.emu.SetInstanceState(project, "nope", emulator.StateRunnable)).To(MatchError(emulator.ErrInstanceNotFound))
}

func TestClientSeesNoSharedState(t *testing.T) {
	e := newEnv(t)
	e.insert("orders")
	db, err := e.emu.Instance(project, "orders")
	e.g.Expect(err).NotTo(HaveOccurred())
	db.Settings.Tier = "changed-in-the-copy"
	e.g.Expect(e.get("orders").Settings.Tier).To(Equal("db-custom-1-3840"))
	_, err = e.emu.Instance(project, "nope")
	e.g.Expect(err).To(MatchError(emulator.ErrInstanceNotFound))
}

func TestRootPasswordIsNeverReturned(t *testing.T) {
	e := newEnv(t)
	e.insert("orders")
	resp, err := http.Get(e.url + "/sql/v1beta4/projects/test-project/instances/orders")
	e.g.Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body := readBody(e.g, resp)
	e.g.Expect(body).NotTo(ContainSubstring("rootPassword"))
	e.g.Expect(body).NotTo(ContainSubstring(rootPassword))
	// int64 fields travel as JSON strings.
	e.g.Expect(body).To(ContainSubstring(`"dataDiskSizeGb":"10"`))
	e.g.Expect(body).To(ContainSubstring(`"settingsVersion":"1"`))
	e.g.Expect(strings.Count(body, `"state":"RUNNABLE"`)).To(Equal(1))
}

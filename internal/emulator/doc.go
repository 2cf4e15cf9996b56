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

// Package emulator is an in-memory emulator of the Cloud SQL Admin API
// v1beta4 for PostgreSQL instances, faithful enough that the unmodified
// google.golang.org/api/sqladmin/v1beta4 client can't tell it from the real
// API where a controller could.
//
// # Use
//
//	srv := httptest.NewServer(emulator.New(emulator.WithClock(clk)))
//	svc, _ := sqladmin.NewService(ctx,
//		option.WithEndpoint(srv.URL+"/"), option.WithoutAuthentication())
//
// The command cmd/cloudsql-emulator serves the same handler standalone.
//
// # API surface
//
// Under /sql/v1beta4/projects/{project}/:
//
//	POST   instances                                 instances.insert
//	GET    instances?filter=&maxResults=&pageToken=  instances.list
//	GET    instances/{instance}                      instances.get
//	PATCH  instances/{instance}                      instances.patch (JSON merge)
//	PUT    instances/{instance}                      instances.update (replace settings)
//	DELETE instances/{instance}                      instances.delete
//	POST   instances/{instance}/clone                instances.clone
//	GET    instances/{instance}/getLatestRecoveryTime  instances.getLatestRecoveryTime
//	POST   instances/{instance}/restoreBackup        instances.restoreBackup
//	POST   instances/{instance}/preCheckMajorVersionUpgrade  instances.preCheckMajorVersionUpgrade
//	GET    instances/{instance}/backupRuns           backupRuns.list
//	POST   instances/{instance}/backupRuns           backupRuns.insert (ON_DEMAND)
//	GET    instances/{instance}/backupRuns/{id}      backupRuns.get
//	DELETE instances/{instance}/backupRuns/{id}      backupRuns.delete
//	GET    backups                                   backups.list (also of deleted instances)
//	GET    backups/{id}                              backups.get
//	DELETE backups/{id}                              backups.delete
//	GET    operations?instance=&maxResults=&pageToken=  operations.list
//	GET    operations/{operation}                    operations.get
//	GET    instances/{instance}/users                users.list
//	GET    instances/{instance}/users/{name}         users.get
//	POST   instances/{instance}/users                users.insert
//	PUT    instances/{instance}/users?name=&host=    users.update
//	DELETE instances/{instance}/users?name=&host=    users.delete
//	GET    instances/{instance}/databases            databases.list
//	GET    instances/{instance}/databases/{name}     databases.get
//	POST   instances/{instance}/databases            databases.insert
//	PATCH  instances/{instance}/databases/{name}     databases.patch (merge)
//	PUT    instances/{instance}/databases/{name}     databases.update (replace)
//	DELETE instances/{instance}/databases/{name}     databases.delete
//	GET    instances/{instance}/connectSettings      connect.get
//	POST   instances/{instance}:generateEphemeralCert  connect.generateEphemeral
//
// The "fields" parameter (partial responses) is ignored: answers are whole.
// The instances.list filter takes space-separated key:value terms, all of
// which must match; keys are JSON paths such as state, region,
// settings.tier or settings.userLabels.team.
//
// # Behaviour
//
// Mutations answer an Operation that goes PENDING (the first tenth of its
// delay), RUNNING, then DONE, computed from the clock on each request; no
// goroutine runs in the background. Instances are PENDING_CREATE until the
// CREATE operation is DONE (and have no ipAddresses until then), then
// RUNNABLE. Patch and update take effect when their UPDATE operation is
// DONE, and settings.settingsVersion (1 at creation) increases then if the
// settings changed. User operations (CREATE_USER, UPDATE_USER, DELETE_USER)
// are answered DONE, as Cloud SQL answers them, unless
// WithUserOperationDelay gives them a duration. A delete makes the instance
// PENDING_DELETE; when the
// DELETE operation is DONE the instance is gone and its name is reserved for
// the reservation period. Database operations (UPDATE_DATABASE,
// DELETE_DATABASE, whose targetLink is the database) take the update delay;
// CREATE_DATABASE is answered DONE like the user operations. Every instance
// has the postgres database, which can't be deleted; databases are UTF8
// with collation en_US.UTF8, which can't be changed, as on Cloud SQL for
// PostgreSQL. A clone (CLONE, targeting the new instance, with the create
// delay) copies the source's settings, users and databases under a new
// name. While any operation on an instance
// runs, every other mutation of it is answered 409 operationInProgress, and
// so is every mutation while the instance is in MAINTENANCE. An operation
// failed by an injected fault ends DONE with an error and no effect (a
// failed create leaves the instance FAILED).
//
// Backups: backupRuns.insert is a BACKUP_VOLUME operation, backupRuns.delete
// and backups.delete DELETE_BACKUP; automated backups are taken for each
// daily window at backupConfiguration.startTime while backups are enabled,
// keeping retainedBackups of them. instances.delete refuses a protected
// instance (400, Cloud SQL's text), takes a FINAL backup when
// enableFinalBackup or settings.finalBackupConfig asks, and keeps every
// backup after the instance with settings.retainBackupsOnDelete, the FINAL
// one otherwise. With a data plane a backup is a pg_basebackup of the
// instance's server, which BackupQuery reads. instances.restoreBackup
// (RESTORE_VOLUME) restores a backup into a new instance
// (restoreInstanceSettings) or over an existing one; a clone at a
// pointInTime within getLatestRecoveryTime's window recovers the source's
// data to that time, and outside it is refused (400) with the window.
// instances.preCheckMajorVersionUpgrade (PRE_CHECK_MAJOR_VERSION_UPGRADE)
// answers INFO, or the ERROR FailPreCheck asks for. docs/emulator.md says
// what is not modelled.
//
// Defaults follow the real API: region us-central1, zone <region>-a, disk
// 10 GB PD_SSD with auto-resize, ZONAL, PER_USE, ALWAYS, backups starting at
// 12:00, public IP on unless ipv4Enabled is sent as false, and edition
// ENTERPRISE_PLUS for POSTGRES_16 and later, ENTERPRISE before (as Cloud SQL
// for PostgreSQL does). Enterprise keeps 7 backups and 7 days of
// transaction logs; Enterprise Plus 15 and 14, with a data cache on, and an
// instance moved to Enterprise Plus takes those unless it set its own.
// rootPassword is never returned; it becomes the password of the postgres
// user.
//
// Answers carry what real Cloud SQL's carry, as its recorded traffic shows
// (see package conformance, which replays it): fields whose value is false,
// 0 or "0" where Cloud SQL answers them (deletionProtectionEnabled,
// storageAutoResizeLimit, backupConfiguration.enabled, ipv4Enabled,
// requireSsl, geminiConfig, ...), an etag that changes with the instance,
// upgradableDatabaseVersions, and no maintenanceWindow unless one was set.
// Users carry an etag, iamStatus and a passwordPolicy with its status.
//
// Errors come in Google's envelope, so (*googleapi.Error).Code and
// .Errors[0].Reason carry them: 404 instanceDoesNotExist,
// operationDoesNotExist, userDoesNotExist, notFound (a database); 409
// instanceAlreadyExists (live name or reserved name), operationInProgress,
// userAlreadyExists; 412 staleData; 400 invalid (also an existing database,
// databases of an instance that is not running, a database that has sessions,
// a user that objects depend on), required, invalidFlagValue,
// parseError; 429
// rateLimitExceeded (RESOURCE_EXHAUSTED) once a project spent its
// per-minute budget; 500/503 backendError when injected. Errors of Cloud
// SQL's own (the instance*, operation* and user* reasons) carry no "status"
// in the envelope, as Cloud SQL's do; those of the API front end do.
//
// # Admin surface
//
// The Go methods of *Server (Counts, ResetCounts, Requests, Operations,
// FailNextBackup, RunBackupWindow,
// InjectFault, Faults, ClearFaults, Instance, MutateInstance,
// SetInstanceState, Now, Advance, FinishOperations, PasswordIs,
// SetDatabaseOwner, Seed, SeedMany, SeedDatabase, SeedUser, ServerCertificate) have these HTTP counterparts under /emulator/v1/, which
// neither count as API requests nor spend the budget:
//
//	GET    /emulator/v1/healthz                      {"status":"ok"}
//	GET    /emulator/v1/counts                       {"instances.get":3,...}
//	DELETE /emulator/v1/counts                       reset counts and request log
//	GET    /emulator/v1/requests                     request log, oldest first
//	GET    /emulator/v1/operations?project=P         {"items":[Operation...]} oldest first
//	POST   /emulator/v1/operations:finish            finish every pending operation now
//	GET    /emulator/v1/clock                        {"now":"2026-01-01T00:00:00.000Z"}
//	POST   /emulator/v1/clock:advance                {"duration":"90s"} -> {"now":...}
//	GET    /emulator/v1/faults                       [Fault...]
//	POST   /emulator/v1/faults                       Fault -> [Fault...]
//	DELETE /emulator/v1/faults                       clear faults
//	POST   /emulator/v1/projects/{p}/instances       seed a DatabaseInstance -> instance
//	POST   /emulator/v1/projects/{p}/instances?count=N  seed N like it, named <name>-00000... -> {"seeded":N}
//	GET    /emulator/v1/projects/{p}/instances/{i}   instance
//	PATCH  /emulator/v1/projects/{p}/instances/{i}   out-of-band JSON merge patch -> instance
//	POST   /emulator/v1/projects/{p}/instances/{i}:setState  {"state":"MAINTENANCE"} -> instance
//	POST   /emulator/v1/projects/{p}/instances/{i}:failNextBackup  {"message":"..."} (optional)
//	POST   /emulator/v1/projects/{p}/instances/{i}:failPreCheck  {"message":"..."} (optional)
//	POST   /emulator/v1/projects/{p}/instances/{i}:runBackupWindow  take an AUTOMATED backup -> BackupRun
//	POST   /emulator/v1/projects/{p}/instances/{i}:scheduleMaintenance  SqlScheduledMaintenance ({} clears) -> instance
//	POST   /emulator/v1/projects/{p}/instances/{i}/databases  seed a Database -> database
//	POST   /emulator/v1/projects/{p}/instances/{i}/users      seed a User, with its password -> user
//	POST   /emulator/v1/projects/{p}/instances/{i}/users/{u}:checkPassword  {"password":"..."} -> {"match":true}
//	POST   /emulator/v1/projects/{p}/instances/{i}/databases/{d}:setOwner  {"owner":"app"} -> {"database":...,"owner":...}
//
// A Fault in JSON is {"method":"instances.get","serverErrorShare":0.5,
// "rateLimitShare":0,"latency":"250ms","failOperationShare":0,
// "loseAnswerShare":0,"count":3}; every key is optional.
//
// # Token endpoint
//
// POST /token is an OAuth 2.0 token endpoint for service-account keys (the JWT
// bearer grant): a key file whose token_uri points here gets access tokens, so
// a client that authenticates with a key (the Auth Proxy's --credentials-file)
// works against the emulator unchanged. Signatures are not verified. Each
// token is remembered with its account (the assertion's iss) and its expiry,
// an hour by the emulator's clock, for IAM database authentication.
// ServiceAccountKey and ServiceAccountKeyFor make such key files.
//
// # Data plane
//
// With WithPostgres, every RUNNABLE instance is backed by a real PostgreSQL
// server: its ipAddresses are loopback addresses of its own, where port 3307
// speaks like Cloud SQL's server-side proxy (TLS 1.3, a client certificate from
// generateEphemeralCert for that instance, then the PostgreSQL protocol). The
// postgres user's password follows rootPassword and users.update, and
// users.insert and users.delete create and drop roles; databases.insert and
// databases.delete create and drop databases (owned by cloudsqlsuperuser); a
// clone's server is a pg_basebackup of its source's, data included. Close
// stops the servers.
//
// Roles are Cloud SQL's: postgres and the BUILT_IN users of users.insert are
// members of cloudsqlsuperuser with CREATEROLE and CREATEDB, not superusers, so
// postgres can revoke a user's membership and attributes and, once a member
// of the user's role, give it a database, as on Cloud SQL.
//
// Deletes are refused as Cloud SQL refuses them, after asking the
// instance's PostgreSQL before answering (outside the emulator's lock):
// databases.delete of a database that has sessions (pg_stat_activity, waited
// on for up to five seconds as DROP DATABASE does) answers 400 invalid "is
// being accessed by other users", and users.delete of a user that objects
// depend on answers 400 invalid with PostgreSQL's DROP ROLE error, which the
// emulator gets by trying the drop in a transaction that it rolls back.
// Without a data plane, databases have no sessions, and a user is refused
// only while SetDatabaseOwner has made it the owner of a database.
//
// # IAM database authentication
//
// Users of type CLOUD_IAM_SERVICE_ACCOUNT and CLOUD_IAM_USER (named, as on
// Cloud SQL, by the service account's email without .gserviceaccount.com, or
// the person's email) get a role that is a member of cloudsqliamserviceaccount
// or cloudsqliamuser only, with no CREATEDB, CREATEROLE or cloudsqlsuperuser,
// and a password only the emulator knows (users.update does not change it).
// They log in with access tokens of their account that the token endpoint
// issued and that have not expired by the emulator's clock, as on Cloud SQL:
// automatically, when generateEphemeralCert got an access_token (the Auth
// Proxy's --auto-iam-authn, a connector's WithIAMAuthN), which binds the
// certificate to the token's account and ends it with the token; or manually,
// with the token as the password, which the server-side proxy asks for in
// cleartext. generateEphemeralCert answers 400 invalid "The access token is
// invalid or expired." to a token it did not issue or that has expired. The
// server-side proxy refuses any other login as an IAM user (a token of another
// account, an expired token, a password, none) with a FATAL error, SQLSTATE
// 28000, `Cloud SQL IAM service account authentication failed for user "..."`
// (`Cloud SQL IAM user authentication failed ...` for people) whose detail
// says why, and logs it. A login it accepts, it makes itself, as the user's
// role, and hands over (process ID and cancel key included). Logins as other
// users reach PostgreSQL as the client sent them.
package emulator

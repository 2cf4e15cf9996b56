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

package emulator

import (
	"net/http"
	"net/url"
	"strings"
)

// apiPrefix is where the client library puts every call:
// <endpoint>sql/v1beta4/projects/{project}/...
const apiPrefix = "/sql/v1beta4/projects/"

// API method names, as counted by Counts and matched by Fault.Method. They
// are the client library's RPC names without the "sql." prefix.
const (
	MethodInstancesInsert          = "instances.insert"
	MethodInstancesGet             = "instances.get"
	MethodInstancesList            = "instances.list"
	MethodInstancesPatch           = "instances.patch"
	MethodInstancesUpdate          = "instances.update"
	MethodInstancesDelete          = "instances.delete"
	MethodOperationsGet            = "operations.get"
	MethodOperationsList           = "operations.list"
	MethodUsersList                = "users.list"
	MethodUsersGet                 = "users.get"
	MethodUsersInsert              = "users.insert"
	MethodUsersUpdate              = "users.update"
	MethodUsersDelete              = "users.delete"
	MethodConnectGet               = "connect.get"
	MethodConnectGenerateEphemeral = "connect.generateEphemeral"
	MethodDatabasesInsert          = "databases.insert"
	MethodDatabasesGet             = "databases.get"
	MethodDatabasesList            = "databases.list"
	MethodDatabasesPatch           = "databases.patch"
	MethodDatabasesUpdate          = "databases.update"
	MethodDatabasesDelete          = "databases.delete"
	MethodInstancesClone           = "instances.clone"
	MethodInstancesLatestRecovery  = "instances.getLatestRecoveryTime"
	MethodBackupRunsInsert         = "backupRuns.insert"
	MethodBackupRunsList           = "backupRuns.list"
	MethodBackupRunsGet            = "backupRuns.get"
	MethodBackupRunsDelete         = "backupRuns.delete"
	MethodBackupsList              = "backups.list"
	MethodBackupsGet               = "backups.get"
	MethodBackupsDelete            = "backups.delete"
	// MethodInstancesRestoreBackup restores a backup into a new instance or
	// over an existing one.
	MethodInstancesRestoreBackup = "instances.restoreBackup"
	// MethodInstancesPreCheckMajorVersionUpgrade checks whether an instance
	// can be upgraded to a major version.
	MethodInstancesPreCheckMajorVersionUpgrade = "instances.preCheckMajorVersionUpgrade"
)

// generateEphemeralCertPathSuffix is how the client addresses that custom
// method: instances/{instance}:generateEphemeralCert.
const generateEphemeralCertPathSuffix = ":generateEphemeralCert"

// handlerFunc serves one API method and returns the value to answer as JSON
// (a json.RawMessage is written as is).
type handlerFunc func(s *Server, req *apiRequest) (any, error)

// route is a matched API call: which method, with the path parameters.
type route struct {
	method   string
	handler  handlerFunc
	project  string
	instance string
	// resource is the last path parameter when there is one more than the
	// instance: a user name, a database name or an operation ID.
	resource string
}

// matchRoute maps an HTTP method and escaped path to an API method. Unknown
// paths and verbs get Google's 404 "Method not found.".
func matchRoute(httpMethod, escapedPath string) (route, error) {
	rest, ok := strings.CutPrefix(escapedPath, apiPrefix)
	if !ok {
		return route{}, errMethodNotFound()
	}
	raw := strings.Split(rest, "/")
	seg := make([]string, len(raw))
	for i, r := range raw {
		u, err := url.PathUnescape(r)
		if err != nil || u == "" {
			return route{}, errMethodNotFound()
		}
		seg[i] = u
	}
	rt := route{project: seg[0]}
	m := httpMethod
	switch {
	case len(seg) == 2 && seg[1] == "instances":
		return pick(rt, m, map[string]methodHandler{
			http.MethodGet:  {MethodInstancesList, (*Server).instancesList},
			http.MethodPost: {MethodInstancesInsert, (*Server).instancesInsert},
		})
	case len(seg) == 3 && seg[1] == "instances":
		if name, ok := strings.CutSuffix(seg[2], generateEphemeralCertPathSuffix); ok {
			rt.instance = name
			return pick(rt, m, map[string]methodHandler{
				http.MethodPost: {MethodConnectGenerateEphemeral, (*Server).connectGenerateEphemeral},
			})
		}
		rt.instance = seg[2]
		return pick(rt, m, map[string]methodHandler{
			http.MethodGet:    {MethodInstancesGet, (*Server).instancesGet},
			http.MethodPatch:  {MethodInstancesPatch, (*Server).instancesPatch},
			http.MethodPut:    {MethodInstancesUpdate, (*Server).instancesUpdate},
			http.MethodDelete: {MethodInstancesDelete, (*Server).instancesDelete},
		})
	case len(seg) == 4 && seg[1] == "instances" && seg[3] == "connectSettings":
		rt.instance = seg[2]
		return pick(rt, m, map[string]methodHandler{
			http.MethodGet: {MethodConnectGet, (*Server).connectGet},
		})
	case len(seg) == 4 && seg[1] == "instances" && seg[3] == "users":
		rt.instance = seg[2]
		return pick(rt, m, map[string]methodHandler{
			http.MethodGet:    {MethodUsersList, (*Server).usersList},
			http.MethodPost:   {MethodUsersInsert, (*Server).usersInsert},
			http.MethodPut:    {MethodUsersUpdate, (*Server).usersUpdate},
			http.MethodDelete: {MethodUsersDelete, (*Server).usersDelete},
		})
	case len(seg) == 5 && seg[1] == "instances" && seg[3] == "users":
		rt.instance, rt.resource = seg[2], seg[4]
		return pick(rt, m, map[string]methodHandler{
			http.MethodGet: {MethodUsersGet, (*Server).usersGet},
		})
	case len(seg) == 4 && seg[1] == "instances" && seg[3] == "databases":
		rt.instance = seg[2]
		return pick(rt, m, map[string]methodHandler{
			http.MethodGet:  {MethodDatabasesList, (*Server).databasesList},
			http.MethodPost: {MethodDatabasesInsert, (*Server).databasesInsert},
		})
	case len(seg) == 5 && seg[1] == "instances" && seg[3] == "databases":
		rt.instance, rt.resource = seg[2], seg[4]
		return pick(rt, m, map[string]methodHandler{
			http.MethodGet:    {MethodDatabasesGet, (*Server).databasesGet},
			http.MethodPatch:  {MethodDatabasesPatch, (*Server).databasesPatch},
			http.MethodPut:    {MethodDatabasesUpdate, (*Server).databasesUpdate},
			http.MethodDelete: {MethodDatabasesDelete, (*Server).databasesDelete},
		})
	case len(seg) == 4 && seg[1] == "instances" && seg[3] == "clone":
		rt.instance = seg[2]
		return pick(rt, m, map[string]methodHandler{
			http.MethodPost: {MethodInstancesClone, (*Server).instancesClone},
		})
	case len(seg) == 4 && seg[1] == "instances" && seg[3] == "restoreBackup":
		rt.instance = seg[2]
		return pick(rt, m, map[string]methodHandler{
			http.MethodPost: {MethodInstancesRestoreBackup, (*Server).instancesRestoreBackup},
		})
	case len(seg) == 4 && seg[1] == "instances" && seg[3] == "preCheckMajorVersionUpgrade":
		rt.instance = seg[2]
		return pick(rt, m, map[string]methodHandler{
			http.MethodPost: {MethodInstancesPreCheckMajorVersionUpgrade, (*Server).instancesPreCheckMajorVersionUpgrade},
		})
	case len(seg) == 4 && seg[1] == "instances" && seg[3] == "getLatestRecoveryTime":
		rt.instance = seg[2]
		return pick(rt, m, map[string]methodHandler{
			http.MethodGet: {MethodInstancesLatestRecovery, (*Server).instancesGetLatestRecoveryTime},
		})
	case len(seg) == 4 && seg[1] == "instances" && seg[3] == "backupRuns":
		rt.instance = seg[2]
		return pick(rt, m, map[string]methodHandler{
			http.MethodGet:  {MethodBackupRunsList, (*Server).backupRunsList},
			http.MethodPost: {MethodBackupRunsInsert, (*Server).backupRunsInsert},
		})
	case len(seg) == 5 && seg[1] == "instances" && seg[3] == "backupRuns":
		rt.instance, rt.resource = seg[2], seg[4]
		return pick(rt, m, map[string]methodHandler{
			http.MethodGet:    {MethodBackupRunsGet, (*Server).backupRunsGet},
			http.MethodDelete: {MethodBackupRunsDelete, (*Server).backupRunsDelete},
		})
	case len(seg) == 2 && seg[1] == "backups":
		return pick(rt, m, map[string]methodHandler{
			http.MethodGet: {MethodBackupsList, (*Server).backupsList},
		})
	case len(seg) == 3 && seg[1] == "backups":
		rt.resource = seg[2]
		return pick(rt, m, map[string]methodHandler{
			http.MethodGet:    {MethodBackupsGet, (*Server).backupsGet},
			http.MethodDelete: {MethodBackupsDelete, (*Server).backupsDelete},
		})
	case len(seg) == 2 && seg[1] == "operations":
		return pick(rt, m, map[string]methodHandler{
			http.MethodGet: {MethodOperationsList, (*Server).operationsList},
		})
	case len(seg) == 3 && seg[1] == "operations":
		rt.resource = seg[2]
		return pick(rt, m, map[string]methodHandler{
			http.MethodGet: {MethodOperationsGet, (*Server).operationsGet},
		})
	}
	return route{}, errMethodNotFound()
}

type methodHandler struct {
	name    string
	handler handlerFunc
}

func pick(rt route, httpMethod string, byVerb map[string]methodHandler) (route, error) {
	mh, ok := byVerb[httpMethod]
	if !ok {
		return route{}, errMethodNotFound()
	}
	rt.method, rt.handler = mh.name, mh.handler
	return rt, nil
}

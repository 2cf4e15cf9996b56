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

package pgsql

import (
	"github.com/jackc/pgx/v5"
)

// SuperuserRole is the role Cloud SQL makes every user it creates a member
// of: its members may create roles and databases and use what other members
// own.
const SuperuserRole = "cloudsqlsuperuser"

// Statements take identifiers quoted by ident and values only as parameters:
// nothing a user wrote is ever spliced into SQL unquoted.

// ident quotes a role, database or schema name.
func ident(name string) string { return pgx.Identifier{name}.Sanitize() }

// inspectRoleSQL reads a role ($1): its CREATEROLE and CREATEDB attributes,
// whether it is a member of cloudsqlsuperuser, directly or through other
// roles, and the databases it owns. No row: no such role.
const inspectRoleSQL = `WITH RECURSIVE r AS (
  SELECT oid, rolcreaterole, rolcreatedb FROM pg_catalog.pg_roles WHERE rolname = $1
), up(oid) AS (
  SELECT m.roleid FROM pg_catalog.pg_auth_members m JOIN r ON m.member = r.oid
  UNION
  SELECT m.roleid FROM pg_catalog.pg_auth_members m JOIN up ON m.member = up.oid
)
SELECT r.rolcreaterole, r.rolcreatedb,
  EXISTS (SELECT 1 FROM up JOIN pg_catalog.pg_roles s ON s.oid = up.oid WHERE s.rolname = $2),
  ARRAY(SELECT d.datname::text FROM pg_catalog.pg_database d WHERE d.datdba = r.oid ORDER BY 1)
FROM r`

// ownedDatabasesSQL lists the databases a role ($1) owns, by name.
const ownedDatabasesSQL = `SELECT d.datname::text FROM pg_catalog.pg_database d
JOIN pg_catalog.pg_roles r ON r.oid = d.datdba WHERE r.rolname = $1 ORDER BY 1`

// grantorsSQL lists who granted a role ($1) its direct membership of
// cloudsqlsuperuser ($2), for the message when a REVOKE leaves it.
const grantorsSQL = `SELECT COALESCE(g.rolname, m.grantor::text) FROM pg_catalog.pg_auth_members m
JOIN pg_catalog.pg_roles r ON r.oid = m.member
JOIN pg_catalog.pg_roles s ON s.oid = m.roleid
LEFT JOIN pg_catalog.pg_roles g ON g.oid = m.grantor
WHERE r.rolname = $1 AND s.rolname = $2 ORDER BY 1`

// inspectDatabaseSQL reads a database ($1): its owner and whether PUBLIC may
// connect to it (a NULL ACL is the default one, which lets PUBLIC connect).
// No row: no such database.
const inspectDatabaseSQL = `SELECT pg_catalog.pg_get_userbyid(d.datdba)::text,
  EXISTS (SELECT 1 FROM pg_catalog.aclexplode(COALESCE(d.datacl, pg_catalog.acldefault('d', d.datdba))) a
    WHERE a.grantee = 0 AND a.privilege_type = 'CONNECT')
FROM pg_catalog.pg_database d WHERE d.datname = $1`

// leastPrivilegeSQL takes from role what Cloud SQL gave it beyond logging
// in: membership of cloudsqlsuperuser, CREATEDB and CREATEROLE. Each
// statement holds whether or not the role had it.
func leastPrivilegeSQL(role string) []string {
	r := ident(role)
	return []string{
		"REVOKE " + ident(SuperuserRole) + " FROM " + r,
		"ALTER ROLE " + r + " NOCREATEDB NOCREATEROLE",
	}
}

// ownDatabaseSQL gives db to owner and closes it to everyone else; it runs
// connected to any database. The session's user becomes a member of owner
// first: PostgreSQL lets only members of the new owner give it a database,
// and being one keeps the provider able to connect to the database, manage
// it and run this again once PUBLIC may not connect.
func ownDatabaseSQL(db, owner string) []string {
	d, o := ident(db), ident(owner)
	return []string{
		"GRANT " + o + " TO CURRENT_USER",
		"ALTER DATABASE " + d + " OWNER TO " + o,
		"REVOKE CONNECT, TEMPORARY ON DATABASE " + d + " FROM PUBLIC",
		"GRANT CONNECT ON DATABASE " + d + " TO " + o,
	}
}

// ownSchemaSQL gives the public schema to owner and takes from PUBLIC the
// right to create in it (PostgreSQL before 15 grants it); it runs connected
// to the database.
func ownSchemaSQL(owner string) []string {
	return []string{
		"ALTER SCHEMA public OWNER TO " + ident(owner),
		"REVOKE CREATE ON SCHEMA public FROM PUBLIC",
	}
}

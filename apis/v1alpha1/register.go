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

package v1alpha1

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// Package type metadata.
const (
	// Group is the API group of every kind in this package.
	Group = "cloudsql.travelaudience.com"
	// Version is the API version of every kind in this package.
	Version = "v1alpha1"
)

var (
	// SchemeGroupVersion is the group version used to register these objects.
	SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}

	// SchemeBuilder registers the Go types of this package with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: SchemeGroupVersion}
)

// PostgresqlInstance type metadata.
var (
	PostgresqlInstanceKind             = reflect.TypeFor[PostgresqlInstance]().Name()
	PostgresqlInstanceGroupKind        = schema.GroupKind{Group: Group, Kind: PostgresqlInstanceKind}.String()
	PostgresqlInstanceKindAPIVersion   = PostgresqlInstanceKind + "." + SchemeGroupVersion.String()
	PostgresqlInstanceGroupVersionKind = SchemeGroupVersion.WithKind(PostgresqlInstanceKind)
)

// PostgresqlDatabase type metadata.
var (
	PostgresqlDatabaseKind             = reflect.TypeFor[PostgresqlDatabase]().Name()
	PostgresqlDatabaseGroupKind        = schema.GroupKind{Group: Group, Kind: PostgresqlDatabaseKind}.String()
	PostgresqlDatabaseKindAPIVersion   = PostgresqlDatabaseKind + "." + SchemeGroupVersion.String()
	PostgresqlDatabaseGroupVersionKind = SchemeGroupVersion.WithKind(PostgresqlDatabaseKind)
)

// PostgresqlBackup type metadata.
var (
	PostgresqlBackupKind             = reflect.TypeFor[PostgresqlBackup]().Name()
	PostgresqlBackupGroupKind        = schema.GroupKind{Group: Group, Kind: PostgresqlBackupKind}.String()
	PostgresqlBackupKindAPIVersion   = PostgresqlBackupKind + "." + SchemeGroupVersion.String()
	PostgresqlBackupGroupVersionKind = SchemeGroupVersion.WithKind(PostgresqlBackupKind)
)

// PostgresqlUser type metadata.
var (
	PostgresqlUserKind             = reflect.TypeFor[PostgresqlUser]().Name()
	PostgresqlUserGroupKind        = schema.GroupKind{Group: Group, Kind: PostgresqlUserKind}.String()
	PostgresqlUserKindAPIVersion   = PostgresqlUserKind + "." + SchemeGroupVersion.String()
	PostgresqlUserGroupVersionKind = SchemeGroupVersion.WithKind(PostgresqlUserKind)
)

// ProviderConfig type metadata.
var (
	ProviderConfigKind             = reflect.TypeFor[ProviderConfig]().Name()
	ProviderConfigGroupKind        = schema.GroupKind{Group: Group, Kind: ProviderConfigKind}.String()
	ProviderConfigKindAPIVersion   = ProviderConfigKind + "." + SchemeGroupVersion.String()
	ProviderConfigGroupVersionKind = SchemeGroupVersion.WithKind(ProviderConfigKind)
)

// ProviderConfigUsage type metadata.
var (
	ProviderConfigUsageKind                 = reflect.TypeFor[ProviderConfigUsage]().Name()
	ProviderConfigUsageGroupKind            = schema.GroupKind{Group: Group, Kind: ProviderConfigUsageKind}.String()
	ProviderConfigUsageKindAPIVersion       = ProviderConfigUsageKind + "." + SchemeGroupVersion.String()
	ProviderConfigUsageGroupVersionKind     = SchemeGroupVersion.WithKind(ProviderConfigUsageKind)
	ProviderConfigUsageListKind             = reflect.TypeFor[ProviderConfigUsageList]().Name()
	ProviderConfigUsageListGroupVersionKind = SchemeGroupVersion.WithKind(ProviderConfigUsageListKind)
)

func init() {
	SchemeBuilder.Register(&PostgresqlInstance{}, &PostgresqlInstanceList{})
	SchemeBuilder.Register(&PostgresqlDatabase{}, &PostgresqlDatabaseList{})
	SchemeBuilder.Register(&PostgresqlBackup{}, &PostgresqlBackupList{})
	SchemeBuilder.Register(&PostgresqlUser{}, &PostgresqlUserList{})
	SchemeBuilder.Register(&ProviderConfig{}, &ProviderConfigList{})
	SchemeBuilder.Register(&ProviderConfigUsage{}, &ProviderConfigUsageList{})
}

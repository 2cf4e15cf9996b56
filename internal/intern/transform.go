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

package intern

import (
	"reflect"
)

// repeated names the fields whose values come from a small set, whatever
// the kind: their strings are interned. Other strings (names, UIDs, resource
// versions, messages, annotations' values) are mostly one object's own, and
// would only fill the table.
var repeated = map[string]bool{
	// Every object's.
	"APIVersion": true, "Kind": true, "Namespace": true, "Finalizers": true, "Labels": true,
	// Annotations' keys only (see intern).
	"Annotations": true,
	// Conditions'.
	"Type": true, "Status": true, "Reason": true,
	// Crossplane's managed resources'.
	"DeletionPolicy": true, "ManagementPolicies": true,
	// Databases' and users': the instance each belongs to, and what the
	// API or Cloud SQL says of it.
	"Instance": true, "Charset": true, "Collation": true, "IAMStatus": true,
}

// Objects interns, in place, the strings of obj (a pointer to an API object,
// as an informer decodes it) that come from a small set, and returns obj: it
// is a cache transform. What it does not know (not a pointer to a struct)
// it returns as it is.
func Objects(obj any) (any, error) {
	v := reflect.ValueOf(obj)
	if v.Kind() == reflect.Pointer && !v.IsNil() && v.Elem().Kind() == reflect.Struct {
		walk(v.Elem())
	}
	return obj, nil
}

// walk interns the strings of the repeated fields of v's structs, at any
// depth.
func walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walk(v.Elem())
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.String {
			return
		}
		for i := range v.Len() {
			walk(v.Index(i))
		}
	case reflect.Struct:
		t := v.Type()
		for i := range v.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			if repeated[f.Name] {
				intern(v.Field(i), f.Name == "Annotations")
				continue
			}
			walk(v.Field(i))
		}
	}
}

// intern interns v: a string, a pointer to one, a slice of strings, a map
// of strings to strings (keys only when keysOnly), or anything else
// containing such fields, which it walks.
func intern(v reflect.Value, keysOnly bool) {
	switch {
	case v.Kind() == reflect.String:
		if v.CanSet() {
			v.SetString(String(v.String()))
		}
	case v.Kind() == reflect.Pointer && !v.IsNil() && v.Elem().Kind() == reflect.String:
		intern(v.Elem(), keysOnly)
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.String:
		for i := range v.Len() {
			intern(v.Index(i), keysOnly)
		}
	case v.Kind() == reflect.Map && v.Type().Key().Kind() == reflect.String && v.Type().Elem().Kind() == reflect.String:
		// Setting an existing key again stores the key given: the map's
		// copy of it is then the interned one.
		it := v.MapRange()
		type pair struct{ k, e reflect.Value }
		var pairs []pair
		for it.Next() {
			pairs = append(pairs, pair{it.Key(), it.Value()})
		}
		for _, p := range pairs {
			k := reflect.New(p.k.Type()).Elem()
			k.SetString(String(p.k.String()))
			e := p.e
			if !keysOnly {
				e = reflect.New(p.e.Type()).Elem()
				e.SetString(String(p.e.String()))
			}
			v.SetMapIndex(k, e)
		}
	default:
		walk(v)
	}
}

package redisstore

import (
	"fmt"
	"reflect"
	"sync"
)

// Go and Lua meet by name: each script has one argument type (script_args.go)
// whose fields say which of the script's KEYS and ARGV they are, in order:
//
//	key:"name"   the next KEYS entry
//	arg:"name"   the next ARGV entry; a slice of scalars is the rest of ARGV
//	             (variadic), a slice of structs is their count, then each
//	             element's fields (tagged each:"name") in turn
//
// The script's header comment names the same entries, as KEYS[i] name,
// ARGV[i] name and EACH[i] name; TestScriptArgsMatchHeaders holds the two
// together.

// scriptArgs is one script's argument type.
type scriptArgs interface{ script() *script }

// argField is one tagged field of an argument type.
type argField struct {
	index int
	key   bool   // KEYS, else ARGV
	name  string // the header's name
	rest  bool   // a slice of scalars: the rest of ARGV
	each  []argField
}

var argFields sync.Map // reflect.Type -> []argField

// fieldsOf are t's tagged fields, in order (each: the element fields of a
// slice of structs, tagged each).
func fieldsOf(t reflect.Type) []argField {
	if f, ok := argFields.Load(t); ok {
		return f.([]argField)
	}
	var out []argField
	for i := range t.NumField() {
		sf := t.Field(i)
		f := argField{index: i}
		switch {
		case sf.Tag.Get("key") != "":
			f.key, f.name = true, sf.Tag.Get("key")
		case sf.Tag.Get("arg") != "":
			f.name = sf.Tag.Get("arg")
		case sf.Tag.Get("each") != "":
			f.name = sf.Tag.Get("each")
		default:
			panic(fmt.Sprintf("redisstore: %s.%s has no key, arg or each tag", t.Name(), sf.Name))
		}
		if sf.Type.Kind() == reflect.Slice {
			if el := sf.Type.Elem(); el.Kind() == reflect.Struct {
				f.each = fieldsOf(el)
			} else {
				f.rest = true
			}
		}
		out = append(out, f)
	}
	argFields.Store(t, out)
	return out
}

// marshal is a's KEYS and ARGV.
func marshal(a scriptArgs) (keys []string, argv []any) {
	v := reflect.ValueOf(a)
	return marshalInto(v, fieldsOf(v.Type()), nil, nil)
}

func marshalInto(v reflect.Value, fields []argField, keys []string, argv []any) ([]string, []any) {
	for _, f := range fields {
		fv := v.Field(f.index)
		switch {
		case f.key:
			keys = append(keys, fv.String())
		case f.each != nil:
			argv = append(argv, fv.Len())
			for i := range fv.Len() {
				_, argv = marshalInto(fv.Index(i), f.each, nil, argv)
			}
		case f.rest:
			for i := range fv.Len() {
				argv = append(argv, scalar(fv.Index(i)))
			}
		default:
			argv = append(argv, scalar(fv))
		}
	}
	return keys, argv
}

// scalar is one argument as go-redis writes it: a bool as 1 or 0.
func scalar(v reflect.Value) any {
	switch v.Kind() {
	case reflect.String:
		return v.String()
	case reflect.Int, reflect.Int64, reflect.Int32:
		return v.Int()
	case reflect.Uint, reflect.Uint64, reflect.Uint32:
		return v.Uint()
	case reflect.Float64:
		return v.Float()
	case reflect.Bool:
		if v.Bool() {
			return 1
		}
		return 0
	}
	panic("redisstore: argument of kind " + v.Kind().String())
}

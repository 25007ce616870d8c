package results

import (
	"fmt"
	"math"
	"reflect"
	"strings"
)

// maxString caps every string in a file (a CPU list of 8192 CPUs taken
// one by one is about 40 KiB; a reason in words a few KiB): a 10 MB
// version or reason, which an export would copy into a comment and show
// would print, is a corrupt file.
const maxString = 64 << 10

// checkTimes refuses a file whose times are corrupt: every number field
// named *_ns (at any depth) must be finite and not negative, and a median
// (median_ns, worst_median_ns) must be above zero, since a barrier
// episode takes time. It also refuses a string longer than maxString.
// The error names the field by its JSON path.
func checkTimes(f *File) error {
	return walkTimes(reflect.ValueOf(f).Elem(), "")
}

func walkTimes(v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.String:
		if n := v.Len(); n > maxString {
			return fmt.Errorf("%s is %d bytes long, at most %d: the file is corrupt; run `barriertune check` again", path, n, maxString)
		}
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return walkTimes(v.Elem(), path)
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if err := walkTimes(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			sf := t.Field(i)
			if !sf.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			p := path
			if !sf.Anonymous || name != "" { // an embedded struct's fields are the object's
				if name == "" {
					name = sf.Name
				}
				p = strings.TrimPrefix(path+"."+name, ".")
			}
			fv := v.Field(i)
			if fv.Kind() == reflect.Float64 && strings.HasSuffix(name, "_ns") {
				if err := checkTime(p, name, fv.Float()); err != nil {
					return err
				}
				continue
			}
			if err := walkTimes(fv, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkTime judges one time field.
func checkTime(path, name string, ns float64) error {
	median := name == "median_ns" || name == "worst_median_ns"
	switch {
	case math.IsNaN(ns) || math.IsInf(ns, 0):
		return fmt.Errorf("%s is %v, not a time: the file is corrupt; run `barriertune check` again", path, ns)
	case ns < 0:
		return fmt.Errorf("%s is %v: a time cannot be negative; the file is corrupt; run `barriertune check` again", path, ns)
	case ns == 0 && median:
		return fmt.Errorf("%s is 0: a measured median takes time; the file is corrupt; run `barriertune check` again", path)
	}
	return nil
}

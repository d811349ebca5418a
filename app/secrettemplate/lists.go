package secrettemplate

import (
	"fmt"
	"hash/maphash"
	"math"
	"reflect"
	"strconv"
)

// eso's versions of sprig's list builders (until, untilStep, seq) and of
// uniq. They give sprig's results, but their size is known before they
// allocate, so the render budget refuses `until 1000000000` instead of
// eso running out of memory (see estimate in budget.go); sprig's untilStep
// also loops for ever when a step passes the largest int.

// maxListLen bounds the numbers one call lists even outside a budgeted
// render: 8 bytes each, the bytes a whole render may produce.
const maxListLen = maxProduced / 8

// stepCount is how many numbers untilStep lists: start, start+step, ...
// while before stop, as sprig's loops, counted without overflow.
func stepCount(start, stop, step int) uint64 {
	ceilDiv := func(a, b uint64) uint64 {
		n := a / b
		if a%b != 0 {
			n++
		}
		return n
	}
	switch {
	case start < stop && step > 0:
		return ceilDiv(uint64(stop)-uint64(start), uint64(step))
	case start > stop && step < 0:
		return ceilDiv(uint64(start)-uint64(stop), -uint64(step))
	}
	return 0
}

// untilParams are the start, stop and step until lists for count.
func untilParams(count int) (start, stop, step int) {
	if count < 0 {
		return 0, count, -1
	}
	return 0, count, 1
}

// seqParams are the untilStep sprig's seq lists for its parameters
// (end; start end; or start step end), as sprig computes them; ok is false
// when seq gives "".
func seqParams(params []int) (start, stop, step int, ok bool) {
	switch len(params) {
	case 1, 2:
		start, end := 1, params[0]
		if len(params) == 2 {
			start, end = params[0], params[1]
		}
		step = 1
		if end < start {
			step = -1
		}
		return start, end + step, step, true
	case 3:
		start, step, end := params[0], params[1], params[2]
		inc := 1
		if end < start {
			inc = -1
			if step > 0 {
				return 0, 0, 0, false
			}
		}
		return start, end + inc, step, true
	}
	return 0, 0, 0, false
}

// listSize is the count of numbers until, untilStep or seq lists for its
// parameters, and the most characters one of them takes (sign included).
func listSize(name string, params []int) (count uint64, width int) {
	var start, stop, step int
	switch {
	case name == "until" && len(params) == 1:
		start, stop, step = untilParams(params[0])
	case name == "untilStep" && len(params) == 3:
		start, stop, step = params[0], params[1], params[2]
	case name == "seq":
		var ok bool
		if start, stop, step, ok = seqParams(params); !ok {
			return 0, 0
		}
	default:
		return 0, 0
	}
	width = max(len(strconv.Itoa(start)), len(strconv.Itoa(stop)))
	return stepCount(start, stop, step), width
}

func untilStepList(name string, start, stop, step int) ([]int, error) {
	n := stepCount(start, stop, step)
	if n > maxListLen {
		return nil, fmt.Errorf("%s would list %d numbers, more than %d", name, n, maxListLen)
	}
	out := make([]int, n)
	v := start
	for i := range out {
		out[i] = v
		v += step
	}
	return out, nil
}

// until lists 0, 1, ... count-1 (or 0, -1, ... count+1), as sprig's.
func until(count int) ([]int, error) {
	start, stop, step := untilParams(count)
	return untilStepList("until", start, stop, step)
}

// untilStep lists start, start+step, ... while before stop, as sprig's.
func untilStep(start, stop, step int) ([]int, error) {
	return untilStepList("untilStep", start, stop, step)
}

// seq lists numbers separated by spaces, as sprig's (and GNU seq):
// seq end (from 1), seq start end, seq start step end.
func seq(params ...int) (string, error) {
	start, stop, step, ok := seqParams(params)
	if !ok {
		return "", nil
	}
	nums, err := untilStepList("seq", start, stop, step)
	if err != nil {
		return "", err
	}
	width := max(len(strconv.Itoa(start)), len(strconv.Itoa(stop)))
	out := make([]byte, 0, len(nums)*(width+1))
	for i, n := range nums {
		if i > 0 {
			out = append(out, ' ')
		}
		out = strconv.AppendInt(out, int64(n), 10)
	}
	return string(out), nil
}

// uniq keeps the first of every set of equal elements of a list, wherever
// they stand, equal as reflect.DeepEqual says, as sprig's uniq; sprig compares every element
// with every one kept, hours for the long lists until and seq make. Here
// elements are grouped by a hash that equal values share, and compared
// only within a group.
func uniq(list any) ([]any, error) {
	v := reflect.ValueOf(list)
	if v.Kind() != reflect.Slice && v.Kind() != reflect.Array {
		return nil, fmt.Errorf("cannot find uniq on type %s", v.Kind())
	}
	seed := maphash.MakeSeed() // the groups, never the result, depend on it
	groups := map[uint64][]int{}
	out := []any{}
	for i := range v.Len() {
		item := v.Index(i).Interface()
		var h maphash.Hash
		h.SetSeed(seed)
		deepHash(&h, reflect.ValueOf(item))
		sum := h.Sum64()
		dup := false
		for _, j := range groups[sum] {
			if reflect.DeepEqual(out[j], item) {
				dup = true
				break
			}
		}
		if !dup {
			groups[sum] = append(groups[sum], len(out))
			out = append(out, item)
		}
	}
	return out, nil
}

// mustUniq is uniq; sprig's panics where this one returns the error.
func mustUniq(list any) ([]any, error) { return uniq(list) }

// deepHash writes v so that values reflect.DeepEqual calls equal write the
// same: its type, then its contents (a map's entries in any order), each
// part prefixed by its length so that different values rarely write the
// same. A value is finite here: the render budget refuses a cyclic one
// before any function sees it (its size has no end).
func deepHash(h *maphash.Hash, v reflect.Value) {
	if !v.IsValid() {
		h.WriteByte(0)
		return
	}
	field(h, v.Type().String())
	switch v.Kind() {
	case reflect.Bool:
		field(h, strconv.FormatBool(v.Bool()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		field(h, strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		field(h, strconv.FormatUint(v.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		hashFloat(h, v.Float())
	case reflect.Complex64, reflect.Complex128:
		hashFloat(h, real(v.Complex()))
		hashFloat(h, imag(v.Complex()))
	case reflect.String:
		field(h, v.String())
	case reflect.Slice, reflect.Array:
		field(h, strconv.Itoa(v.Len()))
		for i := range v.Len() {
			deepHash(h, v.Index(i))
		}
	case reflect.Map:
		// Entries in any order: the sum of each entry's own hash.
		var sum uint64
		it := v.MapRange()
		for it.Next() {
			var e maphash.Hash
			e.SetSeed(h.Seed())
			deepHash(&e, it.Key())
			deepHash(&e, it.Value())
			sum += e.Sum64()
		}
		field(h, strconv.Itoa(v.Len()))
		field(h, strconv.FormatUint(sum, 10))
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			deepHash(h, v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			deepHash(h, v.Field(i))
		}
	}
	// Funcs, channels and unsafe pointers: their type alone.
}

func field(h *maphash.Hash, s string) {
	h.WriteString(strconv.Itoa(len(s)))
	h.WriteByte(':')
	h.WriteString(s)
}

// hashFloat writes a float so that 0 and -0 (equal) hash alike; NaN is
// equal to nothing, so any hash will do.
func hashFloat(h *maphash.Hash, f float64) {
	if f == 0 {
		f = 0
	}
	field(h, strconv.FormatUint(math.Float64bits(f), 16))
}

package workload

import (
	"math"
	"strconv"
)

// mooncakeDecoder decodes a Mooncake trace line of the shape every line of
// the published traces has, {"timestamp": n, "input_length": n,
// "output_length": n, "hash_ids": [n, ...]} with any of the four keys in any
// order, without reflection or allocation. It accepts a part of what
// decodeRecord accepts and decodes it to the same record; anything else (an
// other key, a repeated one, escapes, null, a number json would refuse or
// that is long, a syntax error) it declines, and the caller decodes the line
// with decodeRecord, which gives the record or says what is wrong.
type mooncakeDecoder struct {
	ts      float64
	in, out int64
	ids     []uint64 // reused by every line
}

// decode fills rec from the line b and reports true, or reports false
// having declined. rec then points into d, valid until the next call.
func (d *mooncakeDecoder) decode(b []byte, rec *mooncakeRecord) bool {
	*rec = mooncakeRecord{}
	if d.ids == nil {
		d.ids = make([]uint64, 0, 64) // never nil: "hash_ids": [] is present and empty
	}
	i := skipSpace(b, 0)
	if i == len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		if i == len(b) || b[i] != '"' {
			return false
		}
		j := i + 1
		for j < len(b) && b[j] != '"' {
			j++
		}
		if j == len(b) {
			return false
		}
		key := b[i+1 : j]
		i = skipSpace(b, j+1)
		if i == len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		var ok bool
		switch string(key) {
		case "timestamp":
			if rec.Timestamp != nil {
				return false // repeated: json would keep the last
			}
			rec.Timestamp = &d.ts
			d.ts, i, ok = jsonFloat(b, i)
		case "input_length":
			if rec.InputLength != nil {
				return false
			}
			rec.InputLength = &d.in
			d.in, i, ok = jsonInt(b, i)
		case "output_length":
			if rec.OutputLength != nil {
				return false
			}
			rec.OutputLength = &d.out
			d.out, i, ok = jsonInt(b, i)
		case "hash_ids":
			if rec.HashIDs != nil {
				return false
			}
			d.ids, i, ok = jsonUints(b, i, d.ids[:0])
			rec.HashIDs = d.ids
		}
		if !ok {
			return false
		}
		i = skipSpace(b, i)
		if i == len(b) {
			return false
		}
		if b[i] == '}' {
			return skipSpace(b, i+1) == len(b)
		}
		if b[i] != ',' {
			return false
		}
		i = skipSpace(b, i+1)
	}
}

// jsonFloat reads the number at b[i:] as encoding/json reads it into a
// float64, and returns the index after it; ok is false if it declines.
func jsonFloat(b []byte, i int) (v float64, end int, ok bool) {
	end, integer := numberEnd(b, i)
	if end == i {
		return 0, i, false
	}
	if n, neg, small := smallInt(b[i:end]); integer && small && n < 1<<53 {
		v = float64(n) // exact, as strconv.ParseFloat gives it
		if neg {
			v = -v // -0 too
		}
		return v, end, true
	}
	v, err := strconv.ParseFloat(string(b[i:end]), 64)
	return v, end, err == nil
}

// jsonInt reads the integer at b[i:] as encoding/json reads it into an
// int64, and returns the index after it; ok is false if it declines.
func jsonInt(b []byte, i int) (v int64, end int, ok bool) {
	end, integer := numberEnd(b, i)
	n, neg, small := smallInt(b[i:end])
	if end == i || !integer || !small {
		return 0, i, false
	}
	v = int64(n)
	if neg {
		v = -v
	}
	return v, end, true
}

// jsonUints appends the array of unsigned integers at b[i:] to ids, as
// encoding/json reads it into a []uint64, and returns the index after it;
// ok is false if it declines.
func jsonUints(b []byte, i int, ids []uint64) (_ []uint64, end int, ok bool) {
	if i == len(b) || b[i] != '[' {
		return ids, i, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return ids, i + 1, true
	}
	for {
		end, integer := numberEnd(b, i)
		n, ok := uintLit(b[i:end])
		if end == i || !integer || !ok {
			return ids, i, false
		}
		ids = append(ids, n)
		i = skipSpace(b, end)
		switch {
		case i == len(b):
			return ids, i, false
		case b[i] == ']':
			return ids, i + 1, true
		case b[i] != ',':
			return ids, i, false
		}
		i = skipSpace(b, i+1)
	}
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// numberEnd returns the end of the JSON number
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at b[i:], or i when there
// is none, and whether it is an integer (no fraction, no exponent). What
// follows the number is the caller's to check.
func numberEnd(b []byte, i int) (end int, integer bool) {
	j := i
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j == len(b):
		return i, false
	case b[j] == '0':
		j++
	case '1' <= b[j] && b[j] <= '9':
		j = digitsEnd(b, j)
	default:
		return i, false
	}
	integer = true
	if j < len(b) && b[j] == '.' {
		if j+1 == len(b) || !isDigit(b[j+1]) {
			return i, false
		}
		j, integer = digitsEnd(b, j+1), false
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if j == len(b) || !isDigit(b[j]) {
			return i, false
		}
		j, integer = digitsEnd(b, j), false
	}
	return j, integer
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func digitsEnd(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}

// uintLit is the value of an unsigned integer literal that fits a uint64
// (hash ids may be 64-bit hashes); ok is false for anything else. Literals
// of up to 18 digits, every id of the published traces, take smallInt.
func uintLit(lit []byte) (n uint64, ok bool) {
	if n, neg, small := smallInt(lit); small {
		return n, !neg
	}
	if len(lit) > 20 {
		return 0, false
	}
	for _, c := range lit {
		d := uint64(c - '0')
		if !isDigit(c) || n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// smallInt is the value of an integer literal of at most 18 digits (below
// 10^18, so it fits an int64 with either sign) and its sign; small is false
// for anything else.
func smallInt(lit []byte) (n uint64, neg, small bool) {
	if len(lit) > 0 && lit[0] == '-' {
		lit, neg = lit[1:], true
	}
	if len(lit) == 0 || len(lit) > 18 {
		return 0, neg, false
	}
	for _, c := range lit {
		if !isDigit(c) {
			return 0, neg, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, neg, true
}

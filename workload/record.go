package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// mooncakeKeys names the keys of a Mooncake record for errors.
const mooncakeKeys = "timestamp, input_length, output_length and hash_ids"

// errTwice is a record key given a second time.
var errTwice = errors.New("key given twice")

// decodeRecord decodes a Mooncake line strictly, for the lines
// mooncakeDecoder declines: one JSON object whose keys are the four of a
// record, spelt exactly and each at most once, with a number for
// timestamp, integers for the lengths and a list of unsigned integers for
// hash_ids. A line it accepts, encoding/json decodes to the same record;
// of the lines encoding/json accepts it refuses those with another key, a
// repeated one or a null. Its error says what is wrong in the trace's
// terms, with the key it is in ("hash_ids[2]"; "" for the line as a whole).
func decodeRecord(line []byte) (rec mooncakeRecord, key string, err error) {
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	tok, err := nextToken(d)
	if err != nil {
		return rec, "", err
	}
	if tok != json.Delim('{') {
		return rec, "", fmt.Errorf("want a JSON object of %s, got %s", mooncakeKeys, describeToken(tok))
	}
	for {
		tok, err := nextToken(d)
		if err != nil {
			return rec, "", err
		}
		if tok == json.Delim('}') {
			break
		}
		key := tok.(string) // in an object, a key or its end
		switch key {
		case "timestamp":
			if rec.Timestamp != nil {
				return rec, key, errTwice
			}
			rec.Timestamp, err = decodeNumber(d)
		case "input_length", "output_length":
			length := &rec.InputLength
			if key == "output_length" {
				length = &rec.OutputLength
			}
			if *length != nil {
				return rec, key, errTwice
			}
			*length, err = decodeInt(d)
		case "hash_ids":
			if rec.HashIDs != nil {
				return rec, key, errTwice
			}
			rec.HashIDs, key, err = decodeHashIDs(d)
		default:
			return rec, key, fmt.Errorf("unknown key; a record has %s", mooncakeKeys)
		}
		if err != nil {
			return rec, key, err
		}
	}
	if _, err := d.Token(); err != io.EOF {
		return rec, "", errors.New("bad JSON: more after the record's closing brace")
	}
	return rec, "", nil
}

// decodeNumber reads a timestamp: a JSON number, as encoding/json reads it
// into a float64.
func decodeNumber(d *json.Decoder) (*float64, error) {
	v, err := nextToken(d)
	if err != nil {
		return nil, err
	}
	n, ok := v.(json.Number)
	if !ok {
		return nil, fmt.Errorf("want a number of milliseconds, got %s", describeToken(v))
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return nil, fmt.Errorf("%s is out of range", n)
	}
	return &f, nil
}

// decodeInt reads a length: a JSON integer, as encoding/json reads it into
// an int64.
func decodeInt(d *json.Decoder) (*int64, error) {
	v, err := nextToken(d)
	if err != nil {
		return nil, err
	}
	n, ok := v.(json.Number)
	i, err := strconv.ParseInt(string(n), 10, 64)
	switch {
	case !ok || errors.Is(err, strconv.ErrSyntax):
		return nil, fmt.Errorf("want an integer, got %s", describeToken(v))
	case err != nil:
		return nil, fmt.Errorf("%s is out of range", n)
	}
	return &i, nil
}

// decodeHashIDs reads the value of hash_ids: a list of unsigned 64-bit
// integers, never nil.
func decodeHashIDs(d *json.Decoder) (ids []uint64, key string, err error) {
	v, err := nextToken(d)
	if err != nil {
		return nil, "hash_ids", err
	}
	if v != json.Delim('[') {
		return nil, "hash_ids", fmt.Errorf("want a list of non-negative integers, got %s", describeToken(v))
	}
	ids = []uint64{}
	for {
		key := "hash_ids[" + strconv.Itoa(len(ids)) + "]"
		v, err := nextToken(d)
		if err != nil {
			return nil, key, err
		}
		if v == json.Delim(']') {
			return ids, "", nil
		}
		n, isNumber := v.(json.Number)
		id, err := strconv.ParseUint(string(n), 10, 64)
		switch {
		case !isNumber:
			return nil, key, fmt.Errorf("want a non-negative integer, got %s", describeToken(v))
		case errors.Is(err, strconv.ErrRange):
			return nil, key, fmt.Errorf("%s is out of range: a hash id is a 64-bit unsigned integer", n)
		case err != nil:
			return nil, key, fmt.Errorf("%s is not a non-negative integer", n)
		}
		ids = append(ids, id)
	}
}

// nextToken is d's next token; the line ending inside the value, or
// broken JSON, is an error saying so.
func nextToken(d *json.Decoder) (json.Token, error) {
	tok, err := d.Token()
	switch {
	case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
		return nil, errors.New("bad JSON: the line ends inside the record")
	case err != nil:
		return nil, fmt.Errorf("bad JSON: %w", err)
	}
	return tok, nil
}

// describeToken names a JSON value by its first token for an error: a
// number or a string as written (a long string cut short), null, true,
// false, a list or an object.
func describeToken(tok json.Token) string {
	switch v := tok.(type) {
	case nil:
		return "null"
	case json.Number:
		return string(v)
	case string:
		if len(v) > otelMaxShownValue {
			v = v[:otelMaxShownValue] + "..."
		}
		return strconv.Quote(v)
	case json.Delim:
		if v == '[' {
			return "a list"
		}
		return "an object"
	}
	return fmt.Sprint(tok) // true or false
}
